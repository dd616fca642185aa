//! A Weir sink that materializes a `futures::Stream`.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

use futures_core::Stream;
use weir_streams::stage::{
    AsyncCallback, GraphStage, GraphStageLogic, InPort, MatContext, SinkShape, StageContext,
    StageResult,
};
use weir_streams::{Pull, Pulled, Sink, StreamError};

/// `Sink::as_stream`: bring it in scope with `use weir_interop::SinkAsStream`.
pub trait SinkAsStream<T>: Sized {
    /// A sink that materializes a [`StreamOut`]: a `futures::Stream` fed by
    /// the graph through a buffer (256 elements, or the sink's
    /// `Attributes::with_input_buffer`): the graph is asked for more while
    /// the buffer has room, so a consumer that does not poll back-pressures
    /// the graph. It yields `Ok(element)`s, then ends; a
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
        Sink::from_graph(AsStream::<T>(std::marker::PhantomData)).with_pull(|source| {
            let capacity = source.attributes().input_buffer_or(BUFFER);
            StreamOut {
                inner: Inner::Inline(Inline {
                    source,
                    batch: Vec::with_capacity(capacity),
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

struct State<T> {
    queue: VecDeque<T>,
    capacity: usize,
    /// How the graph ended, once it has.
    ended: Option<Result<(), StreamError>>,
    /// The stage stopped pulling (the queue was full, or it has not been
    /// asked yet): the consumer asks it again when it makes room.
    idle: bool,
    waker: Option<Waker>,
    finished: bool,
}

struct Shared<T> {
    state: Mutex<State<T>>,
}

impl<T> Shared<T> {
    fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

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
    Island {
        shared: Arc<Shared<T>>,
        /// Zero-sized signals: invoking them allocates nothing.
        pull: AsyncCallback<()>,
        cancel: AsyncCallback<()>,
    },
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
            Inner::Island { shared, pull, .. } => poll_island(shared, pull, cx),
        }
    }
}

/// `poll_next` of a stream fed by an island.
fn poll_island<T>(
    shared: &Shared<T>,
    pull: &AsyncCallback<()>,
    cx: &mut Context<'_>,
) -> Poll<Option<Result<T, StreamError>>> {
    let ask = {
        let mut state = shared.lock();
        if state.finished {
            return Poll::Ready(None);
        }
        if let Some(element) = state.queue.pop_front() {
            // Room again: set an idle stage pulling.
            let ask = std::mem::replace(&mut state.idle, false);
            drop(state);
            if ask {
                pull.invoke(());
            }
            return Poll::Ready(Some(Ok(element)));
        }
        if let Some(ended) = state.ended.take() {
            state.finished = true;
            return Poll::Ready(ended.err().map(Err));
        }
        state.waker = Some(cx.waker().clone());
        std::mem::replace(&mut state.idle, false)
    };
    if ask {
        pull.invoke(());
    }
    Poll::Pending
}

impl<T: Send + 'static> Drop for StreamOut<T> {
    fn drop(&mut self) {
        // Inline, dropping the source is the cancellation.
        if let Inner::Island { shared, cancel, .. } = &self.inner
            && !shared.lock().finished
        {
            cancel.invoke(());
        }
    }
}

impl<T: Send + 'static> std::fmt::Debug for StreamOut<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (mode, finished) = match &self.inner {
            Inner::Island { shared, .. } => ("island", shared.lock().finished),
            Inner::Inline(inline) => ("inline", inline.finished),
        };
        f.debug_struct("StreamOut")
            .field("mode", &mode)
            .field("finished", &finished)
            .finish()
    }
}

struct AsStream<T>(std::marker::PhantomData<fn(T)>);

struct AsStreamLogic<T> {
    shape: SinkShape<T>,
    shared: Arc<Shared<T>>,
}

impl<T: Send + 'static> GraphStage for AsStream<T> {
    type Shape = SinkShape<T>;
    type Mat = StreamOut<T>;

    fn name(&self) -> &'static str {
        "as_stream"
    }

    fn create_logic(&self, cx: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, StreamOut<T>) {
        let capacity = cx.attributes().input_buffer_or(BUFFER);
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                queue: VecDeque::with_capacity(capacity),
                capacity,
                ended: None,
                idle: true,
                waker: None,
                finished: false,
            }),
        });
        let pull = cx.async_callback(|this: &mut AsStreamLogic<T>, (), ctx| {
            let inlet = this.shape.inlet;
            if !ctx.has_been_pulled(inlet) && !ctx.is_closed(inlet) {
                ctx.pull(inlet)?;
            }
            Ok(())
        });
        let cancel = cx.async_callback(|_: &mut AsStreamLogic<T>, (), ctx| {
            ctx.complete_stage();
            Ok(())
        });
        let logic = AsStreamLogic {
            shape: SinkShape::new(),
            shared: Arc::clone(&shared),
        };
        (
            Box::new(logic),
            StreamOut {
                inner: Inner::Island {
                    shared,
                    pull,
                    cancel,
                },
            },
        )
    }
}

impl<T: Send + 'static> AsStreamLogic<T> {
    fn end(&self, outcome: Result<(), StreamError>) {
        let waker = {
            let mut state = self.shared.lock();
            if state.ended.is_none() && !state.finished {
                state.ended = Some(outcome);
            }
            state.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

impl<T: Send + 'static> GraphStageLogic for AsStreamLogic<T> {
    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        let (waker, room) = {
            let mut state = self.shared.lock();
            state.queue.push_back(element);
            let room = state.queue.len() < state.capacity;
            state.idle = !room;
            // Wake the consumer once per batch: now if the buffer is full,
            // else when this island has run out of work.
            (if room { None } else { state.waker.take() }, room)
        };
        if let Some(waker) = waker {
            waker.wake();
        }
        if room {
            ctx.request_idle_callback();
            ctx.pull(self.shape.inlet)?;
        }
        Ok(())
    }

    fn on_idle(&mut self, _: &mut StageContext<'_>) -> StageResult {
        let waker = {
            let mut state = self.shared.lock();
            if state.queue.is_empty() {
                None
            } else {
                state.waker.take()
            }
        };
        if let Some(waker) = waker {
            waker.wake();
        }
        Ok(())
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.end(Ok(()));
        ctx.complete_stage();
        Ok(())
    }

    fn on_upstream_failure(
        &mut self,
        _: InPort,
        error: StreamError,
        ctx: &mut StageContext<'_>,
    ) -> StageResult {
        self.end(Err(error));
        ctx.complete_stage();
        Ok(())
    }

    fn post_stop(&mut self) {
        // Torn down (the system stopped): the consumer must not wait for ever.
        self.end(Err(StreamError::from_kind(
            weir_streams::ErrorKind::AbruptTermination,
        )));
    }
}
