//! What a fan-in junction offers the planner's fan-in rule, and what its
//! fused forms share.

use std::sync::Arc;

use super::super::iter::IterFactory;
use super::super::nodes::{FusedIter, IterNode};

/// A junction that can run fused iterator inputs as one fused iterator.
pub(crate) trait FanInNode: Send + Sync {
    /// The junction over `inputs` (one per inlet, in port order).
    fn fuse(&self, inputs: &[Arc<dyn IterNode>]) -> Arc<dyn IterNode>;
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

/// Rounds of asking its inputs one fill may take when they make fewer
/// elements than asked (a filter inside): bounded, so that inputs that
/// reject everything still let the fill return (and the island yield).
pub(super) const ROUNDS: usize = 8;
