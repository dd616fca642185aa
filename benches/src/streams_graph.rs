//! Graph benchmarks: fan-in and fan-out junctions beside the Rust user's
//! alternative (`futures::stream::select` and `zip` under `block_on`), a
//! broadcast to two folding sinks, and the planner's fusion of operators
//! appended one by one after a non-simple stage (`scan` then nine `map`s)
//! beside the same maps composed into one flow first.
//!
//! Every variant returns a checksum of the same work, so none can skip it.

use std::hint::black_box;

use weir_streams::graph::{Broadcast, GraphBuilder};
use weir_streams::prelude::*;

fn add(a: u64, x: u64) -> u64 {
    a.wrapping_add(x)
}

/// The checksum of a merge of `0..n/2` and `n/2..n`.
pub fn merge_expected(n: u64) -> u64 {
    (0..n).fold(0, add)
}

/// `0..n/2` and `n/2..n` merged into a fold, on Weir.
pub fn weir_merge(n: u64, mat: &Materializer) -> u64 {
    Source::range(0..n / 2)
        .merge(Source::range(n / 2..n))
        .run_with(Sink::fold(0u64, add), mat)
        .wait()
        .expect("the stream completes")
}

/// The same with `futures::stream::select` under `block_on`.
pub fn futures_select(n: u64) -> u64 {
    use futures_util::future::ready;
    use futures_util::stream::{self, StreamExt};
    futures_executor::block_on(
        stream::select(stream::iter(0..n / 2), stream::iter(n / 2..n))
            .fold(0u64, |a, x| ready(add(a, x))),
    )
}

/// The checksum of a zip of `0..n` with itself, combined by `xor` and a shift.
pub fn zip_expected(n: u64) -> u64 {
    (0..n).map(|x| x ^ (x << 1)).fold(0, add)
}

/// `0..n` zipped with `0..n` into a fold, on Weir.
pub fn weir_zip(n: u64, mat: &Materializer) -> u64 {
    Source::range(0..n)
        .zip_with(Source::range(0..n), |a, b| a ^ (b << 1))
        .run_with(Sink::fold(0u64, add), mat)
        .wait()
        .expect("the stream completes")
}

/// The same with `futures::stream::zip` under `block_on`.
pub fn futures_zip(n: u64) -> u64 {
    use futures_util::future::ready;
    use futures_util::stream::{self, StreamExt};
    futures_executor::block_on(
        stream::iter(0..n)
            .zip(stream::iter(0..n))
            .map(|(a, b)| a ^ (b << 1))
            .fold(0u64, |a, x| ready(add(a, x))),
    )
}

/// `0..n` broadcast to two folds (a sum and a count); their sum.
pub fn weir_broadcast(n: u64, mat: &Materializer) -> u64 {
    let mut b = GraphBuilder::new();
    let source = b.source(Source::range(0..n));
    let split = b.add(Broadcast::<u64, 2>::new());
    let (sum, sum_key) = b.sink_mat(Sink::fold(0u64, add));
    let (count, count_key) = b.sink_mat(Sink::fold(0u64, |c, _| c + 1));
    let [to_sum, to_count] = split.outs();
    b.connect(source, split.inlet()).expect("fresh ports");
    b.connect(to_sum, sum).expect("fresh ports");
    b.connect(to_count, count).expect("fresh ports");
    let graph = b
        .build(move |m| (m.take(&sum_key), m.take(&count_key)))
        .expect("every port connected");
    let (sum, count) = graph.run(mat);
    add(
        sum.wait().expect("completes"),
        count.wait().expect("completes"),
    )
}

/// The checksum of [`weir_broadcast`].
pub fn broadcast_expected(n: u64) -> u64 {
    add((0..n).fold(0, add), n)
}

/// `range.scan(..)` then nine `.map(..)` calls appended one by one.
pub fn weir_scan_then_maps(n: u64, mat: &Materializer) -> u64 {
    let mut source = Source::range(0..n).scan(0u64, |a, x| a ^ x);
    for k in 1..=9u64 {
        source = source.map(move |x| black_box(x).wrapping_add(k));
    }
    source
        .run_with(Sink::fold(0u64, add), mat)
        .wait()
        .expect("completes")
}

/// The same nine maps composed into one flow first.
pub fn weir_scan_via_composed_maps(n: u64, mat: &Materializer) -> u64 {
    let mut flow = Flow::<u64>::new();
    for k in 1..=9u64 {
        flow = flow.map(move |x| black_box(x).wrapping_add(k));
    }
    Source::range(0..n)
        .scan(0u64, |a, x| a ^ x)
        .via(flow)
        .run_with(Sink::fold(0u64, add), mat)
        .wait()
        .expect("completes")
}
