//! The interop benchmark: an async stream through a Weir `map` and back
//! out as an async stream, consumed on a tokio runtime, beside the same
//! `map` done on the async stream alone (feature `peers`).

#[cfg(feature = "peers")]
pub use imp::*;

#[cfg(feature = "peers")]
mod imp {
    use std::time::{Duration, Instant};

    use futures_util::StreamExt;
    use futures_util::future::ready;
    use weir_interop::{SinkAsStream, SourceFromStream};
    use weir_streams::prelude::*;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .expect("a tokio runtime")
    }

    /// `stream::iter(0..n).map(f).fold(..)` in a tokio task.
    pub fn async_only(n: u64) -> (u64, Duration) {
        let runtime = runtime();
        let start = Instant::now();
        let sum = runtime.block_on(async move {
            tokio::spawn(async move {
                futures_util::stream::iter(0..n)
                    .map(|x| x.wrapping_mul(3))
                    .fold(0u64, |a, x| ready(a.wrapping_add(x)))
                    .await
            })
            .await
            .expect("the task runs")
        });
        (sum, start.elapsed())
    }

    /// The same with the `map` in Weir: stream -> Source::from_stream ->
    /// map -> Sink::as_stream -> fold in a tokio task (two crossings). The
    /// graph is fused, so `as_stream` runs it inside the task's polls.
    pub fn through_weir(n: u64, mat: &Materializer) -> (u64, Duration) {
        let runtime = runtime();
        let start = Instant::now();
        let out = Source::from_stream(futures_util::stream::iter(0..n))
            .map(|x: u64| x.wrapping_mul(3))
            .run_with(Sink::as_stream(), mat);
        let sum = runtime.block_on(async move {
            tokio::spawn(async move {
                out.fold(0u64, |a, x| ready(a.wrapping_add(x.expect("no failure"))))
                    .await
            })
            .await
            .expect("the task runs")
        });
        (sum, start.elapsed())
    }

    /// As [`through_weir`], with an async boundary after the `map`: the
    /// graph runs on two islands (actors) and hands its elements over to
    /// the tokio task through the output buffer.
    pub fn through_weir_island(n: u64, mat: &Materializer) -> (u64, Duration) {
        let runtime = runtime();
        let start = Instant::now();
        let out = Source::from_stream(futures_util::stream::iter(0..n))
            .map(|x: u64| x.wrapping_mul(3))
            .async_boundary()
            .run_with(Sink::as_stream(), mat);
        let sum = runtime.block_on(async move {
            tokio::spawn(async move {
                out.fold(0u64, |a, x| ready(a.wrapping_add(x.expect("no failure"))))
                    .await
            })
            .await
            .expect("the task runs")
        });
        (sum, start.elapsed())
    }

    /// A producer task sending `0..n` into a tokio mpsc channel (1024).
    fn channel(n: u64) -> tokio::sync::mpsc::Receiver<u64> {
        let (tx, rx) = tokio::sync::mpsc::channel(1024);
        tokio::spawn(async move {
            for i in 0..n {
                tx.send(i).await.expect("the consumer lives");
            }
        });
        rx
    }

    /// `rx` as a `futures::Stream` (what tokio-stream's `ReceiverStream` is).
    fn receiver_stream(
        mut rx: tokio::sync::mpsc::Receiver<u64>,
    ) -> impl futures_util::Stream<Item = u64> + Send + 'static {
        futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx))
    }

    /// The everyday tokio stream: a channel fed by another task, mapped
    /// and folded in a task.
    pub fn channel_only(n: u64) -> (u64, Duration) {
        let runtime = runtime();
        let start = Instant::now();
        let sum = runtime.block_on(async move {
            tokio::spawn(async move {
                receiver_stream(channel(n))
                    .map(|x| x.wrapping_mul(3))
                    .fold(0u64, |a, x| ready(a.wrapping_add(x)))
                    .await
            })
            .await
            .expect("the task runs")
        });
        (sum, start.elapsed())
    }

    /// The same channel stream through `Source::from_stream -> map ->
    /// Sink::as_stream`, read by the task (fused: the map runs in its polls).
    pub fn channel_through_weir(n: u64, mat: &Materializer) -> (u64, Duration) {
        let runtime = runtime();
        let start = Instant::now();
        let mat = mat.clone();
        let sum = runtime.block_on(async move {
            tokio::spawn(async move {
                let out = Source::from_stream(receiver_stream(channel(n)))
                    .map(|x: u64| x.wrapping_mul(3))
                    .run_with(Sink::as_stream(), &mat);
                out.fold(0u64, |a, x| ready(a.wrapping_add(x.expect("no failure"))))
                    .await
            })
            .await
            .expect("the task runs")
        });
        (sum, start.elapsed())
    }
}
