//! Graph benchmarks: fan-in and fan-out junctions beside the Rust user's
//! alternative (`futures::stream::select` and `zip` under `block_on`), a
//! broadcast to two folding sinks, and the planner's fusion of operators
//! appended one by one after a non-simple stage (`scan` then nine `map`s)
//! beside the same maps composed into one flow first; a three-way
//! `zip_n` and an `or_else` beside their `futures` forms.
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

/// The checksum of a zip of three copies of `0..n`, combined by `xor`
/// and shifts.
pub fn zip3_expected(n: u64) -> u64 {
    (0..n).map(|x| x ^ (x << 1) ^ (x << 2)).fold(0, add)
}

/// Three copies of `0..n` zipped by `Source::zip_with_n` into a fold, on
/// Weir.
pub fn weir_zip_n(n: u64, mat: &Materializer) -> u64 {
    let sources = [
        Source::range(0..n),
        Source::range(0..n),
        Source::range(0..n),
    ];
    Source::zip_with_n(sources, |[a, b, c]| a ^ (b << 1) ^ (c << 2))
        .run_with(Sink::fold(0u64, add), mat)
        .wait()
        .expect("the stream completes")
}

/// The same with two `futures::stream::zip`s under `block_on`.
pub fn futures_zip3(n: u64) -> u64 {
    use futures_util::future::ready;
    use futures_util::stream::{self, StreamExt};
    futures_executor::block_on(
        stream::iter(0..n)
            .zip(stream::iter(0..n))
            .zip(stream::iter(0..n))
            .map(|((a, b), c)| a ^ (b << 1) ^ (c << 2))
            .fold(0u64, |a, x| ready(add(a, x))),
    )
}

/// `0..n` (the primary, in use) `or_else` another `0..n` into a fold, on
/// Weir; its checksum is [`merge_expected`].
pub fn weir_or_else(n: u64, mat: &Materializer) -> u64 {
    Source::range(0..n)
        .or_else(Source::range(0..n))
        .run_with(Sink::fold(0u64, add), mat)
        .wait()
        .expect("the stream completes")
}

/// `0..n` folded by `futures::stream::iter` under `block_on` (the
/// baseline of the `or_else` row: what its primary alone costs there).
pub fn futures_iter(n: u64) -> u64 {
    use futures_util::future::ready;
    use futures_util::stream::{self, StreamExt};
    futures_executor::block_on(stream::iter(0..n).fold(0u64, |a, x| ready(add(a, x))))
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

/// A little work per element, for the balance rows (a few dozen
/// instructions, so the fan-out, not the work, is measured).
fn work(x: u64) -> u64 {
    (0..16u64).fold(x, |a, i| a.wrapping_mul(31) ^ i)
}

/// The checksum of the balance rows.
pub fn balance_expected(n: u64) -> u64 {
    (0..n).map(work).fold(0, add)
}

/// `0..n` balanced over four workers, each behind an async boundary doing
/// `work`, merged into one fold.
pub fn weir_balance(n: u64, mat: &Materializer) -> u64 {
    use weir_streams::graph::{Balance, Merge};
    let mut b = GraphBuilder::new();
    let source = b.source(Source::range(0..n));
    let split = b.add(Balance::<u64, 4>::new());
    let join = b.add(Merge::<u64, 4>::new());
    let (sum, key) = b.sink_mat(Sink::fold(0u64, add));
    b.connect(source, split.inlet()).expect("fresh ports");
    for (out, inlet) in split.outs().into_iter().zip(join.ins()) {
        let (worker_in, worker_out) =
            b.flow(Flow::new().async_boundary().map(work).async_boundary());
        b.connect(out, worker_in).expect("fresh ports");
        b.connect(worker_out, inlet).expect("fresh ports");
    }
    b.connect(join.out(), sum).expect("fresh ports");
    let graph = b
        .build(move |m| m.take(&key))
        .expect("every port connected");
    graph.run(mat).wait().expect("completes")
}

/// The same as four tokio tasks fed by one shared channel (a
/// `tokio::sync::Mutex` around an `mpsc(16)` receiver), sending their
/// results to a folding task.
#[cfg(feature = "peers")]
pub fn tokio_balance(n: u64, rt: &tokio::runtime::Runtime) -> u64 {
    use std::sync::Arc;
    use tokio::sync::{Mutex, mpsc};
    rt.block_on(async move {
        let (tx, rx) = mpsc::channel::<u64>(16);
        let rx = Arc::new(Mutex::new(rx));
        let (done_tx, mut done_rx) = mpsc::channel::<u64>(16);
        for _ in 0..4 {
            let (rx, done_tx) = (Arc::clone(&rx), done_tx.clone());
            tokio::spawn(async move {
                loop {
                    let next = rx.lock().await.recv().await;
                    let Some(x) = next else { return };
                    if done_tx.send(work(x)).await.is_err() {
                        return;
                    }
                }
            });
        }
        drop(done_tx);
        tokio::spawn(async move {
            for x in 0..n {
                if tx.send(x).await.is_err() {
                    return;
                }
            }
        });
        let mut sum = 0u64;
        while let Some(x) = done_rx.recv().await {
            sum = add(sum, x);
        }
        sum
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_zip_n_and_or_else_rows_compute_their_checksums() {
        let system = weir_actor::ActorSystem::new("zip-n-or-else").expect("valid name");
        let mat = Materializer::new(&system);
        assert_eq!(weir_zip_n(1_000, &mat), zip3_expected(1_000));
        assert_eq!(futures_zip3(1_000), zip3_expected(1_000));
        assert_eq!(weir_or_else(1_000, &mat), merge_expected(1_000));
        assert_eq!(futures_iter(1_000), merge_expected(1_000));
        system.terminate().wait().expect("outside the system");
    }

    #[test]
    fn the_balance_rows_compute_the_expected_sum() {
        let system = weir_actor::ActorSystem::new("balance").expect("valid name");
        let mat = Materializer::new(&system);
        assert_eq!(weir_balance(10_000, &mat), balance_expected(10_000));
        #[cfg(feature = "peers")]
        {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .build()
                .expect("a runtime");
            assert_eq!(tokio_balance(10_000, &rt), balance_expected(10_000));
        }
        system.terminate().wait().expect("outside the system");
    }
}
