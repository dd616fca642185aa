//! [`Producer`]: the side of a hand-over that puts elements in.

use super::Notify;
use super::channel::HandoverCore;
use crate::error::{ErrorKind, StreamError};
use crate::sync::Arc;

/// The side that puts elements in. Dropping it without
/// [`finish`](Self::finish) ends the channel with
/// [`ErrorKind::AbruptTermination`].
///
/// # Examples
///
/// ```
/// use std::task::Waker;
/// use weir_streams::handover::{self, Order};
///
/// let (mut producer, consumer) = handover::channel::<u8, Waker, Waker>(4, Order::Pop);
/// assert!(!producer.push(1)); // the batch (half the buffer) is not full yet
/// assert!(producer.push(2)); // a full batch: hand over now
/// assert!(!producer.hand_over());
/// assert_eq!(producer.credit(), 2);
/// drop(consumer); // cancels
/// assert!(producer.hand_over());
/// ```
pub struct Producer<T, P: Notify, C: Notify> {
    pub(super) shared: Arc<HandoverCore<T, P, C>>,
    /// Taken in, not yet handed over, oldest first.
    pub(super) local: Vec<T>,
    pub(super) credit: usize,
    pub(super) batch: usize,
}

impl<T, P: Notify, C: Notify> Producer<T, P, C> {
    /// Register how this side is notified (of credit and cancellation).
    pub fn set_notify(&self, notify: P) {
        self.shared.lock().notify_producer = Some(notify);
    }

    /// Elements this side may still take in before it must wait.
    #[inline]
    pub fn credit(&self) -> usize {
        self.credit
    }

    /// Whether elements are taken in and not handed over yet.
    #[inline]
    pub fn has_pending(&self) -> bool {
        !self.local.is_empty()
    }

    /// Take `element` in, spending a credit (call only with credit left).
    /// Returns whether the batch should be handed over now (it is full, or
    /// the credit is spent).
    #[inline]
    pub fn push(&mut self, element: T) -> bool {
        debug_assert!(self.credit > 0, "pushed without credit");
        self.local.push(element);
        self.credit -= 1;
        self.local.len() >= self.batch || self.credit == 0
    }

    /// Let `fill` append up to `max.min(credit)` elements to the batch
    /// (its second argument says how many); the credit is spent for what
    /// it appended. Returns `fill`'s result and whether the batch should
    /// be handed over now.
    pub fn fill<R>(&mut self, max: usize, fill: impl FnOnce(&mut Vec<T>, usize) -> R) -> (R, bool) {
        let take = self.credit.min(max);
        // The simulation's small-batches fault (see `channel`): one
        // element per hand-over here too.
        #[cfg(all(feature = "testkit", not(loom)))]
        let take = if self.batch == 1 { take.min(1) } else { take };
        let before = self.local.len();
        let result = fill(&mut self.local, take);
        let added = self.local.len() - before;
        debug_assert!(added <= take, "filled past the credit");
        self.credit -= added;
        (result, self.local.len() >= self.batch || self.credit == 0)
    }

    /// Hand the batch over (notifying a waiting consumer) and take the
    /// credit given back; out of credit, mark this side waiting. Returns
    /// whether the consumer cancelled (the batch is then dropped).
    pub fn hand_over(&mut self) -> bool {
        let mut notify = None;
        let cancelled;
        {
            let mut state = self.shared.lock();
            cancelled = state.cancelled;
            if !cancelled && !self.local.is_empty() {
                #[cfg(loom)]
                {
                    state.handed += self.local.len();
                }
                if state.queue.is_empty() {
                    std::mem::swap(&mut state.queue, &mut self.local);
                } else {
                    state.queue.append(&mut self.local);
                }
                if state.consumer_waiting {
                    state.consumer_waiting = false;
                    notify = state.notify_consumer.clone();
                }
            }
            self.credit += std::mem::take(&mut state.returned);
            state.producer_waiting = self.credit == 0 && !cancelled;
            #[cfg(loom)]
            if !cancelled {
                assert_eq!(
                    self.credit + self.local.len() + state.handed,
                    self.shared.capacity,
                    "credit is conserved"
                );
            }
        }
        if let Some(notify) = notify {
            notify.notify();
        }
        if cancelled && !self.local.is_empty() {
            let mut state = self.shared.lock();
            if state.kept {
                state.queue.append(&mut self.local);
            } else {
                drop(state);
                self.local.clear();
            }
        }
        cancelled
    }

    /// After the consumer cancelled with
    /// [`cancel_keeping`](super::Consumer::cancel_keeping): the elements it had
    /// not passed on, then those not handed over yet, oldest first (empty
    /// otherwise, or when taken before).
    pub fn take_back(&mut self) -> Vec<T> {
        let mut kept = {
            let mut state = self.shared.lock();
            if !state.kept {
                return Vec::new();
            }
            std::mem::take(&mut state.queue)
        };
        kept.append(&mut self.local);
        kept
    }

    /// Whether the consumer cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.shared.lock().cancelled
    }

    /// The failure the consumer cancelled with
    /// ([`Consumer::cancel_failed`](super::Consumer::cancel_failed)); `None` for a normal cancel, or
    /// when it did not cancel.
    pub fn cancel_cause(&self) -> Option<StreamError> {
        let state = self.shared.lock();
        if state.cancelled {
            state.failure.clone()
        } else {
            None
        }
    }

    /// Hand the batch over followed by the end; notify the consumer. The
    /// first end wins: returns `false` (and does nothing) when the channel
    /// already ended or the consumer cancelled.
    pub fn finish(&mut self, outcome: Result<(), StreamError>) -> bool {
        self.finish_with(|| outcome)
    }

    /// Fail at once: what is queued or not handed over yet is dropped, and
    /// a consumer holding a batch learns it from
    /// [`Consumer::take_abort`](super::Consumer::take_abort) without passing that batch on (Reactive
    /// Streams' `onError` needs no demand). The first end wins: `false`
    /// when the channel already ended or the consumer cancelled.
    pub fn abort(&mut self, error: StreamError) -> bool {
        let (dropped, notify) = {
            let mut state = self.shared.lock();
            if state.finished || state.cancelled {
                drop(state);
                self.local.clear();
                return false;
            }
            state.end = Some(Err(error));
            state.finished = true;
            state.aborted = true;
            state.producer_waiting = false;
            state.consumer_waiting = false;
            (
                std::mem::take(&mut state.queue),
                state.notify_consumer.clone(),
            )
        };
        drop(dropped); // element destructors run outside the lock
        self.local.clear();
        if let Some(notify) = notify {
            notify.notify();
        }
        true
    }

    /// [`finish`](Self::finish) with `AbruptTermination`, the error made
    /// only when it will be handed over: a producer torn down after the
    /// stream ended (the common case) allocates nothing.
    pub(crate) fn finish_abruptly(&mut self) -> bool {
        self.finish_with(|| Err(StreamError::from_kind(ErrorKind::AbruptTermination)))
    }

    fn finish_with(&mut self, outcome: impl FnOnce() -> Result<(), StreamError>) -> bool {
        let notify = {
            let mut state = self.shared.lock();
            if state.finished || state.cancelled {
                drop(state);
                self.local.clear();
                return false;
            }
            #[cfg(loom)]
            {
                state.handed += self.local.len();
            }
            state.queue.append(&mut self.local);
            state.end = Some(outcome());
            state.finished = true;
            state.producer_waiting = false;
            state.consumer_waiting = false;
            state.notify_consumer.clone()
        };
        if let Some(notify) = notify {
            notify.notify();
        }
        true
    }
}

impl<T, P: Notify, C: Notify> Drop for Producer<T, P, C> {
    fn drop(&mut self) {
        self.finish_abruptly();
    }
}

impl<T, P: Notify, C: Notify> std::fmt::Debug for Producer<T, P, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Producer")
            .field("credit", &self.credit)
            .field("pending", &self.local.len())
            .finish()
    }
}
