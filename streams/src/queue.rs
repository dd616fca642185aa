//! `Source::queue`: a bounded queue handle that feeds a stream from any
//! thread. The buffer and its wake-up protocol live in `queue/buffer.rs`.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::stage::{
    AsyncCallback, GraphStage, GraphStageLogic, MatContext, OutPort, SourceShape, StageContext,
    StageResult,
};
use crate::sync::Arc;
use crate::{ArgumentError, Source, StreamError};

pub(crate) mod buffer;

use buffer::{Delivery, Ending, QueueBuffer, Waiting};
pub use buffer::{QueueOfferResult, QueueSendError};

type Shared<T> = QueueBuffer<T, AsyncCallback<()>>;

/// The handle `Source::queue` materializes: `Send`, `Sync`, cheap to
/// clone. [`offer`](Self::offer) never blocks and answers at once;
/// [`send`](Self::send) waits for room (back-pressure).
pub struct SourceQueue<T: Send + 'static> {
    shared: Arc<Shared<T>>,
}

impl<T: Send + 'static> Clone for SourceQueue<T> {
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<T: Send + 'static> SourceQueue<T> {
    /// Queue `element` if there is room; never blocks.
    pub fn offer(&self, element: T) -> QueueOfferResult<T> {
        self.shared.offer(element)
    }

    /// Queue `element`, waiting for room.
    ///
    /// Waiting senders are woken one per place the stream frees, first
    /// come first served (an [`offer`](Self::offer) may take a freed place
    /// first; the woken send then waits again, first in line).
    ///
    /// Cancel safety: dropping the future before it completes drops the
    /// element (it was not queued) and gives up its place in line; a
    /// wake-up it had received goes to the next waiting send.
    pub fn send(&self, element: T) -> SendFuture<T> {
        SendFuture {
            shared: Arc::clone(&self.shared),
            element: Some(element),
            waiting: Waiting::default(),
        }
    }

    /// Complete the stream after what is queued; later offers are refused.
    pub fn complete(&self) {
        self.shared.end(Ending::Completing);
    }

    /// Fail the stream at once; later offers are refused.
    pub fn fail(&self, error: StreamError) {
        self.shared.end(Ending::Failed(error));
    }

    /// Whether offers are refused now (completed, failed or the stream ended).
    pub fn is_closed(&self) -> bool {
        self.shared.is_closed()
    }
}

impl<T: Send + 'static> std::fmt::Debug for SourceQueue<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (queued, capacity, waiting, closed) = self.shared.snapshot();
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
    shared: Arc<Shared<T>>,
    element: Option<T>,
    waiting: Waiting,
}

// The element is only ever moved, never pinned in place.
impl<T: Send + 'static> Unpin for SendFuture<T> {}

impl<T: Send + 'static> Future for SendFuture<T> {
    type Output = Result<(), QueueSendError<T>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        this.shared
            .poll_send(&mut this.waiting, &mut this.element, cx)
    }
}

impl<T: Send + 'static> Drop for SendFuture<T> {
    fn drop(&mut self) {
        self.shared.cancel_send(&mut self.waiting);
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
    shared: Arc<Shared<T>>,
}

impl<T: Send + 'static> GraphStage for QueueStage<T> {
    type Shape = SourceShape<T>;
    type Mat = SourceQueue<T>;

    fn name(&self) -> &'static str {
        "queue"
    }

    fn create_logic(&self, cx: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, SourceQueue<T>) {
        let wake = cx.async_callback(|this: &mut QueueLogic<T>, (), ctx| this.deliver(ctx));
        let shared = Arc::new(QueueBuffer::new(self.capacity, wake));
        let logic = QueueLogic {
            shape: SourceShape::new(),
            shared: Arc::clone(&shared),
        };
        (Box::new(logic), SourceQueue { shared })
    }
}

impl<T: Send + 'static> QueueLogic<T> {
    /// Push the next queued element if downstream wants one; pass a
    /// failure on at once and a completion once the queue is empty.
    fn deliver(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let out = self.shape.out;
        match self.shared.take(ctx.is_available(out)) {
            Delivery::Push {
                element,
                then_complete,
            } => {
                ctx.push(out, element)?;
                if then_complete {
                    ctx.complete(out);
                }
            }
            Delivery::Complete => ctx.complete(out),
            Delivery::Fail(error) => ctx.fail(out, error),
            Delivery::Idle => {}
        }
        Ok(())
    }
}

impl<T: Send + 'static> GraphStageLogic for QueueLogic<T> {
    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.deliver(ctx)
    }

    fn post_stop(&mut self) {
        self.shared.end(Ending::Stopped);
    }
}
