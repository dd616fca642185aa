//! Graphs beyond a straight line: the [`GraphBuilder`] (Akka's GraphDSL in
//! Rust terms), the fan-in and fan-out junctions, and their fluent forms
//! ([`JunctionOps`]).
//!
//! Junctions are ordinary stages with multi-port shapes
//! ([`UniformFanInShape`](crate::stage::UniformFanInShape),
//! [`FanInShape2`](crate::stage::FanInShape2) ..
//! [`FanInShape5`](crate::stage::FanInShape5),
//! [`UniformFanOutShape`](crate::stage::UniformFanOutShape),
//! [`FanOutShape2`](crate::stage::FanOutShape2)); a custom multi-port
//! stage is written the same way and added with [`GraphBuilder::add`].
//! A protocol layer ([`BidiFlow`](crate::BidiFlow)) is added with
//! [`GraphBuilder::bidi`] and its four ports ([`BidiPorts`]) connect like
//! any others.
//! Whatever the graph, the planner fuses what it can and cuts islands at
//! async boundaries when it runs.

mod bidi;
pub(crate) mod bidi_flow;
mod bidi_idle_timeout;
mod builder;
mod flow_zip;
mod fluent;
mod fluent_mat;
mod junctions;

pub use bidi::BidiPorts;
pub use builder::{GraphBuilder, In, MatKey, Mats, Out, StagePorts};
pub use flow_zip::ZipSources;
pub use fluent::JunctionOps;
pub use junctions::{
    Balance, Broadcast, Concat, Interleave, Merge, MergePreferred, MergePrioritized, MergeSorted,
    OrElse, Partition, PartitionOutOfRange, Unzip, UnzipWith, WireTap, Zip, ZipLatest,
    ZipLatestWith, ZipN, ZipWith, ZipWith3, ZipWith4, ZipWith5, ZipWithN,
};
