//! Weir streams: back-pressured stream processing on Weir's actors, in the
//! model of Akka Streams.
//!
//! - Blueprints are values: a [`Source`] emits elements, a [`Flow`]
//!   transforms them, a [`Sink`] takes them; `via` / `to` connect them
//!   into a [`RunnableGraph`], and [`Keep`] picks the materialized value.
//!   Nothing runs until a blueprint is run with a [`Materializer`], and a
//!   blueprint can be run any number of times.
//! - The operators live on [`FlowOps`], [`AsyncOps`], [`SubstreamOps`],
//!   [`TimeOps`], [`RateOps`], [`StatefulOps`] and [`ErrorOps`] (bring them
//!   in with the [`prelude`]).
//! - A run is a graph of stages. Stages between async boundaries are
//!   fused into one island, run as one task of the actor system's pool; an interpreter moves
//!   elements through typed per-connection slots, with no allocation per
//!   element. Simple operators are fused further, before interpretation;
//!   a graph that fuses into one loop (an iterator source, simple
//!   operators, a folding sink) runs as a task of the pool, with no actor.
//! - Custom stages are a public path: see [`stage`].
//! - Byte streams on `bytes::Bytes` live in [`io`]: framing, files,
//!   `std::io` readers and writers, compression; IO stages run on a
//!   thread of their own ([`Attributes::blocking`]).
//! - Every sink reports how the stream ended through a [`Completion`]
//!   (a future, and a blocking `wait`), with a [`StreamError`] naming
//!   the stage a failure started in.
//! - Actors meet streams without a hop: [`Source::actor_ref`] hands out an
//!   `ActorRef` whose messages go straight into the stage (pushed at once
//!   when the buffer is empty and downstream has pulled), usable the
//!   moment `run` returns; [`Source::queue`] gives a bounded queue handle;
//!   a stage can have its own actor (`StageContext::stage_actor`);
//!   [`Sink::actor_ref`] and the ack-protocol variants feed actors.
//!
//! # Examples
//!
//! ```
//! use weir_streams::prelude::*;
//!
//! let system = weir_actor::ActorSystem::new("tour").unwrap();
//! let materializer = Materializer::new(&system);
//!
//! let evens_squared = Source::range(1u64..=10)
//!     .filter(|x| x % 2 == 0)
//!     .map(|x| x * x)
//!     .run_with(Sink::collect(), &materializer);
//! assert_eq!(evens_squared.wait(), Ok(vec![4, 16, 36, 64, 100]));
//!
//! // The same pipeline across two islands (two actors).
//! let sum = Source::range(1u64..=1000)
//!     .map(|x| x * 2)
//!     .async_boundary()
//!     .run_with(Sink::fold(0, |a, x| a + x), &materializer);
//! assert_eq!(sum.wait(), Ok(1_001_000));
//!
//! // An actor reference feeding a stream.
//! let (feed, doubled) = Source::actor_ref(8, OverflowStrategy::DropHead)
//!     .unwrap()
//!     .map(|x: u32| x * 2)
//!     .to_mat(Sink::collect(), Keep::both)
//!     .run(&materializer);
//! let actor = feed.actor_ref().clone(); // an ActorRef<u32>, usable from any thread
//! actor.tell(1u32);
//! actor.tell(2u32);
//! feed.complete(); // after what was sent before
//! assert_eq!(doubled.wait(), Ok(vec![2, 4]));
//!
//! system.terminate().wait().unwrap();
//! ```

#![warn(missing_docs)]
// Under loom only the protocols with loom models (the inbox, the stage
// lifecycle, the hand-over, the kill-switch registry) and what they
// need are built.
#![cfg_attr(loom, allow(dead_code, unused_imports))]

mod error;
pub mod handover;
mod overflow;
mod sync;
mod tuning;

#[cfg(not(loom))]
pub use error::MaterializeError;
pub use error::{ArgumentError, Cancellation, ErrorKind, GraphError, StreamError, TimeoutKind};
pub use overflow::OverflowStrategy;

#[cfg(loom)]
mod actor {
    pub(crate) mod buffered;
    pub(crate) mod inbox;
}

#[cfg(loom)]
mod interpreter {
    pub(crate) mod inbox;
}

#[cfg(loom)]
mod hub {
    pub(crate) mod registry;
}

#[cfg(loom)]
mod kill_switch {
    pub(crate) mod registry;
}

macro_rules! runtime_modules {
    ($($item:item)*) => { $( #[cfg(not(loom))] $item )* };
}

// The runtime needs weir-actor's system, which loom builds do not have.
runtime_modules! {
    mod actor;
    mod blueprint;
    mod completion;
    mod fusion;
    pub mod graph;
    mod hub;
    mod interpreter;
    pub mod io;
    mod kill_switch;
    mod materializer;
    mod ops;
    mod plan;
    mod queue;
    mod running;
    pub mod snapshot;
    pub mod stage;
    #[cfg(feature = "testkit")]
    pub mod testkit;

    pub use actor::{ActorRefSource, WithAck};
    pub use blueprint::{
        Driver, Flow, IslandDescription, Keep, PlanDescription, RunnableGraph, Sink, Source, StageDescription, StageKind,
    };
    pub use graph::bidi_flow::BidiFlow;
    pub use completion::{Completer, Completion};
    pub use hub::{BroadcastHub, ConsumerInfo, DrainingControl, MergeHub, PartitionHub};
    pub use kill_switch::{KillSwitches, SharedKillSwitch, UniqueKillSwitch};
    pub use materializer::{Materializer, MaterializerBuilder};
    pub use error::SnapshotError;
    pub use snapshot::{PendingSnapshot, StreamSnapshot};
    pub use ops::{
        AsyncOps, ContextOps, DelayOverflowStrategy, ErrorOps, FlowWithContext, SourceWithContext, FlowMonitor, FlowOps, MonitorState, RateOps, RestartFlow, RestartSettings, RestartSink,
        RestartSource, Restarts, RetryFlow, StatefulOps, SubFlow, SubstreamCancelStrategy, SubstreamOps, ThrottleMode, TickHandle, TimeOps,
    };
    pub use fusion::{Pull, Pulled};
    pub use queue::{QueueOfferResult, QueueSendError, SendFuture, SourceQueue};
    pub use stage::{
        Attributes, Directive, LogLevels, SubscriptionTimeoutMode, SupervisionStrategy,
    };
}

/// The names a stream program needs: `use weir_streams::prelude::*;`.
#[cfg(not(loom))]
pub mod prelude {
    pub use crate::graph::JunctionOps;
    pub use crate::{
        AsyncOps, Completion, ErrorOps, Flow, FlowOps, Keep, Materializer, OverflowStrategy,
        RateOps, RunnableGraph, Sink, Source, StatefulOps, StreamError, SubstreamOps, TimeOps,
    };
}
