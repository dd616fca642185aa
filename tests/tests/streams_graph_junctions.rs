//! Fan-in and fan-out junctions: completion, failure, cancellation and back-pressure (after Pekko's Graph*Spec).

use weir_streams::graph::{
    Balance, Broadcast, Concat, GraphBuilder, Merge, MergePreferred, Partition,
    PartitionOutOfRange, Unzip, WireTap, Zip,
};
use weir_streams::prelude::*;
use weir_streams::testkit::SourceProbe;
use weir_streams::testkit::{SinkProbe, TestSink, TestSource};
use weir_streams::{ErrorKind, StreamError};
use weir_tests::{QUIET, shutdown, stream_system};

/// Two probe sources merged into a probe sink.
fn merged(mat: &Materializer, eager: bool) -> (SourceProbe<u32>, SourceProbe<u32>, SinkProbe<u32>) {
    let mut b = GraphBuilder::new();
    let (a, ka) = b.source_mat(TestSource::probe::<u32>());
    let (c, kc) = b.source_mat(TestSource::probe::<u32>());
    let merge = if eager {
        b.add(Merge::<u32, 2>::new().eager_complete())
    } else {
        b.add(Merge::<u32, 2>::new())
    };
    let (sink, ks) = b.sink_mat(TestSink::probe());
    let [i0, i1] = merge.ins();
    b.connect(a, i0).unwrap();
    b.connect(c, i1).unwrap();
    b.connect(merge.out(), sink).unwrap();
    let graph = b
        .build(move |m| (m.take(&ka), m.take(&kc), m.take(&ks)))
        .unwrap();
    graph.run(mat)
}

#[test]
fn merge_emits_from_both_inputs_and_completes_when_both_have() {
    let (system, mat) = stream_system("merge-complete");
    let (mut a, mut c, mut down) = merged(&mat, false);
    down.request(4);
    a.expect_request();
    c.expect_request();
    a.send_next(1);
    c.send_next(2);
    let mut got = down.expect_next_n(2);
    got.sort();
    assert_eq!(got, vec![1, 2]);
    a.send_complete();
    down.expect_no_message(QUIET);
    c.send_next(3);
    assert_eq!(down.expect_next(), 3);
    c.send_complete();
    down.expect_complete();
    shutdown(&system);
}

#[test]
fn merge_with_eager_complete_completes_with_the_first_input() {
    let (system, mat) = stream_system("merge-eager");
    let (mut a, mut c, mut down) = merged(&mat, true);
    down.request(1);
    a.expect_request();
    a.send_complete();
    down.expect_complete();
    c.expect_cancellation();
    shutdown(&system);
}

#[test]
fn merge_fails_when_an_input_fails_and_cancels_the_other() {
    let (system, mat) = stream_system("merge-fail");
    let (mut a, mut c, mut down) = merged(&mat, false);
    down.request(1);
    a.send_error(StreamError::msg("boom"));
    assert!(down.expect_error().to_string().contains("boom"));
    c.expect_cancellation();
    shutdown(&system);
}

#[test]
fn merge_cancels_both_inputs_when_downstream_cancels() {
    let (system, mat) = stream_system("merge-cancel");
    let (mut a, mut c, mut down) = merged(&mat, false);
    down.cancel();
    a.expect_cancellation();
    c.expect_cancellation();
    shutdown(&system);
}

#[test]
fn merge_back_pressures_each_input_until_its_element_is_emitted() {
    let (system, mat) = stream_system("merge-bp");
    let (mut a, mut c, mut down) = merged(&mat, false);
    a.expect_request();
    c.expect_request();
    a.send_next(1);
    c.send_next(2);
    // No demand downstream: neither input is asked again.
    a.expect_no_signal(QUIET);
    down.request(1);
    let first = down.expect_next();
    // Only the input whose element went out is asked again.
    if first == 1 {
        a.expect_request();
        c.expect_no_signal(QUIET);
    } else {
        c.expect_request();
        a.expect_no_signal(QUIET);
    }
    down.request(1);
    assert_eq!(down.expect_next(), 3 - first);
    shutdown(&system);
}

#[test]
fn merge_of_many_sources_gives_every_element_once() {
    let (system, mat) = stream_system("merge-many");
    let parts = (1..4u64).map(|k| Source::range(k * 1000..k * 1000 + 500));
    let all = Source::combine(Source::range(0u64..500), Source::range(500u64..1000), parts);
    let mut got = all.run_with(Sink::collect(), &mat).wait().unwrap();
    got.sort();
    let want: Vec<u64> = (0u64..1000)
        .chain((1..4).flat_map(|k| k * 1000..k * 1000 + 500))
        .collect();
    assert!(
        got == want,
        "{} elements, {} expected",
        got.len(),
        want.len()
    );
    shutdown(&system);
}

/// A probe source broadcast to two probe sinks.
fn broadcast(
    mat: &Materializer,
    eager: bool,
) -> (SourceProbe<u32>, SinkProbe<u32>, SinkProbe<u32>) {
    let mut b = GraphBuilder::new();
    let (up, ku) = b.source_mat(TestSource::probe::<u32>());
    let junction = if eager {
        b.add(Broadcast::<u32, 2>::new().eager_cancel())
    } else {
        b.add(Broadcast::<u32, 2>::new())
    };
    let (s0, k0) = b.sink_mat(TestSink::probe());
    let (s1, k1) = b.sink_mat(TestSink::probe());
    let [o0, o1] = junction.outs();
    b.connect(up, junction.inlet()).unwrap();
    b.connect(o0, s0).unwrap();
    b.connect(o1, s1).unwrap();
    b.build(move |m| (m.take(&ku), m.take(&k0), m.take(&k1)))
        .unwrap()
        .run(mat)
}

#[test]
fn broadcast_goes_at_the_speed_of_its_slowest_output() {
    let (system, mat) = stream_system("broadcast-bp");
    let (mut up, mut fast, mut slow) = broadcast(&mat, false);
    fast.request(5);
    up.expect_no_signal(QUIET);
    slow.request(1);
    up.expect_request();
    up.send_next(7);
    assert_eq!(fast.expect_next(), 7);
    assert_eq!(slow.expect_next(), 7);
    // The slow output has no demand left: upstream is not asked again.
    up.expect_no_signal(QUIET);
    slow.request(1);
    up.expect_request();
    up.send_complete();
    fast.expect_complete();
    slow.expect_complete();
    shutdown(&system);
}

#[test]
fn broadcast_continues_when_one_output_cancels_and_stops_when_all_have() {
    let (system, mat) = stream_system("broadcast-cancel");
    let (mut up, mut a, mut c) = broadcast(&mat, false);
    a.cancel();
    c.request(1);
    up.expect_request();
    up.send_next(1);
    assert_eq!(c.expect_next(), 1);
    c.cancel();
    up.expect_cancellation();
    shutdown(&system);
}

#[test]
fn broadcast_with_eager_cancel_stops_with_the_first_cancel() {
    let (system, mat) = stream_system("broadcast-eager");
    let (mut up, mut a, mut c) = broadcast(&mat, true);
    a.cancel();
    up.expect_cancellation();
    c.request(1);
    c.expect_complete();
    shutdown(&system);
}

#[test]
fn broadcast_fails_every_output() {
    let (system, mat) = stream_system("broadcast-fail");
    let (mut up, mut a, mut c) = broadcast(&mat, false);
    up.send_error(StreamError::msg("bad"));
    assert!(a.expect_error().to_string().contains("bad"));
    assert!(c.expect_error().to_string().contains("bad"));
    shutdown(&system);
}

#[test]
fn zip_pairs_and_completes_with_the_shorter_input() {
    let (system, mat) = stream_system("zip");
    let pairs = Source::range(1u32..=3).zip(Source::from_iter(vec!['a', 'b', 'c', 'd']));
    assert_eq!(
        pairs.run_with(Sink::collect(), &mat).wait(),
        Ok(vec![(1, 'a'), (2, 'b'), (3, 'c')])
    );
    let sums = Flow::<u32>::new().zip_with(Source::repeat(100u32), |a, b| a + b);
    let out = Source::range(0u32..4)
        .via(sums)
        .run_with(Sink::collect(), &mat)
        .wait();
    assert_eq!(out, Ok(vec![100, 101, 102, 103]));
    shutdown(&system);
}

#[test]
fn zip_fails_when_an_input_fails_and_cancels_when_downstream_cancels() {
    let (system, mat) = stream_system("zip-fail");
    let mut b = GraphBuilder::new();
    let (a, ka) = b.source_mat(TestSource::probe::<u32>());
    let (c, kc) = b.source_mat(TestSource::probe::<u32>());
    let zip = b.add(Zip::<u32, u32>::new());
    let (sink, ks) = b.sink_mat(TestSink::probe::<(u32, u32)>());
    b.connect(a, zip.in0()).unwrap();
    b.connect(c, zip.in1()).unwrap();
    b.connect(zip.out(), sink).unwrap();
    let graph = b
        .build(move |m| (m.take(&ka), m.take(&kc), m.take(&ks)))
        .unwrap();
    let (mut a, mut c, mut down): (SourceProbe<u32>, SourceProbe<u32>, _) = graph.run(&mat);
    down.request(1);
    a.expect_request();
    c.send_error(StreamError::msg("zip bad"));
    assert!(down.expect_error().to_string().contains("zip bad"));
    a.expect_cancellation();
    shutdown(&system);
}

#[test]
fn concat_runs_the_second_input_only_after_the_first() {
    let (system, mat) = stream_system("concat");
    let mut b = GraphBuilder::new();
    let (first, k1) = b.source_mat(TestSource::probe::<u32>());
    let (second, k2) = b.source_mat(TestSource::probe::<u32>());
    let concat = b.add(Concat::<u32, 2>::new());
    let (sink, ks) = b.sink_mat(TestSink::probe());
    let [i0, i1] = concat.ins();
    b.connect(first, i0).unwrap();
    b.connect(second, i1).unwrap();
    b.connect(concat.out(), sink).unwrap();
    let graph = b
        .build(move |m| (m.take(&k1), m.take(&k2), m.take(&ks)))
        .unwrap();
    let (mut first, mut second, mut down) = graph.run(&mat);
    down.request(3);
    first.expect_request();
    second.expect_no_signal(QUIET);
    first.send_next(1);
    assert_eq!(down.expect_next(), 1);
    first.send_complete();
    second.expect_request();
    second.send_next(2);
    assert_eq!(down.expect_next(), 2);
    second.send_complete();
    down.expect_complete();
    let both = Source::range(1u32..3)
        .concat(Source::range(3u32..5))
        .prepend(Source::single(0));
    assert_eq!(
        both.run_with(Sink::collect(), &mat).wait(),
        Ok(vec![0, 1, 2, 3, 4])
    );
    shutdown(&system);
}

#[test]
fn balance_gives_each_element_to_one_output_that_asked() {
    let (system, mat) = stream_system("balance");
    let mut b = GraphBuilder::new();
    let (up, ku) = b.source_mat(TestSource::probe::<u32>());
    let balance = b.add(Balance::<u32, 2>::new());
    let (s0, k0) = b.sink_mat(TestSink::probe());
    let (s1, k1) = b.sink_mat(TestSink::probe());
    let [o0, o1] = balance.outs();
    b.connect(up, balance.inlet()).unwrap();
    b.connect(o0, s0).unwrap();
    b.connect(o1, s1).unwrap();
    let (mut up, mut a, mut c) = b
        .build(move |m| (m.take(&ku), m.take(&k0), m.take(&k1)))
        .unwrap()
        .run(&mat);
    a.request(1);
    up.expect_request();
    up.send_next(1);
    assert_eq!(a.expect_next(), 1);
    c.request(1);
    up.expect_request();
    up.send_next(2);
    assert_eq!(c.expect_next(), 2);
    a.expect_no_message(QUIET);
    a.cancel();
    c.cancel();
    up.expect_cancellation();
    shutdown(&system);
}

/// An element pulled for an output that then cancelled goes to the next
/// output that asks, not nowhere (Pekko #25387).
#[test]
fn balance_keeps_an_element_pulled_for_an_output_that_cancelled() {
    let (system, mat) = stream_system("balance-cancelled-asker");
    let mut b = GraphBuilder::new();
    let (up, ku) = b.source_mat(TestSource::probe::<u32>());
    let balance = b.add(Balance::<u32, 2>::new());
    let (s0, k0) = b.sink_mat(TestSink::probe());
    let (s1, k1) = b.sink_mat(TestSink::probe());
    let [o0, o1] = balance.outs();
    b.connect(up, balance.inlet()).unwrap();
    b.connect(o0, s0).unwrap();
    b.connect(o1, s1).unwrap();
    let (mut up, mut a, mut c) = b
        .build(move |m| (m.take(&ku), m.take(&k0), m.take(&k1)))
        .unwrap()
        .run(&mat);
    a.request(1);
    up.expect_request();
    a.cancel();
    a.wait_idle();
    up.send_next(7);
    c.request(1);
    assert_eq!(c.expect_next(), 7);
    // It was delivered once: upstream is asked again only for the next.
    c.request(1);
    up.expect_request();
    up.send_next(8);
    assert_eq!(c.expect_next(), 8);
    // Completion waits for nothing held, and reaches the output left.
    up.send_complete();
    c.expect_complete();
    shutdown(&system);
}

fn balanced(
    mat: &Materializer,
    stage: Balance<u32, 2>,
) -> (SourceProbe<u32>, SinkProbe<u32>, SinkProbe<u32>) {
    let mut b = GraphBuilder::new();
    let (up, ku) = b.source_mat(TestSource::probe::<u32>());
    let balance = b.add(stage);
    let (s0, k0) = b.sink_mat(TestSink::probe());
    let (s1, k1) = b.sink_mat(TestSink::probe());
    let [o0, o1] = balance.outs();
    b.connect(up, balance.inlet()).unwrap();
    b.connect(o0, s0).unwrap();
    b.connect(o1, s1).unwrap();
    b.build(move |m| (m.take(&ku), m.take(&k0), m.take(&k1)))
        .unwrap()
        .run(mat)
}

/// Without eager cancel one output cancelling leaves the other served;
/// with it, the first cancel cancels upstream and completes the other.
#[test]
fn balance_with_eager_cancel_stops_with_the_first_cancel() {
    let (system, mat) = stream_system("balance-eager");
    let (mut up, mut a, mut c) = balanced(&mat, Balance::new());
    a.cancel();
    c.request(1);
    up.expect_request();
    up.send_next(1);
    assert_eq!(c.expect_next(), 1);
    c.cancel();
    up.expect_cancellation();

    let (mut up, mut a, mut c) = balanced(&mat, Balance::new().eager_cancel());
    c.request(1);
    up.expect_request();
    a.cancel();
    up.expect_cancellation();
    c.expect_complete();
    shutdown(&system);
}

/// Upstream completing while an element waits for an output delivers the
/// element first.
#[test]
fn balance_delivers_a_held_element_before_completing() {
    let (system, mat) = stream_system("balance-held-then-complete");
    let mut b = GraphBuilder::new();
    let (up, ku) = b.source_mat(TestSource::probe::<u32>());
    let balance = b.add(Balance::<u32, 2>::new());
    let (s0, k0) = b.sink_mat(TestSink::probe());
    let (s1, k1) = b.sink_mat(TestSink::probe());
    let [o0, o1] = balance.outs();
    b.connect(up, balance.inlet()).unwrap();
    b.connect(o0, s0).unwrap();
    b.connect(o1, s1).unwrap();
    let (mut up, mut a, mut c) = b
        .build(move |m| (m.take(&ku), m.take(&k0), m.take(&k1)))
        .unwrap()
        .run(&mat);
    a.request(1);
    up.expect_request();
    a.cancel();
    a.wait_idle();
    up.send_next(7);
    up.send_complete();
    c.request(1);
    assert_eq!(c.expect_next(), 7);
    c.expect_complete();
    shutdown(&system);
}

#[test]
fn partition_routes_by_index_and_fails_on_a_bad_one() {
    let (system, mat) = stream_system("partition");
    let run = |items: Vec<u32>| {
        let mut b = GraphBuilder::new();
        let source = b.source(Source::from_iter(items));
        let split = b.add(Partition::<u32, 2, _>::new(|x: &u32| *x as usize % 3));
        let (s0, k0) = b.sink_mat(Sink::collect());
        let (s1, k1) = b.sink_mat(Sink::collect());
        let [o0, o1] = split.outs();
        b.connect(source, split.inlet()).unwrap();
        b.connect(o0, s0).unwrap();
        b.connect(o1, s1).unwrap();
        let (a, c) = b
            .build(move |m| (m.take(&k0), m.take(&k1)))
            .unwrap()
            .run(&mat);
        (a.wait(), c.wait())
    };
    assert_eq!(
        run(vec![0, 1, 3, 4, 6]),
        (Ok(vec![0, 3, 6]), Ok(vec![1, 4]))
    );
    let (a, _) = run(vec![0, 2]);
    let error = a.unwrap_err();
    let ErrorKind::Custom(inner) = error.kind() else {
        panic!("a typed error, got {error}");
    };
    assert_eq!(
        inner.downcast_ref::<PartitionOutOfRange>(),
        Some(&PartitionOutOfRange {
            index: 2,
            outputs: 2
        })
    );
    shutdown(&system);
}

#[test]
fn unzip_splits_pairs_at_the_slower_outputs_speed() {
    let (system, mat) = stream_system("unzip");
    let mut b = GraphBuilder::new();
    let (up, ku) = b.source_mat(TestSource::probe::<(u32, char)>());
    let unzip = b.add(Unzip::<u32, char>::new());
    let (s0, k0) = b.sink_mat(TestSink::probe());
    let (s1, k1) = b.sink_mat(TestSink::probe());
    b.connect(up, unzip.inlet()).unwrap();
    b.connect(unzip.out0(), s0).unwrap();
    b.connect(unzip.out1(), s1).unwrap();
    let (mut up, mut numbers, mut letters) = b
        .build(move |m| (m.take(&ku), m.take(&k0), m.take(&k1)))
        .unwrap()
        .run(&mat);
    numbers.request(2);
    up.expect_no_signal(QUIET);
    letters.request(1);
    up.expect_request();
    up.send_next((1, 'x'));
    assert_eq!(numbers.expect_next(), 1);
    assert_eq!(letters.expect_next(), 'x');
    up.send_complete();
    numbers.expect_complete();
    letters.expect_complete();
    shutdown(&system);
}

/// Regression (found by the differential test): when the first input
/// completed after downstream had asked but before that ask reached the
/// concat, the second input was pulled twice (a protocol error).
#[test]
fn concat_asks_its_next_input_once_when_the_first_completes_under_demand() {
    let (system, mat) = stream_system("concat-race");
    let input = vec![
        212u64, 0, 0, 0, 0, 0, 0, 234, 9, 585, 0, 369, 246, 114, 0, 63, 9, 45, 333,
    ];
    let first = Source::from_iter(input.clone())
        .map(|x| (x + 1) % 1000)
        .filter(|x| x % 3 != 0)
        .skip_while(|x| *x < 2);
    let second = Source::from_iter(Vec::<u64>::new()).map(|x| x + 1);
    let want: Vec<u64> = input
        .iter()
        .map(|x| (x + 1) % 1000)
        .filter(|x| x % 3 != 0)
        .skip_while(|x| *x < 2)
        .collect();
    assert_eq!(
        first.concat(second).run_with(Sink::collect(), &mat).wait(),
        Ok(want)
    );
    shutdown(&system);
}

/// Akka's classic cycle: what a broadcast feeds back goes through a
/// dropping buffer into the preferred input of a merge, and the graph keeps
/// flowing (without the buffer such a cycle may deadlock).
#[test]
fn a_cycle_through_merge_preferred_and_a_buffer_keeps_flowing() {
    let (system, mat) = stream_system("cycle");
    let mut b = GraphBuilder::new();
    let source = b.source(Source::repeat(1u64));
    let merge = b.add(MergePreferred::<u64, 2>::new());
    let split = b.add(Broadcast::<u64, 2>::new().eager_cancel());
    let (feedback_in, feedback_out) = b.flow(
        Flow::new()
            .map(|x: u64| x + 1)
            .buffer(8, OverflowStrategy::DropHead)
            .expect("8 is a valid size"),
    );
    let (sink, done) = b.sink_mat(
        Flow::new()
            .take(10_000)
            .to_mat(Sink::fold(0u64, |n, _| n + 1), Keep::right),
    );
    let [preferred, fresh] = merge.ins();
    let [on, back] = split.outs();
    b.connect(source, fresh).unwrap();
    b.connect(merge.out(), split.inlet()).unwrap();
    b.connect(on, sink).unwrap();
    b.connect(back, feedback_in).unwrap();
    b.connect(feedback_out, preferred).unwrap();
    let graph = b.build(move |m| m.take(&done)).unwrap();
    assert_eq!(graph.run(&mat).wait(), Ok(10_000));
    shutdown(&system);
}

#[test]
fn wire_tap_never_slows_the_main_line_and_copies_when_the_tap_asks() {
    let (system, mat) = stream_system("wire-tap");
    // A tap that never asks misses everything; the main line gets it all.
    let mut b = GraphBuilder::new();
    let (up, ku) = b.source_mat(TestSource::probe::<u32>());
    let tap = b.add(WireTap::<u32>::new());
    let (main, km) = b.sink_mat(TestSink::probe());
    let (side, kt) = b.sink_mat(TestSink::probe());
    let [to_main, to_side] = tap.outs();
    b.connect(up, tap.inlet()).unwrap();
    b.connect(to_main, main).unwrap();
    b.connect(to_side, side).unwrap();
    let (mut up, mut main, mut side) = b
        .build(move |m| (m.take(&ku), m.take(&km), m.take(&kt)))
        .unwrap()
        .run(&mat);
    main.request(2);
    up.expect_request();
    up.send_next(1);
    assert_eq!(main.expect_next(), 1);
    side.request(1);
    up.expect_request();
    // Let the tap's demand arrive before the next element.
    side.expect_no_message(QUIET);
    up.send_next(2);
    assert_eq!(main.expect_next(), 2);
    assert_eq!(side.expect_next(), 2);
    side.cancel();
    main.request(1);
    up.expect_request();
    up.send_next(3);
    assert_eq!(main.expect_next(), 3);
    main.cancel();
    up.expect_cancellation();
    shutdown(&system);
}

/// Regression: a partition completed as soon as its inlet read as closed,
/// while upstream's last element was still on its way to it, so that
/// element was lost (found by the differential test, partition into merge).
#[test]
fn partition_emits_the_last_element_when_upstream_completes_right_after_it() {
    let (system, mat) = stream_system("partition-last");
    let unfused = Materializer::builder(&system).fusion(false).build();
    for mat in [&mat, &unfused] {
        let mut b = GraphBuilder::new();
        let input = b.source(Source::from_iter(vec![1u64, 3, 4, 5]));
        let split = b.add(Partition::<u64, 2, _>::new(|x: &u64| {
            usize::from(x.is_multiple_of(2))
        }));
        let join = b.add(Merge::<u64, 2>::new());
        let [odd, even] = split.outs();
        let [from_odd, from_even] = join.ins();
        b.connect(input, split.inlet()).unwrap();
        b.connect(odd, from_odd).unwrap();
        let (even_in, even_out) = b.flow(Flow::new().map(|x: u64| x * 10));
        b.connect(even, even_in).unwrap();
        b.connect(even_out, from_even).unwrap();
        let (sink, got) = b.sink_mat(Sink::collect());
        b.connect(join.out(), sink).unwrap();
        let mut got = b
            .build(move |m| m.take(&got))
            .unwrap()
            .run(mat)
            .wait()
            .unwrap();
        got.sort_unstable();
        assert_eq!(got, vec![1, 3, 5, 40]);
    }
    shutdown(&system);
}

/// A partition added with a supervision attribute: a panicking
/// partitioner drops its element (and the next is asked for) under
/// resume, fails the stream without a strategy.
#[test]
fn partition_given_a_resuming_strategy_in_the_builder_drops_what_panics() {
    use weir_streams::{Attributes, SupervisionStrategy};
    let (system, mat) = stream_system("partition-supervised");
    let split = |attributes: Option<Attributes>| {
        let mut b = GraphBuilder::new();
        let (up, ku) = b.source_mat(TestSource::probe::<u32>());
        let stage = Partition::<u32, 2, _>::new(|x: &u32| {
            assert!(*x != 13, "unlucky");
            (*x % 2) as usize
        });
        let partition = match attributes {
            Some(attributes) => b.add_with_attributes(stage, attributes),
            None => b.add(stage),
        };
        let (s0, k0) = b.sink_mat(TestSink::probe());
        let (s1, k1) = b.sink_mat(TestSink::probe());
        let [o0, o1] = partition.outs();
        b.connect(up, partition.inlet()).unwrap();
        b.connect(o0, s0).unwrap();
        b.connect(o1, s1).unwrap();
        b.build(move |m| (m.take(&ku), m.take(&k0), m.take(&k1)))
            .unwrap()
            .run(&mat)
    };
    let resume = Attributes::new().with_supervision_strategy(SupervisionStrategy::resuming());
    let (mut up, mut even, mut odd) = split(Some(resume));
    odd.request(2);
    up.expect_request();
    up.send_next(13);
    up.expect_request(); // dropped: the next is asked for
    up.send_next(3);
    assert_eq!(odd.expect_next(), 3);
    up.send_complete();
    odd.expect_complete();
    even.request(1);
    even.expect_complete();

    let (mut up, mut even, mut odd) = split(None);
    odd.request(1);
    up.expect_request();
    up.send_next(13);
    assert!(odd.expect_error().to_string().contains("unlucky"));
    even.request(1);
    even.expect_error();
    shutdown(&system);
}
