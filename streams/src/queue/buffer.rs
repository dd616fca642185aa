//! The bounded buffer behind `Source::queue`, shared by the handle, its
//! `send` futures and the stage.
//!
//! # Protocol
//!
//! One lock guards everything: the elements, the ending, the stage's
//! "waiting for an element" flag and the list of waiting senders. Every
//! decision (is there room, is the queue closed, must someone be woken)
//! is made under it; wake-ups are sent after it is released.
//!
//! - `offer` queues an element if there is room; if the stage was waiting
//!   it clears the flag and wakes the stage.
//! - A `send` that finds no room registers its waker under a key kept in
//!   its [`Waiting`] slot. Polling again replaces the waker in that entry,
//!   so the list never holds more entries than there are pending sends.
//! - The stage takes one element at a time and, for each element taken,
//!   removes the first waiting sender from the list and wakes it: one
//!   freed place, one wake-up.
//! - A woken sender polls again. If the room is still there it queues its
//!   element; if an `offer` took it first it registers again at the front
//!   of the list (it was first in line).
//! - A send dropped while registered removes its entry. A send dropped
//!   after it was woken (its entry is gone) but before it queued passes
//!   the wake-up on to the next waiting sender if there is room, so a
//!   cancelled send never swallows a live sender's wake-up.
//! - An ending (complete, fail, stage stopped) wakes every waiting sender;
//!   each then sees the ending and gives its element back.
//!
//! The loom models in `buffer/loom_models.rs` check offer against the
//! stage, the hand-over of a cancelled send's wake-up, and completion
//! against pending sends.

use std::collections::VecDeque;
use std::fmt;
use std::task::{Context, Poll, Waker};

use crate::StreamError;
use crate::actor::inbox::Wake;
use crate::sync::{Mutex, MutexGuard};

/// What [`SourceQueue::offer`](crate::SourceQueue::offer) did with an element.
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

/// How the queue ended.
pub(crate) enum Ending {
    /// `complete()`: emit what is queued, then complete.
    Completing,
    /// The stream failed or was failed through the handle.
    Failed(StreamError),
    /// The stage stopped (completed, cancelled, torn down).
    Stopped,
}

/// A pending send's place in the waiter list: the key of its entry once
/// it has registered, until it queues, gives up or is dropped.
#[derive(Debug, Default)]
pub(crate) struct Waiting {
    key: Option<u64>,
}

/// The senders waiting for room, first in line first. At most one entry
/// per pending send (keyed by its [`Waiting`] slot).
#[derive(Default)]
struct Waiters {
    entries: VecDeque<(u64, Waker)>,
    next_key: u64,
}

impl Waiters {
    /// Register `slot`'s waker, replacing its entry if it has one; a slot
    /// whose entry was taken (it was woken) goes back to the front.
    fn register(&mut self, slot: &mut Waiting, waker: &Waker) {
        if let Some(key) = slot.key {
            if let Some((_, registered)) = self.entries.iter_mut().find(|(k, _)| *k == key) {
                if !registered.will_wake(waker) {
                    *registered = waker.clone();
                }
                return;
            }
            self.entries.push_front((key, waker.clone()));
            return;
        }
        let key = self.next_key;
        self.next_key = self.next_key.wrapping_add(1);
        self.entries.push_back((key, waker.clone()));
        slot.key = Some(key);
    }

    /// Forget `slot`; whether its entry was still waiting (not yet woken).
    fn leave(&mut self, slot: &mut Waiting) -> bool {
        let Some(key) = slot.key.take() else {
            return false;
        };
        match self.entries.iter().position(|(k, _)| *k == key) {
            Some(at) => {
                self.entries.remove(at);
                true
            }
            None => false,
        }
    }

    fn pop(&mut self) -> Option<Waker> {
        self.entries.pop_front().map(|(_, waker)| waker)
    }
}

struct State<T> {
    queue: VecDeque<T>,
    capacity: usize,
    ending: Option<Ending>,
    /// The stage has demand and found the queue empty: wake it on offer.
    stage_waiting: bool,
    waiters: Waiters,
}

impl<T> State<T> {
    fn has_room(&self) -> bool {
        self.queue.len() < self.capacity
    }

    /// Queue `element` if the queue is open and has room; whether the
    /// stage must be woken.
    fn enqueue(&mut self, element: T) -> Result<bool, QueueOfferResult<T>> {
        match &self.ending {
            Some(Ending::Failed(error)) => {
                return Err(QueueOfferResult::Failure(error.clone(), element));
            }
            Some(_) => return Err(QueueOfferResult::QueueClosed(element)),
            None => {}
        }
        if !self.has_room() {
            return Err(QueueOfferResult::Dropped(element));
        }
        self.queue.push_back(element);
        Ok(std::mem::take(&mut self.stage_waiting))
    }
}

/// What the stage does after [`QueueBuffer::take`].
#[derive(Debug, PartialEq)]
pub(crate) enum Delivery<T> {
    /// Push this element; complete right after it when `then_complete`.
    Push { element: T, then_complete: bool },
    /// Complete now (completed and drained).
    Complete,
    /// Fail now.
    Fail(StreamError),
    /// Nothing to do until woken.
    Idle,
}

/// The shared buffer; `W` wakes the stage.
pub(crate) struct QueueBuffer<T, W> {
    state: Mutex<State<T>>,
    wake_stage: W,
}

impl<T, W: Wake> QueueBuffer<T, W> {
    pub(crate) fn new(capacity: usize, wake_stage: W) -> Self {
        Self {
            state: Mutex::new(State {
                queue: VecDeque::with_capacity(crate::overflow::upfront_capacity(capacity)),
                capacity,
                ending: None,
                stage_waiting: false,
                waiters: Waiters::default(),
            }),
            wake_stage,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock()
    }

    /// Queue `element` if there is room; never waits.
    pub(crate) fn offer(&self, element: T) -> QueueOfferResult<T> {
        let wake = self.lock().enqueue(element);
        match wake {
            Ok(wake) => {
                if wake {
                    self.wake_stage.wake();
                }
                QueueOfferResult::Enqueued
            }
            Err(refused) => refused,
        }
    }

    /// Queue the element in `element` (taking it) if there is room, or
    /// register `slot` to be woken when there may be. On an ending the
    /// element is given back in the error.
    pub(crate) fn poll_send(
        &self,
        slot: &mut Waiting,
        element: &mut Option<T>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), QueueSendError<T>>> {
        let Some(value) = element.take() else {
            return Poll::Ready(Ok(()));
        };
        let mut state = self.lock();
        match state.enqueue(value) {
            Ok(wake) => {
                state.waiters.leave(slot);
                drop(state);
                if wake {
                    self.wake_stage.wake();
                }
                Poll::Ready(Ok(()))
            }
            Err(QueueOfferResult::Dropped(value)) => {
                state.waiters.register(slot, cx.waker());
                *element = Some(value);
                Poll::Pending
            }
            Err(QueueOfferResult::QueueClosed(value)) => {
                state.waiters.leave(slot);
                Poll::Ready(Err(QueueSendError::Closed(value)))
            }
            Err(QueueOfferResult::Failure(error, value)) => {
                state.waiters.leave(slot);
                Poll::Ready(Err(QueueSendError::Failed(error, value)))
            }
            Err(QueueOfferResult::Enqueued) => unreachable!("enqueue reports success as Ok"),
        }
    }

    /// A pending send is dropped: forget its entry, and if it had been
    /// woken for room it will not use, wake the next waiting sender.
    pub(crate) fn cancel_send(&self, slot: &mut Waiting) {
        if slot.key.is_none() {
            return;
        }
        let next = {
            let mut state = self.lock();
            let still_waiting = state.waiters.leave(slot);
            if still_waiting || state.ending.is_some() || !state.has_room() {
                None
            } else {
                state.waiters.pop()
            }
        };
        if let Some(next) = next {
            next.wake();
        }
    }

    /// The stage's turn: with `demand`, take the next element (waking one
    /// waiting sender for the place it frees); pass a failure on at once
    /// and a completion once the queue is drained.
    pub(crate) fn take(&self, demand: bool) -> Delivery<T> {
        let (delivery, sender) = {
            let mut state = self.lock();
            if let Some(Ending::Failed(error)) = &state.ending {
                (Delivery::Fail(error.clone()), None)
            } else if demand && let Some(element) = state.queue.pop_front() {
                // A completion requested while this was queued applies after it.
                let then_complete =
                    matches!(state.ending, Some(Ending::Completing)) && state.queue.is_empty();
                let sender = state.waiters.pop();
                (
                    Delivery::Push {
                        element,
                        then_complete,
                    },
                    sender,
                )
            } else if matches!(state.ending, Some(Ending::Completing)) && state.queue.is_empty() {
                (Delivery::Complete, None)
            } else {
                state.stage_waiting = demand;
                (Delivery::Idle, None)
            }
        };
        if let Some(sender) = sender {
            sender.wake();
        }
        delivery
    }

    /// End the queue (the first ending wins): wake every waiting sender,
    /// and the stage unless it is the one that stopped.
    pub(crate) fn end(&self, ending: Ending) {
        let wake_stage = !matches!(ending, Ending::Stopped);
        let senders = {
            let mut state = self.lock();
            if state.ending.is_some() {
                return;
            }
            state.ending = Some(ending);
            std::mem::take(&mut state.waiters.entries)
        };
        for (_, sender) in senders {
            sender.wake();
        }
        if wake_stage {
            self.wake_stage.wake();
        }
    }

    /// Whether offers are refused now.
    pub(crate) fn is_closed(&self) -> bool {
        self.lock().ending.is_some()
    }

    /// (queued, capacity, waiting senders, closed), for `Debug`.
    pub(crate) fn snapshot(&self) -> (usize, usize, usize, bool) {
        let state = self.lock();
        (
            state.queue.len(),
            state.capacity,
            state.waiters.entries.len(),
            state.ending.is_some(),
        )
    }
}

#[cfg(loom)]
mod loom_models;
