//! Custom stages: the public path to writing your own operator.
//!
//! A stage is a [`GraphStage`] (blueprint: shape, name, `create_logic`)
//! plus a [`GraphStageLogic`] (running state and handlers). Handlers get a
//! [`StageContext`] to push, pull, grab, complete, fail, cancel, emit, set
//! keyed timers and make [`AsyncCallback`]s.

mod attributes;
mod context;
mod logic;
mod ports;
mod slot;
mod stage_actor;
mod supervision;

pub use crate::interpreter::MatContext;
pub(crate) use attributes::Name;
pub use attributes::{
    Attributes, DEFAULT_INPUT_BUFFER, DEFAULT_SUBSCRIPTION_TIMEOUT, LogLevels,
    SubscriptionTimeoutMode, upfront_capacity,
};
pub(crate) use context::make_callback;
pub use context::{AsyncCallback, Port, StageContext, TimerKey};
pub use logic::{GraphStage, GraphStageLogic, StageResult};
pub use ports::{
    BidiShape, ClosedShape, FanInShape2, FanOutShape2, FlowShape, InPort, Inlet, OutPort, Outlet,
    Shape, SinkShape, SlotKind, SourceShape, UniformFanInShape, UniformFanOutShape,
};
pub use ports::{FanInShape3, FanInShape4, FanInShape5, FanInShapeN};
pub(crate) use slot::Slot;
pub use stage_actor::{StageActor, StageActorMessage};
pub(crate) use stage_actor::{actor_name_for, make_stage_actor, name_chars};
pub(crate) use supervision::supervised;
pub use supervision::{Directive, SupervisionStrategy};
