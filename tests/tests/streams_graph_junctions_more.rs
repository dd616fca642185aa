//! MergePrioritized and ZipLatest: completion, failure, cancellation and back-pressure (after Pekko's GraphMergePrioritizedSpec and GraphZipLatestSpec).

use weir_streams::graph::{GraphBuilder, MergePrioritized, ZipLatest};
use weir_streams::prelude::*;
use weir_streams::testkit::{SinkProbe, SourceProbe, TestSink, TestSource};
use weir_streams::{ArgumentError, StreamError};
use weir_tests::{QUIET, shutdown, stream_system};

// ---- MergePrioritized ----

/// Sources that are always ready, merged with `priorities`; the probe
/// asks for one element at a time and lets the island settle in between,
/// so every input has an element waiting at each ask.
fn shares<const N: usize>(priorities: [u32; N], total: usize) -> [usize; N] {
    let (system, mat) = stream_system("prioritized-shares");
    let mut b = GraphBuilder::new();
    let merge = b.add(MergePrioritized::<usize, N>::new(priorities).unwrap());
    for (i, inlet) in merge.ins().into_iter().enumerate() {
        let source = b.source(Source::repeat(i));
        b.connect(source, inlet).unwrap();
    }
    let (sink, probe) = b.sink_mat(TestSink::probe());
    b.connect(merge.out(), sink).unwrap();
    let mut down = b.build(move |m| m.take(&probe)).unwrap().run(&mat);
    let mut counts = [0; N];
    for _ in 0..total {
        down.wait_idle();
        down.request(1);
        counts[down.expect_next()] += 1;
    }
    down.cancel();
    shutdown(&system);
    counts
}

#[test]
fn merge_prioritized_serves_waiting_inputs_in_proportion_to_their_priorities() {
    assert_eq!(shares([1, 2, 3], 600), [100, 200, 300]);
    assert_eq!(shares([1, 9], 200), [20, 180]);
    assert_eq!(shares([5, 5], 100), [50, 50]);
}

/// Two probe sources merged with priorities 1 and 4 into a probe sink.
fn prioritized(
    mat: &Materializer,
    eager: bool,
) -> (SourceProbe<u32>, SourceProbe<u32>, SinkProbe<u32>) {
    let mut b = GraphBuilder::new();
    let (a, ka) = b.source_mat(TestSource::probe::<u32>());
    let (c, kc) = b.source_mat(TestSource::probe::<u32>());
    let stage = MergePrioritized::<u32, 2>::new([1, 4]).unwrap();
    let merge = b.add(if eager { stage.eager_complete() } else { stage });
    let (sink, ks) = b.sink_mat(TestSink::probe());
    let [i0, i1] = merge.ins();
    b.connect(a, i0).unwrap();
    b.connect(c, i1).unwrap();
    b.connect(merge.out(), sink).unwrap();
    b.build(move |m| (m.take(&ka), m.take(&kc), m.take(&ks)))
        .unwrap()
        .run(mat)
}

#[test]
fn merge_prioritized_serves_a_lone_input_whatever_its_priority_and_completes_when_all_have() {
    let (system, mat) = stream_system("prioritized-complete");
    let (mut a, mut c, mut down) = prioritized(&mat, false);
    down.request(3);
    a.send_next(1);
    assert_eq!(down.expect_next(), 1);
    a.send_next(2);
    assert_eq!(down.expect_next(), 2);
    a.send_complete();
    down.expect_no_message(QUIET);
    c.send_next(3);
    assert_eq!(down.expect_next(), 3);
    c.send_complete();
    down.expect_complete();
    shutdown(&system);
}

#[test]
fn merge_prioritized_with_eager_complete_completes_with_the_first_input() {
    let (system, mat) = stream_system("prioritized-eager");
    let (mut a, mut c, mut down) = prioritized(&mat, true);
    down.request(1);
    c.send_complete();
    down.expect_complete();
    a.expect_cancellation();
    shutdown(&system);
}

#[test]
fn merge_prioritized_fails_with_an_input_and_cancels_the_other() {
    let (system, mat) = stream_system("prioritized-fail");
    let (mut a, mut c, mut down) = prioritized(&mat, false);
    down.request(1);
    c.send_error(StreamError::msg("boom"));
    assert!(down.expect_error().to_string().contains("boom"));
    a.expect_cancellation();
    shutdown(&system);
}

#[test]
fn merge_prioritized_cancels_both_inputs_when_downstream_cancels() {
    let (system, mat) = stream_system("prioritized-cancel");
    let (mut a, mut c, mut down) = prioritized(&mat, false);
    down.cancel();
    a.expect_cancellation();
    c.expect_cancellation();
    shutdown(&system);
}

#[test]
fn merge_prioritized_asks_an_input_again_only_after_its_element_is_out() {
    let (system, mat) = stream_system("prioritized-bp");
    let (mut a, mut c, mut down) = prioritized(&mat, false);
    a.expect_request();
    c.expect_request();
    a.send_next(1);
    c.send_next(2);
    a.expect_no_signal(QUIET);
    c.expect_no_signal(QUIET);
    // Both wait: the higher priority (input 1) goes first.
    down.request(1);
    assert_eq!(down.expect_next(), 2);
    c.expect_request();
    a.expect_no_signal(QUIET);
    down.request(1);
    assert_eq!(down.expect_next(), 1);
    a.expect_request();
    shutdown(&system);
}

#[test]
fn merge_prioritized_rejects_a_zero_priority() {
    let err = MergePrioritized::<u32, 3>::new([1, 0, 2]).unwrap_err();
    assert!(
        matches!(
            err,
            ArgumentError::Zero {
                argument: "priorities"
            }
        ),
        "{err:?}"
    );
    let fluent = Source::single(1u32).merge_prioritized(Source::single(2), 0, 1);
    assert!(fluent.is_err());
}

#[test]
fn fluent_merge_prioritized_and_merge_preferred_give_every_element() {
    let (system, mat) = stream_system("prioritized-fluent");
    let mut got = Source::range(0u32..100)
        .merge_prioritized(Source::range(100u32..150), 2, 3)
        .unwrap()
        .run_with(Sink::collect(), &mat)
        .wait()
        .unwrap();
    got.sort_unstable();
    assert_eq!(got, (0..150).collect::<Vec<_>>());
    for prefer_this in [true, false] {
        let mut got = Source::range(0u32..100)
            .merge_preferred(Source::range(100u32..150), prefer_this)
            .run_with(Sink::collect(), &mat)
            .wait()
            .unwrap();
        got.sort_unstable();
        assert_eq!(got, (0..150).collect::<Vec<_>>());
    }
    shutdown(&system);
}

#[test]
fn fluent_merge_preferred_serves_the_preferred_side_first() {
    let (system, mat) = stream_system("preferred-fluent");
    for (prefer_this, first) in [(true, 1), (false, 2)] {
        let (mut mine, mut down) = TestSource::probe::<u32>()
            .merge_preferred(Source::repeat(2u32), prefer_this)
            .to_mat(TestSink::probe(), Keep::both)
            .run(&mat);
        mine.send_next(1);
        // Both sides have an element waiting when downstream asks.
        down.wait_idle();
        down.request(1);
        assert_eq!(down.expect_next(), first, "prefer_this: {prefer_this}");
        down.cancel();
    }
    shutdown(&system);
}

// ---- ZipLatest ----

/// Probe sources of numbers and letters zipped latest into a probe sink.
fn zip_latest(mat: &Materializer) -> (SourceProbe<u32>, SourceProbe<char>, SinkProbe<(u32, char)>) {
    let mut b = GraphBuilder::new();
    let (a, ka) = b.source_mat(TestSource::probe::<u32>());
    let (c, kc) = b.source_mat(TestSource::probe::<char>());
    let zip = b.add(ZipLatest::<u32, char>::new());
    let (sink, ks) = b.sink_mat(TestSink::probe());
    b.connect(a, zip.in0()).unwrap();
    b.connect(c, zip.in1()).unwrap();
    b.connect(zip.out(), sink).unwrap();
    b.build(move |m| (m.take(&ka), m.take(&kc), m.take(&ks)))
        .unwrap()
        .run(mat)
}

#[test]
fn zip_latest_emits_only_once_both_inputs_have_an_element() {
    let (system, mat) = stream_system("zip-latest-first");
    let (mut a, mut c, mut down) = zip_latest(&mat);
    down.request(1);
    a.send_next(1);
    a.send_next(2);
    down.expect_no_message(QUIET);
    c.send_next('x');
    // Only the latest of the first input counts.
    assert_eq!(down.expect_next(), (2, 'x'));
    shutdown(&system);
}

#[test]
fn zip_latest_combines_each_new_element_with_the_latest_of_the_other() {
    let (system, mat) = stream_system("zip-latest-each");
    let (mut a, mut c, mut down) = zip_latest(&mat);
    down.request(3);
    a.send_next(1);
    c.send_next('x');
    assert_eq!(down.expect_next(), (1, 'x'));
    a.send_next(2);
    assert_eq!(down.expect_next(), (2, 'x'));
    c.send_next('y');
    assert_eq!(down.expect_next(), (2, 'y'));
    shutdown(&system);
}

#[test]
fn zip_latest_does_not_emit_the_same_pair_twice_but_does_not_deduplicate_values() {
    let (system, mat) = stream_system("zip-latest-stale");
    let (mut a, mut c, mut down) = zip_latest(&mat);
    down.request(1);
    a.send_next(1);
    c.send_next('x');
    assert_eq!(down.expect_next(), (1, 'x'));
    // A pull with nothing new emits nothing.
    down.request(1);
    down.expect_no_message(QUIET);
    // The same value again is a new element.
    a.send_next(1);
    assert_eq!(down.expect_next(), (1, 'x'));
    shutdown(&system);
}

#[test]
fn zip_latest_back_pressures_each_input_once_both_have_given_an_element() {
    let (system, mat) = stream_system("zip-latest-bp");
    let (mut a, mut c, mut down) = zip_latest(&mat);
    a.expect_request();
    c.expect_request();
    // Before the first pair, an input is asked again after each element.
    a.send_next(1);
    a.expect_request();
    c.send_next('x');
    a.send_next(2);
    // Both have elements and downstream has not asked: no more requests.
    a.expect_no_signal(QUIET);
    c.expect_no_signal(QUIET);
    down.request(1);
    assert_eq!(down.expect_next(), (2, 'x'));
    a.expect_request();
    c.expect_request();
    shutdown(&system);
}

#[test]
fn zip_latest_completes_when_either_input_completes() {
    let (system, mat) = stream_system("zip-latest-complete");
    for first_completes in [true, false] {
        let (mut a, mut c, mut down) = zip_latest(&mat);
        down.request(2);
        a.send_next(1);
        c.send_next('x');
        assert_eq!(down.expect_next(), (1, 'x'));
        if first_completes {
            a.send_complete();
            c.expect_cancellation();
        } else {
            c.send_complete();
            a.expect_cancellation();
        }
        down.expect_complete();
    }
    shutdown(&system);
}

#[test]
fn zip_latest_completes_without_a_pair_when_an_input_completes_empty() {
    let (system, mat) = stream_system("zip-latest-empty");
    let (mut a, mut c, mut down) = zip_latest(&mat);
    down.request(1);
    a.send_next(1);
    c.send_complete();
    down.expect_complete();
    a.expect_cancellation();
    shutdown(&system);
}

#[test]
fn zip_latest_emits_a_waiting_pair_before_completing() {
    let (system, mat) = stream_system("zip-latest-drain");
    let (mut a, mut c, mut down) = zip_latest(&mat);
    a.send_next(1);
    c.send_next('x');
    a.send_complete();
    down.expect_no_message(QUIET);
    down.request(1);
    assert_eq!(down.expect_next(), (1, 'x'));
    down.expect_complete();
    shutdown(&system);
}

#[test]
fn zip_latest_fails_when_either_input_fails() {
    let (system, mat) = stream_system("zip-latest-fail");
    for first_fails in [true, false] {
        let (mut a, mut c, mut down) = zip_latest(&mat);
        down.request(1);
        if first_fails {
            a.send_error(StreamError::msg("boom"));
            c.expect_cancellation();
        } else {
            c.send_error(StreamError::msg("boom"));
            a.expect_cancellation();
        }
        assert!(down.expect_error().to_string().contains("boom"));
    }
    shutdown(&system);
}

#[test]
fn zip_latest_cancels_both_inputs_when_downstream_cancels() {
    let (system, mat) = stream_system("zip-latest-cancel");
    let (mut a, mut c, mut down) = zip_latest(&mat);
    down.cancel();
    a.expect_cancellation();
    c.expect_cancellation();
    shutdown(&system);
}
