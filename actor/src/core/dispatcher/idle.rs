//! Idle workers: searching, sleeping and waking without lost wake-ups, and
//! the watchdog's arming, which depends on who sleeps.
//!
//! Checked by the loom models in `dispatcher/loom_models.rs`.
//!
//! # Sleeping without lost wake-ups
//!
//! An idle worker first *searches*: a short, bounded spin that re-checks the
//! queues. Then it registers as a sleeper, issues a SeqCst fence, checks the
//! queues once more and only then parks. A submitter pushes, issues a SeqCst
//! fence, and reads the sleeper count: either it sees the sleeper and unparks
//! it (the park token survives an unpark that comes before the park), or the
//! sleeper's last check sees the task. A submitter skips the wake-up while
//! some worker is still searching, because a searcher always checks the
//! queues once more before it can sleep. A searcher takes one task, though:
//! a worker that takes a task from the global queue with more behind it
//! wakes a sleeper for them (`GlobalQueue::take`). Idle workers therefore
//! burn no CPU, and no queued task waits on a busy worker while one sleeps.
//!
//! # The watchdog stands down only when every worker sleeps
//!
//! The pool's watchdog (see `pool`) must run while any worker is awake with
//! work queued on its own deque. A worker queuing such work arms it unless
//! it is armed ([`Arming::try_arm`], one relaxed load on the hot path). The
//! watchdog stops once it sees every worker asleep ([`Arming::stand_down`]):
//! it clears the flag, issues a SeqCst fence and counts the sleepers again.
//! A worker that wakes stores the new sleeper count and issues a SeqCst
//! fence before it runs anything. Of the two fences one comes first: either
//! the watchdog's second count sees the worker awake (and re-arms), or the
//! worker's later `try_arm` sees the flag cleared (and arms). Without the
//! worker's fence both could read stale values (store buffering) and a task
//! queued behind a blocked handler would wait for ever.

use crate::sync::thread::{self, Thread};
use crate::sync::{AtomicBool, AtomicUsize, Mutex, Ordering, fence, spin_loop};

/// Spin rounds of a searching worker before it sleeps: tens of microseconds
/// at most, so an idle system goes quiet almost at once. One under loom,
/// whose models need the protocol, not the spinning.
const SEARCH_ROUNDS: u32 = if cfg!(loom) { 1 } else { 16 };

/// The pool's sleeping workers.
pub(crate) struct Sleepers {
    sleepers: Mutex<Vec<Thread>>,
    num_sleeping: AtomicUsize,
    num_searching: AtomicUsize,
}

impl Sleepers {
    pub(crate) fn new(workers: usize) -> Self {
        Self {
            sleepers: Mutex::new(Vec::with_capacity(workers)),
            num_sleeping: AtomicUsize::new(0),
            num_searching: AtomicUsize::new(0),
        }
    }

    /// A task was just queued: wake one sleeper, unless none sleeps or a
    /// searcher will find the task (see the module docs).
    pub(crate) fn notify_one(&self) {
        fence(Ordering::SeqCst);
        if self.num_sleeping.load(Ordering::SeqCst) == 0
            || self.num_searching.load(Ordering::SeqCst) > 0
        {
            return;
        }
        let mut sleepers = self.sleepers.lock();
        if let Some(thread) = sleepers.pop() {
            self.num_sleeping.store(sleepers.len(), Ordering::SeqCst);
            drop(sleepers);
            thread.unpark();
        }
    }

    /// Wake every sleeper (shutdown: `ready` now holds for all of them).
    pub(crate) fn notify_all(&self) {
        let sleepers = std::mem::take(&mut *self.sleepers.lock());
        self.num_sleeping.store(0, Ordering::SeqCst);
        for thread in sleepers {
            thread.unpark();
        }
    }

    /// How many workers sleep.
    pub(crate) fn sleeping(&self) -> usize {
        self.num_sleeping.load(Ordering::SeqCst)
    }

    /// Search, then sleep until `ready` holds (work this worker may take, or
    /// shutdown) or a submitter wakes it. May return spuriously: the caller
    /// looks for work and comes back.
    pub(crate) fn idle(&self, ready: impl Fn() -> bool) {
        self.num_searching.fetch_add(1, Ordering::SeqCst);
        for round in 0..SEARCH_ROUNDS {
            if ready() {
                self.num_searching.fetch_sub(1, Ordering::SeqCst);
                return;
            }
            for _ in 0..(1 << round.min(6)) {
                spin_loop();
            }
        }
        self.num_searching.fetch_sub(1, Ordering::SeqCst);

        let me = thread::current();
        {
            let mut sleepers = self.sleepers.lock();
            sleepers.push(me.clone());
            self.num_sleeping.store(sleepers.len(), Ordering::SeqCst);
        }
        // Pairs with the submitter's fence in `notify_one`.
        fence(Ordering::SeqCst);
        if !ready() {
            thread::park();
        }
        let mut sleepers = self.sleepers.lock();
        sleepers.retain(|t| t.id() != me.id());
        self.num_sleeping.store(sleepers.len(), Ordering::SeqCst);
        drop(sleepers);
        // Awake from here on: pairs with the fence in `Arming::stand_down`.
        fence(Ordering::SeqCst);
    }
}

/// Whether the pool's watchdog runs (see the module docs).
#[derive(Default)]
pub(crate) struct Arming {
    armed: AtomicBool,
}

impl Arming {
    /// `true` when the caller must start the watchdog: it was not running
    /// and now counts as running.
    #[inline]
    pub(crate) fn try_arm(&self) -> bool {
        !(self.armed.load(Ordering::Relaxed) || self.armed.swap(true, Ordering::AcqRel))
    }

    /// Starting it failed (no timer yet, or shut down).
    pub(crate) fn abort(&self) {
        self.armed.store(false, Ordering::Release);
    }

    /// The watchdog saw all `workers` asleep and stops. `true` when a worker
    /// woke meanwhile, so it must be armed again ([`try_arm`](Self::try_arm)).
    pub(crate) fn stand_down(&self, sleepers: &Sleepers, workers: usize) -> bool {
        self.armed.store(false, Ordering::Release);
        fence(Ordering::SeqCst);
        sleepers.sleeping() < workers
    }
}
