//! `Source::queue`: a bounded queue handle that feeds a stream from any
//! thread, on the hand-over's shared producer side (`handover/shared.rs`
//! holds the credit, the line of waiting sends and its wake-up rules).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use crate::blueprint::Source;
use crate::error::{ArgumentError, StreamError};
use crate::handover::{self, Consumer, Order, Refill, Refused, SendSlot, SharedProducer, Wait};
use crate::snapshot::BufferFill;
use crate::stage::{
    AsyncCallback, GraphStage, GraphStageLogic, MatContext, OutPort, SourceShape, StageContext,
    StageResult,
};

/// The handle's side of the hand-over: sends wait with their task's
/// waker; the stage is woken through an async callback.
type Handle<T> = SharedProducer<T, Waker, AsyncCallback<()>>;

/// What [`SourceQueue::offer`](crate::SourceQueue::offer) did with an element.
#[derive(Debug, PartialEq)]
pub enum QueueOfferResult<T> {
    /// Queued: it will be emitted.
    Enqueued,
    /// The queue was full: here it is back.
    Dropped(T),
    /// The queue is completed, or the stream ended: here it is back.
    QueueClosed(T),
    /// The stream failed with this error (downstream of the queue too:
    /// a failure there cancels the queue with it): here it is back.
    Failure(StreamError, T),
}

/// Why [`SourceQueue::send`](crate::SourceQueue::send) could not queue an
/// element; it is given back ([`into_inner`](Self::into_inner)).
///
/// # Examples
///
/// ```
/// use weir_streams::{QueueSendError, StreamError};
///
/// let error = QueueSendError::Failed(StreamError::msg("boom"), 7);
/// assert_eq!(error.to_string(), "the queue's stream failed: boom");
/// assert_eq!(error.into_inner(), 7);
/// ```
#[derive(Debug, PartialEq)]
pub enum QueueSendError<T> {
    /// The queue is completed, or the stream ended.
    Closed(T),
    /// The stream failed with this error.
    Failed(StreamError, T),
}

impl<T> QueueSendError<T> {
    /// The element that was not queued.
    pub fn into_inner(self) -> T {
        match self {
            QueueSendError::Closed(element) | QueueSendError::Failed(_, element) => element,
        }
    }
}

impl<T> fmt::Display for QueueSendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueueSendError::Closed(_) => f.write_str("the queue is closed"),
            QueueSendError::Failed(error, _) => write!(f, "the queue's stream failed: {error}"),
        }
    }
}

impl<T: fmt::Debug> std::error::Error for QueueSendError<T> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            QueueSendError::Closed(_) => None,
            QueueSendError::Failed(error, _) => Some(error),
        }
    }
}

/// The handle `Source::queue` materializes: `Send`, `Sync`, cheap to
/// clone. [`offer`](Self::offer) never blocks and answers at once;
/// [`send`](Self::send) waits for room (back-pressure).
pub struct SourceQueue<T: Send + 'static> {
    handle: Handle<T>,
}

impl<T: Send + 'static> Clone for SourceQueue<T> {
    fn clone(&self) -> Self {
        Self {
            handle: self.handle.clone(),
        }
    }
}

impl<T: Send + 'static> SourceQueue<T> {
    /// Queue `element` if there is room; never blocks.
    ///
    /// At most `buffer_size` elements are queued; an offer is `Dropped`
    /// only when that many are (every element emitted frees its place at
    /// once).
    pub fn offer(&self, element: T) -> QueueOfferResult<T> {
        match self.handle.offer(element) {
            Ok(()) => QueueOfferResult::Enqueued,
            Err(Refused::Full(element)) => QueueOfferResult::Dropped(element),
            Err(Refused::Closed(element)) => QueueOfferResult::QueueClosed(element),
            Err(Refused::Failed(error, element)) => QueueOfferResult::Failure(error, element),
        }
    }

    /// Queue `element`, waiting for room.
    ///
    /// Waiting senders are woken first come first served, half the
    /// buffer at a time (once that many places are free), or all that
    /// fit when the stream has taken everything queued. So a send may
    /// wait while a few places are free and the stream is not pulling;
    /// an [`offer`](Self::offer), or a new send, takes a free place at
    /// once, and a woken send that finds none waits again, first in
    /// line.
    ///
    /// Cancel safety: dropping the future before it completes drops the
    /// element (it was not queued) and gives up its place in line; a
    /// wake-up it had received goes to the next waiting send.
    ///
    /// # Examples
    ///
    /// An actor feeding a stream with back-pressure: it pipes each send
    /// to itself and sends the next element when the queue had room.
    ///
    /// ```
    /// use weir_actor::{Actor, ActorSystem, Context, Props};
    /// use weir_streams::prelude::*;
    /// use weir_streams::{QueueSendError, SourceQueue};
    ///
    /// enum Msg {
    ///     Next,
    ///     Sent(Result<(), QueueSendError<u32>>),
    /// }
    ///
    /// struct Feeder {
    ///     queue: SourceQueue<u32>,
    ///     next: u32,
    /// }
    ///
    /// impl Actor for Feeder {
    ///     type Msg = Msg;
    ///     fn receive(&mut self, ctx: &mut Context<Self>, msg: Msg) {
    ///         match msg {
    ///             Msg::Next if self.next < 100 => {
    ///                 self.next += 1;
    ///                 ctx.pipe_to_self(self.queue.send(self.next), Msg::Sent);
    ///             }
    ///             Msg::Next => self.queue.complete(),
    ///             Msg::Sent(Ok(())) => ctx.myself().tell(Msg::Next),
    ///             Msg::Sent(Err(_)) => ctx.stop_self(), // the stream is gone
    ///         }
    ///     }
    /// }
    ///
    /// let system = ActorSystem::new("feeder").unwrap();
    /// let mat = Materializer::new(&system);
    /// let (queue, total) = Source::queue(4)
    ///     .unwrap()
    ///     .to_mat(Sink::fold(0u32, |a, x| a + x), Keep::both)
    ///     .run(&mat);
    /// let feeder = system.spawn(Props::new(move || Feeder { queue: queue.clone(), next: 0 }), "feeder").unwrap();
    /// feeder.tell(Msg::Next);
    /// assert_eq!(total.wait(), Ok(5050));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn send(&self, element: T) -> SendFuture<T> {
        SendFuture {
            handle: self.handle.clone(),
            element: Some(element),
            slot: SendSlot::default(),
        }
    }

    /// Complete the stream after what is queued; later offers are refused.
    pub fn complete(&self) {
        self.handle.complete();
    }

    /// Fail the stream at once (what is queued is dropped); later offers
    /// are refused.
    pub fn fail(&self, error: StreamError) {
        self.handle.fail(error);
    }

    /// Whether offers are refused now (completed, failed or the stream ended).
    pub fn is_closed(&self) -> bool {
        self.handle.is_closed()
    }
}

impl<T: Send + 'static> std::fmt::Debug for SourceQueue<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (queued, capacity, waiting, closed) = self.handle.snapshot();
        f.debug_struct("SourceQueue")
            .field("queued", &queued)
            .field("capacity", &capacity)
            .field("waiting_sends", &waiting)
            .field("closed", &closed)
            .finish()
    }
}

/// The future of [`SourceQueue::send`].
#[must_use = "the element is queued only when the future is awaited"]
pub struct SendFuture<T: Send + 'static> {
    handle: Handle<T>,
    element: Option<T>,
    slot: SendSlot,
}

// The element is only ever moved, never pinned in place.
impl<T: Send + 'static> Unpin for SendFuture<T> {}

impl<T: Send + 'static> Future for SendFuture<T> {
    type Output = Result<(), QueueSendError<T>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let Some(element) = this.element.take() else {
            return Poll::Ready(Ok(()));
        };
        match this.handle.send(&mut this.slot, element, cx.waker()) {
            Ok(()) => Poll::Ready(Ok(())),
            Err(Refused::Full(element)) => {
                this.element = Some(element);
                Poll::Pending
            }
            Err(Refused::Closed(element)) => Poll::Ready(Err(QueueSendError::Closed(element))),
            Err(Refused::Failed(error, element)) => {
                Poll::Ready(Err(QueueSendError::Failed(error, element)))
            }
        }
    }
}

impl<T: Send + 'static> Drop for SendFuture<T> {
    fn drop(&mut self) {
        self.handle.cancel_send(&mut self.slot);
    }
}

impl<T: Send + 'static> std::fmt::Debug for SendFuture<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SendFuture")
            .field("pending", &self.element.is_some())
            .finish()
    }
}

impl<T: Send + 'static> Source<T, SourceQueue<T>> {
    /// A source fed through a bounded queue handle, usable from any
    /// thread or task: [`SourceQueue::offer`] answers at once
    /// (`Enqueued`, `Dropped` when full, `QueueClosed`, `Failure`);
    /// [`SourceQueue::send`] waits for room.
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` for a buffer size of 0.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// use weir_streams::QueueOfferResult;
    ///
    /// let system = weir_actor::ActorSystem::new("queue").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let (queue, done) = Source::queue(2).unwrap().to_mat(Sink::collect(), Keep::both).run(&materializer);
    /// assert_eq!(queue.offer(1), QueueOfferResult::Enqueued);
    /// futures_executor::block_on(queue.send(2)).unwrap();
    /// queue.complete();
    /// assert_eq!(queue.offer(3), QueueOfferResult::QueueClosed(3));
    /// assert_eq!(done.wait(), Ok(vec![1, 2]));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn queue(buffer_size: usize) -> Result<Self, ArgumentError> {
        if buffer_size == 0 {
            return Err(ArgumentError::Zero {
                argument: "buffer_size",
            });
        }
        Ok(Source::from_graph(QueueStage::<T> {
            capacity: buffer_size,
            _t: std::marker::PhantomData,
        }))
    }
}

struct QueueStage<T> {
    capacity: usize,
    _t: std::marker::PhantomData<fn() -> T>,
}

struct QueueLogic<T: Send + 'static> {
    shape: SourceShape<T>,
    consumer: Consumer<T, Waker, AsyncCallback<()>>,
    /// The handle woke the stage while it held a batch: the queue may have
    /// ended behind it, so the end is looked for once the batch is spent
    /// (completion needs no demand).
    woken_behind: bool,
    /// The queue's size, for snapshots.
    capacity: usize,
}

impl<T: Send + 'static> GraphStage for QueueStage<T> {
    type Shape = SourceShape<T>;
    type Mat = SourceQueue<T>;

    fn name(&self) -> &'static str {
        "queue"
    }

    fn create_logic(&self, cx: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, SourceQueue<T>) {
        let (handle, consumer) = handover::shared_channel(self.capacity, Order::Pop);
        handle.set_consumer_notify(
            cx.async_callback(|this: &mut QueueLogic<T>, (), ctx| this.woken(ctx)),
        );
        let logic = QueueLogic {
            shape: SourceShape::new(),
            consumer,
            woken_behind: false,
            capacity: self.capacity,
        };
        (Box::new(logic), SourceQueue { handle })
    }
}

impl<T: Send + 'static> QueueLogic<T> {
    /// Downstream wants an element: push the next one (taking the next
    /// batch when this one is spent, and waiting when there is none);
    /// complete right after the last one, or pass the end on.
    fn deliver(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let out = self.shape.out;
        let element = match self.consumer.pop() {
            Some(element) => element,
            None => match self.consumer.refill(Wait::Yes) {
                Refill::Ready => match self.consumer.pop() {
                    Some(element) => element,
                    None => return Ok(()),
                },
                Refill::End(outcome) => return self.end(outcome, ctx),
                Refill::Empty | Refill::Done => return Ok(()),
            },
        };
        ctx.push(out, element)?;
        let look = self.consumer.end_is_next() || (self.woken_behind && self.consumer.is_empty());
        if look {
            self.woken_behind = false;
            if let Refill::End(outcome) = self.consumer.refill(Wait::No) {
                return self.end(outcome, ctx);
            }
        }
        Ok(())
    }

    /// The handle woke the stage: an element arrived while it waited, or
    /// the queue ended. A failure overtakes the batch in hand; a
    /// completion with nothing left to emit applies at once, one behind a
    /// batch in hand right after its last element.
    fn woken(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let out = self.shape.out;
        if !self.consumer.is_empty() {
            if let Some(error) = self.consumer.take_abort() {
                ctx.fail(out, error);
            } else {
                self.woken_behind = true;
            }
            return Ok(());
        }
        if ctx.is_available(out) {
            return self.deliver(ctx);
        }
        match self.consumer.refill(Wait::No) {
            Refill::End(outcome) => self.end(outcome, ctx),
            Refill::Ready | Refill::Empty | Refill::Done => Ok(()),
        }
    }

    fn end(&self, outcome: Result<(), StreamError>, ctx: &mut StageContext<'_>) -> StageResult {
        let out = self.shape.out;
        match outcome {
            Ok(()) => ctx.complete(out),
            Err(error) => ctx.fail(out, error),
        }
        Ok(())
    }
}

/// How full the queue is, for a snapshot (`crate::stage::core::Gauge`):
/// what was offered and not yet pushed downstream.
fn gauge<T: Send + 'static>(logic: &dyn GraphStageLogic) -> Option<BufferFill> {
    let any: &dyn std::any::Any = logic;
    let queue = any.downcast_ref::<QueueLogic<T>>()?;
    Some(BufferFill {
        len: queue.consumer.buffered(),
        capacity: queue.capacity,
    })
}

impl<T: Send + 'static> GraphStageLogic for QueueLogic<T> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.set_gauge(gauge::<T>);
        Ok(())
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.deliver(ctx)
    }

    fn on_downstream_finish(&mut self, port: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        // A failure downstream: later offers and sends answer with it.
        if let Some(error) = ctx.cancellation(port).failure() {
            self.consumer.cancel_failed(error.clone());
        }
        ctx.complete_stage();
        Ok(())
    }

    fn post_stop(&mut self) {
        // Stopped (completed, cancelled, torn down): later offers are
        // refused and waiting sends hear of it.
        self.consumer.cancel();
    }
}
