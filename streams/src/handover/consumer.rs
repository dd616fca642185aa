//! [`Consumer`]: the side of a hand-over that takes elements out, with
//! the choices its calls take ([`Order`], [`Wait`], [`Refill`]).

use super::Notify;
use super::channel::{HandoverCore, HandoverState};
use super::shared::Senders;
use crate::error::StreamError;
use crate::sync::{Arc, Mutex};

/// In which order the consumer keeps its batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Newest first, for [`Consumer::pop`] (one element at a time).
    Pop,
    /// Oldest first, for [`Consumer::batch_mut`] (a loop over the batch).
    Drain,
}

/// Whether [`Consumer::refill`] marks the consumer waiting when there is
/// nothing to take.
#[derive(Debug)]
pub enum Wait<'a, N> {
    /// Do not wait (the consumer has no demand now).
    No,
    /// Wait; notify the side's registered [`Notify`].
    Yes,
    /// Wait; notify this (registered now, replacing the previous one).
    Register(&'a N),
}

/// What [`Consumer::refill`] found.
#[derive(Debug, PartialEq)]
pub enum Refill {
    /// The batch has elements.
    Ready,
    /// Nothing yet (the consumer waits if it asked to).
    Empty,
    /// Every element is delivered and the producer ended this way.
    /// Returned once.
    End(Result<(), StreamError>),
    /// The end was already returned, or the consumer cancelled.
    Done,
}

/// The side that takes elements out. Dropping it cancels (see
/// [`cancel`](Self::cancel)).
///
/// # Examples
///
/// ```
/// use std::task::Waker;
/// use weir_streams::handover::{self, Order, Refill, Wait};
///
/// let (mut producer, mut consumer) = handover::channel::<u8, Waker, Waker>(4, Order::Drain);
/// producer.push(1);
/// producer.push(2);
/// producer.hand_over();
/// assert_eq!(consumer.refill(Wait::No), Refill::Ready);
/// let batch: Vec<u8> = consumer.batch_mut().drain(..).collect();
/// consumer.consumed(batch.len()); // credit goes back
/// assert_eq!(batch, vec![1, 2]);
/// producer.hand_over();
/// assert_eq!(producer.credit(), 4);
/// ```
pub struct Consumer<T, P: Notify, C: Notify> {
    pub(super) shared: Arc<HandoverCore<T, P, C>>,
    /// The current batch, in `order`.
    pub(super) local: Vec<T>,
    /// The end, taken with the last batch: returned once the batch is
    /// empty.
    pub(super) end: Option<Result<(), StreamError>>,
    /// Elements passed on whose credit is not given back yet.
    pub(super) consumed: usize,
    pub(super) batch: usize,
    /// Waiting senders (of a shared producer) are woken once this many
    /// places are free, or when the consumer runs dry; credit itself goes
    /// back per `batch`. Waking one per freed place made every element a
    /// park and an unpark of the sender: +45% instructions per element on
    /// `Source::queue` fed by one thread (callgrind, `weir-bench islands
    /// --only "Source::queue"`: 640-680 before, 955-975 with a wake-up per
    /// place, 670-695 with this threshold).
    pub(super) wake: usize,
    pub(super) order: Order,
    /// Waiting senders to wake once the lock is released (kept to reuse
    /// its allocation).
    pub(super) woken: Vec<P>,
}

impl<T, P: Notify, C: Notify> Consumer<T, P, C> {
    /// The consumer of a new channel of `capacity` (at least 1) whose
    /// producer side starts with `returned` credit in the shared state,
    /// giving credit back `batch` (at least 1) at a time.
    pub(super) fn new(capacity: usize, returned: usize, batch: usize, order: Order) -> Self {
        // A huge buffer is a bound, not a size: reserve what every bounded
        // buffer does and grow as elements arrive.
        let reserve = crate::overflow::upfront_capacity(capacity);
        let shared = Arc::new(HandoverCore {
            state: Mutex::new(HandoverState {
                queue: Vec::with_capacity(reserve),
                returned,
                end: None,
                finished: false,
                closed: false,
                cancelled: false,
                producer_waiting: false,
                consumer_waiting: false,
                notify_producer: None,
                notify_consumer: None,
                senders: Senders::default(),
                failure: None,
                aborted: false,
                kept: false,
                #[cfg(loom)]
                handed: 0,
            }),
            #[cfg(loom)]
            capacity,
        });
        Consumer {
            shared,
            local: Vec::with_capacity(reserve),
            end: None,
            consumed: 0,
            batch,
            wake: (capacity / 2).max(1),
            order,
            woken: Vec::new(),
        }
    }

    /// Register how this side is notified (of elements and the end).
    pub fn set_notify(&self, notify: C) {
        self.shared.lock().notify_consumer = Some(notify);
    }

    /// The next element of the batch ([`Order::Pop`]); its credit goes
    /// back in batches. `None` when the batch is empty: [`refill`](Self::refill).
    #[inline]
    pub fn pop(&mut self) -> Option<T> {
        debug_assert_eq!(self.order, Order::Pop);
        let element = self.local.pop()?;
        self.consumed(1);
        Some(element)
    }

    /// The batch, oldest first ([`Order::Drain`]): take elements out of it,
    /// then report them with [`consumed`](Self::consumed).
    #[inline]
    pub fn batch_mut(&mut self) -> &mut Vec<T> {
        &mut self.local
    }

    /// Whether the batch is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.local.is_empty()
    }

    /// `n` elements were taken from [`batch_mut`](Self::batch_mut): their
    /// credit goes back in batches.
    #[inline]
    pub fn consumed(&mut self, n: usize) {
        self.consumed += n;
        if self.consumed >= self.batch {
            self.give_back();
        }
    }

    /// Give the credit owed back now, notifying a waiting producer.
    pub fn give_back(&mut self) {
        let notify = {
            let mut state = self.shared.lock();
            Self::return_credit(&mut self.consumed, &mut self.woken, &mut state, self.wake)
        };
        if let Some(notify) = notify {
            notify.notify();
            if !self.woken.is_empty() {
                self.wake_senders();
            }
        }
    }

    /// Notify the waiting senders [`return_credit`](Self::return_credit)
    /// took from the line (outside the lock). Out of line: only a shared
    /// producer's consumer gets here, and the single producer's paths stay
    /// as small as they were.
    #[cold]
    #[inline(never)]
    fn wake_senders(&mut self) {
        for sender in self.woken.drain(..) {
            sender.notify();
        }
    }

    /// Give `consumed` credit back; take the waiting producer's notify, or
    /// one waiting sender per freed place (the first returned, the others
    /// put into `woken`, notified after it).
    fn return_credit(
        consumed: &mut usize,
        woken: &mut Vec<P>,
        state: &mut HandoverState<T, P, C>,
        wake_at: usize,
    ) -> Option<P> {
        let freed = std::mem::take(consumed);
        #[cfg(loom)]
        {
            state.handed -= freed;
        }
        state.returned += freed;
        if !state.producer_waiting {
            return None;
        }
        if !state.senders.is_empty() {
            // Credit is exact (offers see every free place); waking a
            // waiting sender per place costs a park/unpark per element,
            // so wake them once `wake_at` places are free.
            if state.returned < wake_at {
                return None;
            }
            let free = state.returned;
            return state.take_senders(free, woken);
        }
        if freed == 0 {
            return None;
        }
        state.producer_waiting = false;
        state.notify_producer.clone()
    }

    /// With the batch empty, take everything handed over; with nothing
    /// handed over, report the end once, or give back the credit owed and
    /// wait as `wait` says.
    pub fn refill(&mut self, wait: Wait<'_, C>) -> Refill {
        if !self.local.is_empty() {
            return Refill::Ready;
        }
        let (refill, notify) = {
            let mut state = self.shared.lock();
            let mut notify = None;
            let refill = if state.closed {
                // The end taken with the last batch, now that it is empty.
                match self.end.take() {
                    Some(end) => Refill::End(end),
                    None => Refill::Done,
                }
            } else if !state.queue.is_empty() {
                std::mem::swap(&mut state.queue, &mut self.local);
                if self.order == Order::Pop {
                    self.local.reverse();
                }
                // The end already handed over comes after this batch:
                // take it now (the queue completes right after the last
                // element, `end_is_next`).
                if state.end.is_some() {
                    state.closed = true;
                    self.end = state.end.take();
                }
                Refill::Ready
            } else if let Some(end) = state.end.take() {
                state.closed = true;
                Refill::End(end)
            } else {
                // Nothing to take: give back what is owed (under the lock
                // already held). Not before: credit handed back early wakes
                // a waiting producer for smaller batches.
                notify = Self::return_credit(&mut self.consumed, &mut self.woken, &mut state, 1);
                match wait {
                    Wait::No => state.consumer_waiting = false,
                    Wait::Yes => state.consumer_waiting = true,
                    Wait::Register(notify) => {
                        state.consumer_waiting = true;
                        match &state.notify_consumer {
                            Some(registered) if registered.same(notify) => {}
                            _ => state.notify_consumer = Some(notify.clone()),
                        }
                    }
                }
                Refill::Empty
            };
            (refill, notify)
        };
        if let Some(notify) = notify {
            notify.notify();
            if !self.woken.is_empty() {
                self.wake_senders();
            }
        }
        refill
    }

    /// Whether the batch is empty and the end was taken with it: the next
    /// [`refill`](Self::refill) returns it.
    #[inline]
    pub(crate) fn end_is_next(&self) -> bool {
        self.local.is_empty() && self.end.is_some()
    }

    /// The failure a shared producer ended with, which overtakes the batch
    /// in hand: `Some` once (the batch is dropped), `None` when the channel
    /// did not end that way or the end was taken.
    pub fn take_abort(&mut self) -> Option<StreamError> {
        let error = {
            let mut state = self.shared.lock();
            if !state.aborted || state.closed {
                return None;
            }
            let Some(Err(error)) = state.end.take() else {
                return None;
            };
            state.closed = true;
            error
        };
        self.local.clear();
        Some(error)
    }

    /// Whether the end was taken (with the last batch, or delivered) or
    /// the consumer cancelled.
    pub fn is_done(&self) -> bool {
        self.shared.lock().closed
    }

    /// Stop taking elements: drop what is queued and notify the producer
    /// (once). Returns `false` (and does nothing) when the end was already
    /// delivered or handed over, or the consumer cancelled before.
    pub fn cancel(&mut self) -> bool {
        self.cancel_inner(false, None)
    }

    /// [`cancel`](Self::cancel) because the stream failed downstream with
    /// `cause`: a shared producer's later sends and offers are refused
    /// with it (`Refused::Failed`) rather than as closed, and a producer
    /// reads it with [`Producer::cancel_cause`](super::Producer::cancel_cause).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::task::Waker;
    /// use weir_streams::StreamError;
    /// use weir_streams::handover::{self, Order};
    ///
    /// let (mut producer, mut consumer) = handover::channel::<u8, Waker, Waker>(4, Order::Pop);
    /// assert!(consumer.cancel_failed(StreamError::msg("sink broke")));
    /// assert!(producer.hand_over()); // cancelled
    /// let cause = producer.cancel_cause().expect("a failure");
    /// assert_eq!(cause.to_string(), "sink broke");
    /// ```
    pub fn cancel_failed(&mut self, cause: StreamError) -> bool {
        self.cancel_inner(false, Some(cause))
    }

    /// [`cancel`](Self::cancel), keeping what was not passed on (the batch
    /// in hand, then what is handed over) for the producer to take back
    /// ([`Producer::take_back`](super::Producer::take_back)): a `BroadcastHub` gives it to the next
    /// consumer.
    pub fn cancel_keeping(&mut self) -> bool {
        self.cancel_inner(true, None)
    }

    fn cancel_inner(&mut self, keep: bool, cause: Option<StreamError>) -> bool {
        let mut unpassed = std::mem::take(&mut self.local);
        if !keep {
            unpassed.clear();
        } else if self.order == Order::Pop {
            unpassed.reverse(); // a popped batch is kept newest first
        }
        self.end = None;
        let (dropped, notify, senders) = {
            let mut state = self.shared.lock();
            if state.closed || state.finished {
                state.closed = true;
                return false;
            }
            state.closed = true;
            state.cancelled = true;
            state.producer_waiting = false;
            if cause.is_some() {
                state.failure = cause;
            }
            let dropped = if keep {
                state.kept = true;
                unpassed.append(&mut state.queue);
                state.queue = unpassed;
                Vec::new()
            } else {
                std::mem::take(&mut state.queue)
            };
            (
                dropped,
                state.notify_producer.clone(),
                state.senders.take_all(),
            )
        };
        drop(dropped); // element destructors run outside the lock
        if let Some(notify) = notify {
            notify.notify();
        }
        senders.notify_all();
        true
    }
}

impl<T, P: Notify, C: Notify> Drop for Consumer<T, P, C> {
    fn drop(&mut self) {
        self.cancel();
    }
}

impl<T, P: Notify, C: Notify> std::fmt::Debug for Consumer<T, P, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Consumer")
            .field("batch", &self.local.len())
            .field("consumed", &self.consumed)
            .finish()
    }
}
