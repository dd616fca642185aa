//! Seed timing, demand and zips: fused and unfused agree.

use super::common::*;

/// An endless upstream (`repeat`: a size_hint lower bound of usize::MAX)
/// through the scan, into a fused zip that asks its inputs `at_least`:
/// `1 + usize::MAX` overflows in `ScanChunks::at_least`: a debug build
/// fails the stream with "attempt to add with overflow" (a release build,
/// without overflow checks, would wrap to 0 and go one row at a time).
/// Every zip form is checked before asserting.
#[test]
fn zip_with_an_endless_scan_input() {
    quiet_panics();
    let (system, _) = stream_system("scan-review-endless-zip");
    let mut wrong = Vec::new();
    for (how, mat) in both(&system) {
        let zipped = Source::range(0u64..4)
            .zip(Source::repeat(1u64).scan(0, add))
            .run_with(Sink::collect(), &mat)
            .wait();
        if zipped != Ok(vec![(0, 0), (1, 1), (2, 2), (3, 3)]) {
            wrong.push(format!("{how} zip: {zipped:?}"));
        }
        let with = Source::range(0u64..3)
            .zip_with(Source::repeat(1u64).scan(0, add), |a, b| a * 10 + b)
            .run_with(Sink::collect(), &mat)
            .wait();
        if with != Ok(vec![0, 11, 22]) {
            wrong.push(format!("{how} zip_with: {with:?}"));
        }
        let n = Source::zip_n([Source::range(0u64..3), Source::repeat(1u64).scan(0, add)])
            .run_with(Sink::collect(), &mat)
            .wait();
        if n != Ok(vec![[0, 0], [1, 1], [2, 2]]) {
            wrong.push(format!("{how} zip_n: {n:?}"));
        }
        let taken = Source::range(0u64..3)
            .zip(Source::repeat(1u64).scan(0, add).take(10).map(|x| x))
            .run_with(Sink::collect(), &mat)
            .wait();
        if taken != Ok(vec![(0, 0), (1, 1), (2, 2)]) {
            wrong.push(format!("{how} zip of scan.take.map: {taken:?}"));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    shutdown(&system);
}

/// A scan over a never-ready upstream in a zip gives its seed's row.
#[test]
fn a_pending_scan_input_gives_its_seed_row() {
    let (system, _) = stream_system("scan-review-zip-pending");
    for (how, mat) in both(&system) {
        let head = Source::range(0u64..3)
            .zip(never().scan(9, add))
            .run_with(Sink::head(), &mat);
        assert_eq!(head.wait(), Ok((0, 9)), "{how}");
    }
    shutdown(&system);
}

/// A `take_while` that stops on the seed: upstream is never polled.
#[test]
fn take_while_stopping_on_the_seed_polls_nothing() {
    let (system, _) = stream_system("scan-review-take-while");
    for (how, mat) in both(&system) {
        let polls = Arc::new(AtomicUsize::new(0));
        let got = counting(&polls)
            .scan(0, add)
            .take_while(|x| *x > 0)
            .run_with(Sink::collect(), &mat);
        assert_eq!(got.wait(), Ok(vec![]), "{how}");
        assert_eq!(polls.load(Ordering::SeqCst), 0, "{how}");
    }
    shutdown(&system);
}

/// The seed of a scan over an empty upstream makes one row; a scan input
/// shorter than the other ends the zip after its last accumulation.
#[test]
fn zip_rows_with_seeds_and_short_scans() {
    let (system, _) = stream_system("scan-review-zip");
    for (how, mat) in both(&system) {
        let seed_only = Source::range(0u64..3)
            .zip(Source::<u64>::empty().scan(7, add))
            .run_with(Sink::collect(), &mat);
        assert_eq!(seed_only.wait(), Ok(vec![(0, 7)]), "{how}");
        let seed_first = Source::<u64>::empty()
            .scan(7, add)
            .zip(Source::range(0u64..3))
            .run_with(Sink::collect(), &mat);
        assert_eq!(seed_first.wait(), Ok(vec![(7, 0)]), "{how}");
        let short = Source::range(0u64..10)
            .zip(Source::range(1u64..=3).scan(0, add))
            .run_with(Sink::collect(), &mat);
        let want: Vec<(u64, u64)> = (0..).zip(model(0, 1..=3)).collect();
        assert_eq!(short.wait(), Ok(want), "{how}");
        let two_scans = Source::range(1u64..=4)
            .scan(0, add)
            .zip(Source::range(1u64..=4).scan(100, add).scan(0, add))
            .run_with(Sink::collect(), &mat);
        let second = model(0, model(100, 1..=4));
        let want: Vec<(u64, u64)> = model(0, 1..=4).into_iter().zip(second).collect();
        assert_eq!(two_scans.wait(), Ok(want), "{how}");
    }
    shutdown(&system);
}

/// A zip over a counting source through a scan makes the same rows, and
/// polls the source no more often fused than unfused.
#[test]
fn a_zip_makes_no_more_upstream_elements_than_unfused() {
    let (system, _) = stream_system("scan-review-zip-demand");
    let mut polls_by = Vec::new();
    for (how, mat) in both(&system) {
        let polls = Arc::new(AtomicUsize::new(0));
        let rows = Source::range(0u64..3)
            .zip(counting(&polls).scan(0, add))
            .run_with(Sink::collect(), &mat);
        assert_eq!(rows.wait(), Ok(vec![(0, 0), (1, 1), (2, 3)]), "{how}");
        polls_by.push(polls.load(Ordering::SeqCst));
    }
    assert!(polls_by[0] <= polls_by[1], "fused, unfused: {polls_by:?}");
    shutdown(&system);
}

// ------------------------------------------------------- demand and timing

/// `take` and `head` after a scan poll upstream exactly as often fused as
/// unfused (the seed needs no upstream element).
#[test]
fn take_and_head_poll_upstream_as_unfused() {
    let (system, _) = stream_system("scan-review-take");
    let mut counts = Vec::new();
    for (how, mat) in both(&system) {
        let polls = Arc::new(AtomicUsize::new(0));
        let taken = counting(&polls)
            .scan(0, add)
            .take(3)
            .run_with(Sink::collect(), &mat);
        assert_eq!(taken.wait(), Ok(vec![0, 1, 3]), "{how}");
        let head_polls = Arc::new(AtomicUsize::new(0));
        let head = counting(&head_polls)
            .scan(5, add)
            .run_with(Sink::head(), &mat);
        assert_eq!(head.wait(), Ok(5), "{how}");
        let filtered_polls = Arc::new(AtomicUsize::new(0));
        let filtered = counting(&filtered_polls)
            .scan(0, add)
            .filter(|x| x % 2 == 1)
            .take(2)
            .run_with(Sink::collect(), &mat);
        assert_eq!(filtered.wait(), Ok(vec![1, 3]), "{how}");
        counts.push((
            polls.load(Ordering::SeqCst),
            head_polls.load(Ordering::SeqCst),
            filtered_polls.load(Ordering::SeqCst),
        ));
    }
    assert_eq!(counts[0], counts[1], "fused, unfused: {counts:?}");
    shutdown(&system);
}

/// Seed and completion timing against a probe that asks one by one.
#[test]
fn seed_and_completion_timing_with_a_probe() {
    let (system, _) = stream_system("scan-review-probe");
    let quiet = Duration::from_millis(150);
    for (how, mat) in both(&system) {
        // The last accumulation comes with the completion.
        let mut down = Source::range(1u64..=3)
            .scan(0, add)
            .run_with(TestSink::probe(), &mat)
            .with_timeout(Duration::from_secs(2));
        down.request(4);
        assert_eq!(down.expect_next_n(4), vec![0, 1, 3, 6], "{how}");
        down.expect_complete();

        // The same across two boundaries (the relay rule when fused).
        let mut down = Source::range(1u64..=3)
            .async_boundary()
            .scan(0, add)
            .async_boundary()
            .run_with(TestSink::probe(), &mat)
            .with_timeout(Duration::from_secs(2));
        down.request(4);
        assert_eq!(down.expect_next_n(4), vec![0, 1, 3, 6], "{how}: relayed");
        down.expect_complete();

        // Nothing upstream: the seed on demand, nothing more.
        let mut down = never()
            .scan(9, add)
            .run_with(TestSink::probe(), &mat)
            .with_timeout(Duration::from_secs(2));
        down.expect_no_message(quiet);
        down.request(1);
        assert_eq!(down.expect_next(), 9, "{how}");
        down.request(1);
        down.expect_no_message(quiet);
        down.cancel();

        // An empty upstream: nothing without demand, then seed and end.
        let mut down = Source::<u64>::empty()
            .scan(7, add)
            .run_with(TestSink::probe(), &mat)
            .with_timeout(Duration::from_secs(2));
        down.expect_no_message(quiet);
        down.request(1);
        assert_eq!(down.expect_next(), 7, "{how}");
        down.expect_complete();

        // One element: the seed does not end the stream.
        let mut down = Source::single(5u64)
            .scan(1, add)
            .run_with(TestSink::probe(), &mat)
            .with_timeout(Duration::from_secs(2));
        down.request(1);
        assert_eq!(down.expect_next(), 1, "{how}");
        down.expect_no_message(quiet);
        down.request(1);
        assert_eq!(down.expect_next(), 6, "{how}");
        down.expect_complete();
    }
    shutdown(&system);
}

// ------------------------------------------------------------- boundaries

/// Between two boundaries (the relay rule): the seed of a scan over an
/// upstream that never produces, or is empty, still comes.
#[test]
fn a_relayed_scan_emits_its_seed_for_pending_and_empty_upstreams() {
    let (system, _) = stream_system("scan-review-relay-seed");
    for (how, mat) in both(&system) {
        let head = never()
            .async_boundary()
            .scan(9, add)
            .async_boundary()
            .run_with(Sink::head(), &mat);
        assert_eq!(head.wait(), Ok(9), "{how}");
        let empty = Source::<u64>::empty()
            .async_boundary()
            .scan(7, add)
            .async_boundary()
            .run_with(Sink::collect(), &mat);
        assert_eq!(empty.wait(), Ok(vec![7]), "{how}");
        let chained = Source::range(1u64..=50)
            .async_boundary()
            .scan(0, add)
            .map(|x| x * 2)
            .scan(0, add)
            .async_boundary()
            .scan(1, add)
            .run_with(Sink::collect(), &mat);
        let first: Vec<u64> = model(0, 1..=50).into_iter().map(|x| x * 2).collect();
        assert_eq!(
            chained.wait(),
            Ok(model(1, model(0, first))),
            "{how}: after the last boundary"
        );
    }
    shutdown(&system);
}
