//! What `Source::actor_ref` does with each element: the direct push, the
//! buffer, the overflow strategy and the draining completion, as a plain
//! state machine (the stage feeds it; the loom models drive it too).

use std::collections::VecDeque;

use crate::overflow::{offer, upfront_capacity};
use crate::{OverflowStrategy, StreamError};

/// What became of an arriving element.
#[derive(Debug, PartialEq)]
pub(crate) enum Arrival<T> {
    /// Push it now (the buffer was empty and downstream had pulled).
    Push(T),
    /// It waits in the buffer.
    Buffered,
    /// `count` elements were dropped; `element` is the arriving one when
    /// it was among them.
    Dropped { count: usize, element: Option<T> },
    /// `OverflowStrategy::Fail` with a full buffer.
    Failed(StreamError),
}

pub(crate) struct ElementBuffer<T> {
    buffer: VecDeque<T>,
    capacity: usize,
    strategy: OverflowStrategy,
    /// A draining completion arrived: complete once the buffer is empty.
    completing: bool,
}

impl<T> ElementBuffer<T> {
    pub(crate) fn new(capacity: usize, strategy: OverflowStrategy) -> Self {
        Self {
            buffer: VecDeque::with_capacity(upfront_capacity(capacity)),
            capacity,
            strategy,
            completing: false,
        }
    }

    /// An element arrived; `demand`: downstream has pulled.
    pub(crate) fn on_element(&mut self, element: T, demand: bool) -> Arrival<T> {
        if self.completing {
            return Arrival::Dropped {
                count: 1,
                element: Some(element),
            };
        }
        if self.buffer.is_empty() && demand {
            return Arrival::Push(element);
        }
        if self.capacity == 0 {
            return Arrival::Dropped {
                count: 1,
                element: Some(element),
            };
        }
        match offer(&mut self.buffer, self.capacity, self.strategy, element) {
            Ok(0) => Arrival::Buffered,
            Ok(count) => Arrival::Dropped {
                count,
                element: None,
            },
            Err(error) => Arrival::Failed(error),
        }
    }

    /// Nothing buffered and no completion pending: an arriving element
    /// with demand is pushed as it is.
    pub(crate) fn is_idle(&self) -> bool {
        self.buffer.is_empty() && !self.completing
    }

    /// Downstream pulled: the element to push, and whether to complete
    /// after it.
    pub(crate) fn on_pull(&mut self) -> (Option<T>, bool) {
        let next = self.buffer.pop_front();
        (next, self.completing && self.buffer.is_empty())
    }

    /// A draining completion: whether to complete now (nothing buffered).
    pub(crate) fn on_drain(&mut self) -> bool {
        self.completing = true;
        self.buffer.is_empty()
    }

    /// Empty the buffer (an immediate completion, or the stage stopped);
    /// how many elements it held.
    pub(crate) fn discard(&mut self) -> usize {
        let n = self.buffer.len();
        self.buffer.clear();
        n
    }
}
