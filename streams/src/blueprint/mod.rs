//! Blueprints: [`Source`], [`Flow`], [`Sink`], [`RunnableGraph`] and [`Keep`].

mod describe;
mod flow;
mod keep;
mod runnable;
mod sink;
mod source;

pub use describe::{Driver, IslandDescription, PlanDescription, StageDescription, StageKind};
pub use flow::Flow;
pub(crate) use flow::simple_flow;
pub use keep::Keep;
pub use runnable::RunnableGraph;
pub use sink::Sink;
pub use source::Source;
