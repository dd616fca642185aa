//! The interop benchmark: an async stream through a Weir `map` and back
//! out as an async stream, consumed in a tokio task, beside the same `map`
//! done on the async stream alone (feature `peers`). Three input streams:
//!
//! - `tokio_stream::iter`, the peer: tokio-stream's iterator
//!   stream, which yields to the runtime every 32 items;
//! - `futures::stream::iter`: pure compute that the compiler inlines
//!   whole, the worst case for any bridge;
//! - tokio-stream's `ReceiverStream` over an mpsc channel (1024) fed by a
//!   producer task, the stream tokio programs bridge most.
//!
//! Weir's side is `Source::from_stream -> map -> Sink::as_stream`, which
//! fuses and runs inside the consuming task; `through_islands` puts an
//! async boundary after the `map`, so the graph runs on actors.

#[cfg(feature = "peers")]
pub use imp::*;

#[cfg(feature = "peers")]
mod imp {
    use std::future::Future;
    use std::time::{Duration, Instant};

    use futures_util::future::ready;
    use futures_util::{Stream, StreamExt};
    use weir_interop::{SinkAsStream, SourceFromStream};
    use weir_streams::prelude::*;

    /// The input streams.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Input {
        /// `tokio_stream::iter(0..n)`.
        TokioIter,
        /// `futures::stream::iter(0..n)`.
        FuturesIter,
        /// `ReceiverStream` over an mpsc(1024) fed `0..n` by another task.
        Channel,
    }

    impl Input {
        /// A name for the report.
        pub fn name(self) -> &'static str {
            match self {
                Input::TokioIter => "tokio_stream::iter",
                Input::FuturesIter => "futures::stream::iter",
                Input::Channel => "mpsc(1024) ReceiverStream",
            }
        }
    }

    fn step(x: u64) -> u64 {
        x.wrapping_mul(3)
    }

    /// Build a 2-worker runtime and run `task` in a task on it, timed from
    /// inside the task: spawning and waking the task are left out, so
    /// short pure runs measure the stream, not the runtime's start-up.
    fn in_task<F>(task: impl FnOnce() -> F + Send + 'static) -> (u64, Duration)
    where
        F: Future<Output = u64> + Send + 'static,
    {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .expect("a tokio runtime");
        runtime
            .block_on(async move {
                tokio::spawn(async move {
                    let start = Instant::now();
                    let sum = task().await;
                    (sum, start.elapsed())
                })
                .await
            })
            .expect("the task runs")
    }

    /// An mpsc receiver fed `0..n` by a producer task (call inside the runtime).
    fn channel(n: u64) -> tokio_stream::wrappers::ReceiverStream<u64> {
        let (tx, rx) = tokio::sync::mpsc::channel(1024);
        tokio::spawn(async move {
            for i in 0..n {
                tx.send(i).await.expect("the consumer lives");
            }
        });
        tokio_stream::wrappers::ReceiverStream::new(rx)
    }

    async fn fold_alone(stream: impl Stream<Item = u64>) -> u64 {
        stream
            .map(step)
            .fold(0u64, |a, x| ready(a.wrapping_add(x)))
            .await
    }

    /// `input -> map -> fold`, all in one tokio task.
    pub fn alone(input: Input, n: u64) -> (u64, Duration) {
        match input {
            Input::TokioIter => in_task(move || async move {
                // tokio-stream's own combinators, as the issue names them.
                let mapped = tokio_stream::StreamExt::map(tokio_stream::iter(0..n), step);
                tokio_stream::StreamExt::fold(mapped, 0u64, |a, x| a.wrapping_add(x)).await
            }),
            Input::FuturesIter => in_task(move || fold_alone(futures_util::stream::iter(0..n))),
            Input::Channel => in_task(move || async move { fold_alone(channel(n)).await }),
        }
    }

    async fn fold_through<S>(stream: S, islands: bool, mat: Materializer) -> u64
    where
        S: Stream<Item = u64> + Send + 'static,
    {
        let source = Source::from_stream(stream).map(step);
        let source = if islands {
            source.async_boundary()
        } else {
            source
        };
        source
            .run_with(Sink::as_stream(), &mat)
            .fold(0u64, |a, x| ready(a.wrapping_add(x.expect("no failure"))))
            .await
    }

    /// `input -> Source::from_stream -> map -> Sink::as_stream -> fold`,
    /// materialized and read in one tokio task (two crossings); with
    /// `islands`, an async boundary after the map.
    pub fn through_weir(
        input: Input,
        n: u64,
        islands: bool,
        mat: &Materializer,
    ) -> (u64, Duration) {
        let mat = mat.clone();
        match input {
            Input::TokioIter => {
                in_task(move || fold_through(tokio_stream::iter(0..n), islands, mat))
            }
            Input::FuturesIter => {
                in_task(move || fold_through(futures_util::stream::iter(0..n), islands, mat))
            }
            Input::Channel => {
                in_task(move || async move { fold_through(channel(n), islands, mat).await })
            }
        }
    }
}
