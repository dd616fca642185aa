//! Flattening: flat_map_concat, flat_map_merge, switch_map, flatten.
//! Scenarios after Pekko's FlowFlatMapConcatSpec and FlowFlattenMergeSpec:
//! order, laziness, breadth, failure of the outer or an inner source,
//! cancellation reaching every running inner source, and each form an
//! inner source can run in (fused iterator, sub-island, own stream).

use std::sync::mpsc::{Receiver, channel};

use weir_streams::prelude::*;
use weir_streams::testkit::{SourceProbe, TestSink, TestSource};
use weir_streams::{ErrorKind, StreamError};
use weir_tests::{PATIENCE, QUIET, shutdown, stream_system};

/// A factory of inner probe sources; the test gets each probe as it is
/// materialized (the inner materialized value is otherwise dropped).
fn probes<T: Send + 'static>() -> (
    impl Fn() -> Source<T> + Clone + Send + Sync + 'static,
    Receiver<SourceProbe<T>>,
) {
    let (tx, rx) = channel();
    let tx = std::sync::Arc::new(std::sync::Mutex::new(tx));
    let make = move || {
        let tx = tx.clone();
        TestSource::probe::<T>().map_materialized_value(move |probe| {
            tx.lock()
                .unwrap()
                .send(probe)
                .expect("the test holds the receiver");
        })
    };
    (make, rx)
}

#[test]
fn concat_emits_inner_sources_in_order() {
    let (system, mat) = stream_system("fmc-order");
    let out = Source::range(0u32..5)
        .flat_map_concat(|n| Source::range(n * 10..n * 10 + n).map(|x| x + 1))
        .run_with(Sink::collect(), &mat);
    assert_eq!(out.wait(), Ok(vec![11, 21, 22, 31, 32, 33, 41, 42, 43, 44]));
    let many = Source::range(0u64..100)
        .flat_map_concat(|n| Source::range(0..n))
        .run_with(Sink::fold(0u64, |a, x| a + x), &mat);
    assert_eq!(
        many.wait(),
        Ok((0..100u64).map(|n| n * n.saturating_sub(1) / 2).sum())
    );
    shutdown(&system);
}

#[test]
fn flatten_runs_a_source_of_sources_with_empty_and_single_ones() {
    let (system, mat) = stream_system("flatten");
    let sources = Source::from_iter(vec![
        Source::<u8>::empty(),
        Source::single(1),
        Source::empty(),
        Source::range(2u8..5),
        Source::empty(),
    ]);
    assert_eq!(
        sources.flatten().run_with(Sink::collect(), &mat).wait(),
        Ok(vec![1, 2, 3, 4])
    );
    let none = Source::<Source<u8>>::empty()
        .flatten()
        .run_with(Sink::collect(), &mat);
    assert_eq!(none.wait(), Ok(vec![]));
    shutdown(&system);
}

#[test]
fn concat_materializes_the_next_inner_only_after_the_current_completes() {
    let (system, mat) = stream_system("fmc-lazy");
    let (make, made) = probes::<u32>();
    let mut sink = Source::range(0u32..3)
        .flat_map_concat(move |_| make())
        .run_with(TestSink::probe(), &mat);
    sink.request(10);
    let mut first = made.recv_timeout(PATIENCE).unwrap();
    first.send_next(1);
    assert_eq!(sink.expect_next(), 1);
    assert!(
        made.recv_timeout(QUIET).is_err(),
        "the second inner waits for the first"
    );
    first.send_complete();
    let mut second = made.recv_timeout(PATIENCE).unwrap();
    second.send_next(2);
    second.send_complete();
    let mut third = made.recv_timeout(PATIENCE).unwrap();
    third.send_next(3);
    third.send_complete();
    assert_eq!(sink.expect_next_n(2), vec![2, 3]);
    sink.expect_complete();
    shutdown(&system);
}

#[test]
fn a_failing_inner_source_fails_the_stream_and_cancels_upstream() {
    let (system, mat) = stream_system("fmc-inner-fail");
    let (make, made) = probes::<u32>();
    let (mut outer, mut sink) = TestSource::probe::<u32>()
        .flat_map_concat(move |_| make())
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    sink.request(1);
    outer.send_next(0);
    let mut inner = made.recv_timeout(PATIENCE).unwrap();
    inner.send_error(StreamError::msg("inner broke"));
    let error = sink.expect_error();
    assert!(
        matches!(error.kind(), ErrorKind::Message(m) if m == "inner broke"),
        "{error}"
    );
    outer.expect_cancellation();
    // A fused inner source's failure (a panic in its operator) fails it too.
    let panicking = Source::range(0u32..3)
        .flat_map_concat(|n| {
            Source::range(0..3u32).map(move |x| {
                if n == 1 && x == 1 {
                    panic!("bad inner")
                } else {
                    x
                }
            })
        })
        .run_with(Sink::collect(), &mat);
    let error = panicking.wait().unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::Panicked(m) if m.contains("bad inner")),
        "{error}"
    );
    shutdown(&system);
}

#[test]
fn an_outer_failure_cancels_the_running_inner_source() {
    let (system, mat) = stream_system("fmc-outer-fail");
    let (make, made) = probes::<u32>();
    let (mut outer, mut sink) = TestSource::probe::<u32>()
        .flat_map_concat(move |_| make())
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    sink.request(1);
    outer.send_next(0);
    let mut inner = made.recv_timeout(PATIENCE).unwrap();
    outer.send_error(StreamError::msg("outer broke"));
    inner.expect_cancellation();
    let error = sink.expect_error();
    assert!(
        matches!(error.kind(), ErrorKind::Message(m) if m == "outer broke"),
        "{error}"
    );
    shutdown(&system);
}

#[test]
fn cancelling_downstream_cancels_every_running_inner_source() {
    let (system, mat) = stream_system("fmm-cancel");
    let (make, made) = probes::<u32>();
    let (mut outer, mut sink) = TestSource::probe::<u32>()
        .flat_map_merge(3, move |_| make())
        .unwrap()
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    sink.request(1);
    for n in 0..3 {
        outer.send_next(n);
    }
    let mut inners: Vec<_> = (0..3)
        .map(|_| made.recv_timeout(PATIENCE).unwrap())
        .collect();
    sink.cancel();
    for inner in &mut inners {
        inner.expect_cancellation();
    }
    outer.expect_cancellation();
    shutdown(&system);
}

#[test]
fn merge_runs_at_most_breadth_inner_sources_at_once() {
    let (system, mat) = stream_system("fmm-breadth");
    let (make, made) = probes::<u32>();
    let mut sink = Source::range(0u32..10)
        .flat_map_merge(2, move |_| make())
        .unwrap()
        .run_with(TestSink::probe(), &mat);
    sink.request(100);
    let mut a = made.recv_timeout(PATIENCE).unwrap();
    let mut b = made.recv_timeout(PATIENCE).unwrap();
    assert!(
        made.recv_timeout(QUIET).is_err(),
        "a third inner waits for a free slot"
    );
    b.send_next(2);
    a.send_next(1);
    let mut got = sink.expect_next_n(2);
    got.sort_unstable();
    assert_eq!(got, vec![1, 2]);
    a.send_complete();
    let mut c = made.recv_timeout(PATIENCE).unwrap();
    c.send_next(3);
    assert_eq!(sink.expect_next(), 3);
    b.send_complete();
    c.send_complete();
    for _ in 3..10 {
        made.recv_timeout(PATIENCE).unwrap().send_complete();
    }
    sink.expect_complete();
    shutdown(&system);
}

#[test]
fn merge_interleaves_inner_sources_that_are_ready() {
    let (system, mat) = stream_system("fmm-all");
    let out = Source::range(0u32..50)
        .flat_map_merge(8, |n| Source::range(0..n).map(move |x| (n, x)))
        .unwrap()
        .run_with(Sink::collect(), &mat);
    let got = out.wait().unwrap();
    assert_eq!(got.len(), (0..50u32).sum::<u32>() as usize);
    // Each inner source's elements stay in their order.
    for n in 0..50 {
        let of_n: Vec<u32> = got
            .iter()
            .filter(|(k, _)| *k == n)
            .map(|(_, x)| *x)
            .collect();
        assert_eq!(of_n, (0..n).collect::<Vec<_>>());
    }
    shutdown(&system);
}

#[test]
fn switch_map_cancels_the_current_inner_source_on_a_new_element() {
    let (system, mat) = stream_system("switch-map");
    let (make, made) = probes::<u32>();
    let (mut outer, mut sink) = TestSource::probe::<u32>()
        .switch_map(move |_| make())
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    sink.request(10);
    outer.send_next(0);
    let mut first = made.recv_timeout(PATIENCE).unwrap();
    first.send_next(1);
    assert_eq!(sink.expect_next(), 1);
    outer.send_next(1);
    first.expect_cancellation();
    let mut second = made.recv_timeout(PATIENCE).unwrap();
    second.send_next(2);
    assert_eq!(sink.expect_next(), 2);
    outer.send_complete();
    sink.expect_no_message(QUIET);
    second.send_complete();
    sink.expect_complete();
    shutdown(&system);
}

#[test]
fn inner_sources_with_their_own_boundary_or_stages_run_too() {
    let (system, mat) = stream_system("fmc-forms");
    // With its own async boundary: a separate stream.
    let bounded = Source::range(0u32..4)
        .flat_map_concat(|n| Source::range(0..n).async_boundary().map(|x| x * 2))
        .run_with(Sink::collect(), &mat);
    assert_eq!(bounded.wait(), Ok(vec![0, 0, 2, 0, 2, 4]));
    // A stage the planner does not fuse (buffer): a sub-island.
    let staged = Source::range(0u32..4)
        .flat_map_concat(|n| {
            Source::range(0..n)
                .buffer(2, weir_streams::OverflowStrategy::Backpressure)
                .unwrap()
                .scan(0, |a, x| a + x)
        })
        .run_with(Sink::collect(), &mat);
    assert_eq!(staged.wait(), Ok(vec![0, 0, 0, 0, 0, 1, 0, 0, 1, 3]));
    shutdown(&system);
}

#[test]
fn a_panic_in_the_function_fails_the_stream() {
    let (system, mat) = stream_system("fmc-panic");
    let out = Source::range(0u32..3)
        .flat_map_concat(|n| {
            if n == 2 {
                panic!("no source for 2")
            } else {
                Source::single(n)
            }
        })
        .run_with(Sink::collect(), &mat);
    let error = out.wait().unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::Panicked(m) if m.contains("no source for 2")),
        "{error}"
    );
    assert_eq!(
        Source::range(0u32..3)
            .flat_map_merge(0, Source::single)
            .err()
            .map(|e| e.to_string()),
        Some(
            weir_streams::ArgumentError::Zero {
                argument: "breadth"
            }
            .to_string()
        )
    );
    shutdown(&system);
}

#[test]
fn flow_forms_compose_and_rerun() {
    let (system, mat) = stream_system("fmc-flow");
    let flow = Flow::<u32>::new().flat_map_concat(|n| Source::repeat(n).take(u64::from(n)));
    let graph = Source::range(1u32..4)
        .via(flow)
        .to_mat(Sink::collect(), Keep::right);
    for _ in 0..3 {
        assert_eq!(graph.run(&mat).wait(), Ok(vec![1, 2, 2, 3, 3, 3]));
    }
    shutdown(&system);
}

/// An inner source that ends while downstream asks for nothing still ends
/// the flattened stream once the outer one has ended (Pekko's flatten
/// completes without a pull): here the tail of `prefix_and_tail`, whose
/// end comes from upstream after its last element was taken.
#[test]
fn an_inner_source_ending_without_demand_completes_the_stream() {
    let system = weir_actor::ActorSystem::new("flatten-end").unwrap();
    let mat = Materializer::new(&system);
    let (mut up, mut down) = TestSource::probe::<u32>()
        .prefix_and_tail(0)
        .flat_map_concat(|(_, tail)| tail)
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    up.send_next(7);
    down.request(1);
    assert_eq!(down.expect_next(), 7);
    up.send_complete();
    down.expect_complete();
    system.terminate().wait().unwrap();
}

/// An inner source is planned with the fusion setting of the materializer
/// that runs the flattening stage, as a substream is (Pekko's
/// sub-fusing materializer takes the hosting materializer's settings):
/// a panic in an inner `map` names the fused run of stages when fusion is
/// on, the `map` alone when it is off. Flattening used to force fusion on.
#[test]
fn inner_sources_and_substreams_follow_the_materializers_fusion_setting() {
    let (system, _) = stream_system("fmc-fusion");
    let boom = |x: u32| -> u32 {
        if x == 2 {
            panic!("boom");
        }
        x
    };
    for fusion in [true, false] {
        let mat = Materializer::builder(&system).fusion(fusion).build();
        let flattened = Source::single(0u32)
            .flat_map_concat(move |_| Source::range(1u32..4).map(boom))
            .run_with(Sink::ignore(), &mat)
            .wait()
            .expect_err("the inner map panics");
        let split = Source::range(1u32..4)
            .split_when(|_| false)
            .map(|x| x + 1)
            .map(boom)
            .concat_substreams()
            .run_with(Sink::ignore(), &mat)
            .wait()
            .expect_err("the substream's map panics");
        let (inner, sub) = if fusion {
            ("range.map.substream", "map.map")
        } else {
            ("map", "map")
        };
        assert_eq!(flattened.stage(), Some(inner), "{flattened}");
        assert_eq!(split.stage(), Some(sub), "{split}");
    }
    shutdown(&system);
}

/// `flat_map_concat` and `flat_map_merge` ask an inner source they run as
/// a sub-island for one element as they take it in and again after each
/// element, ahead of demand, as Pekko's `FlattenMerge` (behind both)
/// does: after the one element downstream asked for, the inner probe is
/// asked for the next at once. Weir asked it only when downstream did.
#[test]
fn inner_sources_are_asked_one_element_ahead_of_demand() {
    let (system, mat) = stream_system("fmc-ahead");
    for merge in [false, true] {
        let (make, inners) = probes::<u32>();
        let outer = Source::single(0u32);
        let flattened = if merge {
            outer.flat_map_merge(2, move |_| make()).unwrap()
        } else {
            outer.flat_map_concat(move |_| make())
        };
        let mut down = flattened.run_with(TestSink::probe(), &mat);
        down.request(1);
        let mut inner = inners
            .recv_timeout(PATIENCE)
            .expect("the inner source runs");
        inner.expect_request();
        inner.send_next(1);
        assert_eq!(down.expect_next(), 1);
        // Asked again without more demand.
        inner.expect_request();
        inner.send_next(2);
        inner.send_complete();
        down.request(1);
        assert_eq!(down.expect_next(), 2);
        down.expect_complete();
    }
    shutdown(&system);
}

/// An inner source that fails while an element it made ahead of demand
/// waits fails the stream at once, the element dropped, as Pekko's
/// `FlattenMerge` does; Weir held the failure behind the element until
/// downstream asked again (found by the signal differential with
/// `prefix_and_tail` flattened once inner sources were asked ahead).
#[test]
fn a_failing_inner_source_fails_the_stream_without_demand() {
    let (system, mat) = stream_system("fmc-fail-ahead");
    let (make, inners) = probes::<u32>();
    let mut down = Source::single(0u32)
        .flat_map_concat(move |_| make())
        .run_with(TestSink::probe(), &mat);
    down.request(1);
    let mut inner = inners
        .recv_timeout(PATIENCE)
        .expect("the inner source runs");
    inner.expect_request();
    inner.send_next(1);
    assert_eq!(down.expect_next(), 1);
    inner.expect_request();
    inner.send_next(2);
    inner.send_error(StreamError::msg("inner"));
    assert!(down.expect_error().to_string().contains("inner"));
    shutdown(&system);
}
