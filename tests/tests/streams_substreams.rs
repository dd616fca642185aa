//! Substreams: group_by, split_when, split_after and the SubFlow closers.
//! Scenarios after Pekko's FlowGroupBySpec, FlowSplitWhenSpec and
//! FlowSplitAfterSpec: routing and order, back-pressure, completion after
//! every substream, upstream failure reaching every substream, a
//! substream's cancellation, too many keys, the cancel strategies.

use std::sync::{Arc, Mutex};

use weir_streams::prelude::*;
use weir_streams::testkit::{TestSink, TestSource};
use weir_streams::{ErrorKind, SubstreamCancelStrategy};
use weir_tests::{PATIENCE, QUIET, eventually, shutdown, stream_system};

fn sorted<T: Ord>(mut v: Vec<T>) -> Vec<T> {
    v.sort();
    v
}

#[test]
fn group_by_routes_each_key_to_its_own_substream_in_order() {
    let (system, mat) = stream_system("group-by-order");
    let out = Source::range(1u32..=10)
        .group_by(3, |x| x % 3)
        .unwrap()
        .grouped(10)
        .unwrap()
        .merge_substreams()
        .run_with(Sink::collect(), &mat);
    assert_eq!(
        sorted(out.wait().unwrap()),
        vec![vec![1, 4, 7, 10], vec![2, 5, 8], vec![3, 6, 9]]
    );
    let empty = Source::<u32>::empty()
        .group_by(3, |x| x % 3)
        .unwrap()
        .merge_substreams()
        .run_with(Sink::collect(), &mat);
    assert_eq!(empty.wait(), Ok(vec![]));
    shutdown(&system);
}

#[test]
fn group_by_fails_with_a_typed_error_past_max_substreams() {
    let (system, mat) = stream_system("group-by-max");
    let (mut up, mut sink) = TestSource::probe::<u32>()
        .group_by(2, |x| *x)
        .unwrap()
        .merge_substreams()
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    sink.request(10);
    up.send_next(1);
    up.send_next(2);
    assert_eq!(sorted(sink.expect_next_n(2)), vec![1, 2]);
    up.send_next(3);
    let error = sink.expect_error();
    assert!(
        matches!(error.kind(), ErrorKind::TooManySubstreams { max: 2 }),
        "{error}"
    );
    up.expect_cancellation();
    assert!(Source::range(0u32..1).group_by(0, |x| *x).is_err());
    shutdown(&system);
}

#[test]
fn a_substream_flow_with_an_async_boundary_fails_with_a_typed_error() {
    let (system, mat) = stream_system("group-by-boundary");
    // A substream flow with an async boundary inside it.
    let result = Source::range(0u32..10)
        .group_by(2, |x| x % 2)
        .unwrap()
        .via_flow(Flow::<u32>::new().map(|x| x + 1).async_boundary())
        .merge_substreams()
        .run_with(Sink::collect(), &mat)
        .wait();
    let error = result.expect_err("an async boundary inside a substream is refused");
    assert!(
        matches!(error.kind(), ErrorKind::AsyncBoundaryInSubstream),
        "{error}"
    );
    shutdown(&system);
}

#[test]
fn upstream_failure_reaches_every_substream_and_the_merged_stream() {
    let (system, mat) = stream_system("group-by-fail");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let (mut up, mut sink) = TestSource::probe::<u32>()
        .group_by(4, |x| x % 3)
        .unwrap()
        .map_error(move |e| {
            record.lock().unwrap().push(e.to_string());
            e
        })
        .merge_substreams()
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    sink.request(10);
    for x in 0..3 {
        up.send_next(x);
    }
    assert_eq!(sorted(sink.expect_next_n(3)), vec![0, 1, 2]);
    up.send_error(weir_streams::StreamError::msg("upstream broke"));
    let error = sink.expect_error();
    assert!(error.to_string().contains("upstream broke"), "{error}");
    assert!(
        eventually(PATIENCE, || seen.lock().unwrap().len() == 3),
        "each substream saw the failure"
    );
    shutdown(&system);
}

#[test]
fn a_panicking_key_function_fails_the_stream() {
    let (system, mat) = stream_system("group-by-panic");
    let out = Source::range(0u32..5)
        .group_by(8, |x| if *x == 3 { panic!("no key for 3") } else { *x })
        .unwrap()
        .merge_substreams()
        .run_with(Sink::collect(), &mat);
    let error = out.wait().unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::Panicked(m) if m.contains("no key for 3")),
        "{error}"
    );
    shutdown(&system);
}

#[test]
fn a_cancelled_substream_drops_its_key_and_the_others_go_on() {
    let (system, mat) = stream_system("group-by-cancel-sub");
    // Key 0's substream takes one element and cancels; later 0s are dropped.
    let out = Source::from_iter(vec![0u32, 1, 0, 1, 0, 1])
        .group_by(2, |x| *x)
        .unwrap()
        .take(3)
        .map(|x| x * 10)
        .merge_substreams()
        .run_with(Sink::collect(), &mat);
    assert_eq!(sorted(out.wait().unwrap()), vec![0, 0, 0, 10, 10, 10]);
    let taken = Source::from_iter(vec![0u32, 1, 0, 1, 0, 1])
        .group_by(2, |x| *x)
        .unwrap()
        .take(1)
        .merge_substreams()
        .run_with(Sink::collect(), &mat);
    assert_eq!(taken.wait(), Ok(vec![0, 1]));
    shutdown(&system);
}

#[test]
fn downstream_cancellation_cancels_upstream_and_the_substreams() {
    let (system, mat) = stream_system("group-by-cancel");
    let (mut up, mut sink) = TestSource::probe::<u32>()
        .group_by(4, |x| x % 2)
        .unwrap()
        .merge_substreams()
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    sink.request(1);
    up.send_next(1);
    assert_eq!(sink.expect_next(), 1);
    sink.cancel();
    up.expect_cancellation();
    shutdown(&system);
}

#[test]
fn a_slow_substream_holds_back_the_others() {
    let (system, mat) = stream_system("group-by-backpressure");
    let (mut up, mut sink) = TestSource::probe::<u32>()
        .group_by(4, |x| x % 2)
        .unwrap()
        .merge_substreams()
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    sink.request(1);
    up.send_next(0);
    assert_eq!(sink.expect_next(), 0);
    // Key 0's substream holds its next element (no demand): upstream is
    // not asked for more, so key 1 waits too.
    up.send_next(2);
    up.send_next(1);
    sink.expect_no_message(QUIET);
    sink.request(2);
    assert_eq!(sink.expect_next_n(2), vec![2, 1]);
    up.send_complete();
    sink.request(1);
    sink.expect_complete();
    shutdown(&system);
}

#[test]
fn recreating_opens_a_new_substream_for_a_closed_key() {
    let (system, mat) = stream_system("group-by-recreate");
    let out = Source::from_iter(vec![7u32, 7, 7, 8, 7])
        .group_by_recreating(1, |x| *x % 2)
        .unwrap()
        .take(1)
        .merge_substreams()
        .run_with(Sink::collect(), &mat);
    assert_eq!(out.wait(), Ok(vec![7, 7, 7, 8, 7]));
    shutdown(&system);
}

#[test]
fn to_runs_one_sink_per_substream_and_completes_after_all() {
    let (system, mat) = stream_system("subflow-to");
    let sums = Arc::new(Mutex::new(Vec::new()));
    let record = sums.clone();
    let sink = Sink::fold(0u64, |a, x| a + x).map_materialized_value(move |done| {
        let record = record.clone();
        std::thread::spawn(move || record.lock().unwrap().push(done.wait().unwrap()));
    });
    let graph = Source::range(0u64..100)
        .group_by(4, |x| x % 4)
        .unwrap()
        .to(sink);
    graph.run(&mat);
    assert!(eventually(PATIENCE, || sums.lock().unwrap().len() == 4));
    assert_eq!(
        sorted(sums.lock().unwrap().clone()),
        vec![1200, 1225, 1250, 1275]
    );
    shutdown(&system);
}

#[test]
fn split_when_starts_a_substream_at_each_match() {
    let (system, mat) = stream_system("split-when");
    let out = Source::range(1u32..=5)
        .split_when(|x| *x == 3)
        .grouped(10)
        .unwrap()
        .concat_substreams()
        .run_with(Sink::collect(), &mat);
    assert_eq!(out.wait(), Ok(vec![vec![1, 2], vec![3, 4, 5]]));
    // The first element opens the first substream even when it matches;
    // a predicate always true gives one substream per element.
    let each = Source::range(1u32..=3)
        .split_when(|_| true)
        .grouped(10)
        .unwrap()
        .concat_substreams()
        .run_with(Sink::collect(), &mat);
    assert_eq!(each.wait(), Ok(vec![vec![1], vec![2], vec![3]]));
    shutdown(&system);
}

#[test]
fn split_after_ends_a_substream_after_each_match() {
    let (system, mat) = stream_system("split-after");
    let out = Source::range(1u32..=5)
        .split_after(|x| *x == 3)
        .grouped(10)
        .unwrap()
        .concat_substreams()
        .run_with(Sink::collect(), &mat);
    assert_eq!(out.wait(), Ok(vec![vec![1, 2, 3], vec![4, 5]]));
    let merged = Source::range(1u32..=9)
        .split_after(|x| x % 3 == 0)
        .fold(0, |a, x| a + x)
        .merge_substreams()
        .run_with(Sink::collect(), &mat);
    assert_eq!(sorted(merged.wait().unwrap()), vec![6, 15, 24]);
    shutdown(&system);
}

#[test]
fn split_cancel_strategies_drain_or_propagate() {
    let (system, mat) = stream_system("split-cancel");
    let drained = Source::range(1u32..=9)
        .split_when_with(SubstreamCancelStrategy::Drain, |x| x % 3 == 1)
        .take(1)
        .concat_substreams()
        .run_with(Sink::collect(), &mat);
    assert_eq!(drained.wait(), Ok(vec![1, 4, 7]));
    let (mut up, mut sink) = TestSource::probe::<u32>()
        .split_after_with(SubstreamCancelStrategy::Propagate, |x| x % 3 == 0)
        .take(1)
        .concat_substreams()
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    sink.request(10);
    up.send_next(1);
    assert_eq!(sink.expect_next(), 1);
    up.send_next(2);
    up.expect_cancellation();
    sink.expect_complete();
    shutdown(&system);
}

#[test]
fn split_substreams_see_an_upstream_failure() {
    let (system, mat) = stream_system("split-fail");
    let (mut up, mut sink) = TestSource::probe::<u32>()
        .split_when(|x| *x == 0)
        .concat_substreams()
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    sink.request(10);
    up.send_next(1);
    assert_eq!(sink.expect_next(), 1);
    up.send_error(weir_streams::StreamError::msg("broken"));
    assert!(sink.expect_error().to_string().contains("broken"));
    shutdown(&system);
}

#[test]
fn subflows_nest_and_rerun() {
    let (system, mat) = stream_system("subflow-nest");
    let graph = Source::range(0u32..40)
        .group_by(2, |x| x % 2)
        .unwrap()
        .group_by(2, |x| x % 4 < 2)
        .unwrap()
        .fold(0, |a, x| a + x)
        .merge_substreams()
        .merge_substreams()
        .to_mat(Sink::collect(), Keep::right);
    for _ in 0..2 {
        let sums = sorted(graph.run(&mat).wait().unwrap());
        assert_eq!(sums.iter().sum::<u32>(), (0..40).sum());
        assert_eq!(sums.len(), 4);
    }
    shutdown(&system);
}

// prefix_and_tail and flat_map_prefix, after Pekko's FlowPrefixAndTailSpec.

#[test]
fn prefix_and_tail_splits_off_the_first_elements() {
    let (system, mat) = stream_system("prefix-tail");
    let head = |source: Source<u32>, n: usize| {
        source
            .prefix_and_tail(n)
            .run_with(Sink::head(), &mat)
            .wait()
            .unwrap()
    };
    let (prefix, tail) = head(Source::range(1..=10), 3);
    assert_eq!(prefix, vec![1, 2, 3]);
    assert_eq!(
        tail.run_with(Sink::collect(), &mat).wait(),
        Ok((4..=10).collect())
    );
    // Fewer elements than asked: the tail is empty.
    let (prefix, tail) = head(Source::range(1..=2), 5);
    assert_eq!(prefix, vec![1, 2]);
    assert_eq!(tail.run_with(Sink::collect(), &mat).wait(), Ok(vec![]));
    // Zero: everything is in the tail; empty input: an empty pair.
    let (prefix, tail) = head(Source::range(1..=3), 0);
    assert!(prefix.is_empty());
    assert_eq!(
        tail.run_with(Sink::collect(), &mat).wait(),
        Ok(vec![1, 2, 3])
    );
    let (prefix, tail) = head(Source::empty(), 2);
    assert!(prefix.is_empty());
    assert_eq!(tail.run_with(Sink::collect(), &mat).wait(), Ok(vec![]));
    shutdown(&system);
}

#[test]
fn the_tail_runs_once_and_carries_failure_and_cancellation() {
    let (system, mat) = stream_system("prefix-tail-edges");
    let (mut up, pair) = TestSource::probe::<u32>()
        .prefix_and_tail(1)
        .to_mat(Sink::head(), Keep::both)
        .run(&mat);
    up.send_next(1);
    let (prefix, tail) = pair.wait().unwrap();
    assert_eq!(prefix, vec![1]);
    let mut tail_sink = tail.clone().run_with(TestSink::probe(), &mat);
    let second = tail.run_with(Sink::collect(), &mat);
    assert!(second.wait().unwrap_err().to_string().contains("only once"));
    tail_sink.request(1);
    up.send_next(2);
    assert_eq!(tail_sink.expect_next(), 2);
    up.send_error(weir_streams::StreamError::msg("late failure"));
    assert!(
        tail_sink
            .expect_error()
            .to_string()
            .contains("late failure")
    );

    let (mut up, pair) = TestSource::probe::<u32>()
        .prefix_and_tail(1)
        .to_mat(Sink::head(), Keep::both)
        .run(&mat);
    up.send_next(1);
    let (_, tail) = pair.wait().unwrap();
    let mut tail_sink = tail.run_with(TestSink::probe(), &mat);
    tail_sink.cancel();
    up.expect_cancellation();

    // A failure before the prefix is full fails the pair's stream.
    let failed = Source::<u32>::failed(weir_streams::StreamError::msg("early"))
        .prefix_and_tail(2)
        .run_with(Sink::head(), &mat);
    assert!(failed.wait().unwrap_err().to_string().contains("early"));
    shutdown(&system);
}

#[test]
fn flat_map_prefix_picks_the_flow_from_the_prefix() {
    let (system, mat) = stream_system("flat-map-prefix");
    let out = Source::range(1u32..=6)
        .flat_map_prefix(2, |prefix| {
            let offset: u32 = prefix.iter().sum();
            Flow::<u32>::new().map(move |x| x + offset)
        })
        .run_with(Sink::collect(), &mat);
    assert_eq!(out.wait(), Ok(vec![6, 7, 8, 9]));
    let short = Source::range(1u32..=1)
        .flat_map_prefix(3, |prefix| {
            Flow::<u32>::new().map(move |x| x + prefix.len() as u32)
        })
        .run_with(Sink::collect(), &mat);
    assert_eq!(short.wait(), Ok(vec![]));
    shutdown(&system);
}

/// `group_by_with_key`: each substream's elements come with their key
/// (computed once per element); the key function runs once per element;
/// too many keys and upstream failure behave as for `group_by`.
#[test]
fn group_by_with_key_hands_each_substream_its_key() {
    let (system, mat) = stream_system("group-by-with-key");
    let calls = Arc::new(Mutex::new(0));
    let counted = calls.clone();
    let firsts = Source::range(0u32..9)
        .group_by_with_key(3, move |x| {
            *counted.lock().unwrap() += 1;
            x % 3
        })
        .unwrap()
        .take(1)
        .map(|(key, _)| key)
        .merge_substreams()
        .run_with(Sink::collect(), &mat);
    assert_eq!(sorted(firsts.wait().unwrap()), vec![0, 1, 2]);
    assert_eq!(*calls.lock().unwrap(), 9, "one key per element");

    let sums = Source::range(0u32..9)
        .group_by_with_key(3, |x| x % 3)
        .unwrap()
        .fold((0, 0), |(_, sum), (key, x)| (key, sum + x))
        .merge_substreams()
        .run_with(Sink::collect(), &mat);
    assert_eq!(sorted(sums.wait().unwrap()), vec![(0, 9), (1, 12), (2, 15)]);

    let too_many = Source::range(0u32..9)
        .group_by_with_key(2, |x| x % 3)
        .unwrap()
        .merge_substreams()
        .run_with(Sink::ignore(), &mat);
    let error = too_many.wait().unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::TooManySubstreams { max: 2 }),
        "{error:?}"
    );

    let (mut up, mut down) = TestSource::probe::<u32>()
        .group_by_with_key(4, |x| *x)
        .unwrap()
        .merge_substreams()
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    down.request(1);
    up.expect_request();
    up.send_next(7);
    assert_eq!(down.expect_next(), (7, 7));
    up.send_error(StreamError::msg("up"));
    assert!(down.expect_error().to_string().contains("up"));
    assert!(Source::range(0u32..1).group_by_with_key(0, |x| *x).is_err());
    shutdown(&system);
}

/// A panic in `group_by`'s key function or a `split_*` predicate asks the
/// stage's supervision strategy (set on the closed substreams): resume
/// drops that element; without a strategy the stream fails. Fused into an
/// iterator source, with fusion off, and behind a probe.
#[test]
fn substream_key_functions_and_predicates_honour_supervision() {
    use weir_streams::{Attributes, SupervisionStrategy};
    let (system, mat) = stream_system("substreams-supervised");
    let unfused = Materializer::builder(&system).fusion(false).build();
    let resume = || Attributes::new().with_supervision_strategy(SupervisionStrategy::resuming());
    let key = |x: &u32| {
        assert!(*x != 13, "unlucky key");
        x % 2
    };
    let split = |x: &u32| {
        assert!(*x != 13, "unlucky split");
        x.is_multiple_of(10)
    };
    let input = || vec![1u32, 2, 13, 3, 10, 11];
    for mat in [&mat, &unfused] {
        let grouped = |attributes: Option<Attributes>| {
            let merged = Source::from_iter(input())
                .group_by(2, key)
                .unwrap()
                .merge_substreams();
            let merged = match attributes {
                Some(a) => merged.with_attributes(a),
                None => merged,
            };
            merged.run_with(Sink::collect(), mat).wait()
        };
        assert_eq!(
            sorted(grouped(Some(resume())).unwrap()),
            vec![1, 2, 3, 10, 11]
        );
        assert!(grouped(None).is_err());

        let when = Source::from_iter(input())
            .split_when(split)
            .grouped(10)
            .unwrap()
            .concat_substreams()
            .with_attributes(resume())
            .run_with(Sink::collect(), mat);
        assert_eq!(when.wait(), Ok(vec![vec![1, 2, 3], vec![10, 11]]));

        let after = Source::from_iter(input())
            .split_after(split)
            .grouped(10)
            .unwrap()
            .concat_substreams()
            .with_attributes(resume())
            .run_with(Sink::collect(), mat);
        assert_eq!(after.wait(), Ok(vec![vec![1, 2, 3, 10], vec![11]]));
        let failing = Source::from_iter(input())
            .split_after(split)
            .concat_substreams()
            .run_with(Sink::collect(), mat);
        assert!(failing.wait().is_err());
    }
    // Behind a probe: the stage's own inlet.
    let (mut up, mut down) = TestSource::probe::<u32>()
        .group_by(2, key)
        .unwrap()
        .merge_substreams()
        .with_attributes(resume())
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    down.request(2);
    up.expect_request();
    up.send_next(13);
    up.expect_request();
    up.send_next(4);
    assert_eq!(down.expect_next(), 4);
    up.send_complete();
    down.expect_complete();
    shutdown(&system);
}

/// `concat_substreams` (and `merge_substreams`) ask each substream they
/// take in for one element at once and again after each element, ahead of
/// demand, as Pekko's `FlattenMerge` does: `group_by(3, x % 3).take(1)`,
/// one element asked for; 300 goes out and its substream ends; 928 opens
/// the next substream, which is asked at once, so `take(1)` takes 928 and
/// ends, and `group_by` asks upstream again, with no more demand. Weir
/// asked a substream only when downstream did: 928 waited, and upstream
/// was not asked again. Fused and unfused.
#[test]
fn substreams_are_asked_one_element_ahead_of_demand() {
    let (system, fused) = stream_system("substreams-ahead");
    let unfused = Materializer::builder(&system).fusion(false).build();
    for mat in [&fused, &unfused] {
        for merge in [false, true] {
            let sub = TestSource::probe::<u32>()
                .group_by(3, |x| x % 3)
                .unwrap()
                .take(1);
            let closed = if merge {
                sub.merge_substreams()
            } else {
                sub.concat_substreams()
            };
            let (mut up, mut down) = closed.to_mat(TestSink::probe(), Keep::both).run(mat);
            down.request(1);
            up.expect_request();
            up.send_next(300);
            assert_eq!(down.expect_next(), 300);
            up.expect_request();
            up.send_next(928);
            // The new substream is asked without demand: it takes 928 and
            // ends, and upstream is asked for the next element.
            up.expect_request();
            down.request(1);
            assert_eq!(down.expect_next(), 928);
            up.send_complete();
            down.expect_complete();
        }
    }
    shutdown(&system);
}
