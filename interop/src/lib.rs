//! Bridges between Weir streams and async Rust.
//!
//! - [`SourceFromStream::from_stream`]: any `futures::Stream` becomes a
//!   Weir [`Source`](weir_streams::Source). It is polled only when
//!   downstream pulls, and its waker wakes the stream's island (no busy
//!   polling).
//! - [`SinkAsStream::as_stream`]: a Weir sink that materializes a
//!   [`StreamOut`], a `futures::Stream` fed through a small buffer;
//!   dropping it cancels upstream.
//! - [`SinkFromSink::from_sink`]: any `futures::Sink` becomes a Weir sink
//!   (pulls when the sink is ready, flushes when the island is idle,
//!   closes on completion); [`QueueSink`] is a `futures::Sink` face for
//!   `Source::queue`'s handle.
//! - [`SourceFromReceiver::from_receiver`] / [`SinkToSender::to_sender`]:
//!   crossbeam channels in and out, without blocking the island.
//!
//! - `Tcp::outgoing_connection` and `Tcp::bind` (feature `tokio`): TCP
//!   connections on a tokio runtime's reactor as `Flow<Bytes, Bytes>`s.
//! - `TokioContext::tokio_context` (feature `tokio`): an actor system
//!   whose threads run inside a tokio runtime's context, so futures that
//!   need tokio's reactor or timers work in `map_async`, `pipe_to_self`
//!   and `spawn_task` without a manual spawn.
//! - `NatsSource` / `NatsSink` (feature `nats`): NATS JetStream pull
//!   consumers with committable messages, JetStream publishing, and core
//!   NATS subscribe/publish, through async-nats on tokio; and
//!   `RemoteActorSystem`: actors of other processes over core NATS, with
//!   at-least-once delivery between them through `ReliableProducer` and
//!   `ReliableConsumer`; and `StreamRefs`: one back-pressured stream
//!   across two processes. The
//!   `nats` module's docs give the overview; its items are re-exported
//!   here too.
//!
//! Completions (`weir_streams::Completion`) and `ask` handles are already
//! futures that work on any executor.
//!
//! # Examples
//!
//! ```
//! use futures_util::StreamExt;
//! use weir_interop::{SinkAsStream, SourceFromStream};
//! use weir_streams::prelude::*;
//!
//! let system = weir_actor::ActorSystem::new("interop").unwrap();
//! let materializer = Materializer::new(&system);
//! let out = Source::from_stream(futures_util::stream::iter(1..=3u32))
//!     .map(|x| x * 10)
//!     .run_with(Sink::as_stream(), &materializer);
//! let got: Vec<_> = futures_executor::block_on(out.map(Result::unwrap).collect());
//! assert_eq!(got, vec![10, 20, 30]);
//! system.terminate().wait().unwrap();
//! ```

#![warn(missing_docs)]

mod as_stream;
mod channel;
mod from_sink;
mod from_stream;
#[cfg(feature = "nats")]
pub mod nats;
mod sync;
#[cfg(feature = "tokio")]
mod tcp;
#[cfg(feature = "tokio")]
mod tcp_bind;
#[cfg(feature = "tokio")]
mod tcp_write;
#[cfg(feature = "tokio")]
mod tokio_context;

pub use as_stream::{SinkAsStream, StreamOut};
pub use channel::{SinkToSender, SourceFromReceiver};
pub use from_sink::{QueueSink, QueueSinkError, SinkFromSink};
pub use from_stream::SourceFromStream;
#[cfg(feature = "nats")]
pub use nats::{
    AckContext, BoxError, Committable, DroppedCount, JetStreamSettings, Nats, NatsError, NatsSink,
    NatsSource, RemoteActorSystem, RemoteAskError, RemoteError, RemoteFailure, RemoteLetter,
    RemoteRef, RemoteSettings, RemoteTerminated, SinkRef, SourceRef, StreamRefError, StreamRefs,
    Subscription, TerminationReason,
};
#[cfg(feature = "nats")]
pub use nats::{
    ConfirmTo, Delivery, ReliableConsumer, ReliableError, ReliableProducer, ReliableSettings,
    RequestNext,
};
#[cfg(feature = "tokio")]
pub use tcp::{ConnectionSettings, OutgoingConnection, Tcp};
#[cfg(feature = "tokio")]
pub use tcp_bind::{IncomingConnection, ServerBinding};
#[cfg(feature = "tokio")]
pub use tokio_context::TokioContext;
