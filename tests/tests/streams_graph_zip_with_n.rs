//! ZipWith3, ZipWith4 and ZipWith5 (inputs of their own types): rows in input order, completion, failure, cancellation and back-pressure (after Pekko's GraphZipWithSpec).

use weir_streams::StreamError;
use weir_streams::graph::{GraphBuilder, ZipWith3, ZipWith4, ZipWith5};
use weir_streams::prelude::*;
use weir_streams::testkit::{SinkProbe, SourceProbe, TestSink, TestSource};
use weir_tests::{QUIET, shutdown, stream_system};

/// The probes of a three-input zip of a `u32`, a `String` and a `bool`.
struct Zip3 {
    counts: SourceProbe<u32>,
    names: SourceProbe<String>,
    flags: SourceProbe<bool>,
    down: SinkProbe<String>,
}

/// Three probe sources of different types zipped into a probe sink by `f`.
fn zip3<F>(mat: &Materializer, f: F) -> Zip3
where
    F: FnMut(u32, String, bool) -> String + Clone + Send + Sync + 'static,
{
    let mut b = GraphBuilder::new();
    let zip = b.add(ZipWith3::new(f));
    let (counts, kc) = b.source_mat(TestSource::probe::<u32>());
    let (names, kn) = b.source_mat(TestSource::probe::<String>());
    let (flags, kf) = b.source_mat(TestSource::probe::<bool>());
    b.connect(counts, zip.in0()).unwrap();
    b.connect(names, zip.in1()).unwrap();
    b.connect(flags, zip.in2()).unwrap();
    let (sink, ks) = b.sink_mat(TestSink::probe());
    b.connect(zip.out(), sink).unwrap();
    b.build(move |m| Zip3 {
        counts: m.take(&kc),
        names: m.take(&kn),
        flags: m.take(&kf),
        down: m.take(&ks),
    })
    .unwrap()
    .run(mat)
}

fn line(n: u32, name: String, loud: bool) -> String {
    let line = format!("{name}:{n}");
    if loud { line.to_uppercase() } else { line }
}

#[test]
fn zip_with3_combines_one_element_of_each_typed_input_in_port_order() {
    let (system, mat) = stream_system("zip-with-3");
    let mut z = zip3(&mat, line);
    z.down.request(2);
    z.counts.send_next(1);
    z.names.send_next("ada".into());
    z.flags.send_next(false);
    assert_eq!(z.down.expect_next(), "ada:1");
    z.flags.send_next(true);
    z.names.send_next("bob".into());
    z.counts.send_next(2);
    assert_eq!(z.down.expect_next(), "BOB:2");
    shutdown(&system);
}

#[test]
fn zip_with3_asks_every_input_only_when_downstream_asks() {
    let (system, mat) = stream_system("zip-with-3-bp");
    let mut z = zip3(&mat, line);
    z.counts.expect_no_signal(QUIET);
    z.names.expect_no_signal(QUIET);
    z.flags.expect_no_signal(QUIET);
    z.down.request(1);
    assert_eq!(z.counts.expect_request(), 1);
    assert_eq!(z.names.expect_request(), 1);
    assert_eq!(z.flags.expect_request(), 1);
    z.counts.send_next(7);
    z.names.send_next("cy".into());
    z.down.expect_no_message(QUIET);
    // A second demand does not ask again an input whose element waits.
    z.down.request(1);
    z.counts.expect_no_signal(QUIET);
    z.names.expect_no_signal(QUIET);
    z.flags.send_next(false);
    assert_eq!(z.down.expect_next(), "cy:7");
    // The row went out: the next one is asked for, once per input.
    assert_eq!(z.counts.expect_request(), 1);
    assert_eq!(z.names.expect_request(), 1);
    assert_eq!(z.flags.expect_request(), 1);
    shutdown(&system);
}

#[test]
fn zip_with3_completes_when_an_input_completes_with_nothing_waiting() {
    let (system, mat) = stream_system("zip-with-3-complete");
    let mut z = zip3(&mat, line);
    z.down.request(1);
    z.counts.send_next(1);
    z.flags.send_next(true);
    z.names.send_complete();
    // The other inputs' waiting elements are dropped.
    z.down.expect_complete();
    z.counts.expect_cancellation();
    z.flags.expect_cancellation();
    shutdown(&system);
}

#[test]
fn zip_with3_uses_the_waiting_element_of_an_input_that_completed() {
    let (system, mat) = stream_system("zip-with-3-last");
    let mut z = zip3(&mat, line);
    z.down.request(1);
    z.names.send_next("eve".into());
    z.names.send_complete();
    z.down.expect_no_message(QUIET);
    z.counts.send_next(3);
    z.flags.send_next(false);
    assert_eq!(z.down.expect_next(), "eve:3");
    z.down.expect_complete();
    z.counts.expect_cancellation();
    z.flags.expect_cancellation();
    shutdown(&system);
}

#[test]
fn zip_with3_fails_with_any_input_and_cancels_the_others() {
    let (system, mat) = stream_system("zip-with-3-fail");
    let mut z = zip3(&mat, line);
    z.down.request(1);
    z.counts.send_next(1);
    z.flags.send_error(StreamError::msg("flags broke"));
    assert!(z.down.expect_error().to_string().contains("flags broke"));
    z.counts.expect_cancellation();
    z.names.expect_cancellation();
    shutdown(&system);
}

#[test]
fn zip_with3_fails_when_its_function_panics() {
    // Pekko's "work in the sad case": the function throws on a row.
    let (system, mat) = stream_system("zip-with-3-sad");
    let mut z = zip3(&mat, |n, name, _| format!("{name}:{}", 100 / n));
    z.down.request(2);
    z.counts.send_next(4);
    z.names.send_next("a".into());
    z.flags.send_next(true);
    assert_eq!(z.down.expect_next(), "a:25");
    z.counts.send_next(0);
    z.names.send_next("b".into());
    z.flags.send_next(true);
    z.down.expect_error();
    z.counts.expect_cancellation();
    z.names.expect_cancellation();
    z.flags.expect_cancellation();
    shutdown(&system);
}

#[test]
fn zip_with3_cancels_every_input_when_downstream_cancels() {
    let (system, mat) = stream_system("zip-with-3-cancel");
    let mut z = zip3(&mat, line);
    z.down.request(1);
    z.counts.expect_request();
    z.names.send_next("x".into());
    z.down.cancel();
    z.counts.expect_cancellation();
    z.names.expect_cancellation();
    z.flags.expect_cancellation();
    shutdown(&system);
}

#[test]
fn zip_with4_and_zip_with5_end_with_their_shortest_input() {
    let (system, mat) = stream_system("zip-with-4-5");
    let mut b = GraphBuilder::new();
    let zip = b.add(ZipWith4::new(|a: u8, s: String, c: char, d: u64| {
        format!("{a}{s}{c}{d}")
    }));
    let (a, s) = (
        b.source(Source::range(1u8..)),
        b.source(Source::from_iter(["x".to_string(), "y".into(), "z".into()])),
    );
    let (c, d) = (
        b.source(Source::from_iter(['p', 'q'])),
        b.source(Source::repeat(9u64)),
    );
    b.connect(a, zip.in0()).unwrap();
    b.connect(s, zip.in1()).unwrap();
    b.connect(c, zip.in2()).unwrap();
    b.connect(d, zip.in3()).unwrap();
    let four = b.build_source(zip.out(), |_| ()).unwrap();
    let got = four.run_with(Sink::collect(), &mat).wait();
    assert_eq!(got, Ok(vec!["1xp9".to_string(), "2yq9".to_string()]));

    let mut b = GraphBuilder::new();
    let zip = b.add(ZipWith5::new(
        |a: u32, b: i64, c: bool, d: char, e: (u8, u8)| (a, b, c, d, e.0 + e.1),
    ));
    let ins = (
        b.source(Source::range(0u32..10)),
        b.source(Source::from_iter([-1i64, -2, -3])),
        b.source(Source::repeat(true)),
        b.source(Source::from_iter("abcd".chars().collect::<Vec<_>>())),
        b.source(Source::from_iter([(1u8, 2u8), (3, 4), (5, 6), (7, 8)])),
    );
    b.connect(ins.0, zip.in0()).unwrap();
    b.connect(ins.1, zip.in1()).unwrap();
    b.connect(ins.2, zip.in2()).unwrap();
    b.connect(ins.3, zip.in3()).unwrap();
    b.connect(ins.4, zip.in4()).unwrap();
    let five = b.build_source(zip.out(), |_| ()).unwrap();
    let got = five.run_with(Sink::collect(), &mat).wait();
    assert_eq!(
        got,
        Ok(vec![
            (0, -1, true, 'a', 3),
            (1, -2, true, 'b', 7),
            (2, -3, true, 'c', 11)
        ])
    );
    shutdown(&system);
}

#[test]
fn zip_with5_asks_all_five_inputs_per_row_and_no_more() {
    let (system, mat) = stream_system("zip-with-5-bp");
    let mut b = GraphBuilder::new();
    let zip = b.add(ZipWith5::new(|a: u8, b: u8, c: u8, d: u8, e: u8| {
        [a, b, c, d, e]
    }));
    let mut keys = Vec::new();
    for inlet in [zip.in0(), zip.in1(), zip.in2(), zip.in3(), zip.in4()] {
        let (source, key) = b.source_mat(TestSource::probe::<u8>());
        b.connect(source, inlet).unwrap();
        keys.push(key);
    }
    let (sink, ks) = b.sink_mat(TestSink::probe());
    b.connect(zip.out(), sink).unwrap();
    let graph = b
        .build(move |m| {
            let probes: Vec<SourceProbe<u8>> = keys.iter().map(|k| m.take(k)).collect();
            (probes, m.take(&ks))
        })
        .unwrap();
    let (mut ups, mut down) = graph.run(&mat);
    down.request(1);
    for (i, up) in (0u8..).zip(ups.iter_mut()) {
        assert_eq!(up.expect_request(), 1);
        up.send_next(i);
    }
    assert_eq!(down.expect_next(), [0, 1, 2, 3, 4]);
    for up in &mut ups {
        up.expect_no_signal(QUIET);
    }
    ups[4].send_complete();
    down.expect_complete();
    for up in &mut ups[..4] {
        up.expect_cancellation();
    }
    shutdown(&system);
}

#[test]
fn zip_with3_completes_without_demand_when_an_input_is_empty() {
    // TwoStreamsSetup's "one immediately completed and one nonempty publisher".
    let (system, mat) = stream_system("zip-with-3-empty");
    let mut b = GraphBuilder::new();
    let zip = b.add(ZipWith3::new(|a: u32, b: char, c: u64| (a, b, c)));
    let (a, bb, c) = (
        b.source(Source::range(0u32..)),
        b.source(Source::<char>::empty()),
        b.source(Source::repeat(3u64)),
    );
    b.connect(a, zip.in0()).unwrap();
    b.connect(bb, zip.in1()).unwrap();
    b.connect(c, zip.in2()).unwrap();
    let (sink, key) = b.sink_mat(TestSink::probe());
    b.connect(zip.out(), sink).unwrap();
    let mut down = b.build(move |m| m.take(&key)).unwrap().run(&mat);
    down.expect_complete();
    shutdown(&system);
}
