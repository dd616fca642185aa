//! A `futures::Stream` as a Weir source.

use crate::sync::Mutex;
use std::task::{Context, Poll};

use futures_core::Stream;
use weir_streams::{Source, StreamError};

/// `Source::from_stream`: bring it in scope with `use weir_interop::SourceFromStream`.
pub trait SourceFromStream<T>: Sized {
    /// A source that emits what `stream` yields: polled only when
    /// downstream has pulled, woken by the stream's own waker (the wake-up
    /// is a message to the island, so nothing polls in a loop), completed
    /// when it ends, dropped when the source completes or is cancelled.
    ///
    /// It is a [`Source::from_poll_fn`] source, so simple operators after
    /// it fuse into it, and a pulling sink such as
    /// [`Sink::as_stream`](crate::SinkAsStream::as_stream) runs it inside
    /// the task that polls the output, with no actor in between.
    ///
    /// The stream is consumed by the first run; running the blueprint again
    /// fails that run (use [`from_stream_fn`](Self::from_stream_fn) for a
    /// blueprint that can run many times).
    ///
    /// Where it is polled: inside the consumer's task when the graph ends
    /// in [`Sink::as_stream`](crate::SinkAsStream::as_stream) with only
    /// simple operators in between; otherwise on an island's thread,
    /// outside any async runtime. There a stream that needs its runtime's
    /// context (tokio timers or I/O) panics — the stream then fails,
    /// naming this stage — so drive such a stream on its runtime and feed
    /// Weir from that task, for example with `Source::queue` and
    /// `SourceQueue::send` (`examples/tokio_pipeline.rs` in weir-benches).
    fn from_stream<S>(stream: S) -> Self
    where
        S: Stream<Item = T> + Send + 'static;

    /// A source that makes a fresh stream with `make` for each run.
    fn from_stream_fn<S, F>(make: F) -> Self
    where
        S: Stream<Item = T> + Send + 'static,
        F: Fn() -> S + Send + Sync + 'static;
}

impl<T: Send + 'static> SourceFromStream<T> for Source<T, ()> {
    fn from_stream<S>(stream: S) -> Self
    where
        S: Stream<Item = T> + Send + 'static,
    {
        let once = Mutex::new(Some(stream));
        Source::from_poll_fn(move || {
            let mut stream = once.lock().take().map(Box::pin);
            move |cx: &mut Context<'_>| match stream.as_mut() {
                Some(stream) => stream.as_mut().poll_next(cx).map(|next| next.map(Ok)),
                None => Poll::Ready(Some(Err(StreamError::msg(
                    "Source::from_stream ran a second time; its stream was used by the first run (use from_stream_fn)",
                )))),
            }
        })
        .named("from_stream")
    }

    fn from_stream_fn<S, F>(make: F) -> Self
    where
        S: Stream<Item = T> + Send + 'static,
        F: Fn() -> S + Send + Sync + 'static,
    {
        Source::from_poll_fn(move || {
            let mut stream = Box::pin(make());
            move |cx: &mut Context<'_>| stream.as_mut().poll_next(cx).map(|next| next.map(Ok))
        })
        .named("from_stream")
    }
}
