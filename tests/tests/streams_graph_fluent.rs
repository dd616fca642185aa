//! The fluent junction forms (also_to, or_else, zip_with_index, divert_to, interleave, merge_sorted) and Sink::combine.

use weir_streams::StreamError;
use weir_streams::prelude::*;
use weir_streams::testkit::TestSink;
use weir_tests::{shutdown, stream_system};

#[test]
fn also_to_sends_every_element_to_the_side_sink() {
    let (system, mat) = stream_system("also-to");
    let (tx, rx) = std::sync::mpsc::channel();
    let side = Sink::fold((), move |(), x: u32| {
        tx.send(x).expect("the test holds the receiver");
    });
    let main = Source::range(1u32..=3)
        .also_to(side)
        .run_with(Sink::collect(), &mat);
    assert_eq!(main.wait(), Ok(vec![1, 2, 3]));
    let seen: Vec<u32> = (0..3)
        .map(|_| rx.recv_timeout(weir_tests::PATIENCE).unwrap())
        .collect();
    assert_eq!(seen, vec![1, 2, 3]);
    shutdown(&system);
}

#[test]
fn or_else_switches_to_the_secondary_only_when_the_primary_is_empty() {
    let (system, mat) = stream_system("or-else");
    let empty = Source::<u32>::empty().or_else(Source::range(5u32..7));
    assert_eq!(empty.run_with(Sink::collect(), &mat).wait(), Ok(vec![5, 6]));
    let full = Source::range(1u32..3).or_else(Source::range(5u32..7));
    assert_eq!(full.run_with(Sink::collect(), &mat).wait(), Ok(vec![1, 2]));
    // A secondary that fails is harmless while the primary has elements.
    let failing = Source::range(1u32..3).or_else(Source::failed(StreamError::msg("unused")));
    assert_eq!(
        failing.run_with(Sink::collect(), &mat).wait(),
        Ok(vec![1, 2])
    );
    let needed = Source::<u32>::empty().or_else(Source::failed(StreamError::msg("needed")));
    let error = needed.run_with(Sink::collect(), &mat).wait().unwrap_err();
    assert!(error.to_string().contains("needed"), "{error}");
    shutdown(&system);
}

#[test]
fn zip_with_index_counts_from_zero_in_every_run() {
    let (system, mat) = stream_system("zip-index");
    let indexed = Source::from_iter(vec!['a', 'b', 'c']).zip_with_index();
    for _ in 0..2 {
        let got = indexed.clone().run_with(Sink::collect(), &mat).wait();
        assert_eq!(got, Ok(vec![('a', 0), ('b', 1), ('c', 2)]));
    }
    shutdown(&system);
}

#[test]
fn divert_to_sends_matching_elements_to_the_side_sink() {
    let (system, mat) = stream_system("divert");
    let (tx, rx) = std::sync::mpsc::channel();
    let side = Sink::fold((), move |(), x: u32| {
        tx.send(x).expect("the test holds the receiver")
    });
    let kept = Source::range(0u32..6)
        .divert_to(side, |x| x % 3 == 0)
        .run_with(Sink::collect(), &mat);
    assert_eq!(kept.wait(), Ok(vec![1, 2, 4, 5]));
    let diverted: Vec<u32> = (0..2)
        .map(|_| rx.recv_timeout(weir_tests::PATIENCE).unwrap())
        .collect();
    assert_eq!(diverted, vec![0, 3]);
    shutdown(&system);
}

#[test]
fn sink_combine_feeds_every_sink_and_outlives_one_that_cancels() {
    let (system, mat) = stream_system("sink-combine");
    let (tx, rx) = std::sync::mpsc::channel();
    let all = Sink::combine(
        Flow::new().take(1).to(Sink::ignore()),
        Sink::fold((), move |(), x: u32| {
            tx.send(x).expect("the test holds the receiver")
        }),
        Vec::<Sink<u32>>::new(),
    );
    Source::range(0u32..5).run_with(all, &mat);
    let seen: Vec<u32> = (0..5)
        .map(|_| rx.recv_timeout(weir_tests::PATIENCE).unwrap())
        .collect();
    assert_eq!(seen, vec![0, 1, 2, 3, 4]);
    shutdown(&system);
}

#[test]
fn interleave_takes_segments_in_turn_and_finishes_the_longer_input() {
    let (system, mat) = stream_system("interleave");
    let mixed = Source::range(1u32..=5)
        .interleave(Source::range(10u32..=11), 2)
        .unwrap();
    assert_eq!(
        mixed.run_with(Sink::collect(), &mat).wait(),
        Ok(vec![1, 2, 10, 11, 3, 4, 5])
    );
    let other_longer = Source::single(1u32)
        .interleave(Source::range(10u32..=13), 1)
        .unwrap();
    assert_eq!(
        other_longer.run_with(Sink::collect(), &mat).wait(),
        Ok(vec![1, 10, 11, 12, 13])
    );
    assert!(
        Source::single(1u32)
            .interleave(Source::single(2), 0)
            .is_err()
    );
    shutdown(&system);
}

#[test]
fn merge_sorted_keeps_sorted_inputs_sorted_whatever_the_demand() {
    let (system, mat) = stream_system("merge-sorted");
    let a: Vec<u32> = (0..200).map(|x| x * 3).collect();
    let b: Vec<u32> = (0..150).map(|x| x * 4 + 1).collect();
    let mut want: Vec<u32> = a.iter().chain(&b).copied().collect();
    want.sort_unstable();
    let sorted =
        Source::from_iter(a.clone()).merge_sorted(Source::from_iter(b.clone()).async_boundary());
    assert_eq!(
        sorted.run_with(Sink::collect(), &mat).wait(),
        Ok(want.clone())
    );
    let mut probe = Source::from_iter(a)
        .merge_sorted(Source::from_iter(b))
        .run_with(TestSink::probe(), &mat);
    let mut got = Vec::new();
    while got.len() < want.len() {
        let n = (want.len() - got.len()).min(7);
        got.extend(probe.request_next_n(n));
    }
    probe.request(1);
    probe.expect_complete();
    assert_eq!(got, want);
    shutdown(&system);
}

/// The diverted-to sink cancelling cancels upstream and completes the
/// main output, as `also_to` does (Pekko's `divertTo` cancels eagerly).
#[test]
fn divert_to_stops_when_the_diverted_sink_cancels() {
    let (system, mat) = stream_system("divert-cancel");
    let (mut up, mut main) = weir_streams::testkit::TestSource::probe::<u32>()
        .divert_to(Sink::head(), |x| x % 2 == 0)
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    main.request(10);
    up.expect_request();
    up.send_next(1);
    assert_eq!(main.expect_next(), 1);
    up.send_next(2);
    up.expect_cancellation();
    main.expect_complete();
    // An endless source all diverted: the head takes one and all stop.
    let kept = Source::from_iter(0u32..)
        .divert_to(Sink::head(), |_| true)
        .run_with(Sink::collect(), &mat);
    assert_eq!(kept.wait(), Ok(vec![]));
    shutdown(&system);
}

/// A `map_materialized_value` on a blueprint whose value a junction drops
/// still runs, once per run (as in Pekko, every value is made at
/// materialization), whichever fluent junction or builder holds it.
#[test]
fn map_materialized_value_runs_when_a_junction_drops_the_value() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let (system, mat) = stream_system("dropped-mat-value");
    let runs = Arc::new(AtomicUsize::new(0));
    fn counted<M>(runs: &Arc<AtomicUsize>) -> impl Fn(M) -> M + Send + Sync + 'static {
        let runs = Arc::clone(runs);
        move |m| {
            runs.fetch_add(1, Ordering::SeqCst);
            m
        }
    }
    let side = || Source::range(5u32..7).map_materialized_value(counted(&runs));
    let sink = || Sink::<u32, _>::ignore().map_materialized_value(counted(&runs));
    let graphs: Vec<Source<u32>> = vec![
        Source::range(1u32..=3).also_to(sink()),
        Source::range(1u32..=3).divert_to(sink(), |x| x % 2 == 0),
        Source::range(1u32..=3).wire_tap(sink()),
        Source::range(1u32..=3).merge(side()),
        Source::range(1u32..=3).concat(side()),
        Source::range(1u32..=3).zip_with(side(), |a, b| a + b),
        Source::combine(side(), side(), [side()]),
    ];
    let want = [1, 1, 1, 1, 1, 1, 3];
    for (i, (graph, want)) in graphs.into_iter().zip(want).enumerate() {
        for _ in 0..2 {
            runs.store(0, Ordering::SeqCst);
            graph
                .clone()
                .run_with(Sink::ignore(), &mat)
                .wait()
                .expect("completes");
            assert_eq!(runs.load(Ordering::SeqCst), want, "graph {i}");
        }
    }
    shutdown(&system);
}

/// `concat` is Akka's: the second source runs from the start, so its
/// failure fails the stream at once, before the first source's rest.
#[test]
fn concat_runs_the_second_source_from_the_start() {
    let (system, mat) = stream_system("concat-eager");
    let mut probe = Source::from_iter(0u32..)
        .concat(Source::failed(StreamError::msg("second broke")))
        .run_with(TestSink::probe(), &mat);
    let error = probe.expect_error();
    assert!(error.to_string().contains("second broke"), "{error}");
    shutdown(&system);
}

/// `concat_lazy` starts the second source only once the first completes
/// (and more is asked for):
/// its failure comes after the first source's elements, it is
/// materialized only then, and not at all when the first fails.
#[test]
fn concat_lazy_starts_the_second_source_when_the_first_completes() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let (system, mat) = stream_system("concat-lazy");
    let mut probe = Source::range(1u32..=3)
        .concat_lazy(Source::failed(StreamError::msg("second broke")))
        .run_with(TestSink::probe(), &mat);
    assert_eq!(probe.request_next_n(3), vec![1, 2, 3]);
    probe.request(1);
    let error = probe.expect_error();
    assert!(error.to_string().contains("second broke"), "{error}");

    let started = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&started);
    // The poll function's factory runs when the source is materialized.
    let second = Source::from_poll_fn(move || {
        counter.fetch_add(1, Ordering::SeqCst);
        let mut next = 7u32..=8;
        move |_: &mut std::task::Context<'_>| std::task::Poll::Ready(next.next().map(Ok))
    });
    let lazy = weir_streams::testkit::TestSource::probe::<u32>().concat_lazy(second);
    for run in 0..2 {
        let (mut up, mut down) = lazy.clone().to_mat(TestSink::probe(), Keep::both).run(&mat);
        down.request(10);
        up.expect_request();
        up.send_next(1);
        assert_eq!(down.expect_next(), 1);
        assert_eq!(started.load(Ordering::SeqCst), run, "not started yet");
        up.send_complete();
        assert_eq!(down.expect_next_n(2), vec![7, 8]);
        down.expect_complete();
        assert_eq!(started.load(Ordering::SeqCst), run + 1, "started once");
    }
    // The first fails: the second never starts.
    let (mut up, mut down) = lazy.to_mat(TestSink::probe(), Keep::both).run(&mat);
    down.request(1);
    up.send_error(StreamError::msg("first broke"));
    assert!(down.expect_error().to_string().contains("first broke"));
    assert_eq!(started.load(Ordering::SeqCst), 2);
    shutdown(&system);
}

/// The `_mat` forms (Pekko's `concatMat`, `mergeMat`, ...): the combined
/// value holds the live materialized values of both sides (here probes
/// that drive the run), on a `Source` and on a `Flow`, fused and unfused.
mod mat_forms {
    use weir_streams::prelude::*;
    use weir_streams::testkit::{SourceProbe, TestSink, TestSource};
    use weir_tests::{QUIET, shutdown, stream_system};

    fn materializers(name: &str) -> (weir_actor::ActorSystem, [Materializer; 2]) {
        let (system, fused) = stream_system(name);
        let unfused = Materializer::builder(&system).fusion(false).build();
        (system, [fused, unfused])
    }

    type Probes = (SourceProbe<u32>, SourceProbe<u32>);

    #[test]
    fn concat_mat_keeps_both_sources_values() {
        let (system, mats) = materializers("concat-mat");
        for mat in &mats {
            let ((mut a, mut b), mut out): (Probes, _) = TestSource::probe::<u32>()
                .concat_mat(TestSource::probe::<u32>(), Keep::both)
                .to_mat(TestSink::probe(), Keep::both)
                .run(mat);
            out.request(2);
            a.expect_request();
            a.send_next(1);
            a.send_complete();
            b.expect_request();
            b.send_next(2);
            assert_eq!(out.expect_next_n(2), vec![1, 2]);
            b.expect_no_signal(QUIET);
            b.send_complete();
            out.expect_complete();
        }
        shutdown(&system);
    }

    #[test]
    fn merge_mat_and_or_else_mat_keep_both_sources_values() {
        let (system, mats) = materializers("merge-mat");
        for mat in &mats {
            let ((mut a, mut b), mut out): (Probes, _) = TestSource::probe::<u32>()
                .merge_mat(TestSource::probe::<u32>(), Keep::both)
                .to_mat(TestSink::probe(), Keep::both)
                .run(mat);
            out.request(1);
            b.expect_request();
            b.send_next(5);
            assert_eq!(out.expect_next(), 5);
            a.send_complete();
            b.send_complete();
            out.expect_complete();

            let ((mut a, mut b), mut out): (Probes, _) = TestSource::probe::<u32>()
                .or_else_mat(TestSource::probe::<u32>(), Keep::both)
                .to_mat(TestSink::probe(), Keep::both)
                .run(mat);
            out.request(1);
            a.send_complete();
            b.expect_request();
            b.send_next(6);
            assert_eq!(out.expect_next(), 6);
            b.send_complete();
            out.expect_complete();
        }
        shutdown(&system);
    }

    #[test]
    fn zip_mat_and_interleave_mat_keep_both_sources_values() {
        let (system, mats) = materializers("zip-mat");
        for mat in &mats {
            let ((mut a, mut b), mut out) = TestSource::probe::<u32>()
                .zip_mat(TestSource::probe::<char>(), Keep::both)
                .to_mat(TestSink::probe(), Keep::both)
                .run(mat);
            out.request(1);
            a.expect_request();
            b.expect_request();
            a.send_next(1);
            b.send_next('x');
            assert_eq!(out.expect_next(), (1, 'x'));
            b.send_complete();
            out.expect_complete();
            a.expect_cancellation();

            let ((mut a, mut b), mut out): (Probes, _) = TestSource::probe::<u32>()
                .interleave_mat(TestSource::probe::<u32>(), 1, Keep::both)
                .expect("1 is at least 1")
                .to_mat(TestSink::probe(), Keep::both)
                .run(mat);
            out.request(2);
            a.expect_request();
            a.send_next(1);
            b.expect_request();
            b.send_next(2);
            assert_eq!(out.expect_next_n(2), vec![1, 2]);
            a.send_complete();
            b.send_complete();
            out.expect_complete();
        }
        shutdown(&system);
    }

    #[test]
    fn also_to_mat_and_wire_tap_mat_keep_the_side_sinks_value() {
        let (system, mats) = materializers("also-to-mat");
        for mat in &mats {
            let (mut side, mut out) = Source::range(1u32..=2)
                .also_to_mat(TestSink::probe(), Keep::right)
                .to_mat(TestSink::probe(), Keep::both)
                .run(mat);
            out.request(2);
            // Broadcast: the main line waits for the side's demand.
            out.expect_no_message(QUIET);
            side.request(2);
            assert_eq!(out.expect_next_n(2), vec![1, 2]);
            assert_eq!(side.expect_next_n(2), vec![1, 2]);
            out.expect_complete();
            side.expect_complete();

            let (mut tap, mut out) = Source::range(1u32..=2)
                .wire_tap_mat(TestSink::probe(), Keep::right)
                .to_mat(TestSink::probe(), Keep::both)
                .run(mat);
            // The tap has not asked: the main line does not wait for it.
            assert_eq!(out.request_next_n(2), vec![1, 2]);
            out.expect_complete();
            tap.expect_complete();
        }
        shutdown(&system);
    }

    #[test]
    fn the_flow_forms_combine_the_flows_value() {
        let (system, mats) = materializers("flow-mat");
        for mat in &mats {
            let flow = Flow::<u32>::new()
                .map_materialized_value(|()| "flow")
                .concat_mat(
                    Source::single(9u32).map_materialized_value(|()| "other"),
                    Keep::both,
                );
            let ((_, (mine, other)), out) = Source::range(1u32..=2)
                .via_mat(flow, Keep::both)
                .to_mat(Sink::collect(), Keep::both)
                .run(mat);
            assert_eq!((mine, other), ("flow", "other"));
            assert_eq!(out.wait(), Ok(vec![1, 2, 9]));
        }
        shutdown(&system);
    }
}

/// The eager fluent forms (Pekko's `merge(that, eagerComplete = true)`
/// and `interleave(that, n, eagerClose = true)`): the stream ends with the
/// first input that ends, though the other never would, fused and
/// unfused; when the endless side is the one that stops first, the stream
/// ends too.
#[test]
fn the_eager_fluent_forms_end_with_the_first_input_to_end() {
    use weir_streams::testkit::{Received, TestSource};
    let (system, fused) = stream_system("eager-fluent");
    let unfused = Materializer::builder(&system).fusion(false).build();
    for mat in [&fused, &unfused] {
        let merged = Source::range(1u32..=3)
            .merge_eager(Source::repeat(0u32))
            .run_with(Sink::collect(), mat)
            .wait()
            .unwrap();
        let mine: Vec<u32> = merged.iter().copied().filter(|x| *x != 0).collect();
        assert_eq!(mine, vec![1, 2, 3], "{merged:?}");

        let interleaved = Source::range(1u32..=3)
            .interleave_eager(Source::repeat(0u32), 1)
            .unwrap()
            .run_with(Sink::collect(), mat);
        assert_eq!(interleaved.wait(), Ok(vec![1, 0, 2, 0, 3]));

        // The probe's side ends while the endless side still sends: its
        // completion ends the stream.
        let (mut probe, mut down) = TestSource::probe::<u32>()
            .merge_eager(Source::repeat(7u32))
            .to_mat(TestSink::probe(), Keep::both)
            .run(mat);
        down.request(2);
        assert_eq!(down.expect_next_n(2), vec![7, 7]);
        probe.send_complete();
        down.request(1000);
        let mut seen = 0;
        loop {
            match down.receive_within(std::time::Duration::from_secs(3)) {
                Some(Received::Next(_)) => seen += 1,
                Some(Received::Complete) => break,
                other => panic!("expected the end, got {other:?} after {seen}"),
            }
            assert!(seen < 1000, "the stream did not end");
        }
    }
    assert!(
        Source::range(1u32..=3)
            .interleave_eager(Source::empty(), 0)
            .is_err()
    );
    shutdown(&system);
}
