//! `Source::queue`: a bounded queue handle that feeds a stream from any thread.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

use crate::stage::{
    AsyncCallback, GraphStage, GraphStageLogic, MatContext, OutPort, SourceShape, StageContext, StageResult,
};
use crate::{ArgumentError, Source, StreamError};

/// What [`SourceQueue::offer`] did with an element.
#[derive(Debug, PartialEq)]
pub enum QueueOfferResult<T> {
    /// Queued: it will be emitted.
    Enqueued,
    /// The queue was full: here it is back.
    Dropped(T),
    /// The queue is completed, or the stream ended: here it is back.
    QueueClosed(T),
    /// The stream failed with this error: here it is back.
    Failure(StreamError, T),
}

/// Why [`SourceQueue::send`] could not queue an element; it is given back.
#[derive(Debug, PartialEq)]
pub enum QueueSendError<T> {
    /// The queue is completed, or the stream ended.
    Closed(T),
    /// The stream failed with this error.
    Failed(StreamError, T),
}

enum Ending {
    /// `complete()`: emit what is queued, then complete.
    Completing,
    /// The stream failed or was failed through the handle.
    Failed(StreamError),
    /// The stage stopped (completed, cancelled, torn down).
    Stopped,
}

struct State<T> {
    queue: VecDeque<T>,
    capacity: usize,
    ending: Option<Ending>,
    /// The stage has demand and found the queue empty: wake it on offer.
    stage_waiting: bool,
    /// Senders waiting for room.
    senders: VecDeque<Waker>,
}

struct Shared<T> {
    state: Mutex<State<T>>,
    wake: AsyncCallback<()>,
}

impl<T: Send + 'static> Shared<T> {
    fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queue `element` if there is room: `Ok(())`, else the refusal.
    fn try_enqueue(&self, element: T) -> Result<(), QueueOfferResult<T>> {
        let wake = {
            let mut state = self.lock();
            match &state.ending {
                Some(Ending::Failed(error)) => return Err(QueueOfferResult::Failure(error.clone(), element)),
                Some(_) => return Err(QueueOfferResult::QueueClosed(element)),
                None => {}
            }
            if state.queue.len() >= state.capacity {
                return Err(QueueOfferResult::Dropped(element));
            }
            state.queue.push_back(element);
            std::mem::take(&mut state.stage_waiting)
        };
        if wake {
            self.wake.invoke(());
        }
        Ok(())
    }

    fn end(&self, ending: Ending) {
        let wake_stage = !matches!(ending, Ending::Stopped);
        let senders = {
            let mut state = self.lock();
            if state.ending.is_some() {
                return;
            }
            state.ending = Some(ending);
            std::mem::take(&mut state.senders)
        };
        for sender in senders {
            sender.wake();
        }
        if wake_stage {
            self.wake.invoke(());
        }
    }
}

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
        match self.shared.try_enqueue(element) {
            Ok(()) => QueueOfferResult::Enqueued,
            Err(refused) => refused,
        }
    }

    /// Queue `element`, waiting for room.
    ///
    /// Cancel safety: dropping the future before it completes drops the
    /// element (it was not queued).
    pub fn send(&self, element: T) -> SendFuture<T> {
        SendFuture {
            shared: Arc::clone(&self.shared),
            element: Some(element),
        }
    }

    /// Ready when there is room for one more element, or with the reason
    /// there never will be: the poll form of [`send`](Self::send)'s wait,
    /// for adapters (weir-interop's `futures::Sink` face). Room can be taken
    /// by another producer before this one offers.
    ///
    /// # Errors
    ///
    /// `QueueSendError::Closed(())` or `QueueSendError::Failed(error, ())`
    /// once the queue takes nothing more.
    pub fn poll_ready(&self, cx: &mut Context<'_>) -> Poll<Result<(), QueueSendError<()>>> {
        let mut state = self.shared.lock();
        match &state.ending {
            Some(Ending::Failed(error)) => return Poll::Ready(Err(QueueSendError::Failed(error.clone(), ()))),
            Some(_) => return Poll::Ready(Err(QueueSendError::Closed(()))),
            None => {}
        }
        if state.queue.len() < state.capacity {
            return Poll::Ready(Ok(()));
        }
        state.senders.push_back(cx.waker().clone());
        Poll::Pending
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
        self.shared.lock().ending.is_some()
    }
}

impl<T: Send + 'static> std::fmt::Debug for SourceQueue<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.shared.lock();
        f.debug_struct("SourceQueue")
            .field("queued", &state.queue.len())
            .field("capacity", &state.capacity)
            .field("closed", &state.ending.is_some())
            .finish()
    }
}

/// The future of [`SourceQueue::send`].
#[must_use = "the element is queued only when the future is awaited"]
pub struct SendFuture<T: Send + 'static> {
    shared: Arc<Shared<T>>,
    element: Option<T>,
}

// The element is only ever moved, never pinned in place.
impl<T: Send + 'static> Unpin for SendFuture<T> {}

impl<T: Send + 'static> Future for SendFuture<T> {
    type Output = Result<(), QueueSendError<T>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Some(element) = self.element.take() else {
            return Poll::Ready(Ok(()));
        };
        match self.shared.try_enqueue(element) {
            Ok(()) => Poll::Ready(Ok(())),
            Err(QueueOfferResult::Dropped(element)) => {
                let mut state = self.shared.lock();
                // Room may have appeared since: re-check under the lock
                // that registers the waker, so no wake-up is missed.
                if state.queue.len() < state.capacity || state.ending.is_some() {
                    drop(state);
                    self.element = Some(element);
                    cx.waker().wake_by_ref();
                    return Poll::Pending;
                }
                state.senders.push_back(cx.waker().clone());
                drop(state);
                self.element = Some(element);
                Poll::Pending
            }
            Err(QueueOfferResult::QueueClosed(element)) => Poll::Ready(Err(QueueSendError::Closed(element))),
            Err(QueueOfferResult::Failure(error, element)) => {
                Poll::Ready(Err(QueueSendError::Failed(error, element)))
            }
            Err(QueueOfferResult::Enqueued) => Poll::Ready(Ok(())),
        }
    }
}

impl<T: Send + 'static> std::fmt::Debug for SendFuture<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SendFuture").field("pending", &self.element.is_some()).finish()
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
            return Err(ArgumentError::Zero { argument: "buffer_size" });
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
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                queue: VecDeque::with_capacity(self.capacity.min(1024)),
                capacity: self.capacity,
                ending: None,
                stage_waiting: false,
                senders: VecDeque::new(),
            }),
            wake,
        });
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
        let available = ctx.is_available(out);
        let (next, sender, end) = {
            let mut state = self.shared.lock();
            if let Some(Ending::Failed(error)) = &state.ending {
                (None, None, Some(Err(error.clone())))
            } else if available && let Some(element) = state.queue.pop_front() {
                // A completion requested while this was queued applies after it.
                let drained = matches!(state.ending, Some(Ending::Completing)) && state.queue.is_empty();
                (Some(element), state.senders.pop_front(), drained.then_some(Ok(())))
            } else if matches!(state.ending, Some(Ending::Completing)) && state.queue.is_empty() {
                (None, None, Some(Ok(())))
            } else {
                state.stage_waiting = available;
                (None, None, None)
            }
        };
        if let Some(sender) = sender {
            sender.wake();
        }
        if let Some(element) = next {
            ctx.push(out, element)?;
        }
        match end {
            Some(Ok(())) => ctx.complete(out),
            Some(Err(error)) => ctx.fail(out, error),
            None => {}
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
