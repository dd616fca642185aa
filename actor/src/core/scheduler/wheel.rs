//! The timer thread: a deadline heap behind a mutex and a condition variable.
//!
//! The thread sleeps until the earliest deadline (or until something earlier
//! is scheduled), runs what is due outside the lock, and re-arms periodic
//! jobs. Jobs run on this thread and must be short; a panicking job is
//! caught and the thread goes on.
//!
//! # Cancelled entries
//!
//! A binary heap cannot remove from its middle, so a cancelled entry is
//! *counted* ([`TimerThread::cancelled`]) and skipped when it comes due. Once
//! cancelled entries make up half the heap (and at least
//! [`COMPACT_AT_LEAST`]), the canceller compacts it: one O(n) pass, paid for
//! by the n/2 cancels before it. So the heap holds at most about twice the
//! live timers, however many asks per second finish before their time-out
//! (without this an ask answered in a microsecond kept its entry, and its
//! captured reply cell, for the whole time-out). Only a cancel of an entry
//! still in the heap counts (a flag set and cleared under the lock), so an
//! ask answered by its own time-out, which cancels after its entry ran,
//! adds nothing. The count may still be slightly off in a race (a cancel
//! as the entry comes due); that only moves a compaction a little, and
//! each compaction resets it.
//!
//! # Test clock
//!
//! A timer made with [`TimerThread::manual`] has no thread: it reads a
//! [`TestClock`](super::TestClock) and runs its entries only when the test
//! advances that clock (its `Driven::fire_next`, called in deadline order
//! by `TestClock::advance`), except that an entry scheduled for a deadline
//! the clock has reached already runs at once, on the scheduling thread: an
//! actor re-arming a timer for "now" after the test's `advance` has returned
//! must not wait for the next one. Everything else (the heap, cancelling,
//! compaction, shutdown) is the same code.
//!
//! # Shutdown
//!
//! [`TimerThread::shutdown`] drops every pending job without running it, outside
//! the lock. A job that must not be lost silently (an ask's time-out) carries
//! a guard whose `Drop` fails what it was waiting for.

use std::cmp::Ordering as CmpOrdering;
use std::collections::BinaryHeap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

use super::clock::{Clock, Driven, TestClock};
use super::deadline;
use crate::sync::{Arc, AtomicBool, AtomicUsize, Condvar, Mutex, MutexGuard, Ordering};
use crate::threads::Threads;

/// Compact the heap only once at least this many cancelled entries wait in
/// it, so a small heap is never scanned for a handful of cancels.
const COMPACT_AT_LEAST: usize = 64;

/// A scheduled entry's cancel flag, shared with its [`Cancellable`]s; knows
/// the timer it sits in so that a cancel can count itself there.
///
/// [`Cancellable`]: super::Cancellable
#[derive(Default)]
pub(crate) struct CancelFlag {
    cancelled: AtomicBool,
    /// Whether its entry sits in the heap now (set and cleared under the
    /// timer's lock): a cancel after the entry ran (an ask answered by its
    /// own time-out) has nothing to count.
    in_heap: AtomicBool,
    timer: std::sync::OnceLock<std::sync::Weak<TimerThread>>,
}

impl CancelFlag {
    /// Set the flag; `true` if this call did it. A flag whose entry sits in a
    /// timer tells the timer, which may compact its heap.
    pub(crate) fn cancel(&self) -> bool {
        let first = !self.cancelled.swap(true, Ordering::AcqRel);
        if first
            && self.in_heap.load(Ordering::Acquire)
            && let Some(timer) = self.timer.get().and_then(std::sync::Weak::upgrade)
        {
            timer.cancelled_one();
        }
        first
    }

    pub(crate) fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Acquire)
    }
}

/// What to run when an entry comes due.
pub(crate) enum Job {
    Once(Box<dyn FnOnce() + Send>),
    /// Runs every `interval`; with `fixed_rate` the next deadline is the last
    /// deadline plus the interval (catching up after a delay), otherwise the
    /// time the run finished plus the interval. Returning `false` stops it.
    Repeat {
        run: Box<dyn FnMut() -> bool + Send>,
        interval: Duration,
        fixed_rate: bool,
    },
}

struct Entry {
    at: Instant,
    seq: u64,
    job: Job,
    cancelled: Arc<CancelFlag>,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<CmpOrdering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    /// Reversed, so the max-heap pops the earliest deadline first.
    fn cmp(&self, other: &Self) -> CmpOrdering {
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}

struct State {
    heap: BinaryHeap<Entry>,
    next_seq: u64,
    shutdown: bool,
}

pub(crate) struct TimerThread {
    /// This timer, for the cancel flags of its entries to hold weakly.
    me: std::sync::Weak<TimerThread>,
    state: Mutex<State>,
    wake: Condvar,
    /// Cancelled entries still in the heap (see the module docs).
    cancelled: AtomicUsize,
    /// Mirrors the heap's length, so a cancel decides without the lock.
    len: AtomicUsize,
    /// The timer thread, once it runs: waiting on it for a time-out would
    /// wait for ever.
    thread: std::sync::OnceLock<std::thread::ThreadId>,
    clock: Clock,
}

impl TimerThread {
    pub(crate) fn start(name: String, registry: &Arc<Threads>) -> std::io::Result<Arc<Self>> {
        let timer = Self::new(Clock::Real);
        let me = timer.clone();
        registry.spawn_uncounted(name, move || me.work())?;
        Ok(timer)
    }

    /// A timer without a thread, driven by `clock` (see the module docs).
    pub(crate) fn manual(clock: &TestClock) -> Arc<Self> {
        let timer = Self::new(Clock::Test(clock.clone()));
        clock.register(&timer);
        timer
    }

    fn new(clock: Clock) -> Arc<Self> {
        Arc::new_cyclic(|me| Self {
            me: me.clone(),
            state: Mutex::new(State {
                heap: BinaryHeap::new(),
                next_seq: 0,
                shutdown: false,
            }),
            wake: Condvar::new(),
            cancelled: AtomicUsize::new(0),
            len: AtomicUsize::new(0),
            thread: std::sync::OnceLock::new(),
            clock,
        })
    }

    /// The time on this timer's clock.
    pub(crate) fn now(&self) -> Instant {
        self.clock.now()
    }

    /// Run an entry that is due on the test clock, on the calling thread;
    /// a periodic one runs again while its next deadline is due too.
    fn run_due_now(&self, mut entry: Entry) {
        while let Some(next) = run(entry, &self.clock) {
            if next.at > self.clock.now() {
                self.push_again(self.state.lock(), next);
                return;
            }
            entry = next;
        }
    }

    /// Take the earliest entry out of the heap (which is not empty).
    fn pop(&self, state: &mut State) -> Entry {
        let entry = state.heap.pop().expect("peeked entry");
        entry.cancelled.in_heap.store(false, Ordering::Release);
        self.len.store(state.heap.len(), Ordering::Relaxed);
        if entry.cancelled.is_cancelled() {
            // One fewer cancelled entry in the heap.
            let _ = self
                .cancelled
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
        }
        entry
    }

    /// Put a periodic entry back for its next deadline, unless shut down.
    fn push_again(&self, mut state: MutexGuard<'_, State>, entry: Entry) {
        if state.shutdown {
            drop(state); // `shutdown` dropped the rest; drop this one alike
            drop(entry);
            return;
        }
        let seq = state.next_seq;
        state.next_seq += 1;
        entry.cancelled.in_heap.store(true, Ordering::Release);
        state.heap.push(Entry { seq, ..entry });
        self.len.store(state.heap.len(), Ordering::Relaxed);
    }

    /// Run `job` at `at` unless `cancelled` is set by then. Gives the job
    /// back when the timer thread has shut down. A job already cancelled is
    /// dropped at once instead of waiting in the heap.
    pub(crate) fn schedule(
        &self,
        at: Instant,
        job: Job,
        cancelled: Arc<CancelFlag>,
    ) -> Result<(), Job> {
        let _ = cancelled.timer.set(self.me.clone());
        let mut state = self.state.lock();
        if state.shutdown {
            return Err(job);
        }
        if cancelled.is_cancelled() {
            // Checked under the lock after `timer` was set: a cancel that
            // comes later counts itself, one that came earlier is seen here.
            drop(state);
            drop(job);
            return Ok(());
        }
        if matches!(self.clock, Clock::Test(_)) && at <= self.clock.now() {
            // Due already on a test clock: run it now (see the module docs).
            drop(state);
            self.run_due_now(Entry {
                at,
                seq: 0,
                job,
                cancelled,
            });
            return Ok(());
        }
        let seq = state.next_seq;
        state.next_seq += 1;
        let earliest = state.heap.peek().is_none_or(|e| at < e.at);
        cancelled.in_heap.store(true, Ordering::Release);
        state.heap.push(Entry {
            at,
            seq,
            job,
            cancelled,
        });
        self.len.store(state.heap.len(), Ordering::Relaxed);
        drop(state);
        if earliest {
            self.wake.notify_one();
        }
        Ok(())
    }

    /// Stop the thread; pending jobs are dropped without running.
    pub(crate) fn shutdown(&self) {
        let pending = {
            let mut state = self.state.lock();
            state.shutdown = true;
            self.len.store(0, Ordering::Relaxed);
            std::mem::take(&mut state.heap)
        };
        drop(pending); // outside the lock: dropping a job may drop actor refs
        self.wake.notify_one();
    }

    /// One of the heap's entries was cancelled: compact once they are half
    /// of it (see the module docs).
    fn cancelled_one(&self) {
        let cancelled = self.cancelled.fetch_add(1, Ordering::Relaxed) + 1;
        if cancelled < COMPACT_AT_LEAST || cancelled * 2 < self.len.load(Ordering::Relaxed) {
            return;
        }
        let dead = {
            let mut state = self.state.lock();
            let mut entries = std::mem::take(&mut state.heap).into_vec();
            let mut dead = Vec::new();
            let mut i = 0;
            while i < entries.len() {
                if entries[i].cancelled.is_cancelled() {
                    entries[i].cancelled.in_heap.store(false, Ordering::Release);
                    dead.push(entries.swap_remove(i));
                } else {
                    i += 1;
                }
            }
            state.heap = BinaryHeap::from(entries);
            self.len.store(state.heap.len(), Ordering::Relaxed);
            self.cancelled.store(0, Ordering::Relaxed);
            dead
        };
        drop(dead); // outside the lock, as in `shutdown`
    }

    /// How many entries wait in the heap, cancelled ones included.
    #[cfg(test)]
    pub(crate) fn pending(&self) -> usize {
        self.state.lock().heap.len()
    }

    /// Whether the calling thread is this timer's thread.
    pub(crate) fn is_timer_thread(&self) -> bool {
        self.thread.get() == Some(&std::thread::current().id())
    }

    fn work(&self) {
        let _ = self.thread.set(std::thread::current().id());
        let mut state = self.state.lock();
        loop {
            if state.shutdown {
                return;
            }
            let now = self.clock.now();
            match state.heap.peek().map(|e| e.at) {
                Some(at) if at <= now => {
                    let entry = self.pop(&mut state);
                    drop(state);
                    let again = run(entry, &self.clock);
                    state = self.state.lock();
                    if let Some(entry) = again {
                        self.push_again(state, entry);
                        state = self.state.lock();
                    }
                }
                Some(at) => state = self.state.wait_timeout(&self.wake, state, at - now),
                None => state = self.state.wait(&self.wake, state),
            }
        }
    }
}

/// Driven by `TestClock::advance` (test clock only).
impl Driven for TimerThread {
    fn next_deadline(&self) -> Option<Instant> {
        self.state.lock().heap.peek().map(|e| e.at)
    }

    fn fire_next(&self, upto: Instant) -> bool {
        let mut state = self.state.lock();
        if state.shutdown || state.heap.peek().is_none_or(|e| e.at > upto) {
            return false;
        }
        let entry = self.pop(&mut state);
        drop(state);
        let again = run(entry, &self.clock);
        if let Some(entry) = again {
            self.push_again(self.state.lock(), entry);
        }
        true
    }
}

/// Run a due entry; a periodic one comes back with its next deadline.
fn run(entry: Entry, clock: &Clock) -> Option<Entry> {
    if entry.cancelled.is_cancelled() {
        return None;
    }
    match entry.job {
        Job::Once(f) => {
            let _ = catch_unwind(AssertUnwindSafe(f));
            None
        }
        Job::Repeat {
            mut run,
            interval,
            fixed_rate,
        } => {
            let keep = catch_unwind(AssertUnwindSafe(&mut run)).unwrap_or(false);
            if !keep || entry.cancelled.is_cancelled() {
                return None;
            }
            let at = deadline::add(if fixed_rate { entry.at } else { clock.now() }, interval);
            Some(Entry {
                at,
                seq: 0,
                job: Job::Repeat {
                    run,
                    interval,
                    fixed_rate,
                },
                cancelled: entry.cancelled,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::super::Cancellable;
    use super::{Job, TimerThread};
    use crate::sync::Arc;
    use crate::threads::Threads;

    fn timer() -> (Arc<TimerThread>, Arc<Threads>) {
        let threads = Arc::new(Threads::new(usize::MAX, Box::new(|| {}), None));
        (
            TimerThread::start("wheel-test".into(), &threads).unwrap(),
            threads,
        )
    }

    fn later(timer: &TimerThread, cancellable: &Cancellable) {
        let at = Instant::now() + Duration::from_secs(3600);
        assert!(
            timer
                .schedule(at, Job::Once(Box::new(|| {})), cancellable.flag())
                .is_ok()
        );
    }

    #[test]
    fn cancelled_entries_leave_the_heap_long_before_they_are_due() {
        let (timer, _threads) = timer();
        let live: Vec<_> = (0..10).map(|_| Cancellable::new()).collect();
        live.iter().for_each(|c| later(&timer, c));
        // Many short-lived timers (asks answered at once), each cancelled.
        for _ in 0..10_000 {
            let c = Cancellable::new();
            later(&timer, &c);
            c.cancel();
        }
        let pending = timer.pending();
        assert!(
            pending < 2 * super::COMPACT_AT_LEAST + live.len(),
            "{pending} entries for 10 live timers"
        );
        // The live ones are still there and still cancellable.
        assert!(live.iter().all(|c| !c.is_cancelled()));
        live.iter().for_each(|c| assert!(c.cancel()));
        timer.shutdown();
    }

    /// An ask answered by its own time-out cancels its timer after the
    /// entry ran: that cancel has no entry to count (it drifted the count
    /// up by one per time-out, making compactions that found nothing).
    #[test]
    fn a_cancel_after_the_entry_ran_counts_nothing() {
        let (timer, _threads) = timer();
        let (tx, rx) = std::sync::mpsc::channel();
        let ran: Vec<_> = (0..100).map(|_| Cancellable::new()).collect();
        for c in &ran {
            let tx = tx.clone();
            let job = Job::Once(Box::new(move || tx.send(()).unwrap()));
            assert!(timer.schedule(Instant::now(), job, c.flag()).is_ok());
        }
        for _ in &ran {
            rx.recv_timeout(Duration::from_secs(10)).unwrap();
        }
        ran.iter().for_each(|c| assert!(c.cancel()));
        assert_eq!(
            timer.cancelled.load(std::sync::atomic::Ordering::Relaxed),
            0
        );
        timer.shutdown();
    }

    #[test]
    fn an_entry_cancelled_before_it_is_scheduled_is_not_kept() {
        let (timer, _threads) = timer();
        let c = Cancellable::new();
        c.cancel();
        later(&timer, &c);
        assert_eq!(timer.pending(), 0);
        timer.shutdown();
    }

    #[test]
    fn a_saturated_fixed_rate_interval_does_not_panic_the_timer() {
        let (timer, _threads) = timer();
        let (tx, rx) = std::sync::mpsc::channel();
        let job = Job::Repeat {
            run: Box::new(move || tx.send(()).is_ok()),
            interval: Duration::MAX,
            fixed_rate: true,
        };
        assert!(
            timer
                .schedule(Instant::now(), job, Cancellable::new().flag())
                .is_ok()
        );
        rx.recv_timeout(Duration::from_secs(10)).unwrap();
        // Re-armed for "never", not panicked: still there, and nothing more runs.
        let deadline = Instant::now() + Duration::from_secs(10);
        while timer.pending() != 1 && Instant::now() < deadline {
            std::thread::yield_now();
        }
        assert_eq!(timer.pending(), 1);
        assert!(rx.recv_timeout(Duration::from_millis(50)).is_err());
        timer.shutdown();
    }
}
