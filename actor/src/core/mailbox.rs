//! The mailbox: two queues and the scheduling state machine.
//!
//! Every actor owns one `Mailbox<U, S>`: user messages of type `U` (stored
//! inline, no box per message) and system messages of type `S` (stop, watch,
//! child failed, ...). It is the only part of the runtime that several threads
//! touch at once, so it is kept small and checked by the loom models at the end
//! of this file.
//!
//! # State
//!
//! * `scheduled: bool` — the *run token*. Whoever flips it from `false` to
//!   `true` owns the actor until it flips it back: it alone may take messages
//!   out, and it must hand the actor to a dispatcher (or run it).
//! * `shared` (behind a mutex) — the producers' queues and the `closed` flag.
//! * `local` — the consumer's batch. The token owner swaps the whole shared user
//!   queue into it in one lock, then pops from it without any synchronisation.
//!   Both buffers keep their capacity, so a warm mailbox allocates nothing.
//! * `system_pending` — a hint that the system queue is non-empty, so the
//!   consumer can check "system messages first" after every user message with
//!   one load instead of a lock.
//!
//! # Transitions and rules
//!
//! 1. **Send** (any thread): lock, fail with the message if `closed`, push,
//!    unlock; then [`claim`](Mailbox::claim): if `scheduled` was `false`, set it
//!    and schedule the actor. The push happens before the claim, so a consumer
//!    that releases after our push sees the message (rule 3).
//! 2. **Run** (token owner only): take system messages first, then user
//!    messages, at most `throughput` of them.
//! 3. **Release** (token owner, when its batch is empty): set `scheduled` to
//!    `false`, *then* look at the shared queues under the lock. If anything is
//!    there, try to claim again; if that wins, run again. Either the producer's
//!    claim sees `false` or this look sees the message: a wake-up is never lost.
//!    If the batch is not empty (the throughput limit was hit) the owner keeps
//!    the token and resubmits instead of releasing. A suspended actor (its
//!    failure awaits a directive, or an async handler's future is pending)
//!    releases looking at system messages only; its batch waits for the
//!    next owner. A pending future's waker sends a system message, so it
//!    wakes the actor by rule 1 (loom model `suspended_wakes_for_system_message`).
//! 4. **Close** (token owner): set `closed` under the lock and take everything
//!    still queued, so the caller can route it to dead letters. The token is
//!    never released after close, so a closed mailbox is never scheduled again;
//!    every later send fails and returns its message to the sender.
//!
//! # Bounded mailboxes
//!
//! A mailbox made with [`new_claimed_bounded`](Mailbox::new_claimed_bounded)
//! lets typed messages in through [`offer_user`](Mailbox::offer_user), which
//! checks the capacity under the same lock as the push (rule 1); control
//! signals (`enqueue_user`) are never refused for room. Its length is the
//! shared queue plus `batched`, the messages in the consumer's batch, which
//! the consumer sets when it swaps the batch in (under the lock) and
//! decrements per message it takes. So the bound is exact and the consumer
//! still takes the lock once per batch.
//!
//! An *evicting* mailbox (drop-head) must reach its oldest message, so its
//! consumer takes one message at a time under the lock and never batches.
//!
//! A producer that finds no room may leave a [`Waker`] (an async send) in
//! `waiting`. Rule 5, no lost wake-up: the producer registers the waker,
//! sets `senders_waiting`, then looks at `batched` again (and queues the
//! message after all if there is room now); the consumer decrements
//! `batched`, then looks at `senders_waiting` and, if set and its batch is
//! down to half the capacity, wakes every waiter (an evicting consumer wakes
//! one per message it takes). A `SeqCst` fence sits between the write and the read on
//! each side, so one of the two sees the other (the store-buffer pattern, as
//! in `dispatcher::idle`; loom models `SeqCst` accesses alone as `AcqRel`
//! and found the lost wake-up without the fences). Close wakes every waiter. The
//! unbounded path pays one predictable branch per message for all this.
//!
//! # Priority mailboxes
//!
//! A mailbox made with [`with_priority`](Mailbox::with_priority) keeps its
//! shared user queue sorted by a key (lower first), stable for equal keys:
//! a producer computes the key before it takes the lock, then inserts
//! after every queued message whose key is lower or equal (a binary search
//! over `keys`, which runs beside `user`). So that a message arriving later
//! with a lower key still goes first, the consumer takes one message at a
//! time under the lock, as an evicting mailbox does, and never batches.
//! Bounds work as above (`batched` stays 0).
//!
//! # Balancing
//!
//! The routees of a balancing pool share one [`BalanceQueue`] besides their
//! own queues (made with [`with_balance`](Mailbox::with_balance)). A routee
//! takes one message at a time: its own first (signals, and messages sent
//! to it directly), then the shared queue's. A sender pushes to the shared
//! queue, then [`nudge`](Mailbox::nudge)s routees until one claims its run
//! token (rule 1, with the push into another queue). Rule 6, no lost
//! wake-up: a routee releasing its token (rule 3) also looks at the shared
//! queue, after its store of `scheduled = false`; the sender's push and
//! this look take the shared queue's lock, so either the look sees the
//! message or the push came first in the lock's order, and then the
//! sender's claim, after it, sees `false`. So a message waits only while
//! every routee is scheduled or running, and each of those looks at the
//! shared queue before it goes idle.

use std::collections::VecDeque;
use std::task::Waker;

use crate::sync::{Arc, AtomicBool, AtomicUsize, Mutex, Ordering, UnsafeCell, fence};

mod balance;
pub(crate) use balance::BalanceQueue;
mod priority;
use priority::Priority;
pub(crate) use priority::PriorityKey;
#[cfg(not(loom))]
mod overflow;
#[cfg(not(loom))]
pub use overflow::MailboxOverflow;

/// What a successful enqueue asks of the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use = "a mailbox that was claimed must be scheduled, or its messages are never processed"]
pub(crate) enum Enqueued {
    /// The caller won the run token and must schedule the actor.
    MustSchedule,
    /// Someone else owns the token; nothing more to do.
    Queued,
}

/// What [`Mailbox::offer_user`] did with a message.
#[derive(Debug)]
pub(crate) enum Offered<U> {
    /// Queued; the caller acts on the [`Enqueued`].
    Queued(Enqueued),
    /// Queued after evicting the oldest evictable message, given back here.
    QueuedEvicting(Enqueued, U),
    /// No room: the message is given back (and the waker, if any, kept).
    Full(U),
    /// Closed: the message is given back.
    Closed(U),
}

#[derive(Debug)]
struct Shared<U, S> {
    user: VecDeque<U>,
    /// Priority mailboxes only: the key of each message of `user`, in step.
    keys: VecDeque<i64>,
    system: VecDeque<S>,
    closed: bool,
    /// Async senders waiting for room (bounded mailboxes only).
    waiting: VecDeque<Waker>,
}

/// What [`Mailbox::close`] took out of a mailbox.
#[derive(Debug)]
pub(crate) struct Drained<U, S> {
    pub(crate) user: VecDeque<U>,
    pub(crate) system: VecDeque<S>,
}

/// A multi-producer mailbox with a single consumer at a time; see the module docs.
#[derive(Debug)]
pub(crate) struct Mailbox<U, S> {
    /// The most user messages `offer_user` lets in; `usize::MAX` when
    /// unbounded (the consumer then takes its messages in batches).
    capacity: usize,
    /// Bounded with drop-head: no batch, one message at a time.
    evicting: bool,
    /// The key of a priority mailbox (module docs).
    priority: Option<Priority<U>>,
    /// The queue shared by the routees of a balancing pool (module docs).
    balance: Option<Arc<BalanceQueue<U>>>,
    /// Bounded, priority or balancing: the consumer goes the out-of-line way.
    slow: bool,
    /// Bounded: messages in the consumer's batch (module docs).
    batched: AtomicUsize,
    /// Bounded: `waiting` is not empty (rule 5).
    senders_waiting: AtomicBool,
    scheduled: AtomicBool,
    system_pending: AtomicBool,
    shared: Mutex<Shared<U, S>>,
    local: UnsafeCell<VecDeque<U>>,
}

impl<U, S> Mailbox<U, S> {
    /// A new mailbox. `scheduled` starts `true` and the token belongs to the
    /// spawner, which schedules the actor's start itself: a message sent before
    /// the start signal is processed can never overtake it.
    pub(crate) fn new_claimed() -> Self {
        Self::new_claimed_bounded(usize::MAX, false)
    }

    /// Like [`new_claimed`](Self::new_claimed), holding at most `capacity`
    /// user messages offered with [`offer_user`](Self::offer_user) (see the
    /// module docs); `usize::MAX` means unbounded. `evicting` when offers
    /// may evict the oldest message (drop-head).
    pub(crate) fn new_claimed_bounded(capacity: usize, evicting: bool) -> Self {
        Self {
            capacity,
            evicting,
            priority: None,
            balance: None,
            slow: capacity != usize::MAX,
            batched: AtomicUsize::new(0),
            senders_waiting: AtomicBool::new(false),
            scheduled: AtomicBool::new(true),
            system_pending: AtomicBool::new(false),
            shared: Mutex::new(Shared {
                user: VecDeque::new(),
                keys: VecDeque::new(),
                system: VecDeque::new(),
                closed: false,
                waiting: VecDeque::new(),
            }),
            local: UnsafeCell::new(VecDeque::new()),
        }
    }

    /// Make this a priority mailbox (module docs): `key` orders user
    /// messages, lower first. It is called once per message, by the sender,
    /// outside the lock.
    pub(crate) fn with_priority(mut self, key: PriorityKey<U>) -> Self {
        self.priority = Some(Priority(key));
        self.slow = true;
        self
    }

    /// Make this the mailbox of a balancing pool's routee (module docs).
    pub(crate) fn with_balance(mut self, balance: Arc<BalanceQueue<U>>) -> Self {
        self.balance = Some(balance);
        self.slow = true;
        self
    }

    /// A message was pushed to the shared queue of a balancing pool: claim
    /// the run token if the actor is idle (rule 6). A closed mailbox never
    /// releases its token, so it is never claimed again.
    pub(crate) fn nudge(&self) -> Enqueued {
        self.claim()
    }

    /// The key of `msg` in a priority mailbox.
    fn key(&self, msg: &U) -> Option<i64> {
        self.priority.as_ref().map(|priority| (priority.0)(msg))
    }

    /// Queue `msg` (under the lock), in key order when it has a key.
    fn push(shared: &mut Shared<U, S>, msg: U, key: Option<i64>) {
        match key {
            None => shared.user.push_back(msg),
            Some(key) => {
                let at = shared.keys.partition_point(|&k| k <= key);
                shared.keys.insert(at, key);
                shared.user.insert(at, msg);
            }
        }
    }

    /// Take the first queued message (under the lock).
    fn pop(&self, shared: &mut Shared<U, S>) -> Option<U> {
        if self.priority.is_some() {
            shared.keys.pop_front();
        }
        shared.user.pop_front()
    }

    /// Rule 1 for a user message. `Err` gives the message back when closed.
    #[inline]
    pub(crate) fn enqueue_user(&self, msg: U) -> Result<Enqueued, U> {
        let key = self.key(&msg);
        {
            let mut shared = self.shared.lock();
            if shared.closed {
                return Err(msg);
            }
            Self::push(&mut shared, msg, key);
        }
        Ok(self.claim())
    }

    /// Rule 1 for a user message of a bounded mailbox. When full: with
    /// `evictable` given, the oldest message it accepts makes room and is
    /// given back; without, the message is given back and `waker` (if any)
    /// is woken when a message has been taken out or the mailbox closes.
    pub(crate) fn offer_user(
        &self,
        msg: U,
        evictable: Option<fn(&U) -> bool>,
        waker: Option<&Waker>,
    ) -> Offered<U> {
        let mut evicted = None;
        let key = self.key(&msg);
        {
            let mut shared = self.shared.lock();
            if shared.closed {
                return Offered::Closed(msg);
            }
            if self.is_full(&shared) {
                debug_assert!(
                    evictable.is_none() || self.evicting,
                    "eviction needs an evicting mailbox"
                );
                // The oldest evictable message; in a priority mailbox the
                // least urgent one, if it is less urgent than `msg`.
                let oldest = match (evictable, key) {
                    (Some(evictable), None) => shared.user.iter().position(evictable),
                    (Some(evictable), Some(key)) => {
                        let last = shared.user.iter().rposition(evictable);
                        last.filter(|&i| shared.keys[i] > key)
                    }
                    (None, _) => None,
                };
                if let (Some(i), Some(_)) = (oldest, key) {
                    shared.keys.remove(i);
                }
                match oldest.and_then(|i| shared.user.remove(i)) {
                    Some(old) => evicted = Some(old),
                    None => {
                        let Some(waker) = waker else {
                            return Offered::Full(msg);
                        };
                        if !shared.waiting.iter().any(|w| w.will_wake(waker)) {
                            shared.waiting.push_back(waker.clone());
                        }
                        // Rule 5: announce, fence, then look again.
                        self.senders_waiting.store(true, Ordering::SeqCst);
                        fence(Ordering::SeqCst);
                        if self.is_full(&shared) {
                            return Offered::Full(msg);
                        }
                    }
                }
            }
            Self::push(&mut shared, msg, key);
        }
        match evicted {
            Some(old) => Offered::QueuedEvicting(self.claim(), old),
            None => Offered::Queued(self.claim()),
        }
    }

    /// Shared queue plus the consumer's batch at or over the capacity.
    fn is_full(&self, shared: &Shared<U, S>) -> bool {
        shared.user.len() + self.batched.load(Ordering::SeqCst) >= self.capacity
    }

    /// Pop the first waiting sender, keeping `senders_waiting` in step.
    fn pop_waiting(&self, shared: &mut Shared<U, S>) -> Option<Waker> {
        let waker = shared.waiting.pop_front();
        if shared.waiting.is_empty() {
            self.senders_waiting.store(false, Ordering::SeqCst);
        }
        waker
    }

    /// The consumer took a message out of its batch (rule 5). Waiting
    /// senders are woken, all of them, once the batch is down to half the
    /// capacity: waking one per message made a sender that keeps the mailbox
    /// full park and unpark for every message (3.4 M msgs/s against 12 M
    /// unbounded, `actor_tell` bench); a batch always drains to empty, so
    /// the wake-up comes.
    fn took_from_batch(&self) {
        let left = self.batched.fetch_sub(1, Ordering::SeqCst) - 1;
        // Rule 5: pairs with the producer's fence after it announces.
        fence(Ordering::SeqCst);
        if left <= self.capacity / 2 && self.senders_waiting.load(Ordering::SeqCst) {
            let mut shared = self.shared.lock();
            self.senders_waiting.store(false, Ordering::SeqCst);
            // Woken under the lock: draining keeps the queue's capacity, so
            // a warm mailbox allocates nothing here.
            shared.waiting.drain(..).for_each(Waker::wake);
        }
    }

    /// An async sender that may have left `waker` gives up: take its waker
    /// out; if it is gone already, it was woken, and that turn passes to
    /// the next waiting sender (when there is room).
    pub(crate) fn cancel_waiting(&self, waker: &Waker) {
        let next = {
            let mut shared = self.shared.lock();
            if let Some(i) = shared.waiting.iter().position(|w| w.will_wake(waker)) {
                shared.waiting.remove(i);
                if shared.waiting.is_empty() {
                    self.senders_waiting.store(false, Ordering::SeqCst);
                }
                return;
            }
            if self.is_full(&shared) {
                return;
            }
            self.pop_waiting(&mut shared)
        };
        if let Some(next) = next {
            next.wake();
        }
    }

    /// Rule 1 for a system message. `Err` gives the message back when closed.
    pub(crate) fn enqueue_system(&self, msg: S) -> Result<Enqueued, S> {
        {
            let mut shared = self.shared.lock();
            if shared.closed {
                return Err(msg);
            }
            shared.system.push_back(msg);
            self.system_pending.store(true, Ordering::Release);
        }
        Ok(self.claim())
    }

    /// Try to take the run token.
    #[inline]
    fn claim(&self) -> Enqueued {
        // The load keeps the common case (already scheduled) free of a
        // read-modify-write; the CAS decides races between claimers. A CAS,
        // not a swap: a swap also writes `true` over `true`, and loom 0.7
        // then lets a later RMW read past that write (it reported lost
        // wake-ups for the swap form that the C11 model does not allow).
        if !self.scheduled.load(Ordering::Acquire)
            && self
                .scheduled
                .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        {
            Enqueued::MustSchedule
        } else {
            Enqueued::Queued
        }
    }

    /// The next system message, if any.
    ///
    /// # Safety
    ///
    /// The caller owns the run token (rule 2).
    pub(crate) unsafe fn next_system(&self) -> Option<S> {
        if !self.system_pending.load(Ordering::Acquire) {
            return None;
        }
        let mut shared = self.shared.lock();
        let msg = shared.system.pop_front();
        if shared.system.is_empty() {
            self.system_pending.store(false, Ordering::Release);
        }
        msg
    }

    /// The next user message, if any.
    ///
    /// # Safety
    ///
    /// The caller owns the run token (rule 2).
    #[inline]
    pub(crate) unsafe fn next_user(&self) -> Option<U> {
        self.local.with_mut(|local| {
            // SAFETY: the caller owns the run token, so no other thread touches
            // `local` until the token is released (module docs, rule 2).
            let local = unsafe { &mut *local };
            // One branch for the unbounded path; the rest is out of line.
            if self.slow {
                return self.next_user_bounded(local);
            }
            if let Some(msg) = local.pop_front() {
                return Some(msg);
            }
            let mut shared = self.shared.lock();
            debug_assert!(local.is_empty());
            std::mem::swap(local, &mut shared.user);
            drop(shared);
            local.pop_front()
        })
    }

    /// `next_user` for a bounded or priority mailbox (module docs, rule 5).
    #[cold]
    #[inline(never)]
    fn next_user_bounded(&self, local: &mut VecDeque<U>) -> Option<U> {
        if let Some(msg) = local.pop_front() {
            self.took_from_batch();
            return Some(msg);
        }
        let mut shared = self.shared.lock();
        if let Some(balance) = &self.balance {
            // One at a time: its own queue first, then the pool's.
            let own = self.pop(&mut shared);
            let waker = self.pop_waiting(&mut shared);
            drop(shared);
            if let Some(waker) = waker {
                waker.wake();
            }
            return own.or_else(|| balance.pop());
        }
        if self.evicting || self.priority.is_some() {
            // One at a time, so producers can evict the oldest (or put a
            // more urgent message first).
            let msg = self.pop(&mut shared);
            let waker = self.pop_waiting(&mut shared);
            drop(shared);
            if let Some(waker) = waker {
                waker.wake();
            }
            return msg;
        }
        debug_assert!(local.is_empty());
        std::mem::swap(local, &mut shared.user);
        self.batched.store(local.len(), Ordering::SeqCst);
        drop(shared);
        let msg = local.pop_front();
        if msg.is_some() {
            self.took_from_batch();
        }
        msg
    }

    /// Whether the consumer's batch still holds messages.
    ///
    /// # Safety
    ///
    /// The caller owns the run token.
    pub(crate) unsafe fn batch_is_empty(&self) -> bool {
        // SAFETY: the caller owns the run token (rule 2).
        self.local.with_mut(|local| unsafe { (*local).is_empty() })
    }

    /// Rule 3. Returns `true` when the caller claimed the token back and must
    /// reschedule the actor.
    ///
    /// `with_user` says whether queued user messages count as work: an actor
    /// that is suspended (waiting for its supervisor) only wakes for system
    /// messages. A non-empty batch stays where it is for the next owner.
    ///
    /// # Safety
    ///
    /// The caller owns the run token, and does not touch the consumer side
    /// again unless this returns `true`.
    pub(crate) unsafe fn release(&self, with_user: bool) -> bool {
        self.scheduled.store(false, Ordering::Release);
        let has_work = {
            let shared = self.shared.lock();
            (with_user && !shared.user.is_empty()) || !shared.system.is_empty()
        } || (with_user
            && self
                .balance
                .as_ref()
                .is_some_and(|balance| !balance.is_empty()));
        has_work && self.claim() == Enqueued::MustSchedule
    }

    /// Rule 4: close the mailbox and take what is left.
    ///
    /// # Safety
    ///
    /// The caller owns the run token.
    pub(crate) unsafe fn close(&self) -> Drained<U, S> {
        let mut shared = self.shared.lock();
        shared.closed = true;
        self.system_pending.store(false, Ordering::Release);
        let mut user = self.local.with_mut(|local| {
            // SAFETY: the caller owns the run token (rule 2).
            std::mem::take(unsafe { &mut *local })
        });
        user.append(&mut shared.user);
        shared.keys.clear();
        self.batched.store(0, Ordering::SeqCst);
        self.senders_waiting.store(false, Ordering::SeqCst);
        let waiting = std::mem::take(&mut shared.waiting);
        let drained = Drained {
            user,
            system: std::mem::take(&mut shared.system),
        };
        drop(shared);
        // They find the mailbox closed when they look again.
        waiting.into_iter().for_each(Waker::wake);
        drained
    }

    /// Roughly how busy the consumer is, for smallest-mailbox routing: the
    /// user messages waiting in the shared queue (and, bounded, in the
    /// batch), plus one while the actor is scheduled or running. A hint:
    /// it is stale as soon as it is read.
    pub(crate) fn load_hint(&self) -> usize {
        let queued = self.shared.lock().user.len();
        queued
            + self.batched.load(Ordering::Relaxed)
            + usize::from(self.scheduled.load(Ordering::Relaxed))
    }

    /// Whether the mailbox was closed.
    #[cfg(loom)]
    pub(crate) fn is_closed(&self) -> bool {
        self.shared.lock().closed
    }
}

#[cfg(all(test, loom))]
mod loom_models;

#[cfg(all(test, not(loom)))]
mod tests;
