//! The timer thread: a deadline heap behind a mutex and a condition variable.
//!
//! The thread sleeps until the earliest deadline (or until something earlier
//! is scheduled), runs what is due outside the lock, and re-arms periodic
//! jobs. Cancelled entries are skipped when they come due (lazy deletion).
//! Jobs run on this thread and must be short; a panicking job is caught and
//! the thread goes on.

use std::cmp::Ordering as CmpOrdering;
use std::collections::BinaryHeap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

use crate::dispatcher::Threads;
use crate::sync::{Arc, AtomicBool, Condvar, Mutex, Ordering};

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
    cancelled: Arc<AtomicBool>,
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
    state: Mutex<State>,
    wake: Condvar,
}

impl TimerThread {
    pub(crate) fn start(name: String, registry: &Arc<Threads>) -> std::io::Result<Arc<Self>> {
        let timer = Arc::new(Self {
            state: Mutex::new(State {
                heap: BinaryHeap::new(),
                next_seq: 0,
                shutdown: false,
            }),
            wake: Condvar::new(),
        });
        let me = timer.clone();
        registry.spawn(name, move || me.work())?;
        Ok(timer)
    }

    /// Run `job` at `at` unless `cancelled` is set by then. Gives the job
    /// back when the timer thread has shut down.
    pub(crate) fn schedule(&self, at: Instant, job: Job, cancelled: Arc<AtomicBool>) -> Result<(), Job> {
        let mut state = self.state.lock();
        if state.shutdown {
            return Err(job);
        }
        let seq = state.next_seq;
        state.next_seq += 1;
        let earliest = state.heap.peek().is_none_or(|e| at < e.at);
        state.heap.push(Entry { at, seq, job, cancelled });
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
            std::mem::take(&mut state.heap)
        };
        drop(pending); // outside the lock: dropping a job may drop actor refs
        self.wake.notify_one();
    }

    fn work(&self) {
        let mut state = self.state.lock();
        loop {
            if state.shutdown {
                return;
            }
            let now = Instant::now();
            match state.heap.peek().map(|e| e.at) {
                Some(at) if at <= now => {
                    let entry = state.heap.pop().expect("peeked entry");
                    drop(state);
                    let again = run(entry, now);
                    state = self.state.lock();
                    if let Some(entry) = again {
                        let seq = state.next_seq;
                        state.next_seq += 1;
                        state.heap.push(Entry { seq, ..entry });
                    }
                }
                Some(at) => state = self.state.wait_timeout(&self.wake, state, at - now),
                None => state = self.state.wait(&self.wake, state),
            }
        }
    }
}

/// Run a due entry; a periodic one comes back with its next deadline.
fn run(entry: Entry, now: Instant) -> Option<Entry> {
    if entry.cancelled.load(Ordering::Acquire) {
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
            if !keep || entry.cancelled.load(Ordering::Acquire) {
                return None;
            }
            let at = if fixed_rate { entry.at + interval } else { Instant::now().max(now) + interval };
            Some(Entry {
                at,
                seq: 0,
                job: Job::Repeat { run, interval, fixed_rate },
                cancelled: entry.cancelled,
            })
        }
    }
}
