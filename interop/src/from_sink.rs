//! A `futures::Sink` as a Weir sink, and a `futures::Sink` face for `Source::queue`.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use futures_sink::Sink as FuturesSink;
use weir_streams::stage::{
    GraphStage, GraphStageLogic, InPort, MatContext, SinkShape, StageContext, StageResult,
};
use weir_streams::{
    Completer, Completion, QueueOfferResult, QueueSendError, SendFuture, Sink, SourceQueue,
    StreamError,
};

use crate::sync::Mutex;

/// `Sink::from_sink`: bring it in scope with `use weir_interop::SinkFromSink`.
pub trait SinkFromSink<T>: Sized {
    /// A Weir sink that feeds a `futures::Sink`: an element is pulled only
    /// when the sink is ready for one (`poll_ready`), sent with
    /// `start_send`, and flushed when the island has nothing else to do;
    /// the sink is closed when the stream completes. Its waker wakes the
    /// island. An error of the sink fails the stream. Materializes a
    /// [`Completion`] of the whole delivery, close included.
    ///
    /// The sink is consumed by the first run; a second run fails.
    fn from_sink<S>(sink: S) -> Self
    where
        S: FuturesSink<T> + Send + 'static,
        S::Error: std::error::Error + Send + Sync + 'static;
}

impl<T: Send + 'static> SinkFromSink<T> for Sink<T, Completion<()>> {
    fn from_sink<S>(sink: S) -> Self
    where
        S: FuturesSink<T> + Send + 'static,
        S::Error: std::error::Error + Send + Sync + 'static,
    {
        Sink::from_graph(FromSink {
            sink: Mutex::new(Some(sink)),
            _t: std::marker::PhantomData,
        })
    }
}

struct FromSink<S, T> {
    sink: Mutex<Option<S>>,
    _t: std::marker::PhantomData<fn(T)>,
}

struct FromSinkLogic<S, T> {
    shape: SinkShape<T>,
    sink: Option<Pin<Box<S>>>,
    waker: Waker,
    completer: Completer<()>,
    /// An element was sent and not flushed yet.
    unflushed: bool,
    /// Upstream completed: close the sink, then complete.
    closing: bool,
}

impl<S, T> GraphStage for FromSink<S, T>
where
    S: FuturesSink<T> + Send + 'static,
    S::Error: std::error::Error + Send + Sync + 'static,
    T: Send + 'static,
{
    type Shape = SinkShape<T>;
    type Mat = Completion<()>;

    fn name(&self) -> &'static str {
        "from_sink"
    }

    fn create_logic(&self, cx: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, Completion<()>) {
        let wake = cx.async_callback(|this: &mut FromSinkLogic<S, T>, (), ctx| this.drive(ctx));
        let (completer, completion) = Completer::new();
        let sink = self.sink.lock().take().map(Box::pin);
        let logic = FromSinkLogic {
            shape: SinkShape::new(),
            sink,
            waker: wake.waker(()),
            completer,
            unflushed: false,
            closing: false,
        };
        (Box::new(logic), completion)
    }
}

impl<S, T> FromSinkLogic<S, T>
where
    S: FuturesSink<T> + Send + 'static,
    S::Error: std::error::Error + Send + Sync + 'static,
    T: Send + 'static,
{
    fn fail(&mut self, error: StreamError, ctx: &mut StageContext<'_>) -> StageResult {
        let error = ctx.attribute(error);
        self.completer.complete(Err(error.clone()));
        self.sink = None;
        Err(error)
    }

    /// Flush, close or ask for the next element, as far as the sink lets us now.
    fn drive(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let Some(sink) = self.sink.as_mut() else {
            let error = StreamError::msg(
                "Sink::from_sink ran a second time; its sink was used by the first run",
            );
            return self.fail(error, ctx);
        };
        let mut cx = Context::from_waker(&self.waker);
        if self.unflushed {
            match sink.as_mut().poll_flush(&mut cx) {
                Poll::Ready(Ok(())) => self.unflushed = false,
                Poll::Ready(Err(e)) => return self.fail(StreamError::custom(e), ctx),
                Poll::Pending => return Ok(()),
            }
        }
        if self.closing {
            return match sink.as_mut().poll_close(&mut cx) {
                Poll::Ready(Ok(())) => {
                    self.completer.complete(Ok(()));
                    self.sink = None;
                    ctx.complete_stage();
                    Ok(())
                }
                Poll::Ready(Err(e)) => self.fail(StreamError::custom(e), ctx),
                Poll::Pending => Ok(()),
            };
        }
        self.pull_when_ready(ctx)
    }

    /// Ask upstream for the next element if the sink is ready for one.
    fn pull_when_ready(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let inlet = self.shape.inlet;
        let Some(sink) = self.sink.as_mut() else {
            return Ok(());
        };
        if ctx.has_been_pulled(inlet) || ctx.is_closed(inlet) {
            return Ok(());
        }
        match sink
            .as_mut()
            .poll_ready(&mut Context::from_waker(&self.waker))
        {
            Poll::Ready(Ok(())) => ctx.pull(inlet),
            Poll::Ready(Err(e)) => self.fail(StreamError::custom(e), ctx),
            Poll::Pending => Ok(()),
        }
    }
}

impl<S, T> GraphStageLogic for FromSinkLogic<S, T>
where
    S: FuturesSink<T> + Send + 'static,
    S::Error: std::error::Error + Send + Sync + 'static,
    T: Send + 'static,
{
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.set_keep_going(true);
        self.drive(ctx)
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        let Some(sink) = self.sink.as_mut() else {
            return Ok(());
        };
        if let Err(e) = sink.as_mut().start_send(element) {
            return self.fail(StreamError::custom(e), ctx);
        }
        self.unflushed = true;
        // Flush once the island has nothing else to do, not per element.
        ctx.request_idle_callback();
        self.pull_when_ready(ctx)
    }

    fn on_idle(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        self.drive(ctx)
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.closing = true;
        self.drive(ctx)
    }

    fn on_upstream_failure(
        &mut self,
        _: InPort,
        error: StreamError,
        ctx: &mut StageContext<'_>,
    ) -> StageResult {
        self.completer.complete(Err(error));
        self.sink = None;
        ctx.complete_stage();
        Ok(())
    }
}

/// A `futures::Sink` face for a [`SourceQueue`]: `start_send` offers,
/// and an element that finds the queue full waits inside the sink (one at
/// most, as a pending [`SourceQueue::send`]); `poll_ready` and
/// `poll_flush` wait until it is queued; `poll_close` flushes, then
/// completes the queue.
///
/// Cancel safety: dropping the sink drops an element still waiting in it.
///
/// # Examples
///
/// ```
/// use futures_util::SinkExt;
/// use weir_interop::QueueSink;
/// use weir_streams::prelude::*;
///
/// let system = weir_actor::ActorSystem::new("queue-sink").unwrap();
/// let materializer = Materializer::new(&system);
/// let (queue, done) = Source::queue(4).unwrap().to_mat(Sink::collect(), Keep::both).run(&materializer);
/// let mut sink = QueueSink::new(queue);
/// futures_executor::block_on(async {
///     sink.send(1u32).await.unwrap();
///     sink.send(2).await.unwrap();
///     sink.close().await.unwrap();
/// });
/// assert_eq!(done.wait(), Ok(vec![1, 2]));
/// system.terminate().wait().unwrap();
/// ```
#[derive(Debug)]
pub struct QueueSink<T: Send + 'static> {
    queue: SourceQueue<T>,
    /// The element that found the queue full, waiting for room.
    sending: Option<SendFuture<T>>,
}

impl<T: Send + 'static> QueueSink<T> {
    /// The sink face of `queue`.
    pub fn new(queue: SourceQueue<T>) -> Self {
        Self {
            queue,
            sending: None,
        }
    }

    /// The queue behind it (an element still waiting in the sink is dropped).
    pub fn into_inner(self) -> SourceQueue<T> {
        self.queue
    }
}

/// Why a [`QueueSink`] took no element; the element is given back when
/// there was one.
#[derive(Debug, PartialEq)]
pub enum QueueSinkError<T> {
    /// The queue takes nothing more (completed, or the stream ended).
    Closed(Option<T>),
    /// The stream failed.
    Failed(StreamError, Option<T>),
    /// `start_send` was called while an earlier element still waited for
    /// room (without waiting for `poll_ready`).
    Full(T),
}

impl<T> std::fmt::Display for QueueSinkError<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            QueueSinkError::Closed(_) => f.write_str("the queue is closed"),
            QueueSinkError::Failed(error, _) => write!(f, "the stream failed: {error}"),
            QueueSinkError::Full(_) => {
                f.write_str("an earlier element still waits for room in the queue")
            }
        }
    }
}

impl<T: std::fmt::Debug> std::error::Error for QueueSinkError<T> {}

impl<T> From<QueueSendError<T>> for QueueSinkError<T> {
    fn from(error: QueueSendError<T>) -> Self {
        match error {
            QueueSendError::Closed(element) => QueueSinkError::Closed(Some(element)),
            QueueSendError::Failed(error, element) => QueueSinkError::Failed(error, Some(element)),
        }
    }
}

impl<T: Send + 'static> FuturesSink<T> for QueueSink<T> {
    type Error = QueueSinkError<T>;

    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.poll_flush(cx)
    }

    fn start_send(self: Pin<&mut Self>, item: T) -> Result<(), Self::Error> {
        let this = self.get_mut();
        if this.sending.is_some() {
            // Offering now could put this element ahead of the one still
            // waiting: refuse it (the caller skipped `poll_ready`).
            return Err(QueueSinkError::Full(item));
        }
        match this.queue.offer(item) {
            QueueOfferResult::Enqueued => Ok(()),
            QueueOfferResult::Dropped(item) => {
                this.sending = Some(this.queue.send(item));
                Ok(())
            }
            QueueOfferResult::QueueClosed(item) => Err(QueueSinkError::Closed(Some(item))),
            QueueOfferResult::Failure(error, item) => {
                Err(QueueSinkError::Failed(error, Some(item)))
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        let this = self.get_mut();
        let Some(sending) = &mut this.sending else {
            return Poll::Ready(Ok(()));
        };
        let sent = std::task::ready!(Pin::new(sending).poll(cx));
        this.sending = None;
        Poll::Ready(sent.map_err(QueueSinkError::from))
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        std::task::ready!(self.as_mut().poll_flush(cx))?;
        self.queue.complete();
        Poll::Ready(Ok(()))
    }
}
