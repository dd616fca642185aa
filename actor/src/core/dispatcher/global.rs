//! The pool's shared FIFO queue.
//!
//! A mutex-guarded `VecDeque` with an atomic length rather than crossbeam's
//! `Injector`: the injector allocates a block per 63 pushes, which made a
//! busy actor that yields every `throughput` messages allocate; the deque
//! keeps its capacity, so a warm pool allocates nothing.

use std::collections::VecDeque;

use super::idle::Sleepers;
use crate::sync::{AtomicUsize, Mutex, Ordering};

/// Submissions from outside the pool and actors that yielded.
pub(crate) struct GlobalQueue<T> {
    tasks: Mutex<VecDeque<T>>,
    /// Mirrors `tasks.len()`, so idle checks need no lock.
    len: AtomicUsize,
}

impl<T> Default for GlobalQueue<T> {
    fn default() -> Self {
        Self {
            tasks: Mutex::new(VecDeque::new()),
            len: AtomicUsize::new(0),
        }
    }
}

impl<T> GlobalQueue<T> {
    pub(crate) fn push(&self, task: T) {
        let mut tasks = self.tasks.lock();
        tasks.push_back(task);
        self.len.store(tasks.len(), Ordering::SeqCst);
    }

    pub(crate) fn pop(&self) -> Option<T> {
        if self.is_empty() {
            return None;
        }
        let mut tasks = self.tasks.lock();
        let task = tasks.pop_front();
        self.len.store(tasks.len(), Ordering::SeqCst);
        task
    }

    /// [`pop`](Self::pop) for a worker: when more tasks wait behind the one
    /// taken, wake a sleeper for them. A submitter skips its wake-up while
    /// a worker searches (`idle`'s module docs), but a searcher takes one
    /// task: without this, the second of two tasks submitted during one
    /// search would wait for a busy worker however many sleep, and for
    /// ever when the first blocks until the second has run (a handler
    /// waiting on an `ask`).
    pub(crate) fn take(&self, sleepers: &Sleepers) -> Option<T> {
        let task = self.pop()?;
        if !self.is_empty() {
            sleepers.notify_one();
        }
        Some(task)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len.load(Ordering::SeqCst) == 0
    }
}
