//! Hubs: attach producers and consumers to a stream while it runs.
//!
//! - [`MergeHub`]: a source whose materialized [`Sink`](crate::Sink) any
//!   number of producers run; each is back-pressured on its own buffer.
//! - [`BroadcastHub`]: a sink whose materialized [`Source`](crate::Source)
//!   any number of consumers run; each sees every element from the moment
//!   it attached, and the slowest sets the pace.
//! - [`PartitionHub`]: like `BroadcastHub`, but a partitioner picks one
//!   consumer per element (a stateful one sees each consumer's queue,
//!   [`ConsumerInfo`]).
//!
//! Every producer or consumer that attaches is joined to the hub by its
//! own hand-over ([`crate::handover`]): credit-bounded, batched, and
//! waking the other side with an async callback. Attaching goes through a
//! small registry (`hub/registry.rs`, with a loom model).

mod broadcast;
mod consumer;
mod consumer_info;
mod merge;
mod merge_gate;
mod partition;
pub(crate) mod registry;

pub use broadcast::BroadcastHub;
pub use consumer_info::ConsumerInfo;
pub use merge::{DrainingControl, MergeHub};
pub use partition::PartitionHub;

use crate::handover::{Consumer, Producer};
use crate::stage::AsyncCallback;

/// A hand-over end whose both sides are islands.
type Out<T> = Producer<T, AsyncCallback<()>, AsyncCallback<()>>;
type In<T> = Consumer<T, AsyncCallback<()>, AsyncCallback<()>>;
