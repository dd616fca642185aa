//! A substream run directly: when a substream's flow is simple operators
//! (map, filter, take, ...) then a `fold`, and its output merges back, each
//! substream is one [`Consumer`] (the operators fused into the fold, as
//! the planner fuses them into a folding sink) that the splitting stage
//! calls per element: no sub-island, no port and no interpreter event per
//! element. Any other flow runs as a sub-island (`runner`). With fusion
//! off (`MaterializerBuilder::fusion`) every substream runs as a
//! sub-island, so both forms can be compared.
//!
//! The direct form keeps what the sub-island does: the fold (and each
//! operator) honours its supervision strategy; an operator that completes
//! (`take`) cancels the substream's input and the fold emits; the input's
//! completion or failure reaches the fold; a panic fails the stream,
//! naming the fused operators (`map.fold`).

use std::marker::PhantomData;
use std::ops::ControlFlow;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, PoisonError};

use super::runner::Tail;
use crate::blueprint::Flow;
use crate::error::StreamError;
use crate::fusion::{Consumer, ConsumerFactory, FoldSlot, FusedConsumer, StepNode};
use crate::ops::sub_island::{SubIsland, SubPoll};
use crate::plan::graph::{Fuses, Kind};
use crate::stage::IslandMsg;

/// How every substream of one splitting stage runs directly.
pub(crate) struct DirectPlan<T, U> {
    /// The operators fused into the fold, as one consumer of `T`.
    factory: ConsumerFactory<T>,
    /// The fused operators' names, for a panic's error.
    name: Arc<str>,
    _out: PhantomData<fn() -> U>,
}

/// The direct plan for `flow` ending in `tail`, if it has one: `flow` is a
/// chain of simple operators then a `fold`, merged back.
pub(crate) fn plan<T: Send + 'static, U: Send + 'static>(
    flow: &Flow<T, U, ()>,
    tail: &Tail<U>,
) -> Option<Arc<DirectPlan<T, U>>> {
    if !matches!(tail, Tail::Out) {
        return None;
    }
    let graph = &flow.graph;
    let last = u32::try_from(graph.nodes.len().checked_sub(1)?).ok()?;
    // A chain: node k's only outlet into node k + 1's only inlet.
    let chain = graph.inlets[..] == [(0, 0)]
        && graph.outlets[..] == [(last, 0)]
        && graph.edges.len() == last as usize
        && graph
            .edges
            .iter()
            .all(|e| e.from.1 == 0 && e.to.1 == 0 && e.to.0 == e.from.0 + 1);
    if !chain {
        return None;
    }
    let nodes = crate::plan::supervise(&graph.nodes);
    let (fold_node, step_nodes) = nodes.split_last()?;
    let Some(Fuses::Fold(fold)) = &fold_node.fuses else {
        return None;
    };
    let steps: Vec<&Arc<dyn StepNode>> = step_nodes
        .iter()
        .map(|node| match &node.kind {
            Kind::Step(step) => Some(step),
            _ => None,
        })
        .collect::<Option<_>>()?;
    // An operator that leads (`scan`'s seed) has no consumer form.
    if crate::fusion::any_leads(&steps) {
        return None;
    }
    let consumer = steps.iter().rev().fold(
        fold.consumer(&fold_node.full_attributes()),
        |inner, step| step.before_consumer(&*inner),
    );
    let names: Vec<String> = nodes.iter().map(|node| node.name().into_owned()).collect();
    Some(Arc::new(DirectPlan {
        factory: FusedConsumer::<T>::of(&*consumer),
        name: Arc::from(names.join(".")),
        _out: PhantomData,
    }))
}

/// One substream run directly.
pub(crate) struct Direct<T, U> {
    consumer: Box<dyn Consumer<T>>,
    /// Where the fold leaves its result.
    slot: FoldSlot<U>,
    name: Arc<str>,
    /// The consumer wants no more elements (an operator completed): the
    /// substream cancelled its input.
    stopped: bool,
    /// Its input ended (completed or failed).
    closed: bool,
    /// The result was handed out: the next poll completes.
    given: bool,
}

impl<T: Send + 'static, U: Send + 'static> Direct<T, U> {
    pub(crate) fn new(plan: &DirectPlan<T, U>) -> Self {
        let (consumer, value) = (plan.factory)();
        let slot = *value
            .downcast::<FoldSlot<U>>()
            .expect("a fold's consumer materializes the slot of its output type");
        Self {
            consumer,
            slot,
            name: Arc::clone(&plan.name),
            stopped: false,
            closed: false,
            given: false,
        }
    }

    #[inline]
    pub(crate) fn offer(&mut self, element: T) -> Result<(), StreamError> {
        let consumer = &mut self.consumer;
        match catch_unwind(AssertUnwindSafe(|| consumer.on_next(element))) {
            Ok(ControlFlow::Continue(())) => Ok(()),
            Ok(ControlFlow::Break(())) => {
                self.stopped = true;
                Ok(())
            }
            Err(payload) => Err(StreamError::panicked(&*payload).in_stage(&self.name)),
        }
    }

    fn close_input(&mut self, error: Option<StreamError>) {
        if !self.stopped && !self.closed {
            self.consumer.finish(error.map_or(Ok(()), Err));
        }
        self.closed = true;
    }

    #[inline]
    pub(crate) fn wants(&self) -> bool {
        !self.ended()
    }

    fn ended(&self) -> bool {
        self.stopped || self.closed
    }

    fn poll(&mut self) -> SubPoll<U> {
        if !self.ended() {
            return SubPoll::Pending;
        }
        if std::mem::replace(&mut self.given, true) {
            return SubPoll::Completed;
        }
        match self
            .slot
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            Some(Ok(result)) => SubPoll::Ready(result),
            Some(Err(error)) => SubPoll::Failed(error),
            None => SubPoll::Completed,
        }
    }
}

/// How one substream runs: a sub-island, or directly.
pub(crate) enum Body<T, U> {
    Island(SubIsland),
    Direct(Direct<T, U>),
}

impl<T: Send + 'static, U: Send + 'static> Body<T, U> {
    /// Whether polling may give something now (see [`SubIsland::may_give`]).
    pub(crate) fn may_give(&self) -> bool {
        match self {
            Body::Island(runner) => runner.may_give(),
            Body::Direct(direct) => direct.ended(),
        }
    }

    /// Whether the output ended with nothing left to give (see
    /// [`SubIsland::output_ended`]).
    pub(crate) fn output_drained(&self) -> bool {
        match self {
            Body::Island(runner) => runner.output_ended(false),
            Body::Direct(direct) => direct.given,
        }
    }

    /// Whether every stage of the substream has stopped (a direct one
    /// stops with its output).
    pub(crate) fn is_done(&self) -> bool {
        match self {
            Body::Island(runner) => runner.is_done(),
            Body::Direct(direct) => direct.given,
        }
    }

    /// Nobody reads the output any more (see [`SubIsland::cancel_output`]);
    /// a direct substream stops at once.
    pub(crate) fn cancel_output(&mut self) {
        match self {
            Body::Island(runner) => runner.cancel_output(),
            Body::Direct(direct) => {
                direct.stopped = true;
                direct.given = true;
            }
        }
    }

    /// Ask the output for one element ahead of demand (see
    /// [`SubIsland::request`]); a direct substream takes every element
    /// anyway.
    pub(crate) fn request(&mut self) -> Result<(), StreamError> {
        match self {
            Body::Island(runner) => runner.request(),
            Body::Direct(_) => Ok(()),
        }
    }

    /// Whether the substream asks for an element now.
    pub(crate) fn wants(&self) -> bool {
        match self {
            Body::Island(runner) => runner.wants(),
            Body::Direct(direct) => direct.wants(),
        }
    }

    /// Whether the substream cancelled its input.
    pub(crate) fn input_cancelled(&self) -> bool {
        match self {
            Body::Island(runner) => runner.input_cancelled(),
            Body::Direct(direct) => direct.stopped,
        }
    }

    /// Hand `element` in (call when [`wants`](Self::wants)).
    pub(crate) fn offer(&mut self, element: T) -> Result<(), StreamError> {
        match self {
            Body::Island(runner) => runner.offer::<T>(element),
            Body::Direct(direct) => direct.offer(element),
        }
    }

    /// The substream's input completes (or fails).
    pub(crate) fn close_input(&mut self, error: Option<StreamError>) {
        match self {
            Body::Island(runner) => runner.close_input(error),
            Body::Direct(direct) => direct.close_input(error),
        }
    }

    /// The next output element, if any now.
    pub(crate) fn poll(&mut self) -> SubPoll<U> {
        match self {
            Body::Island(runner) => runner.poll::<U>(),
            Body::Direct(direct) => direct.poll(),
        }
    }

    /// Run an async callback or timer of the substream (a direct one has
    /// none).
    pub(crate) fn on_event(&mut self, msg: IslandMsg) {
        if let Body::Island(runner) = self {
            runner.on_message(msg);
        }
    }

    /// Run what waits (after a wake-up).
    pub(crate) fn resume(&mut self) {
        if let Body::Island(runner) = self {
            runner.resume();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Tail, plan};
    use crate::prelude::*;

    #[test]
    fn only_simple_operators_then_a_fold_merged_back_run_directly() {
        let add = |a: u32, x: u32| a + x;
        let direct = Flow::<u32>::new().map(|x| x * 2).filter(|x| x % 3 != 0);
        let planned = plan(&direct.clone().fold(0, add), &Tail::Out).expect("direct");
        assert_eq!(&*planned.name, "map.filter.fold");
        assert!(plan(&Flow::<u32>::new().fold(0, add), &Tail::Out).is_some());
        // An operator the planner does not fuse, no fold, a sink per
        // substream: a sub-island each.
        let scanned = Flow::<u32>::new().scan(0, add).fold(0, add);
        assert!(plan(&scanned, &Tail::Out).is_none());
        assert!(plan(&direct, &Tail::Out).is_none());
        let sink = Tail::To(Sink::<u32, _>::ignore().map_materialized_value(|_| ()));
        assert!(plan(&Flow::<u32>::new().fold(0, add), &sink).is_none());
    }
}
