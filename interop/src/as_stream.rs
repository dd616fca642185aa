//! A Weir sink that materializes a `futures::Stream`.

use std::pin::Pin;
use std::task::{Context, Poll};

use futures_core::Stream;
use weir_streams::stage::upfront_capacity;
use weir_streams::{Pull, Pulled, Sink, StreamError};

mod island;

/// `Sink::as_stream`: bring it in scope with `use weir_interop::SinkAsStream`.
pub trait SinkAsStream<T>: Sized {
    /// A sink that materializes a [`StreamOut`]: a `futures::Stream` fed by
    /// the graph through a buffer (256 elements, or the sink's
    /// `Attributes::with_input_buffer`): the graph is asked for more while
    /// the buffer has room, and the room is given back half a buffer at a
    /// time as the consumer reads, so a consumer that does not poll
    /// back-pressures the graph. It yields `Ok(element)`s, then ends; a
    /// failure of the graph comes as one `Err` and then the end. Dropping
    /// it cancels upstream.
    ///
    /// When the source before it is fused (an iterator or `from_stream`
    /// source followed by simple operators), no actor runs at all: the
    /// stream runs that source inside its own `poll_next`, one buffer's
    /// worth at a time, on the consumer's task, and nothing runs before
    /// the first poll.
    ///
    /// ```
    /// use futures_util::StreamExt;
    /// use weir_interop::{SinkAsStream, SourceFromStream};
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("as-stream").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let doubled = Source::from_stream(futures_util::stream::iter(1u32..=3))
    ///     .map(|x| x * 2)
    ///     .run_with(Sink::as_stream(), &materializer);
    /// let all: Vec<_> = futures_executor::block_on(doubled.collect());
    /// assert_eq!(all, vec![Ok(2), Ok(4), Ok(6)]);
    /// system.terminate().wait().unwrap();
    /// ```
    fn as_stream() -> Self;
}

impl<T: Send + 'static> SinkAsStream<T> for Sink<T, StreamOut<T>> {
    fn as_stream() -> Self {
        Sink::from_graph(island::AsStream::<T>(std::marker::PhantomData)).with_pull(|source| {
            let capacity = source.attributes().input_buffer_or(BUFFER);
            StreamOut {
                inner: Inner::Inline(Inline {
                    source,
                    batch: Vec::with_capacity(upfront_capacity(capacity)),
                    capacity,
                    ended: None,
                    finished: false,
                }),
            }
        })
    }
}

/// Elements the graph may hand over before the consumer polls them,
/// unless the sink's input buffer attribute says otherwise. Larger than
/// the stream default (16): every hand-over to another runtime's task can
/// cost a thread wake-up.
const BUFFER: usize = 256;

/// The `futures::Stream` that [`SinkAsStream::as_stream`] materializes.
///
/// When the source before the sink is fused (an iterator or
/// `from_stream` source with simple operators such as `map` and
/// `filter`), the stream runs that source itself, inside `poll_next`: a
/// batch at a time, on the polling task, with no actor and no hand-over
/// between threads. Other graphs run on islands and hand their elements
/// over through the buffer.
///
/// Cancel safety: dropping it cancels the graph upstream; an element the
/// graph already handed over and nobody polled for is dropped with it.
pub struct StreamOut<T: Send + 'static> {
    inner: Inner<T>,
}

enum Inner<T: Send + 'static> {
    /// Fed by the sink stage on an island.
    Island(island::Reader<T>),
    /// Runs a fused source in `poll_next`.
    Inline(Inline<T>),
}

struct Inline<T> {
    source: Pull<T>,
    /// The current batch, newest first (served from the back).
    batch: Vec<T>,
    capacity: usize,
    /// How the source ended, once it has, to be told after the batch.
    ended: Option<Result<(), StreamError>>,
    finished: bool,
}

impl<T> Inline<T> {
    /// The batch is empty: tell how the source ended, or run it for more.
    #[inline(never)]
    fn refill(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<T, StreamError>>> {
        loop {
            if let Some(element) = self.batch.pop() {
                return Poll::Ready(Some(Ok(element)));
            }
            if let Some(ended) = self.ended.take() {
                self.finished = true;
                return Poll::Ready(ended.err().map(Err));
            }
            if self.finished {
                return Poll::Ready(None);
            }
            let pulled = self.source.poll_fill(cx, &mut self.batch, self.capacity);
            self.batch.reverse();
            match pulled {
                Pulled::More => {}
                Pulled::Pending if self.batch.is_empty() => return Poll::Pending,
                Pulled::Pending => {}
                Pulled::Failed(error) => self.ended = Some(Err(error)),
                // `Completed` (and any later kind of end).
                _ => self.ended = Some(Ok(())),
            }
        }
    }
}

// Nothing in it is pinned structurally: the source and the buffers are
// moved freely, so the stream is `Unpin` whatever `T` is.
impl<T: Send + 'static> Unpin for StreamOut<T> {}

impl<T: Send + 'static> Stream for StreamOut<T> {
    type Item = Result<T, StreamError>;

    #[inline]
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        match &mut self.get_mut().inner {
            // The per-element path: small enough to inline into the caller.
            Inner::Inline(inline) => match inline.batch.pop() {
                Some(element) => Poll::Ready(Some(Ok(element))),
                None => inline.refill(cx),
            },
            Inner::Island(reader) => reader.poll_next(cx),
        }
    }
}

impl<T: Send + 'static> std::fmt::Debug for StreamOut<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (mode, finished) = match &self.inner {
            Inner::Island(reader) => ("island", reader.is_finished()),
            Inner::Inline(inline) => ("inline", inline.finished),
        };
        f.debug_struct("StreamOut")
            .field("mode", &mode)
            .field("finished", &finished)
            .finish()
    }
}
