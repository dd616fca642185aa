//! `weir-bench async-ops` (feature `tokio`, which `peers` includes): Weir's
//! async operators beside `futures::StreamExt::buffered` on tokio with the
//! same parallelism, and `RetryFlow`'s no-retry path beside a plain
//! `map_async`.
//!
//! Every pipeline is `range(0..n) -> f -> fold(+)` with `f(x) = x + 1` done
//! by a future of one of two kinds ([`Work`](crate::async_ops::Work)): ready at its first poll
//! (`std::future::ready`), or `tokio::task::yield_now().await` first (one
//! suspension and self-wake per element, the tokio future the issue names).
//! Weir's system runs inside a tokio runtime's context
//! (`TokioContext::tokio_context`), so the tokio future is polled by
//! Weir's own threads with tokio's context entered, as a user's would be.
//! The rows:
//!
//! - `futures::stream::iter(0..n).map(f).buffered(P).fold(..)`, on a
//!   current-thread runtime (`block_on`) and in a task on a 2-worker
//!   runtime: the peer, at its best of the two;
//! - Weir `map_async(P, f)`, and `map_async_partitioned(P, x % 64, f)`
//!   (64 partitions, so consecutive elements never wait on each other's
//!   partition and `P` elements can be in flight);
//! - Weir `map_async(1, f)` and `RetryFlow::with_backoff` around the same
//!   `map_async(1, f)` deciding never to retry: `RetryFlow` keeps one
//!   element in its flow at a time, so its cost is compared with the
//!   plain stage at the same parallelism.
//!
//! The rows run interleaved round after round; the report gives each
//! row's median rate and its ratio to the row it is measured against.

use std::future::{Future, Ready, ready};
use std::time::Duration;

use futures_util::StreamExt;
use weir_actor::ActorSystem;
use weir_interop::TokioContext;
use weir_streams::RetryFlow;
use weir_streams::prelude::*;

/// Partitions of the `map_async_partitioned` row.
pub const PARTITIONS: u64 = 64;

/// The future that computes each element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work {
    /// `std::future::ready(x + 1)`.
    Ready,
    /// `tokio::task::yield_now().await`, then `x + 1`.
    TokioYield,
}

impl Work {
    /// A name for the report.
    pub fn label(self) -> &'static str {
        match self {
            Work::Ready => "a ready future (std::future::ready)",
            Work::TokioYield => "a tokio future (tokio::task::yield_now)",
        }
    }
}

fn ready_weir(x: u64) -> Ready<Result<u64, StreamError>> {
    ready(Ok(x + 1))
}

async fn yield_weir(x: u64) -> Result<u64, StreamError> {
    tokio::task::yield_now().await;
    Ok(x + 1)
}

fn ready_peer(x: u64) -> Ready<u64> {
    ready(x + 1)
}

async fn yield_peer(x: u64) -> u64 {
    tokio::task::yield_now().await;
    x + 1
}

/// What every pipeline folds to: the sum of `x + 1` for `x` in `0..n`.
pub fn expected(n: u64) -> u64 {
    (0..n).fold(0u64, |a, x| a.wrapping_add(x + 1))
}

fn fold_sum() -> Sink<u64, Completion<u64>> {
    Sink::fold(0u64, u64::wrapping_add)
}

fn weir_map_async_with<F, Fut>(n: u64, parallelism: usize, f: F, mat: &Materializer) -> u64
where
    F: Fn(u64) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Result<u64, StreamError>> + Send + 'static,
{
    Source::range(0..n)
        .map_async(parallelism, f)
        .expect("parallelism is not zero")
        .run_with(fold_sum(), mat)
        .wait()
        .expect("the pipeline completes")
}

/// `range(0..n) -> map_async(parallelism, work) -> fold`.
pub fn weir_map_async(n: u64, parallelism: usize, work: Work, mat: &Materializer) -> u64 {
    match work {
        Work::Ready => weir_map_async_with(n, parallelism, ready_weir, mat),
        Work::TokioYield => weir_map_async_with(n, parallelism, yield_weir, mat),
    }
}

fn weir_partitioned_with<F, Fut>(n: u64, parallelism: usize, f: F, mat: &Materializer) -> u64
where
    F: Fn(u64) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Result<u64, StreamError>> + Send + 'static,
{
    Source::range(0..n)
        .map_async_partitioned(parallelism, |x| x % PARTITIONS, move |x, _| f(x))
        .expect("parallelism is not zero")
        .run_with(fold_sum(), mat)
        .wait()
        .expect("the pipeline completes")
}

/// `range(0..n) -> map_async_partitioned(parallelism, x % 64, work) -> fold`.
pub fn weir_map_async_partitioned(
    n: u64,
    parallelism: usize,
    work: Work,
    mat: &Materializer,
) -> u64 {
    match work {
        Work::Ready => weir_partitioned_with(n, parallelism, ready_weir, mat),
        Work::TokioYield => weir_partitioned_with(n, parallelism, yield_weir, mat),
    }
}

fn weir_retry_with<F, Fut>(n: u64, f: F, mat: &Materializer) -> u64
where
    F: Fn(u64) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Result<u64, StreamError>> + Send + 'static,
{
    let service = Flow::<u64>::new()
        .map_async(1, f)
        .expect("parallelism is not zero");
    let retried = RetryFlow::with_backoff(
        Duration::from_millis(1),
        Duration::from_millis(100),
        0.0,
        3,
        service,
        |_: &u64, _: &u64| None,
    )
    .expect("valid backoff");
    Source::range(0..n)
        .via(retried)
        .run_with(fold_sum(), mat)
        .wait()
        .expect("the pipeline completes")
}

/// `range(0..n) -> RetryFlow::with_backoff(map_async(1, work), never retry) -> fold`.
pub fn weir_retry_no_retry(n: u64, work: Work, mat: &Materializer) -> u64 {
    match work {
        Work::Ready => weir_retry_with(n, ready_weir, mat),
        Work::TokioYield => weir_retry_with(n, yield_weir, mat),
    }
}

fn buffered_with<F, Fut>(n: u64, parallelism: usize, f: F) -> impl Future<Output = u64> + Send
where
    F: Fn(u64) -> Fut + Send + 'static,
    Fut: Future<Output = u64> + Send + 'static,
{
    futures_util::stream::iter(0..n)
        .map(f)
        .buffered(parallelism)
        .fold(0u64, |a, x| ready(a.wrapping_add(x)))
}

/// Where the `futures` pipeline runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tokio {
    /// `block_on` on a current-thread runtime.
    CurrentThread,
    /// A task spawned on a multi-thread runtime, awaited by `block_on`.
    Task,
}

/// `stream::iter(0..n).map(work).buffered(parallelism).fold(..)` on `rt`
/// (a current-thread runtime for [`Tokio::CurrentThread`]).
pub fn futures_buffered(
    n: u64,
    parallelism: usize,
    work: Work,
    rt: &tokio::runtime::Runtime,
    how: Tokio,
) -> u64 {
    let run = |fut: std::pin::Pin<Box<dyn Future<Output = u64> + Send>>| match how {
        Tokio::CurrentThread => rt.block_on(fut),
        Tokio::Task => rt.block_on(rt.spawn(fut)).expect("the task ends"),
    };
    // One box per run, not per element: the stream itself is unboxed.
    match work {
        Work::Ready => run(Box::pin(buffered_with(n, parallelism, ready_peer))),
        Work::TokioYield => run(Box::pin(buffered_with(n, parallelism, yield_peer))),
    }
}

/// A tokio runtime: current-thread, or multi-thread with `workers`.
pub fn runtime(workers: Option<usize>) -> tokio::runtime::Runtime {
    let mut builder = match workers {
        None => tokio::runtime::Builder::new_current_thread(),
        Some(w) => {
            let mut b = tokio::runtime::Builder::new_multi_thread();
            b.worker_threads(w);
            b
        }
    };
    builder.enable_all().build().expect("tokio runtime")
}

/// A Weir system (the default pool) whose threads run inside `rt`'s context.
pub fn weir_system(rt: &tokio::runtime::Runtime) -> ActorSystem {
    ActorSystem::builder()
        .name("bench-async-ops")
        .tokio_context(rt.handle().clone())
        .build()
        .expect("valid settings")
}

fn arg(args: &[String], flag: &str) -> Option<u64> {
    let i = args.iter().position(|a| a == flag)?;
    args.get(i + 1)?.replace('_', "").parse().ok()
}

/// What a row is measured against in the report.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// A `futures` row: the best of them is the reference.
    Peer,
    /// A Weir operator held to >= 1x the best peer.
    Operator,
    /// The plain `map_async(1)` the `RetryFlow` row is held against.
    Plain,
    /// `RetryFlow`: <= 1.5x the plain row's cost.
    Retry,
}

type Row<'a> = (String, Role, Box<dyn Fn() -> u64 + 'a>);

fn rows<'a>(
    n: u64,
    p: usize,
    work: Work,
    mat: &'a Materializer,
    current: &'a tokio::runtime::Runtime,
    workers: &'a tokio::runtime::Runtime,
) -> Vec<Row<'a>> {
    vec![
        (
            format!("futures buffered({p}), tokio current_thread"),
            Role::Peer,
            Box::new(move || futures_buffered(n, p, work, current, Tokio::CurrentThread)),
        ),
        (
            format!("futures buffered({p}), tokio 2 workers, task"),
            Role::Peer,
            Box::new(move || futures_buffered(n, p, work, workers, Tokio::Task)),
        ),
        (
            format!("weir map_async({p})"),
            Role::Operator,
            Box::new(move || weir_map_async(n, p, work, mat)),
        ),
        (
            format!("weir map_async_partitioned({p}, x % {PARTITIONS})"),
            Role::Operator,
            Box::new(move || weir_map_async_partitioned(n, p, work, mat)),
        ),
        (
            "weir map_async(1)".to_string(),
            Role::Plain,
            Box::new(move || weir_map_async(n, 1, work, mat)),
        ),
        (
            "weir RetryFlow(map_async(1)), no retry".to_string(),
            Role::Retry,
            Box::new(move || weir_retry_no_retry(n, work, mat)),
        ),
    ]
}

/// The report (`weir-bench async-ops [--elements N] [--parallelism N]
/// [--runs N] [--work ready|tokio] [--only TEXT]`): `--only` keeps the rows
/// whose name contains TEXT, e.g. to count one row's instructions under
/// callgrind.
pub fn run(args: &[String]) {
    let n = arg(args, "--elements").unwrap_or(1_000_000);
    let p = arg(args, "--parallelism").unwrap_or(8).max(1) as usize;
    let runs = arg(args, "--runs").unwrap_or(5).max(1) as usize;
    let text = |flag: &str| {
        let i = args.iter().position(|a| a == flag)?;
        args.get(i + 1).map(String::as_str)
    };
    let works: Vec<Work> = match text("--work") {
        Some("ready") => vec![Work::Ready],
        Some("tokio") => vec![Work::TokioYield],
        _ => vec![Work::Ready, Work::TokioYield],
    };
    let context = runtime(Some(1));
    let system = weir_system(&context);
    let mat = Materializer::new(&system);
    let current = runtime(None);
    let workers = runtime(Some(2));
    let want = expected(n);
    for work in works {
        let mut rows = rows(n, p, work, &mat, &current, &workers);
        if let Some(only) = text("--only") {
            rows.retain(|(name, _, _)| name.contains(only));
        }
        for (name, _, row) in &rows {
            assert_eq!(row(), want, "{name} folds every element"); // and warms up
        }
        let medians = crate::interleaved_medians(runs, rows.len(), |i| {
            let start = std::time::Instant::now();
            let sum = std::hint::black_box((rows[i].2)());
            let rate = n as f64 / start.elapsed().as_secs_f64();
            assert_eq!(sum, want, "{}", rows[i].0);
            rate
        });
        let of = |role: Role| {
            let rates = rows
                .iter()
                .zip(&medians)
                .filter(|((_, r, _), _)| *r == role);
            rates
                .map(|(_, &rate)| rate)
                .fold(None, |best: Option<f64>, rate| {
                    Some(best.map_or(rate, |b| b.max(rate)))
                })
        };
        let (peer, plain) = (of(Role::Peer), of(Role::Plain));
        println!(
            "\nrange(0..{n}) -> f -> fold, f {}, median of {runs} interleaved runs:",
            work.label()
        );
        println!("{:<48} {:>12} {:>26}", "variant", "elements/s", "ratio");
        for ((name, role, _), &rate) in rows.iter().zip(&medians) {
            let ratio = match (role, peer, plain) {
                (Role::Peer, Some(best), _) => format!("{:.2}x best futures", rate / best),
                (Role::Operator, Some(best), _) => {
                    format!("{:.2}x best futures (>= 1x)", rate / best)
                }
                (Role::Retry, _, Some(plain)) => {
                    format!("{:.2}x map_async(1)'s cost (<= 1.5x)", plain / rate)
                }
                _ => String::new(),
            };
            println!("{name:<48} {:>10.2} M {ratio:>26}", rate / 1e6);
        }
    }
    system
        .terminate()
        .wait()
        .expect("called from outside the system");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_folds_every_element() {
        let context = runtime(Some(1));
        let system = weir_system(&context);
        let mat = Materializer::new(&system);
        let (current, workers) = (runtime(None), runtime(Some(2)));
        let n = 2_000;
        for work in [Work::Ready, Work::TokioYield] {
            for p in [1, 8] {
                assert_eq!(weir_map_async(n, p, work, &mat), expected(n));
                assert_eq!(weir_map_async_partitioned(n, p, work, &mat), expected(n));
                for how in [Tokio::CurrentThread, Tokio::Task] {
                    let rt = if how == Tokio::Task {
                        &workers
                    } else {
                        &current
                    };
                    assert_eq!(futures_buffered(n, p, work, rt, how), expected(n));
                }
            }
            assert_eq!(weir_retry_no_retry(n, work, &mat), expected(n));
        }
        system.terminate().wait().expect("outside the system");
    }
}
