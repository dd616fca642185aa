//! Fusion before interpretation.
//!
//! Simple element-wise operators (map, filter, filter_map, inspect, take,
//! take_while, skip, skip_while) are [`Step`] functions. Consecutive ones
//! compose into one step, which runs as one stage; after an iterator
//! source they become batch adapters of the source itself (each operator
//! closure inlined into its adapter's loop: one indirect call per operator
//! per batch). A sink
//! that folds over elements is a [`Consumer`]; attached to an iterator
//! source it drives the iterator in a loop, so `range -> map -> filter ->
//! fold` runs as one stage with no port traffic per element. Every fused
//! form keeps the semantics of the unfused stages: elements are produced
//! only on demand, in order, and a panic fails the stream naming the
//! fused stage.
//!
//! This module holds the fused forms and the type-erased node kinds that
//! build them (`nodes`); which form runs where is decided by the planner
//! (`crate::plan`), never by a constructor. A sink that runs a fused
//! source itself gets it as a [`Pull`] (`pull`).

mod batch_op;
mod consumer;
mod fan_in;
mod iter;
mod step;
mod task;

mod nodes;
mod pull;

pub(crate) use batch_op::{BatchOp, adapt, step_adapter};
pub(crate) use consumer::{Consumer, ConsumerFactory, Drained, HostsConsumer};
pub(crate) use fan_in::FusedFanIn;
pub(crate) use fan_in::{FanInNode, Uniform, UniformFanIn, ZipFanIn};
pub(crate) use iter::{BoxChunks, Chunks, Fill, IterAdapter, IterFactory, PollChunks, leaf};
pub(crate) use nodes::{
    ConsumerNode, FlattenNode, FoldNode, FoldSlot, FusedConsumer, FusedIter, HeadFactory, HostNode,
    Hosting, IterNode, PullNode, PullSink, SimpleOp, SplitNode, StepNode, any_leads,
};
pub use pull::{Pull, Pulled};
pub(crate) use pull::{PullFactory, PullResult};
pub(crate) use step::{Step, StepFactory};
pub(crate) use task::TaskStage;
