//! What a fan-in junction offers the planner's fan-in rule, and what its
//! fused forms share.

use std::sync::Arc;
use std::task::Context;

use crate::error::StreamError;

use super::super::iter::{Chunks, Fill, IterFactory};
use super::super::nodes::{FusedIter, IterNode};

/// A junction that can run fused iterator inputs as one fused iterator.
pub(crate) trait FanInNode: Send + Sync {
    fn as_any(&self) -> &dyn std::any::Any;

    /// The junction over `inputs` (one per inlet, in port order).
    fn fuse(&self, inputs: &[Arc<dyn IterNode>]) -> Arc<dyn IterNode>;

    /// Whether this junction over the inputs of `inner` (an input of it
    /// that is the fused `inner` junction, with no operator between) in
    /// place of `inner` is the same stream: a concat of a concat, a merge
    /// of a merge. The planner then makes one wide fused junction of the
    /// two, so a chain of thousands (`Source::combine`, a fold of
    /// `concat`s) is one level deep, not one level per junction.
    fn splices(&self, inner: &dyn FanInNode) -> bool {
        let _ = inner;
        false
    }
}

/// What a junction stage offers the planner's fan-in rule (see
/// [`GraphStage::fused_fan_in`](crate::stage::GraphStage::fused_fan_in)).
#[doc(hidden)]
pub struct FusedFanIn(pub(crate) Arc<dyn FanInNode>);

impl FusedFanIn {
    pub(crate) fn new(node: impl FanInNode + 'static) -> Self {
        Self(Arc::new(node))
    }
}

impl std::fmt::Debug for FusedFanIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FusedFanIn")
    }
}

/// The typed factories of `inputs`, all of elements `T`.
pub(super) fn factories<T: Send + 'static>(inputs: &[Arc<dyn IterNode>]) -> Vec<IterFactory<T>> {
    inputs.iter().map(|i| FusedIter::<T>::of(&**i)).collect()
}

/// A fused fan-in that ends with its last element: a fill that leaves
/// every input it still waits for ended (known without making an element,
/// [`Chunks::is_exhausted`]) says [`Fill::Exhausted`], not
/// [`Fill::More`]. A fan-in's fill returns as soon as it has made what
/// was asked, often before it has asked a finished input again (a merge
/// serves `range(1..=4)` its last turn and never asks `empty()`; a concat
/// moves past its first input only on the next fill); without this, a
/// subscriber asking for exactly the elements there are would see the
/// completion only on one more request, unlike the unfused junction
/// (which completes when its last input does, as leaves do, see
/// [`IterChunks`](super::super::iter::IterChunks)).
pub(super) struct EndsWithLast<C>(pub(super) C);

impl<T, C: Chunks<T>> Chunks<T> for EndsWithLast<C> {
    fn fill(&mut self, cx: &mut Context<'_>, out: &mut Vec<T>, max: usize) -> Fill {
        match self.0.fill(cx, out, max) {
            Fill::More if self.0.is_exhausted() => Fill::Exhausted,
            other => other,
        }
    }

    fn prime(&mut self, cx: &mut Context<'_>) -> Option<Fill> {
        self.0.prime(cx)
    }

    fn is_exhausted(&self) -> bool {
        self.0.is_exhausted()
    }

    fn at_least(&self) -> usize {
        self.0.at_least()
    }

    fn cancel(&mut self, cause: &StreamError) {
        self.0.cancel(cause);
    }
}
