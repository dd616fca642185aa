//! The hand-over: one credit-bounded, batched channel between a running
//! island and anything outside it (another island, a task, a thread).
//!
//! The async boundary, interop's `as_stream` on islands, the hubs
//! (`MergeHub`, `BroadcastHub`, `PartitionHub`) and `Source::queue` all
//! move elements through it.
//!
//! # Protocol
//!
//! - **Credit.** The [`Producer`] starts with `capacity` credits and spends
//!   one per element it takes in. The [`Consumer`] gives credit back as it
//!   passes elements on, `capacity / 2` at a time (and everything it owes
//!   whenever it finds nothing handed over), so at most `capacity` elements
//!   are ever between the two sides. (A shared producer's consumer gives
//!   each place back as it passes the element on: see "Many producers".)
//! - **Batches.** The producer collects elements locally and hands them
//!   over under one lock per batch ([`Producer::hand_over`]); the consumer
//!   takes everything handed over under one lock when its own batch is
//!   empty ([`Consumer::refill`]).
//! - **Waiting.** A side that cannot go on marks itself waiting under the
//!   lock (the producer when it is out of credit, the consumer when it
//!   found nothing); the other side clears the flag and notifies it after
//!   releasing the lock: one notification per wait, not per element.
//! - **Ends.** [`Producer::finish`] hands over the end (completion or
//!   failure) after the last batch; the consumer sees it exactly once, after
//!   every element ([`Refill::End`]). [`Consumer::cancel`] (or dropping the
//!   consumer) drops what is queued and notifies the producer once; the
//!   producer learns it from [`Producer::hand_over`]. The first of the two
//!   wins; dropping a producer that never finished ends the channel with
//!   [`ErrorKind::AbruptTermination`].
//! - **Many producers.** A shared producer (`SharedProducer`, behind
//!   `Source::queue`) is the producer side for many threads at once: it
//!   puts each element straight into the handed-over queue under the same
//!   one lock, spending credit kept in the shared state (no local batch),
//!   and keeps the senders waiting for credit in that state, first in line
//!   first. Its consumer gives credit back one element at a time (the
//!   producers take the lock per element anyway, so a batch would save
//!   little, and `Source::queue` promises to refuse an offer only when it
//!   holds `capacity` elements). Waiting senders are woken in batches:
//!   once `capacity / 2` places are free, or when the consumer finds
//!   nothing handed over, it takes one waiting sender per free place out
//!   of line and wakes them after releasing the lock (one wake-up per
//!   freed place made a park and an unpark per element); a sender woken
//!   for a place it does not use passes the wake-up on. An `offer`, or a
//!   new send, takes any free place at once. Its ends are a
//!   completion (after every element) and a failure that overtakes what is
//!   queued (`Consumer::take_abort` hands it to a consumer holding a
//!   batch).
//!
//! Each side is notified through a [`Notify`]: an island's
//! [`AsyncCallback`](crate::stage::AsyncCallback), a task's
//! [`Waker`] or a blocked [`Thread`](std::thread::Thread).
//! The loom models in `handover/loom_models.rs` check that credit never
//! exceeds the capacity, that neither side misses a wake-up, and that the
//! end and the cancellation are each delivered once, with one producer and
//! with several (the `shared_*` models).
//!
//! # Examples
//!
//! ```
//! use weir_streams::handover::{self, Order, Refill, Wait};
//!
//! // Two threads: notifications unpark them.
//! let (mut producer, mut consumer) =
//!     handover::channel::<u32, std::thread::Thread, std::thread::Thread>(4, Order::Pop);
//! consumer.set_notify(std::thread::current());
//! let feeder = std::thread::spawn(move || {
//!     producer.set_notify(std::thread::current());
//!     for i in 0..100 {
//!         while producer.credit() == 0 {
//!             producer.hand_over();
//!             if producer.credit() == 0 {
//!                 std::thread::park();
//!             }
//!         }
//!         if producer.push(i) {
//!             producer.hand_over();
//!         }
//!     }
//!     producer.finish(Ok(()));
//! });
//! let mut received = Vec::new();
//! loop {
//!     match consumer.refill(Wait::Yes) {
//!         Refill::Ready => {
//!             while let Some(x) = consumer.pop() {
//!                 received.push(x);
//!             }
//!         }
//!         Refill::Empty => std::thread::park(),
//!         Refill::End(outcome) => break assert_eq!(outcome, Ok(())),
//!         Refill::Done => unreachable!(),
//!     }
//! }
//! feeder.join().unwrap();
//! assert_eq!(received, (0..100).collect::<Vec<_>>());
//! ```

use std::task::Waker;

use crate::error::{ErrorKind, StreamError};
use crate::sync::{Arc, Mutex, MutexGuard};

#[cfg(not(loom))] // stages are not built under loom (it models the channel alone)
mod feed;
mod shared;
#[cfg(not(loom))]
pub use feed::FeedLogic;
use shared::Senders;
pub(crate) use shared::{Refused, SendSlot, SharedProducer, shared_channel};

/// How one side of a hand-over is told that the other did something it
/// waits for.
///
/// # Examples
///
/// ```
/// use weir_streams::handover::Notify;
///
/// #[derive(Clone)]
/// struct Print;
/// impl Notify for Print {
///     fn notify(&self) {
///         println!("go on");
///     }
/// }
/// Print.notify();
/// ```
pub trait Notify: Clone + Send + Sync {
    /// Tell the side to look again. May be called when there is nothing
    /// new (a side must tolerate spurious notifications).
    fn notify(&self);

    /// Whether `self` and `other` notify the same side (so registering
    /// `other` again can keep `self`). `false` unless known.
    fn same(&self, other: &Self) -> bool {
        let _ = other;
        false
    }
}

impl Notify for Waker {
    fn notify(&self) {
        self.wake_by_ref();
    }

    fn same(&self, other: &Self) -> bool {
        self.will_wake(other)
    }
}

impl Notify for std::thread::Thread {
    fn notify(&self) {
        self.unpark();
    }

    fn same(&self, other: &Self) -> bool {
        self.id() == other.id()
    }
}

#[cfg(not(loom))]
impl Notify for crate::stage::AsyncCallback<()> {
    fn notify(&self) {
        self.invoke(());
    }
}

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

struct State<T, P, C> {
    /// Handed over, oldest first.
    queue: Vec<T>,
    /// Credit the consumer gave back that the producer has not taken (all
    /// of a shared producer's credit: it keeps none of its own).
    returned: usize,
    /// The producer's end, until the consumer takes it.
    end: Option<Result<(), StreamError>>,
    /// The producer finished (its end was handed over).
    finished: bool,
    /// The consumer took the end, or cancelled.
    closed: bool,
    cancelled: bool,
    producer_waiting: bool,
    consumer_waiting: bool,
    notify_producer: Option<P>,
    notify_consumer: Option<C>,
    /// A shared producer's senders waiting for credit, first in line first
    /// (always empty with a single producer).
    senders: Senders<P>,
    /// The failure a shared producer ended with, kept for the refusals
    /// after the consumer took the end; or the failure the consumer
    /// cancelled with (`Consumer::cancel_failed`).
    failure: Option<StreamError>,
    /// The end is a failure that dropped what was queued: a consumer
    /// holding a batch takes it at once ([`Consumer::take_abort`]).
    aborted: bool,
    /// The consumer cancelled keeping what it had not passed on in
    /// `queue`, oldest first, for the producer to take back
    /// ([`Consumer::cancel_keeping`], [`Producer::take_back`]).
    kept: bool,
    /// Elements handed over whose credit is not back yet (the models'
    /// conservation check).
    #[cfg(loom)]
    handed: usize,
}

struct Shared<T, P, C> {
    state: Mutex<State<T, P, C>>,
    #[cfg(loom)]
    capacity: usize,
}

impl<T, P, C> Shared<T, P, C> {
    fn lock(&self) -> MutexGuard<'_, State<T, P, C>> {
        // No user code runs under this lock (`crate::sync::Mutex` recovers
        // the state anyway).
        self.state.lock()
    }
}

/// A hand-over of at most `capacity` elements from a [`Producer`] to a
/// [`Consumer`]; `P` notifies the producer, `C` the consumer. See the
/// [module docs](self).
///
/// # Examples
///
/// ```
/// use std::task::Waker;
/// use weir_streams::handover::{self, Order, Refill, Wait};
///
/// let (mut producer, mut consumer) = handover::channel::<&str, Waker, Waker>(8, Order::Pop);
/// producer.push("a");
/// producer.finish(Ok(()));
/// assert_eq!(consumer.refill(Wait::No), Refill::Ready);
/// assert_eq!(consumer.pop(), Some("a"));
/// assert_eq!(consumer.refill(Wait::No), Refill::End(Ok(())));
/// assert_eq!(consumer.refill(Wait::No), Refill::Done);
/// ```
pub fn channel<T, P: Notify, C: Notify>(
    capacity: usize,
    order: Order,
) -> (Producer<T, P, C>, Consumer<T, P, C>) {
    let capacity = capacity.max(1);
    let batch = (capacity / 2).max(1);
    let consumer = Consumer::new(capacity, 0, batch, order);
    let producer = Producer {
        shared: Arc::clone(&consumer.shared),
        local: Vec::with_capacity(crate::overflow::upfront_capacity(batch)),
        credit: capacity,
        batch,
    };
    (producer, consumer)
}

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
    shared: Arc<Shared<T, P, C>>,
    /// Taken in, not yet handed over, oldest first.
    local: Vec<T>,
    credit: usize,
    batch: usize,
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
    /// [`cancel_keeping`](Consumer::cancel_keeping): the elements it had
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
    /// ([`Consumer::cancel_failed`]); `None` for a normal cancel, or
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
    /// [`Consumer::take_abort`] without passing that batch on (Reactive
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
    shared: Arc<Shared<T, P, C>>,
    /// The current batch, in `order`.
    local: Vec<T>,
    /// The end, taken with the last batch: returned once the batch is
    /// empty.
    end: Option<Result<(), StreamError>>,
    /// Elements passed on whose credit is not given back yet.
    consumed: usize,
    batch: usize,
    /// Waiting senders (of a shared producer) are woken once this many
    /// places are free, or when the consumer runs dry; credit itself goes
    /// back per `batch`. Waking one per freed place made every element a
    /// park and an unpark of the sender: +45% instructions per element on
    /// `Source::queue` fed by one thread (callgrind, `weir-bench islands
    /// --only "Source::queue"`: 640-680 before, 955-975 with a wake-up per
    /// place, 670-695 with this threshold).
    wake: usize,
    order: Order,
    /// Waiting senders to wake once the lock is released (kept to reuse
    /// its allocation).
    woken: Vec<P>,
}

impl<T, P: Notify, C: Notify> Consumer<T, P, C> {
    /// The consumer of a new channel of `capacity` (at least 1) whose
    /// producer side starts with `returned` credit in the shared state,
    /// giving credit back `batch` (at least 1) at a time.
    fn new(capacity: usize, returned: usize, batch: usize, order: Order) -> Self {
        // A huge buffer is a bound, not a size: reserve what every bounded
        // buffer does and grow as elements arrive.
        let reserve = crate::overflow::upfront_capacity(capacity);
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
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
        state: &mut State<T, P, C>,
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
    /// reads it with [`Producer::cancel_cause`].
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
    /// ([`Producer::take_back`]): a `BroadcastHub` gives it to the next
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

#[cfg(loom)]
mod loom_models;

impl<T, P: Notify, C: Notify> std::fmt::Debug for Producer<T, P, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Producer")
            .field("credit", &self.credit)
            .field("pending", &self.local.len())
            .finish()
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
