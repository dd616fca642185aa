//! ZipN/ZipWithN and UnzipWith: completion, failure, cancellation and back-pressure (after Pekko's GraphZipNSpec, GraphZipWithNSpec and GraphUnzipWithSpec).

use weir_streams::StreamError;
use weir_streams::graph::{GraphBuilder, MergePrioritized, UnzipWith, ZipN, ZipWithN};
use weir_streams::prelude::*;
use weir_streams::testkit::{SinkProbe, SourceProbe, TestSink, TestSource};
use weir_tests::{PATIENCE, QUIET, shutdown, stream_system};

// ---- ZipN / ZipWithN ----

/// Three probe sources zipped into a probe sink of sums.
fn zip3(mat: &Materializer) -> ([SourceProbe<u32>; 3], SinkProbe<u32>) {
    let mut b = GraphBuilder::new();
    let zip = b.add(ZipWithN::new(|xs: [u32; 3]| {
        xs[0] * 100 + xs[1] * 10 + xs[2]
    }));
    let mut keys = Vec::new();
    for inlet in zip.ins() {
        let (source, key) = b.source_mat(TestSource::probe::<u32>());
        b.connect(source, inlet).unwrap();
        keys.push(key);
    }
    let (sink, ks) = b.sink_mat(TestSink::probe());
    b.connect(zip.out(), sink).unwrap();
    b.build(move |m| {
        let probes: Vec<_> = keys.iter().map(|k| m.take(k)).collect();
        let probes: [SourceProbe<u32>; 3] = probes.try_into().unwrap_or_else(|_| unreachable!());
        (probes, m.take(&ks))
    })
    .unwrap()
    .run(mat)
}

#[test]
fn zip_n_gives_one_element_of_each_input_in_input_order() {
    let (system, mat) = stream_system("zip-n");
    let rows = Source::zip_n([
        Source::range(0u32..4),
        Source::range(10u32..),
        Source::range(20u32..23),
        Source::repeat(7),
    ]);
    let got = rows.run_with(Sink::collect(), &mat).wait();
    assert_eq!(
        got,
        Ok(vec![[0, 10, 20, 7], [1, 11, 21, 7], [2, 12, 22, 7]])
    );
    // The stage form in a builder, with N = 2.
    let mut b = GraphBuilder::new();
    let zip = b.add(ZipN::<char, 2>::new());
    let [x, y] = zip.ins();
    let (s0, s1) = (
        b.source(Source::from_iter(['a', 'b'])),
        b.source(Source::from_iter(['c'])),
    );
    b.connect(s0, x).unwrap();
    b.connect(s1, y).unwrap();
    let zipped = b.build_source(zip.out(), |_| ()).unwrap();
    assert_eq!(
        zipped.run_with(Sink::collect(), &mat).wait(),
        Ok(vec![['a', 'c']])
    );
    shutdown(&system);
}

#[test]
fn zip_n_and_merges_of_no_inputs_complete_at_once() {
    let (system, mat) = stream_system("zip-n-empty");
    let none: [Source<u32>; 0] = [];
    let zipped = Source::zip_n(none).run_with(Sink::collect(), &mat);
    assert_eq!(zipped.wait_timeout(PATIENCE).ok(), Some(Ok(vec![])));
    for prioritized in [false, true] {
        let mut b = GraphBuilder::new();
        let out = if prioritized {
            b.add(MergePrioritized::<u32, 0>::new([]).unwrap()).out()
        } else {
            b.add(weir_streams::graph::Merge::<u32, 0>::new()).out()
        };
        let merged = b.build_source(out, |_| ()).unwrap();
        let got = merged
            .run_with(Sink::collect(), &mat)
            .wait_timeout(PATIENCE);
        assert_eq!(got.ok(), Some(Ok(vec![])), "prioritized: {prioritized}");
    }
    shutdown(&system);
}

#[test]
fn zip_with_n_asks_every_input_only_when_downstream_asks() {
    let (system, mat) = stream_system("zip-n-bp");
    let ([mut a, mut b, mut c], mut down) = zip3(&mat);
    a.expect_no_signal(QUIET);
    down.request(1);
    a.expect_request();
    b.expect_request();
    c.expect_request();
    a.send_next(1);
    b.send_next(2);
    down.expect_no_message(QUIET);
    // An input whose element waits is not asked again.
    down.request(1);
    a.expect_no_signal(QUIET);
    c.send_next(3);
    assert_eq!(down.expect_next(), 123);
    a.expect_request();
    b.expect_request();
    c.expect_request();
    shutdown(&system);
}

#[test]
fn zip_with_n_completes_when_an_input_completes_with_nothing_waiting() {
    let (system, mat) = stream_system("zip-n-complete");
    let ([mut a, mut b, mut c], mut down) = zip3(&mat);
    down.request(2);
    a.send_next(1);
    b.send_next(2);
    c.send_complete();
    down.expect_complete();
    a.expect_cancellation();
    b.expect_cancellation();
    shutdown(&system);
}

#[test]
fn zip_with_n_emits_the_last_full_row_of_an_input_that_completed() {
    let (system, mat) = stream_system("zip-n-last");
    let ([mut a, mut b, mut c], mut down) = zip3(&mat);
    down.request(1);
    a.send_next(4);
    a.send_complete();
    b.send_next(5);
    c.send_next(6);
    assert_eq!(down.expect_next(), 456);
    down.request(1);
    down.expect_complete();
    shutdown(&system);
}

#[test]
fn zip_with_n_fails_with_any_input_and_cancels_the_others() {
    let (system, mat) = stream_system("zip-n-fail");
    let ([mut a, mut b, mut c], mut down) = zip3(&mat);
    down.request(1);
    b.send_error(StreamError::msg("boom"));
    assert!(down.expect_error().to_string().contains("boom"));
    a.expect_cancellation();
    c.expect_cancellation();
    shutdown(&system);
}

#[test]
fn zip_with_n_cancels_every_input_when_downstream_cancels() {
    let (system, mat) = stream_system("zip-n-cancel");
    let ([mut a, mut b, mut c], mut down) = zip3(&mat);
    down.cancel();
    a.expect_cancellation();
    b.expect_cancellation();
    c.expect_cancellation();
    shutdown(&system);
}

#[test]
fn zip_with_n_state_starts_afresh_in_each_run() {
    let (system, mat) = stream_system("zip-n-state");
    let mut seen = 0u32;
    let counted = Source::zip_with_n(
        [Source::range(0u32..3), Source::range(0u32..3)],
        move |xs| {
            seen += 1;
            xs[0] + xs[1] + seen * 100
        },
    );
    for _ in 0..2 {
        let got = counted.clone().run_with(Sink::collect(), &mat).wait();
        assert_eq!(got, Ok(vec![100, 202, 304]));
    }
    shutdown(&system);
}

// ---- UnzipWith ----

/// A probe source split by `f` into two probe sinks.
fn unzip_with(
    mat: &Materializer,
    f: fn(u32) -> (u32, String),
) -> (SourceProbe<u32>, SinkProbe<u32>, SinkProbe<String>) {
    let mut b = GraphBuilder::new();
    let (up, ku) = b.source_mat(TestSource::probe::<u32>());
    let split = b.add(UnzipWith::new(f));
    let (s0, k0) = b.sink_mat(TestSink::probe());
    let (s1, k1) = b.sink_mat(TestSink::probe());
    b.connect(up, split.inlet()).unwrap();
    b.connect(split.out0(), s0).unwrap();
    b.connect(split.out1(), s1).unwrap();
    b.build(move |m| (m.take(&ku), m.take(&k0), m.take(&k1)))
        .unwrap()
        .run(mat)
}

fn halves(x: u32) -> (u32, String) {
    (x * 2, format!("<{x}>"))
}

#[test]
fn unzip_with_splits_each_element_and_completes_both_outputs() {
    let (system, mat) = stream_system("unzip-with");
    let (mut up, mut left, mut right) = unzip_with(&mat, halves);
    left.request(2);
    right.request(2);
    up.send_next(1);
    up.send_next(2);
    up.send_complete();
    assert_eq!(left.expect_next_n(2), vec![2, 4]);
    assert_eq!(
        right.expect_next_n(2),
        vec!["<1>".to_owned(), "<2>".to_owned()]
    );
    left.expect_complete();
    right.expect_complete();
    shutdown(&system);
}

#[test]
fn unzip_with_goes_at_the_speed_of_its_slower_output() {
    let (system, mat) = stream_system("unzip-with-bp");
    let (mut up, mut left, mut right) = unzip_with(&mat, halves);
    left.request(5);
    up.expect_no_signal(QUIET);
    right.request(1);
    up.expect_request();
    up.send_next(3);
    assert_eq!(left.expect_next(), 6);
    assert_eq!(right.expect_next(), "<3>");
    up.expect_no_signal(QUIET);
    right.request(1);
    up.expect_request();
    shutdown(&system);
}

#[test]
fn unzip_with_keeps_going_when_one_output_cancels_and_cancels_when_both_have() {
    let (system, mat) = stream_system("unzip-with-cancel");
    let (mut up, mut left, mut right) = unzip_with(&mat, halves);
    right.cancel();
    left.request(1);
    up.expect_request();
    up.send_next(4);
    assert_eq!(left.expect_next(), 8);
    left.cancel();
    up.expect_cancellation();
    shutdown(&system);
}

#[test]
fn unzip_with_fails_both_outputs_on_an_upstream_failure_or_a_panic_in_f() {
    let (system, mat) = stream_system("unzip-with-fail");
    let (mut up, mut left, mut right) = unzip_with(&mat, halves);
    left.request(1);
    right.request(1);
    up.send_error(StreamError::msg("boom"));
    assert!(left.expect_error().to_string().contains("boom"));
    assert!(right.expect_error().to_string().contains("boom"));

    let (mut up, mut left, mut right) = unzip_with(&mat, |x| {
        assert!(x < 10, "too big: {x}");
        halves(x)
    });
    left.request(2);
    right.request(2);
    up.send_next(1);
    assert_eq!(left.expect_next(), 2);
    assert_eq!(right.expect_next(), "<1>");
    up.send_next(10);
    left.expect_error();
    right.expect_error();
    up.expect_cancellation();
    shutdown(&system);
}

// ---- Flow::zip_n / Flow::zip_with_n ----

#[test]
fn flow_zip_n_puts_the_flows_element_first_and_ends_with_the_shortest_input() {
    let (system, mat) = stream_system("flow-zip-n");
    let rows = Flow::<u32>::new()
        .map(|x| x * 10)
        .zip_n([Source::range(1u32..3), Source::repeat(7)]);
    let got = Source::range(0u32..5)
        .via(rows)
        .run_with(Sink::collect(), &mat);
    assert_eq!(got.wait(), Ok(vec![[0, 1, 7], [10, 2, 7]]));
    // The flow's upstream the shortest.
    let rows = Flow::<char>::new().zip_n([
        Source::repeat('y'),
        Source::repeat('z'),
        Source::repeat('!'),
    ]);
    let got = Source::from_iter(['a', 'b'])
        .via(rows)
        .run_with(Sink::collect(), &mat);
    assert_eq!(
        got.wait(),
        Ok(vec![['a', 'y', 'z', '!'], ['b', 'y', 'z', '!']])
    );
    shutdown(&system);
}

#[test]
fn flow_zip_with_n_asks_the_sources_only_for_rows_downstream_asks_for() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};
    let (system, mat) = stream_system("flow-zip-n-bp");
    let made = Arc::new(AtomicU32::new(0));
    let counted = {
        let made = Arc::clone(&made);
        Source::repeat(100u32).map(move |x| x + made.fetch_add(1, Ordering::SeqCst))
    };
    let sums = Flow::<u32>::new().zip_with_n([counted], |[x, y]| x + y);
    let (mut up, mut down) = TestSource::probe::<u32>()
        .via(sums)
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    up.expect_no_signal(QUIET);
    assert_eq!(made.load(Ordering::SeqCst), 0, "nothing made before demand");
    down.request(2);
    up.expect_request();
    up.send_next(1);
    assert_eq!(down.expect_next(), 101);
    up.expect_request();
    up.send_next(2);
    assert_eq!(down.expect_next(), 103);
    up.expect_no_signal(QUIET);
    assert_eq!(
        made.load(Ordering::SeqCst),
        2,
        "one element per row asked for"
    );
    up.send_complete();
    down.expect_complete();
    shutdown(&system);
}

#[test]
fn flow_zip_n_fails_with_a_source_and_keeps_the_flows_materialized_value() {
    let (system, mat) = stream_system("flow-zip-n-fail");
    let rows = Flow::<u32>::new()
        .map_materialized_value(|()| "flow value")
        .zip_n([
            Source::range(0u32..),
            Source::failed(StreamError::msg("source broke")),
        ]);
    let ((mut up, value), mut down) = TestSource::probe::<u32>()
        .via_mat(rows, Keep::both)
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    assert_eq!(value, "flow value");
    down.request(1);
    assert!(down.expect_error().to_string().contains("source broke"));
    up.expect_cancellation();
    shutdown(&system);
}

/// Ten thousand single-element sources, on the heap.
const MANY: usize = 10_000;

fn many_sources() -> Box<[Source<u32>; MANY]> {
    let all: Vec<Source<u32>> = (0..MANY as u32).map(Source::single).collect();
    all.into_boxed_slice()
        .try_into()
        .unwrap_or_else(|_| unreachable!("MANY sources"))
}

/// `zip_with_n` over them: this frame holds the array once (the caller's
/// part), `zip_with_n` must add no copy of it.
#[inline(never)]
fn many_sums() -> Source<u64> {
    Source::zip_with_n(*many_sources(), |xs| {
        xs.iter().map(|x| u64::from(*x)).sum::<u64>()
    })
}

/// `zip_n` over them, each row summarized.
#[inline(never)]
fn many_rows() -> Source<(u32, u32, usize)> {
    Source::zip_n(*many_sources()).map(|row| (row[0], row[MANY - 1], row.len()))
}

/// `zip_n` and `zip_with_n` over ten thousand sources, fused and unfused,
/// on a test thread's stack in a debug build: the sources are taken out
/// of the array in place and the fused zip keeps its lanes on the heap
/// (each overflowed a stack before).
#[test]
fn zip_n_over_ten_thousand_sources() {
    let (system, fused) = stream_system("zip-n-ten-thousand");
    let unfused = Materializer::builder(&system).fusion(false).build();
    for mat in [&fused, &unfused] {
        let want = (MANY as u64 - 1) * MANY as u64 / 2;
        assert_eq!(
            many_sums().run_with(Sink::collect(), mat).wait(),
            Ok(vec![want])
        );
        assert_eq!(
            many_rows().run_with(Sink::collect(), mat).wait(),
            Ok(vec![(0, MANY as u32 - 1, MANY)])
        );
    }
    shutdown(&system);
}
