//! The inbox between an actor reference and its stage.
//!
//! # Protocol
//!
//! Signals go into a bounded lock-free ring (the fast path, no lock, no
//! allocation); when the ring is full they go into a locked overflow
//! queue, and while `overflowing` is set every producer uses the
//! overflow, so one sender's signals never overtake each other. The
//! stage drains the ring, then the overflow; it clears `overflowing`
//! (under the overflow lock) only when the overflow is empty.
//!
//! Wake-up: `pending` counts signals queued and not yet taken, with
//! wrapping arithmetic. A producer queues, then adds one; the producer
//! whose add found 0 wakes the stage (one wake-up per burst). The stage
//! takes what it finds, then subtracts what it took; if the result is
//! above 0, signals were counted that it has not taken yet, and it drains
//! again; at 0 or below it stops (below 0: it took signals whose
//! producers have not counted them yet; their adds bring the count back
//! without waking anyone, and the first signal after that wakes it
//! again). Every step is a read-modify-write of one atomic, so they are
//! totally ordered and no fence is needed: no lost wake-up.
//!
//! Holding: a stage that keeps taking while producers are busy adds one
//! to `pending` ([`Inbox::hold`]), so every producer's add finds it above
//! 0 and wakes nobody; it takes with [`Inbox::take_held`] (subtracting
//! what it took) and lets go with [`Inbox::release`] (subtracting the
//! hold). Release says whether signals were counted and not taken: no
//! wake-up is on its way for them, so the stage takes again. The hold is
//! one more counted signal in the same arithmetic, so the reasoning above
//! is unchanged.
//!
//! After [`Inbox::close`] (the stage stopped) `offer` gives signals back
//! so the caller makes them dead letters; a signal that raced past the
//! check is handed to `on_lost` when the inbox is dropped. Nothing
//! vanishes.
//!
//! Memory: the ring ([`INBOX_RING`] slots) is allocated by the first signal, so
//! an inbox that never carries one costs no ring. It is large because a
//! busy stage lets signals gather for a few microseconds before it takes
//! them (see `actor_ref_fold`): with 8, 32 or 64 slots a fast sender spilled
//! into the locked overflow on every such pause and ran at half the speed
//! of a 1,024-slot ring (measured on a quiet box, `weir-bench actor-ref`,
//! no_buffer: 13-15 M vs 25-34 M tells/s). The ring is not freed while the
//! stream runs: replacing it under senders that may still hold it needs a
//! reclamation scheme. The overflow grows with traffic beyond the ring: its
//! queue keeps its storage from one drain to the next, so a sustained stream
//! that outpaces the ring allocates nothing per element; once
//! [`INBOX_CALM_DRAINS`] drains in a row found the overflow unused, the burst is
//! over and the stage frees that storage (under the overflow lock, only when
//! the queue is empty), shrinking the inbox back.
//!
//! The loom models in `inbox/loom_models.rs` check the protocol with a
//! ring of capacity 1 (so the overflow path is exercised), a calm count
//! of 1 (so the shrink races the senders) and a wake that counts.

use std::collections::VecDeque;

use crate::error::StreamError;
use crate::sync::{ArrayQueue, AtomicBool, AtomicU64, AtomicUsize, Mutex, Ordering};
use crate::tuning::{INBOX_CALM_DRAINS, INBOX_RING};

/// Wakes the stage that takes from an inbox.
pub(crate) trait Wake: Send + Sync {
    fn wake(&self);
}

/// What travels through an inbox.
pub(crate) enum Signal<T> {
    Element(T),
    /// Complete after the buffered elements.
    Drain,
    /// Complete now, dropping the buffer.
    Now,
    Fail(StreamError),
}

struct Overflow<T> {
    queue: VecDeque<Signal<T>>,
    closed: bool,
}

pub(crate) struct Inbox<T, W> {
    ring: LazyRing<Signal<T>>,
    overflow: Mutex<Overflow<T>>,
    /// Mirrors "the overflow is in use", read without the lock.
    overflowing: AtomicBool,
    /// Mirrors `overflow.closed`, read without the lock.
    closed: AtomicBool,
    /// Signals counted and not yet taken (wrapping; see the module docs).
    /// On its own cache line: every producer writes it.
    pending: Padded<AtomicUsize>,
    wake: W,
    /// Elements the stage dropped (overflow, completion), for the handle.
    dropped: AtomicU64,
    /// Elements that raced past `close` (reported when the inbox drops).
    on_lost: Option<Box<dyn Fn(T) + Send + Sync>>,
    /// Drains in a row that found the overflow unused, while it still
    /// holds storage (`usize::MAX`: it holds none). Only the stage (the
    /// one consumer) reads and writes it.
    calm: AtomicUsize,
}

/// Keeps a hot atomic off the cache lines of its neighbours.
#[repr(align(128))]
struct Padded<T>(T);

/// The lock-free ring, allocated by the first push. Under loom it is
/// allocated up front: the lazy start is `OnceLock`'s, and the models check
/// the protocol around the ring.
struct LazyRing<T> {
    #[cfg(not(loom))]
    ring: std::sync::OnceLock<ArrayQueue<T>>,
    #[cfg(loom)]
    ring: ArrayQueue<T>,
}

impl<T> LazyRing<T> {
    fn new() -> Self {
        Self {
            #[cfg(not(loom))]
            ring: std::sync::OnceLock::new(),
            #[cfg(loom)]
            ring: ArrayQueue::new(INBOX_RING),
        }
    }

    fn push(&self, value: T) -> Result<(), T> {
        #[cfg(not(loom))]
        let ring = self.ring.get_or_init(|| ArrayQueue::new(INBOX_RING));
        #[cfg(loom)]
        let ring = &self.ring;
        ring.push(value)
    }

    fn pop(&self) -> Option<T> {
        #[cfg(not(loom))]
        let ring = self.ring.get()?;
        #[cfg(loom)]
        let ring = &self.ring;
        ring.pop()
    }

    /// Whether the ring has been allocated (for the memory tests).
    #[cfg(all(test, not(loom)))]
    fn is_allocated(&self) -> bool {
        self.ring.get().is_some()
    }
}

/// `calm` when the overflow holds no storage.
const NO_STORAGE: usize = usize::MAX;

impl<T: Send, W: Wake> Inbox<T, W> {
    pub(crate) fn new(wake: W) -> Self {
        Self {
            ring: LazyRing::new(),
            overflow: Mutex::new(Overflow {
                queue: VecDeque::new(),
                closed: false,
            }),
            overflowing: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            pending: Padded(AtomicUsize::new(0)),
            wake,
            dropped: AtomicU64::new(0),
            on_lost: None,
            calm: AtomicUsize::new(NO_STORAGE),
        }
    }

    /// Report elements that raced past `close` to `on_lost` (when the
    /// inbox is dropped).
    pub(crate) fn with_on_lost(mut self, on_lost: impl Fn(T) + Send + Sync + 'static) -> Self {
        self.on_lost = Some(Box::new(on_lost));
        self
    }

    /// Queue `signal`; gives it back when the stage has stopped.
    pub(crate) fn offer(&self, signal: Signal<T>) -> Result<(), Signal<T>> {
        if self.closed.load(Ordering::Acquire) {
            return Err(signal);
        }
        let signal = if self.overflowing.load(Ordering::Acquire) {
            Some(signal)
        } else {
            self.ring.push(signal).err()
        };
        if let Some(signal) = signal {
            let mut overflow = self.overflow.lock();
            if overflow.closed {
                return Err(signal);
            }
            overflow.queue.push_back(signal);
            self.overflowing.store(true, Ordering::Release);
        }
        if self.pending.0.fetch_add(1, Ordering::AcqRel) == 0 {
            self.wake.wake();
        }
        Ok(())
    }

    /// Take everything queued onto the back of `into`, in order, until no
    /// counted signal is left untaken.
    pub(crate) fn take(&self, into: &mut VecDeque<Signal<T>>) {
        while self.take_counted(into).1 {}
    }

    /// Hold the inbox: until [`release`](Self::release), producers count
    /// their signals without waking the stage (the hold counts as one
    /// signal not yet taken), so a stage that keeps taking (see
    /// `actor_ref_fold`) is not sent a wake-up per burst.
    pub(crate) fn hold(&self) {
        self.pending.0.fetch_add(1, Ordering::AcqRel);
    }

    /// While holding: take everything queued onto the back of `into`, in
    /// order; how many signals that was.
    pub(crate) fn take_held(&self, into: &mut VecDeque<Signal<T>>) -> usize {
        self.take_counted(into).0
    }

    /// Stop holding. `true` when signals were counted that were not taken
    /// and no wake-up is on its way for them: the caller takes again
    /// (holding once more, or with [`take`](Self::take)).
    pub(crate) fn release(&self) -> bool {
        self.uncount(1)
    }

    /// Take what is queued and uncount it: how many signals, and whether
    /// counted ones are still untaken.
    fn take_counted(&self, into: &mut VecDeque<Signal<T>>) -> (usize, bool) {
        let before = into.len();
        self.drain_into(into);
        let taken = into.len() - before;
        (taken, self.uncount(taken))
    }

    /// Subtract `n` from `pending`; whether counted signals are left
    /// untaken. At 0 or "below" (taken before counted) none are, and the
    /// next add wakes the stage.
    fn uncount(&self, n: usize) -> bool {
        let left = self
            .pending
            .0
            .fetch_sub(n, Ordering::AcqRel)
            .wrapping_sub(n);
        !(left == 0 || left > usize::MAX / 2)
    }

    /// Ring first, then the overflow (see the module docs for why that
    /// keeps each sender's order). Only the stage drains.
    fn drain_into(&self, into: &mut VecDeque<Signal<T>>) {
        while let Some(signal) = self.ring.pop() {
            into.push_back(signal);
        }
        if self.overflowing.load(Ordering::Acquire) {
            let mut overflow = self.overflow.lock();
            // Ring signals queued before the overflow took over come first.
            while let Some(signal) = self.ring.pop() {
                into.push_back(signal);
            }
            into.extend(overflow.queue.drain(..));
            self.overflowing.store(false, Ordering::Release);
            // The storage stays for the next burst.
            self.calm.store(0, Ordering::Relaxed);
        } else {
            self.shrink_when_calm();
        }
    }

    /// A drain found the overflow unused: after [`INBOX_CALM_DRAINS`] such drains
    /// in a row, free its storage (a sender that spilled meanwhile keeps
    /// it: the queue is not empty then).
    fn shrink_when_calm(&self) {
        let calm = self.calm.load(Ordering::Relaxed);
        if calm == NO_STORAGE {
            return;
        }
        if calm + 1 < INBOX_CALM_DRAINS {
            self.calm.store(calm + 1, Ordering::Relaxed);
            return;
        }
        let mut overflow = self.overflow.lock();
        if overflow.queue.is_empty() {
            overflow.queue = VecDeque::new();
            self.calm.store(NO_STORAGE, Ordering::Relaxed);
        }
    }

    /// Whether the ring has been allocated (for the memory tests).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn ring_allocated(&self) -> bool {
        self.ring.is_allocated()
    }

    /// Whether the overflow holds storage (for the tests of growth and shrinking).
    #[cfg(test)]
    pub(crate) fn overflow_capacity(&self) -> usize {
        self.overflow.lock().queue.capacity()
    }

    /// The stage stopped: refuse new signals; return what was still queued.
    pub(crate) fn close(&self) -> VecDeque<Signal<T>> {
        {
            let mut overflow = self.overflow.lock();
            overflow.closed = true;
            self.closed.store(true, Ordering::Release);
        }
        let mut rest = VecDeque::new();
        self.drain_into(&mut rest);
        rest
    }

    pub(crate) fn count_dropped(&self, n: u64) {
        self.dropped.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

impl<T, W> Drop for Inbox<T, W> {
    fn drop(&mut self) {
        // Elements that slipped in after `close`: report them.
        let Some(on_lost) = &self.on_lost else { return };
        while let Some(signal) = self.ring.pop() {
            if let Signal::Element(element) = signal {
                on_lost(element);
            }
        }
        for signal in self.overflow.lock().queue.drain(..) {
            if let Signal::Element(element) = signal {
                on_lost(element);
            }
        }
    }
}

#[cfg(loom)]
mod loom_models;

#[cfg(all(test, not(loom)))]
mod tests;
