//! Custom stages: the public path to writing your own operator.
//!
//! A stage is a [`GraphStage`] (blueprint: shape, name, `create_logic`)
//! plus a [`GraphStageLogic`] (running state and handlers). Handlers get a
//! [`StageContext`] to push, pull, grab, complete, fail, cancel, emit, set
//! keyed timers and make [`AsyncCallback`]s.
//!
//! # Cancellation causes
//!
//! A cancel carries a [`Cancellation`](crate::Cancellation), as Pekko's
//! `cancel(in, cause)` does: [`StageContext::cancel`] is a normal cancel
//! (`NoMoreElementsNeeded`), a stage that fails (a handler's `Err`, a
//! panic, [`StageContext::fail_stage`]) cancels its inlets with the
//! failure, and [`StageContext::cancel_with`] names a cause. Upstream
//! reads it with [`StageContext::cancellation`] in `on_downstream_finish`,
//! whose default passes it on ([`StageContext::cancel_stage`]); the
//! junctions pass on the cause of the cancel that stops them, async
//! boundaries carry it to the upstream island, and fused forms give the
//! same cause as unfused. Sources report a failure cause in their
//! materialized values: `FileIO::from_path`'s count,
//! `Source::queue`'s offers and sends (`Failure` / `Failed`), and
//! `Flow::watch_termination` (and `Flow::monitor`). The cause is made
//! only when a port is cancelled: nothing per element.
//!
//! Where Weir still differs from Pekko:
//! - No `CancellationStrategy` attribute: a stage stopped by a cancel
//!   completes its other outlets (Pekko's default, `PropagateFailure`,
//!   fails them when the cause is a failure), and there is no
//!   `AfterDelay`.
//! - Only two causes: there is no separate `StageWasCompleted` (a stage
//!   that completes cancels its inlets with `NoMoreElementsNeeded`).
//! - Stages that own inner streams (flattening, substreams, hubs,
//!   `prefix_and_tail`, the restart stages, `recover_with`'s inner source)
//!   cancel those inner streams without a cause; a fused fan-in (merge,
//!   zip, concat run as one loop) drops its inputs without one.

mod attributes;
mod callback;
mod context;
pub(crate) mod core;
mod erased;
mod island_msg;
mod island_ref;
mod logic;
mod ports;
mod slot;
mod stage_actor;
mod supervision;

pub(crate) use attributes::Name;
pub use attributes::{
    Attributes, DEFAULT_INPUT_BUFFER, DEFAULT_SUBSCRIPTION_TIMEOUT, LogLevels,
    SubscriptionTimeoutMode, upfront_capacity,
};
pub use callback::AsyncCallback;
pub(crate) use callback::make_callback;
pub use context::{Port, StageContext, TimerKey};
pub use erased::MatContext;
pub(crate) use erased::{ErasedStage, stage_attributes};
pub(crate) use island_msg::IslandMsg;
#[cfg(test)]
pub(crate) use island_ref::Closed;
pub(crate) use island_ref::{Forward, Inbox, IslandRef, island_path, refuse as refuse_message};
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
