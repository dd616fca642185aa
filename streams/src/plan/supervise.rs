//! Supervised simple operators: a step whose node carries a
//! [`SupervisionStrategy`] is swapped, at plan time, for a step that runs
//! it under the strategy. Only such nodes pay for a `catch_unwind` per
//! element; every other step is planned exactly as before.
//!
//! The swapped node is still a simple operator, so every fusion rule
//! applies to it (a run of steps, an iterator adapter, a step inside a
//! folding sink) and fused and unfused runs agree: the wrapper sits
//! inside the step, below every fused form. Its iterator adapter pulls one
//! upstream element at a time, as `take_while`'s does, because the
//! wrapped step may complete after any element.

use std::borrow::Cow;
use std::sync::Arc;

use super::graph::{Kind, Node};
use crate::fusion::{SimpleOp, Step, StepFactory, StepNode, step_adapter};
use crate::stage::{Directive, SupervisionStrategy};

/// `nodes`, with each simple operator that has a supervision strategy
/// replaced by its supervised form (borrowed when there is none).
pub(crate) fn supervise(nodes: &[Node]) -> Cow<'_, [Node]> {
    let wanted = |node: &Node| {
        matches!(node.kind, Kind::Step(_)) && node.attributes.supervision_strategy().is_some()
    };
    if !nodes.iter().any(wanted) {
        return Cow::Borrowed(nodes);
    }
    let swapped = nodes
        .iter()
        .map(
            |node| match (&node.kind, node.attributes.supervision_strategy()) {
                (Kind::Step(step), Some(strategy)) => {
                    let mut node = node.clone();
                    node.kind = Kind::Step(step.supervised(strategy));
                    node
                }
                _ => node.clone(),
            },
        )
        .collect();
    Cow::Owned(swapped)
}

impl<I: Send + 'static, O: Send + 'static> SimpleOp<I, O> {
    /// This operator under `strategy`: a panic in its step asks the
    /// decider; `Resume` skips the element, `Restart` skips it and makes
    /// a fresh step (fresh closure clones, fresh counters), `Stop` goes
    /// on unwinding (the stream fails as without a strategy).
    pub(crate) fn supervised_op(&self, strategy: &SupervisionStrategy) -> Arc<dyn StepNode> {
        let (factory, strategy) = (Arc::clone(&self.step), strategy.clone());
        let step: StepFactory<I, O> = Arc::new(move || {
            let (factory, strategy) = (Arc::clone(&factory), strategy.clone());
            let mut inner = factory();
            Box::new(move |element| match strategy.catching(|| inner(element)) {
                Ok(step) => step,
                Err(Directive::Restart) => {
                    inner = factory();
                    Step::Skip
                }
                Err(_) => Step::Skip,
            })
        });
        let adapt = step_adapter(Arc::clone(&step));
        Arc::new(SimpleOp { step, adapt })
    }
}
