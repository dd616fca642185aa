//! The calling-thread dispatcher: an actor runs on the thread that sends to
//! it, before `tell` returns. For deterministic tests, not for production.
//!
//! Runs are trampolined through a thread-local queue: a run that schedules
//! another calling-thread actor (or itself, after yielding) queues it, and
//! the outermost call drains the queue. The stack never grows with a chain
//! of sends, and an actor is never entered twice (its run token already
//! prevents that).

use std::cell::RefCell;
use std::collections::VecDeque;

use super::Task;

thread_local! {
    /// `Some` while this thread is draining calling-thread runs.
    static QUEUE: RefCell<Option<VecDeque<Task>>> = const { RefCell::new(None) };
}

/// Run `task` now, or after the run in progress on this thread.
pub(crate) fn submit(task: Task) {
    let queued = QUEUE.with(|q| match q.borrow_mut().as_mut() {
        Some(queue) => {
            queue.push_back(task.clone());
            true
        }
        None => false,
    });
    if queued {
        return;
    }
    QUEUE.with(|q| *q.borrow_mut() = Some(VecDeque::new()));
    let mut next = Some(task);
    while let Some(task) = next {
        task.run();
        next = QUEUE.with(|q| q.borrow_mut().as_mut().and_then(VecDeque::pop_front));
    }
    QUEUE.with(|q| *q.borrow_mut() = None);
}
