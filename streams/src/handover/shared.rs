//! The shared producer side of a hand-over, for many producers at once
//! (`Source::queue`'s handle and its `send` futures, on any thread).
//!
//! # Protocol (the "Many producers" rule of the module docs)
//!
//! - Credit lives in the shared state (`HandoverState::returned`): putting an
//!   element takes the channel's one lock, checks the ends and the credit,
//!   spends one and appends the element to the handed-over queue, waking
//!   the consumer if it waits. One lock per element, none of it local.
//! - A send that finds no credit registers its [`Notify`] under a key kept
//!   in its [`SendSlot`]; polling again replaces its entry, so the line
//!   never holds more entries than there are pending sends.
//! - The consumer gives each place back as it passes the element on
//!   (not in batches, as for a single producer: producers take the lock
//!   per element anyway, and an offer must be refused only when the
//!   channel holds `capacity` elements, `Source::queue`'s promise), and
//!   takes one waiting sender per freed place out of the line, first in
//!   line first; it notifies them after releasing the lock. The
//!   state's `producer_waiting` flag is up while anyone is in line, so
//!   the consumer looks at the line only then.
//! - A woken sender tries again: if someone else took the credit first (an
//!   offer), it registers again at the front of the line.
//! - A send dropped while in line leaves it. One dropped after it was
//!   taken out of the line (woken) but before it put its element passes
//!   the wake-up on to the next in line if there is credit, so a
//!   cancelled send never swallows a live sender's wake-up.
//! - An end (complete, fail, the consumer cancelling) takes the whole
//!   line and notifies each sender; each then sees the end.
//!
//! The loom models in `loom_models.rs` (the `shared_*` ones) check these
//! rules with several producers.

use std::collections::VecDeque;

use super::{Consumer, HandoverCore, HandoverState, Notify, Order};
use crate::error::StreamError;
use crate::sync::Arc;

/// Why a shared producer did not take an element; it is given back.
#[derive(Debug, PartialEq)]
pub(crate) enum Refused<T> {
    /// No credit: the channel holds `capacity` elements.
    Full(T),
    /// The channel completed, or the consumer cancelled.
    Closed(T),
    /// The channel failed with this error.
    Failed(StreamError, T),
}

/// A pending send's place in the line of waiting senders: the key of its
/// entry once it has registered, until it puts its element, gives up or
/// is dropped.
#[derive(Debug, Default)]
pub(crate) struct SendSlot {
    key: Option<u64>,
}

/// The senders waiting for credit, first in line first; at most one entry
/// per pending send (keyed by its [`SendSlot`]).
pub(super) struct Senders<P> {
    entries: VecDeque<(u64, P)>,
    next_key: u64,
}

impl<P> Default for Senders<P> {
    fn default() -> Self {
        Self {
            entries: VecDeque::new(),
            next_key: 0,
        }
    }
}

impl<P: Notify> Senders<P> {
    pub(super) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Register `slot`'s `notify`, replacing its entry if it has one; a
    /// slot whose entry was taken (it was woken) goes back to the front.
    fn register(&mut self, slot: &mut SendSlot, notify: &P) {
        if let Some(key) = slot.key {
            if let Some((_, registered)) = self.entries.iter_mut().find(|(k, _)| *k == key) {
                if !registered.same(notify) {
                    *registered = notify.clone();
                }
                return;
            }
            self.entries.push_front((key, notify.clone()));
            return;
        }
        let key = self.next_key;
        self.next_key = self.next_key.wrapping_add(1);
        self.entries.push_back((key, notify.clone()));
        slot.key = Some(key);
    }

    /// Forget `slot`; whether its entry was still in line (not yet woken).
    fn leave(&mut self, slot: &mut SendSlot) -> bool {
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

    /// The whole line (for an end).
    pub(super) fn take_all(&mut self) -> Self {
        Self {
            entries: std::mem::take(&mut self.entries),
            next_key: self.next_key,
        }
    }

    /// Notify every sender in this line (outside the lock).
    pub(super) fn notify_all(self) {
        for (_, notify) in self.entries {
            notify.notify();
        }
    }
}

impl<T, P: Notify, C> HandoverState<T, P, C> {
    /// `freed` places came back while senders wait (`producer_waiting` is
    /// up while any is in line): take one per place out of line, first in
    /// line first. Returns the first; the others go into `woken`. Out of
    /// line, to keep the consumer's credit return small.
    #[cold]
    #[inline(never)]
    pub(super) fn take_senders(&mut self, freed: usize, woken: &mut Vec<P>) -> Option<P> {
        let n = freed.min(self.senders.entries.len());
        let first = {
            let mut taken = self.senders.entries.drain(..n).map(|(_, notify)| notify);
            let first = taken.next();
            woken.extend(taken);
            first
        };
        self.producer_waiting = !self.senders.is_empty();
        first
    }

    /// Whether producers are refused (an end was handed over, or the
    /// consumer cancelled).
    fn is_shut(&self) -> bool {
        self.finished || self.cancelled
    }

    /// Put `element` in, spending a credit; the consumer's notify if it
    /// was waiting.
    #[inline]
    fn put(&mut self, element: T) -> Result<Option<C>, Refused<T>>
    where
        C: Clone,
    {
        if self.is_shut() {
            return Err(match &self.failure {
                Some(error) => Refused::Failed(error.clone(), element),
                None => Refused::Closed(element),
            });
        }
        if self.returned == 0 {
            return Err(Refused::Full(element));
        }
        #[cfg(loom)]
        {
            self.handed += 1;
        }
        self.returned -= 1;
        self.queue.push(element);
        if self.consumer_waiting {
            self.consumer_waiting = false;
            Ok(self.notify_consumer.clone())
        } else {
            Ok(None)
        }
    }
}

/// A hand-over for many producers: clones of one [`SharedProducer`] put
/// elements in from any thread; `P` notifies a waiting sender, `C` the
/// consumer. See the module docs.
pub(crate) fn shared_channel<T, P: Notify, C: Notify>(
    capacity: usize,
    order: Order,
) -> (SharedProducer<T, P, C>, Consumer<T, P, C>) {
    let capacity = capacity.max(1);
    // Credit back one place at a time (module docs).
    let consumer = Consumer::new(capacity, capacity, 1, order);
    let producer = SharedProducer {
        shared: Arc::clone(&consumer.shared),
        capacity,
    };
    (producer, consumer)
}

/// The producer side shared by many producers (clone it). Dropping the
/// last clone does not end the channel.
pub(crate) struct SharedProducer<T, P: Notify, C: Notify> {
    shared: Arc<HandoverCore<T, P, C>>,
    capacity: usize,
}

impl<T, P: Notify, C: Notify> Clone for SharedProducer<T, P, C> {
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
            capacity: self.capacity,
        }
    }
}

impl<T, P: Notify, C: Notify> SharedProducer<T, P, C> {
    /// Register how the consumer is notified (of elements and the end).
    pub(crate) fn set_consumer_notify(&self, notify: C) {
        self.shared.lock().notify_consumer = Some(notify);
    }

    /// Put `element` in if there is credit; never waits.
    pub(crate) fn offer(&self, element: T) -> Result<(), Refused<T>> {
        let notify = {
            let mut state = self.shared.lock();
            let notify = state.put(element)?;
            self.check_credit(&state);
            notify
        };
        if let Some(notify) = notify {
            notify.notify();
        }
        Ok(())
    }

    /// Put `element` in if there is credit, leaving the line if `slot` is
    /// in it; without credit, register `notify` in line under `slot`
    /// ([`Refused::Full`]). On an end `slot` leaves the line.
    pub(crate) fn send(
        &self,
        slot: &mut SendSlot,
        element: T,
        notify: &P,
    ) -> Result<(), Refused<T>> {
        let consumer = {
            let mut state = self.shared.lock();
            match state.put(element) {
                Ok(consumer) => {
                    self.check_credit(&state);
                    if slot.key.is_some() {
                        state.senders.leave(slot);
                    }
                    consumer
                }
                Err(Refused::Full(element)) => {
                    state.senders.register(slot, notify);
                    state.producer_waiting = true;
                    return Err(Refused::Full(element));
                }
                Err(refused) => {
                    state.senders.leave(slot);
                    return Err(refused);
                }
            }
        };
        if let Some(consumer) = consumer {
            consumer.notify();
        }
        Ok(())
    }

    /// Under loom, after an element is put in: credit is conserved (what
    /// is left plus what is handed over and not given back is the
    /// capacity), so it never exceeds the capacity.
    #[inline]
    fn check_credit(&self, state: &HandoverState<T, P, C>) {
        #[cfg(loom)]
        assert_eq!(
            state.returned + state.handed,
            self.capacity,
            "credit is conserved"
        );
        #[cfg(not(loom))]
        let _ = state;
    }

    /// A pending send is dropped: forget its entry, and if it had been
    /// woken for credit it will not use, wake the next in line.
    pub(crate) fn cancel_send(&self, slot: &mut SendSlot) {
        if slot.key.is_none() {
            return;
        }
        let next = {
            let mut state = self.shared.lock();
            let still_in_line = state.senders.leave(slot);
            if still_in_line || state.is_shut() || state.returned == 0 {
                None
            } else {
                state.senders.entries.pop_front().map(|(_, notify)| notify)
            }
        };
        if let Some(next) = next {
            next.notify();
        }
    }

    /// Complete after what is queued. The first end wins: `false` when the
    /// channel already ended or the consumer cancelled.
    pub(crate) fn complete(&self) -> bool {
        self.end(None)
    }

    /// Fail at once: what is queued is dropped, and a consumer holding a
    /// batch learns it from `Consumer::take_abort`. The first end wins.
    pub(crate) fn fail(&self, error: StreamError) -> bool {
        self.end(Some(error))
    }

    fn end(&self, failure: Option<StreamError>) -> bool {
        let (dropped, consumer, senders) = {
            let mut state = self.shared.lock();
            if state.is_shut() {
                return false;
            }
            state.finished = true;
            state.consumer_waiting = false;
            state.producer_waiting = false;
            let dropped = match failure {
                Some(error) => {
                    state.failure = Some(error.clone());
                    state.end = Some(Err(error));
                    state.aborted = true;
                    std::mem::take(&mut state.queue)
                }
                None => {
                    state.end = Some(Ok(()));
                    Vec::new()
                }
            };
            (
                dropped,
                state.notify_consumer.clone(),
                state.senders.take_all(),
            )
        };
        drop(dropped); // element destructors run outside the lock
        if let Some(consumer) = consumer {
            consumer.notify();
        }
        senders.notify_all();
        true
    }

    /// Whether producers are refused now (ended, or the consumer cancelled).
    pub(crate) fn is_closed(&self) -> bool {
        self.shared.lock().is_shut()
    }

    /// (places in use, capacity, waiting senders, closed), for `Debug`.
    pub(crate) fn snapshot(&self) -> (usize, usize, usize, bool) {
        let state = self.shared.lock();
        (
            self.capacity - state.returned.min(self.capacity),
            self.capacity,
            state.senders.entries.len(),
            state.is_shut(),
        )
    }
}
