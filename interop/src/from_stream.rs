//! A `futures::Stream` as a Weir source.

use std::pin::Pin;
use std::sync::{Mutex, PoisonError};
use std::task::{Context, Poll, Waker};

use futures_core::Stream;
use weir_streams::stage::{
    GraphStage, GraphStageLogic, MatContext, OutPort, SourceShape, StageContext, StageResult,
};
use weir_streams::{Source, StreamError};

/// `Source::from_stream`: bring it in scope with `use weir_interop::SourceFromStream`.
pub trait SourceFromStream<T>: Sized {
    /// A source that emits what `stream` yields: polled only when
    /// downstream has pulled, woken by the stream's own waker (the wake-up
    /// is a message to the island, so nothing polls in a loop), completed
    /// when it ends, dropped when the source completes or is cancelled.
    ///
    /// The stream is consumed by the first run; running the blueprint again
    /// fails that run (use [`from_stream_fn`](Self::from_stream_fn) for a
    /// blueprint that can run many times).
    ///
    /// The stream is polled on the island's thread, outside any async
    /// runtime. A stream that needs its runtime's context (tokio timers or
    /// I/O) panics there — the stream then fails, naming this stage — so
    /// drive such a stream on its runtime and feed Weir from that task, for
    /// example with `Source::queue` and `SourceQueue::send`
    /// (`examples/tokio_pipeline.rs` in weir-benches).
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
        Source::from_graph(FromStream {
            make: Box::new(move || once.lock().unwrap_or_else(PoisonError::into_inner).take()),
        })
    }

    fn from_stream_fn<S, F>(make: F) -> Self
    where
        S: Stream<Item = T> + Send + 'static,
        F: Fn() -> S + Send + Sync + 'static,
    {
        Source::from_graph(FromStream {
            make: Box::new(move || Some(make())),
        })
    }
}

type Make<S> = Box<dyn Fn() -> Option<S> + Send + Sync>;

struct FromStream<S> {
    make: Make<S>,
}

struct FromStreamLogic<S: Stream> {
    shape: SourceShape<S::Item>,
    /// `None` when the blueprint's one stream was already used.
    stream: Option<Pin<Box<S>>>,
    waker: Waker,
}

/// Wakes the island: the stage polls again.
impl<S> GraphStage for FromStream<S>
where
    S: Stream + Send + 'static,
    S::Item: Send + 'static,
{
    type Shape = SourceShape<S::Item>;
    type Mat = ();

    fn name(&self) -> &'static str {
        "from_stream"
    }

    fn create_logic(&self, cx: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        let wake = cx.async_callback(|this: &mut FromStreamLogic<S>, (), ctx| this.poll(ctx));
        let logic = FromStreamLogic {
            shape: SourceShape::new(),
            stream: (self.make)().map(Box::pin),
            waker: wake.waker(()),
        };
        (Box::new(logic), ())
    }
}

impl<S> FromStreamLogic<S>
where
    S: Stream + Send + 'static,
    S::Item: Send + 'static,
{
    /// Poll once if downstream wants an element.
    fn poll(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let out = self.shape.out;
        if !ctx.is_available(out) {
            return Ok(());
        }
        let Some(stream) = self.stream.as_mut() else {
            return Err(StreamError::msg(
                "Source::from_stream ran a second time; its stream was used by the first run (use from_stream_fn)",
            ));
        };
        match stream
            .as_mut()
            .poll_next(&mut Context::from_waker(&self.waker))
        {
            Poll::Ready(Some(element)) => ctx.push(out, element),
            Poll::Ready(None) => {
                self.stream = None;
                ctx.complete(out);
                Ok(())
            }
            Poll::Pending => Ok(()),
        }
    }
}

impl<S> GraphStageLogic for FromStreamLogic<S>
where
    S: Stream + Send + 'static,
    S::Item: Send + 'static,
{
    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.poll(ctx)
    }

    fn post_stop(&mut self) {
        // Drop the stream now, not when the island goes.
        self.stream = None;
    }
}
