//! The system's timer thread: one thread, a deadline heap, no busy ticking.
//!
//! The thread sleeps on a condition variable until the earliest deadline (or
//! forever when nothing is scheduled), so armed timers far in the future cost
//! no CPU. Jobs run on the timer thread and must be short (a `tell`).

use std::cmp::Ordering as CmpOrdering;
use std::collections::BinaryHeap;
use std::time::{Duration, Instant};

use crate::dispatcher::Threads;
use crate::sync::{Arc, Condvar, Mutex};

type Job = Box<dyn FnOnce() + Send>;

struct Entry {
    at: Instant,
    seq: u64,
    job: Job,
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

pub(crate) struct Scheduler {
    state: Mutex<State>,
    wake: Condvar,
}

impl Scheduler {
    pub(crate) fn start(name: String, registry: &Arc<Threads>) -> std::io::Result<Arc<Self>> {
        let scheduler = Arc::new(Self {
            state: Mutex::new(State {
                heap: BinaryHeap::new(),
                next_seq: 0,
                shutdown: false,
            }),
            wake: Condvar::new(),
        });
        let me = scheduler.clone();
        registry.spawn(name, move || me.work())?;
        Ok(scheduler)
    }

    /// Run `job` on the timer thread after `delay`. Gives the job back when
    /// the scheduler has shut down.
    pub(crate) fn schedule_once(&self, delay: Duration, job: Job) -> Result<(), Job> {
        let mut state = self.state.lock();
        if state.shutdown {
            return Err(job);
        }
        let seq = state.next_seq;
        state.next_seq += 1;
        let at = Instant::now() + delay;
        let earliest = state.heap.peek().is_none_or(|e| at < e.at);
        state.heap.push(Entry { at, seq, job });
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
                    (entry.job)();
                    state = self.state.lock();
                }
                Some(at) => state = self.state.wait_timeout(&self.wake, state, at - now),
                None => state = self.state.wait(&self.wake, state),
            }
        }
    }
}
