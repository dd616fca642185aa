//! The queue the routees of a balancing pool share (module docs of
//! `mailbox`, "Balancing").

use std::collections::VecDeque;

use crate::sync::Mutex;

/// Messages for whichever routee of a balancing pool is free first.
#[derive(Debug)]
pub(crate) struct BalanceQueue<U> {
    queue: Mutex<VecDeque<U>>,
}

impl<U> Default for BalanceQueue<U> {
    fn default() -> Self {
        Self {
            queue: Mutex::new(VecDeque::new()),
        }
    }
}

impl<U> BalanceQueue<U> {
    pub(crate) fn push(&self, msg: U) {
        self.queue.lock().push_back(msg);
    }

    pub(crate) fn pop(&self) -> Option<U> {
        self.queue.lock().pop_front()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.queue.lock().is_empty()
    }

    /// Take everything queued (the pool has stopped).
    pub(crate) fn drain(&self) -> VecDeque<U> {
        std::mem::take(&mut *self.queue.lock())
    }
}
