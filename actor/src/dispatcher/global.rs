//! The pool's shared FIFO queue.
//!
//! A mutex-guarded `VecDeque` with an atomic length rather than crossbeam's
//! `Injector`: the injector allocates a block per 63 pushes, which made a
//! busy actor that yields every `throughput` messages allocate; the deque
//! keeps its capacity, so a warm pool allocates nothing.

use std::collections::VecDeque;

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

    pub(crate) fn is_empty(&self) -> bool {
        self.len.load(Ordering::SeqCst) == 0
    }
}
