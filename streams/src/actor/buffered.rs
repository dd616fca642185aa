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
    /// Nothing to push: it waits in the buffer, or it was dropped, and
    /// buffered ones may have been dropped to make room (each drop handed
    /// to the caller's `dropped`).
    Handled,
    /// `OverflowStrategy::Fail` with a full buffer (the arriving element
    /// was handed to `dropped`).
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

    /// An element arrived; `demand`: downstream has pulled. Every
    /// element this drops (the arriving one, or buffered ones the overflow
    /// strategy makes room from) goes to `dropped`.
    pub(crate) fn on_element(
        &mut self,
        element: T,
        demand: bool,
        mut dropped: impl FnMut(T),
    ) -> Arrival<T> {
        if self.completing {
            dropped(element);
            return Arrival::Handled;
        }
        if self.buffer.is_empty() && demand {
            return Arrival::Push(element);
        }
        if self.capacity == 0 {
            // No buffer: an element without demand is dropped, whatever
            // the strategy (as in Akka).
            dropped(element);
            return Arrival::Handled;
        }
        match offer(
            &mut self.buffer,
            self.capacity,
            self.strategy,
            element,
            dropped,
        ) {
            Ok(()) => Arrival::Handled,
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

    /// Empty the buffer (an immediate completion, or the stage stopped):
    /// what it held, oldest first.
    pub(crate) fn discard(&mut self) -> std::collections::vec_deque::Drain<'_, T> {
        self.buffer.drain(..)
    }
}
