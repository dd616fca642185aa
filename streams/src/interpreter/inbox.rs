//! The state of an island's inbox (see `super::task`): its messages, the
//! `notified` flag and the task's waker, kept under one lock by the
//! inbox. Generic over the message, so the loom model below runs without
//! the interpreter.

use std::collections::VecDeque;
use std::task::Waker;

/// The state under the inbox's lock.
pub(crate) struct Queue<M> {
    pub(crate) messages: VecDeque<M>,
    /// A wake-up is on its way (or the first poll is): no need for another.
    pub(crate) notified: bool,
    /// The island has finished: nothing more is taken.
    closed: bool,
    /// The task's waker, from its first poll until the island ends.
    waker: Option<Waker>,
}

impl<M> Queue<M> {
    pub(crate) fn new() -> Self {
        Self {
            messages: VecDeque::new(),
            notified: true,
            closed: false,
            waker: None,
        }
    }

    /// Queue `msg`; the waker to wake the task with, if the caller must.
    /// `Err` once closed.
    pub(crate) fn push(&mut self, msg: M) -> Result<Option<Waker>, M> {
        if self.closed {
            return Err(msg);
        }
        self.messages.push_back(msg);
        if std::mem::replace(&mut self.notified, true) {
            return Ok(None);
        }
        Ok(self.waker.clone())
    }

    /// A turn of the task woken by `waker` takes every message into
    /// `batch`, behind what is left there (an empty batch is swapped in,
    /// so both queues keep their allocations); later ones wake the task
    /// again.
    pub(crate) fn take(&mut self, batch: &mut VecDeque<M>, waker: &Waker) {
        self.notified = false;
        if !self.waker.as_ref().is_some_and(|w| w.will_wake(waker)) {
            self.waker = Some(waker.clone());
        }
        if batch.is_empty() {
            std::mem::swap(&mut self.messages, batch);
        } else {
            batch.append(&mut self.messages);
        }
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.closed
    }

    /// Close for good; what was left, and the waker (dropped by the
    /// caller, outside the lock).
    pub(crate) fn close(&mut self) -> (VecDeque<M>, Option<Waker>) {
        self.closed = true;
        (std::mem::take(&mut self.messages), self.waker.take())
    }
}

#[cfg(all(test, loom))]
mod loom_models {
    use std::collections::VecDeque;

    use loom::sync::Arc;
    use loom::sync::atomic::{AtomicUsize, Ordering};
    use loom::thread;

    use super::Queue;
    use crate::sync::Mutex;

    /// Two senders deliver while the task takes its first turn: every
    /// message is either taken by the turn or left with a wake-up issued
    /// after it was queued (so another turn will come); no message is
    /// stranded, a batch costs one wake-up, and a closed inbox takes
    /// nothing more.
    #[test]
    fn no_message_is_stranded() {
        loom::model(|| {
            let queue = Arc::new(Mutex::new(Queue::<u32>::new()));
            let wakes = Arc::new(AtomicUsize::new(0));
            let senders: Vec<_> = (0..2u32)
                .map(|n| {
                    let (queue, wakes) = (queue.clone(), wakes.clone());
                    thread::spawn(move || {
                        let waker = queue.lock().push(n).expect("open");
                        if let Some(waker) = waker {
                            waker.wake();
                            wakes.fetch_add(1, Ordering::SeqCst);
                        }
                    })
                })
                .collect();
            // The first turn (the task was queued for it when spawned).
            let mut batch = VecDeque::new();
            queue.lock().take(&mut batch, std::task::Waker::noop());
            let first = batch.len();
            for sender in senders {
                sender.join().unwrap();
            }
            let mut state = queue.lock();
            let left = state.messages.len();
            assert_eq!(first + left, 2, "every message is taken or waiting");
            if left > 0 {
                assert!(state.notified, "a wake-up is on its way");
                assert_eq!(wakes.load(Ordering::SeqCst), 1, "one wake-up per batch");
            } else {
                assert_eq!(wakes.load(Ordering::SeqCst), 0, "none needed");
            }
            let _ = state.close();
            assert!(state.push(9).is_err(), "closed");
        });
    }
}
