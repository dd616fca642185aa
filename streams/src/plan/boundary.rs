//! How the planner cuts a graph at an async boundary: a factory per
//! element type makes the boundary's two halves.

use std::any::Any;
use std::sync::Arc;

use crate::fusion::{ConsumerNode, IterNode};
use crate::stage::{GraphStageLogic, SlotKind};

/// One half of an async boundary, ready to be placed in its island.
pub(crate) struct Half {
    pub(crate) logic: Box<dyn GraphStageLogic>,
    pub(crate) name: Arc<str>,
    pub(crate) ports: (u16, u16),
    pub(crate) slot: Option<SlotKind>,
    /// The materialized values of the stages fused into this half.
    pub(crate) mats: Vec<Box<dyn Any + Send>>,
}

/// Makes the two halves of an async boundary for one element type.
pub(crate) trait BoundaryFactory: Send + Sync {
    /// The upstream half (the end of the upstream island) and the
    /// downstream half (the start of the downstream island), with the
    /// planner's fused source in the one and fused sink in the other.
    fn create(
        &self,
        buffer: usize,
        source: Option<(&dyn IterNode, &Arc<str>)>,
        sink: Option<(&dyn ConsumerNode, &Arc<str>)>,
    ) -> (Half, Half);

    /// A boundary whose downstream half is relayed into the next
    /// boundary: its upstream half, and its downstream end as the leaf of
    /// a fused source for the next boundary's upstream half.
    fn create_relay(
        &self,
        buffer: usize,
        source: Option<(&dyn IterNode, &Arc<str>)>,
    ) -> (Half, Arc<dyn IterNode>);
}
