//! Hub benchmarks (`weir-bench hubs`): a `BroadcastHub` with four folding
//! consumers beside `tokio::sync::broadcast` with four receiving tasks
//! (with `--features peers`), both lossless: the hub back-pressures, and
//! the tokio channel is sized to hold every element so no receiver lags.
//!
//! Every variant returns the sum over its consumers of what each received,
//! so none can skip work.

use std::task::{Poll, Waker};
use std::time::Instant;

use std::sync::{Arc, Mutex};
use weir_streams::BroadcastHub;
use weir_streams::prelude::*;

/// Consumers (receivers) per variant.
pub const CONSUMERS: usize = 4;

fn add(a: u64, x: u64) -> u64 {
    a.wrapping_add(x)
}

/// The checksum every variant must return.
pub fn expected(n: u64) -> u64 {
    (0..n).fold(0, add).wrapping_mul(CONSUMERS as u64)
}

/// A gate a source waits on until every consumer has attached.
#[derive(Default)]
struct Gate(Mutex<(bool, Option<Waker>)>);

impl Gate {
    fn open(&self) {
        let waker = {
            let mut state = self.0.lock().expect("not poisoned");
            state.0 = true;
            state.1.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

/// `0..n` into a `BroadcastHub` (each consumer with `buffer` elements of
/// room) with [`CONSUMERS`] folding consumers attached before the first
/// element.
pub fn weir_broadcast_hub(n: u64, buffer: usize, mat: &Materializer) -> u64 {
    let gate = Arc::new(Gate::default());
    let source = {
        let gate = Arc::clone(&gate);
        Source::from_poll_fn(move || {
            let gate = Arc::clone(&gate);
            let (mut next, mut open) = (0u64, false);
            move |cx: &mut std::task::Context<'_>| {
                if !open {
                    let mut state = gate.0.lock().expect("not poisoned");
                    if !state.0 {
                        state.1 = Some(cx.waker().clone());
                        return Poll::Pending;
                    }
                    open = true;
                }
                if next == n {
                    return Poll::Ready(None);
                }
                next += 1;
                Poll::Ready(Some(Ok(next - 1)))
            }
        })
    };
    let hub = source.run_with(BroadcastHub::sink(buffer).expect("buffer > 0"), mat);
    let sums: Vec<_> = (0..CONSUMERS)
        .map(|_| hub.clone().run_with(Sink::fold(0u64, add), mat))
        .collect();
    gate.open();
    sums.into_iter()
        .map(|sum| sum.wait().expect("the stream completes"))
        .fold(0, add)
}

/// `0..n` sent on a `tokio::sync::broadcast` channel of capacity `n` (so
/// no receiver lags) to [`CONSUMERS`] receiving tasks on `runtime`.
#[cfg(feature = "peers")]
pub fn tokio_broadcast(n: u64, runtime: &tokio::runtime::Runtime) -> u64 {
    use tokio::sync::broadcast;
    runtime.block_on(async move {
        let (tx, _) = broadcast::channel::<u64>(n.max(1) as usize);
        let receivers: Vec<_> = (0..CONSUMERS)
            .map(|_| {
                let mut rx = tx.subscribe();
                tokio::spawn(async move {
                    let mut sum = 0u64;
                    loop {
                        match rx.recv().await {
                            Ok(x) => sum = add(sum, x),
                            Err(broadcast::error::RecvError::Closed) => break sum,
                            Err(broadcast::error::RecvError::Lagged(_)) => {
                                panic!("sized to hold every element: no receiver lags")
                            }
                        }
                    }
                })
            })
            .collect();
        for x in 0..n {
            tx.send(x).expect("receivers are alive");
        }
        drop(tx);
        let mut total = 0;
        for receiver in receivers {
            total = add(total, receiver.await.expect("the task completes"));
        }
        total
    })
}

/// The report: medians of `runs` runs over `n` elements, elements per
/// second (each delivered to every consumer), the ratio against tokio,
/// and allocations per element (`allocations` reads the binary's
/// counting allocator).
pub fn report(n: u64, runs: usize, buffer: usize, allocations: &dyn Fn() -> u64) {
    let system = weir_actor::ActorSystem::new("bench-hubs").expect("valid name");
    let mat = Materializer::new(&system);
    #[cfg(feature = "peers")]
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .expect("a runtime");
    type Variant<'a> = (String, Box<dyn Fn() -> u64 + 'a>);
    #[allow(unused_mut)]
    let mut variants: Vec<Variant<'_>> = vec![(
        format!("weir BroadcastHub({buffer}), {CONSUMERS} consumers"),
        Box::new(|| weir_broadcast_hub(n, buffer, &mat)),
    )];
    #[cfg(feature = "peers")]
    variants.push((
        format!("tokio::sync::broadcast, {CONSUMERS} receivers"),
        Box::new(|| tokio_broadcast(n, &runtime)),
    ));
    println!("0..{n} broadcast to {CONSUMERS} folding consumers, lossless, median of {runs} runs");
    println!(
        "{:<40} {:>14} {:>10} {:>16}",
        "variant", "elements/s", "vs tokio", "allocs/element"
    );
    let mut rows = Vec::new();
    for (name, run) in &variants {
        assert_eq!(run(), expected(n), "{name}: wrong checksum");
        let before = allocations();
        std::hint::black_box(run());
        let allocs = (allocations() - before) as f64 / n as f64;
        let mut rates: Vec<f64> = (0..runs.max(1))
            .map(|_| {
                let start = Instant::now();
                std::hint::black_box(run());
                n as f64 / start.elapsed().as_secs_f64()
            })
            .collect();
        rates.sort_by(f64::total_cmp);
        rows.push((name.clone(), rates[rates.len() / 2], allocs));
    }
    let tokio_rate = rows
        .iter()
        .find(|(name, ..)| name.starts_with("tokio"))
        .map(|row| row.1);
    for (name, rate, allocs) in &rows {
        let ratio = tokio_rate.map_or(String::new(), |t| format!("{:.2}x", rate / t));
        println!(
            "{name:<40} {:>12.2} M {ratio:>10} {allocs:>16.6}",
            rate / 1e6
        );
    }
    system
        .terminate()
        .wait()
        .expect("called from outside the system");
}
