//! The state one hand-over's two sides share, and [`channel`], which
//! makes the two sides.

use super::shared::Senders;
use super::{Consumer, Notify, Order, Producer};
use crate::error::StreamError;
use crate::sync::{Arc, Mutex, MutexGuard};

pub(super) struct HandoverState<T, P, C> {
    /// Handed over, oldest first.
    pub(super) queue: Vec<T>,
    /// Credit the consumer gave back that the producer has not taken (all
    /// of a shared producer's credit: it keeps none of its own).
    pub(super) returned: usize,
    /// The producer's end, until the consumer takes it.
    pub(super) end: Option<Result<(), StreamError>>,
    /// The producer finished (its end was handed over).
    pub(super) finished: bool,
    /// The consumer took the end, or cancelled.
    pub(super) closed: bool,
    pub(super) cancelled: bool,
    pub(super) producer_waiting: bool,
    pub(super) consumer_waiting: bool,
    pub(super) notify_producer: Option<P>,
    pub(super) notify_consumer: Option<C>,
    /// A shared producer's senders waiting for credit, first in line first
    /// (always empty with a single producer).
    pub(super) senders: Senders<P>,
    /// The failure a shared producer ended with, kept for the refusals
    /// after the consumer took the end; or the failure the consumer
    /// cancelled with (`Consumer::cancel_failed`).
    pub(super) failure: Option<StreamError>,
    /// The end is a failure that dropped what was queued: a consumer
    /// holding a batch takes it at once ([`Consumer::take_abort`]).
    pub(super) aborted: bool,
    /// The consumer cancelled keeping what it had not passed on in
    /// `queue`, oldest first, for the producer to take back
    /// ([`Consumer::cancel_keeping`], [`Producer::take_back`]).
    pub(super) kept: bool,
    /// Elements handed over whose credit is not back yet (the models'
    /// conservation check).
    #[cfg(loom)]
    pub(super) handed: usize,
}

pub(super) struct HandoverCore<T, P, C> {
    pub(super) state: Mutex<HandoverState<T, P, C>>,
    #[cfg(loom)]
    pub(super) capacity: usize,
}

impl<T, P, C> HandoverCore<T, P, C> {
    pub(super) fn lock(&self) -> MutexGuard<'_, HandoverState<T, P, C>> {
        // No user code runs under this lock (`crate::sync::Mutex` recovers
        // the state anyway).
        self.state.lock()
    }
}

/// A hand-over of at most `capacity` elements from a [`Producer`] to a
/// [`Consumer`]; `P` notifies the producer, `C` the consumer. See the
/// [module docs](super).
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
    // The simulation's small-batches fault (weir-actor's testkit): the
    // smallest pieces the protocol allows. Compiled out of every other build.
    #[cfg(all(feature = "testkit", not(loom)))]
    let batch = if weir_actor::sim::small_batches() {
        1
    } else {
        batch
    };
    let consumer = Consumer::new(capacity, 0, batch, order);
    let producer = Producer {
        shared: Arc::clone(&consumer.shared),
        local: Vec::with_capacity(crate::overflow::upfront_capacity(batch)),
        credit: capacity,
        batch,
    };
    (producer, consumer)
}

// Read-only views of how full a hand-over is, for snapshots
// (`crate::snapshot`): never on the element path.

impl<T, P: Notify, C: Notify> Consumer<T, P, C> {
    /// Elements handed over that this side has not passed on yet: those
    /// waiting in the channel and those in its current batch. Takes the
    /// channel's lock briefly.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::task::Waker;
    /// use weir_streams::handover::{self, Order, Refill, Wait};
    ///
    /// let (mut producer, mut consumer) = handover::channel::<u8, Waker, Waker>(4, Order::Pop);
    /// producer.push(1);
    /// producer.push(2);
    /// producer.hand_over();
    /// assert_eq!(consumer.buffered(), 2); // in the channel
    /// assert_eq!(consumer.refill(Wait::No), Refill::Ready);
    /// consumer.pop();
    /// assert_eq!(consumer.buffered(), 1); // in the batch
    /// ```
    pub fn buffered(&self) -> usize {
        self.local.len() + self.shared.lock().queue.len()
    }
}

impl<T, P: Notify, C: Notify> Producer<T, P, C> {
    /// Places this side may still fill: its [`credit`](Self::credit) and
    /// the credit the consumer gave back that it has not taken yet. Zero
    /// means it must wait for the consumer. Takes the channel's lock
    /// briefly.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::task::Waker;
    /// use weir_streams::handover::{self, Order, Refill, Wait};
    ///
    /// let (mut producer, mut consumer) = handover::channel::<u8, Waker, Waker>(2, Order::Pop);
    /// producer.push(1);
    /// producer.push(2);
    /// producer.hand_over();
    /// assert_eq!(producer.free(), 0); // both places taken
    /// assert_eq!(consumer.refill(Wait::No), Refill::Ready);
    /// consumer.pop();
    /// consumer.pop();
    /// consumer.give_back();
    /// assert_eq!(producer.free(), 2); // given back, not taken yet
    /// ```
    pub fn free(&self) -> usize {
        self.credit + self.shared.lock().returned
    }
}
