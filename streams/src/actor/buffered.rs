//! What `Source::actor_ref` does with each element: the direct push, the
//! buffer, the overflow strategy and the draining completion, as a plain
//! state machine (the stage feeds it; the loom models drive it too).

use std::collections::VecDeque;

use crate::error::StreamError;
use crate::overflow::{OverflowStrategy, offer, upfront_capacity};

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

/// [`ElementBuffer`] against a plain model of each overflow strategy:
/// random arrivals (with and without demand), pulls, draining completions
/// and discards; every element is pushed, buffered or dropped exactly once.
#[cfg(all(test, not(loom)))]
mod tests {
    use std::collections::VecDeque;

    use proptest::prelude::*;

    use super::{Arrival, ElementBuffer};
    use crate::overflow::OverflowStrategy;

    #[derive(Debug, Clone)]
    enum Op {
        Arrive { demand: bool },
        Pull,
        Drain,
        Discard,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            6 => any::<bool>().prop_map(|demand| Op::Arrive { demand }),
            3 => Just(Op::Pull),
            1 => Just(Op::Drain),
            1 => Just(Op::Discard),
        ]
    }

    fn strategy() -> impl Strategy<Value = OverflowStrategy> {
        prop_oneof![
            Just(OverflowStrategy::DropHead),
            Just(OverflowStrategy::DropTail),
            Just(OverflowStrategy::DropBuffer),
            Just(OverflowStrategy::DropNew),
            Just(OverflowStrategy::Fail),
        ]
    }

    /// What each strategy does, written from its doc comment.
    #[derive(Debug, Default)]
    struct Model {
        buffered: Vec<u32>,
        completing: bool,
        pushed: Vec<u32>,
        dropped: Vec<u32>,
    }

    impl Model {
        /// `Some(pushed)`, or `None` once the buffer failed.
        fn arrive(
            &mut self,
            x: u32,
            demand: bool,
            capacity: usize,
            strategy: OverflowStrategy,
        ) -> Option<Option<u32>> {
            if self.completing || (capacity == 0 && !demand) {
                self.dropped.push(x);
                return Some(None);
            }
            if self.buffered.is_empty() && demand {
                self.pushed.push(x);
                return Some(Some(x));
            }
            if self.buffered.len() < capacity {
                self.buffered.push(x);
                return Some(None);
            }
            match strategy {
                OverflowStrategy::DropHead => {
                    self.dropped.push(self.buffered.remove(0));
                    self.buffered.push(x);
                }
                OverflowStrategy::DropTail => {
                    self.dropped.push(self.buffered.pop().unwrap());
                    self.buffered.push(x);
                }
                OverflowStrategy::DropBuffer => {
                    self.dropped.append(&mut self.buffered);
                    self.buffered.push(x);
                }
                OverflowStrategy::DropNew => self.dropped.push(x),
                _ => {
                    self.dropped.push(x);
                    return None;
                }
            }
            Some(None)
        }
    }

    proptest! {
        #[test]
        fn element_buffer_follows_the_model(
            capacity in 0usize..5,
            strategy in strategy(),
            ops in proptest::collection::vec(op(), 0..60),
        ) {
            let mut buffer = ElementBuffer::new(capacity, strategy);
            let mut model = Model::default();
            let mut dropped = Vec::new();
            let mut pushed = Vec::new();
            let mut next = 0u32;
            for op in ops {
                match op {
                    Op::Arrive { demand } => {
                        let x = next;
                        next += 1;
                        let arrival = buffer.on_element(x, demand, |d| dropped.push(d));
                        let expected = model.arrive(x, demand, capacity, strategy);
                        match (arrival, expected) {
                            (Arrival::Push(got), Some(Some(want))) => {
                                prop_assert_eq!(got, want);
                                pushed.push(got);
                            }
                            (Arrival::Handled, Some(None)) => {}
                            (Arrival::Failed(_), None) => break,
                            (got, want) => prop_assert!(false, "{:?} where the model says {:?}", got, want),
                        }
                    }
                    Op::Pull => {
                        let (got, complete) = buffer.on_pull();
                        let want = (!model.buffered.is_empty()).then(|| model.buffered.remove(0));
                        prop_assert_eq!(got, want);
                        prop_assert_eq!(complete, model.completing && model.buffered.is_empty());
                        pushed.extend(got);
                        model.pushed.extend(want);
                    }
                    Op::Drain => {
                        model.completing = true;
                        prop_assert_eq!(buffer.on_drain(), model.buffered.is_empty());
                    }
                    Op::Discard => {
                        dropped.extend(buffer.discard());
                        model.dropped.append(&mut model.buffered);
                    }
                }
                prop_assert_eq!(buffer.is_idle(), model.buffered.is_empty() && !model.completing);
                prop_assert!(model.buffered.len() <= capacity);
            }
            prop_assert_eq!(&pushed, &model.pushed);
            prop_assert_eq!(&dropped, &model.dropped);
            // Nothing lost, nothing twice: pushed, dropped or still held.
            let mut all: Vec<u32> = pushed.iter().chain(&dropped).copied().collect();
            all.extend(buffer.discard());
            all.sort_unstable();
            prop_assert_eq!(all, (0..next).collect::<Vec<_>>());
        }
    }

    #[test]
    fn a_full_buffer_drops_what_each_strategy_says() {
        let cases: [(OverflowStrategy, &[u32], &[u32]); 4] = [
            (OverflowStrategy::DropHead, &[1, 2], &[0]),
            (OverflowStrategy::DropTail, &[0, 2], &[1]),
            (OverflowStrategy::DropBuffer, &[2], &[0, 1]),
            (OverflowStrategy::DropNew, &[0, 1], &[2]),
        ];
        for (strategy, kept, lost) in cases {
            let mut buffer = ElementBuffer::new(2, strategy);
            let mut dropped = Vec::new();
            for x in 0..3 {
                assert_eq!(
                    buffer.on_element(x, false, |d| dropped.push(d)),
                    Arrival::Handled
                );
            }
            assert_eq!(
                buffer.discard().collect::<VecDeque<_>>(),
                kept,
                "{strategy:?}"
            );
            assert_eq!(dropped, lost, "{strategy:?}");
        }
    }
}
