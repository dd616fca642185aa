//! NATS connectors, remote actors and stream refs (feature `nats`):
//! JetStream pull consumers and publishers, core NATS subscribe and
//! publish, actors of other processes over core NATS with reliable
//! delivery between them, and streams across processes, on a tokio
//! runtime through `async-nats`.
//!
//! Every item here is also re-exported at the crate root
//! (`weir_interop::NatsSource` is `weir_interop::nats::NatsSource`).
//!
//! # Connecting
//!
//! A [`Nats`] is an `async_nats::Client` and the tokio runtime that drives
//! it; every connector and [`RemoteActorSystem`] takes one.
//!
//! # Sources and sinks
//!
//! Every connector polls its async-nats futures and streams on the stage's
//! own island with a waker that wakes the island (the mechanism of
//! [`Source::from_stream`](crate::SourceFromStream::from_stream) and
//! [`Tcp`](crate::Tcp)), entering the runtime's context while it polls so
//! that async-nats can start its timers; the connection itself is driven by
//! the client's task on that runtime. A connector fails its stream with a
//! [`NatsError`].
//!
//! - [`NatsSource::jetstream`]: a demand-driven pull consumer of
//!   [`Committable`] messages, acked by [`NatsSink::ack`] (at-least-once);
//!   [`NatsSource::jetstream_auto_ack`] acks on receipt (at-most-once).
//!   [`JetStreamSettings`] names the stream and sizes the pulls.
//! - [`NatsSink::jetstream_publish`]: publishes and waits for JetStream's
//!   acks with a bounded number in flight.
//! - [`NatsSource::subscribe`] / [`NatsSink::publish`]: core NATS, with
//!   dropped messages counted ([`DroppedCount`]).
//!
//! ```no_run
//! use async_nats::jetstream::consumer::pull;
//! use weir_interop::nats::{JetStreamSettings, Nats, NatsSink, NatsSource};
//! use weir_streams::prelude::*;
//!
//! let runtime = tokio::runtime::Runtime::new().unwrap();
//! let nats = Nats::connect(runtime.handle(), "nats://127.0.0.1:4222").unwrap();
//! let system = weir_actor::ActorSystem::new("orders").unwrap();
//! let materializer = Materializer::new(&system);
//! let config = pull::Config { durable_name: Some("worker".into()), ..Default::default() };
//! // Pull, handle and ack: what is not acked is redelivered (at-least-once).
//! let acked = NatsSource::jetstream(&config, &JetStreamSettings::new(&nats, "ORDERS"))
//!     .map(|msg| msg.map(|m| m.payload.len()))
//!     .take(100)
//!     .run_with(NatsSink::ack(32).unwrap(), &materializer);
//! assert_eq!(acked.wait().unwrap(), 100);
//! ```
//!
//! # Remote actors
//!
//! [`RemoteActorSystem`] serves actors of a local system to other
//! processes and resolves theirs as [`RemoteRef`]s.
//!
//! - Subjects: the actor `weir+nats://<system>/user/<a>/<b>` is reached on
//!   `weir.<system>.user.<a>.<b>`; each system serves all of its exposed
//!   actors through one subscription on `weir.<system>.user.>`, so a
//!   message for a path it does not serve is seen and reported.
//! - Messages are serde types encoded with postcard, in an envelope that
//!   names the Rust type: the receiver checks it against the exposed
//!   actor's type.
//! - Back-pressure: core NATS has none, so every [`RemoteRef`] keeps a
//!   window of tells in flight ([`RemoteSettings`]); the receiving system
//!   returns credit in batches once the actor's mailbox has taken the
//!   tells. An actor with a bounded mailbox
//!   ([`Props::with_bounded_mailbox`](weir_actor::Props::with_bounded_mailbox))
//!   takes a tell only when it has room, that is when it has processed an
//!   earlier one, so a slow actor holds its senders' windows shut; an
//!   unbounded mailbox takes everything at once. Tells beyond the window
//!   wait in a bounded outbox; beyond that they are dead letters
//!   (`DeadLetterReason::Dropped`) and counted ([`RemoteRef::dropped`]).
//! - Failures on the receiving side are dead letters with a reason there
//!   (`NoMatch` for an unknown path, `WrongMessageType`, `Undeliverable`
//!   for a payload that does not decode; see [`RemoteLetter`]) and typed
//!   errors for an ask ([`RemoteAskError`]); never a panic.
//! - Death watch: every system publishes heartbeats on its actor system's
//!   scheduler and a notice when an exposed actor stops;
//!   [`RemoteRef::watch`] turns them into a [`RemoteTerminated`], timing
//!   out on the watching system's clock.
//!
//! [`RemoteActorSystem`]'s own docs show a server and a client.
//!
//! # Reliable delivery
//!
//! [`ReliableProducer`] and [`ReliableConsumer`] carry the messages of one
//! actor to an actor of another process at least once, as Akka's reliable
//! delivery (`ProducerController` / `ConsumerController`) does, over remote
//! actor tells (so a message type is a serde type, checked by name). A
//! pair is point to point: each side is a controller actor exposed at a
//! path and started with the other's URI.
//!
//! - Flow control: the consumer tells the producer how far beyond its
//!   confirmations it may send ([`ReliableSettings::window`]); the
//!   producing actor is told a [`RequestNext`] each time it may send one
//!   more message, so it never runs further ahead than the consumer asks.
//! - Sequence numbers and confirmations: the producer numbers each message
//!   and keeps it until it is confirmed; the consuming actor gets it as a
//!   [`Delivery`] and confirms it ([`Delivery::confirm`], in order). The
//!   consumer reports its confirmations and its demand every `window / 4`
//!   confirmations and every resend interval.
//! - Repair: the producer resends what is unconfirmed when no confirmation
//!   came for [`ReliableSettings::resend_after`], and all of it when a new
//!   consumer incarnation (a restarted process) asks. The consumer hands
//!   messages over in sequence order, drops those it already handed over
//!   (duplicates, by sequence number), asks again from the first it misses
//!   after a gap, and hands over again a delivery left unconfirmed for a
//!   whole interval.
//! - Restarts: a restarted consumer starts after what the producer has
//!   confirmed. The producer's unconfirmed messages live in its process
//!   ([`ReliableProducer::start`]: a restart of it starts a new numbering
//!   and loses them), or in a JetStream stream
//!   ([`ReliableProducer::start_durable`]: a message is sent once stored;
//!   a restarted producer resends what was unconfirmed and continues the
//!   numbering, which [`RequestNext::next_seq`] tells the producing actor).
//!
//! # Stream refs
//!
//! [`StreamRefs`] runs one back-pressured stream across two processes
//! (Akka's StreamRefs), on a [`RemoteActorSystem`]'s connection.
//! [`StreamRefs::source_ref`] is a `Sink` that materializes a
//! [`SourceRef`]; [`StreamRefs::sink_ref`] a `Source` that materializes a
//! [`SinkRef`]. A ref is a serde value (send it in a remote actor
//! message); another process runs it with [`SourceRef::source`] or
//! [`SinkRef::sink`].
//!
//! - Pairing: the end that made the ref listens on the subject the ref
//!   names; the end that runs it asks to pair. A ref runs once: another
//!   run is refused ([`StreamRefError::AlreadyRun`]), and so is a run
//!   with another element type. A ref not run within the subscription
//!   time-out fails the side that made it
//!   ([`StreamRefError::SubscriptionTimeout`]).
//! - Back-pressure: the consuming end grants credit for a window of
//!   elements past what its stream has taken ([`StreamRefs::window`]), so
//!   the producer never runs further ahead than that.
//! - Order: elements carry sequence numbers; a gap fails the stream
//!   ([`StreamRefError::SequenceGap`]), never silently.
//! - Completion, failure (with its message) and cancellation (with its
//!   cause) travel both ways; elements that arrived before a completion
//!   or a failure are delivered first.
//! - Liveness: each end says something at least once per heartbeat
//!   interval of the remote system's [`RemoteSettings`] (a keep-alive when
//!   idle) and fails with [`StreamRefError::Unreachable`] after the
//!   heartbeat time-out of silence: the other process died, or the
//!   connection stayed down. A server restart shorter than that is
//!   survived (async-nats reconnects and resubscribes) or, if frames were
//!   lost, fails typed; a lost demand or last frame is sent again. These
//!   keep-alives run on the tokio runtime, measured on its clock, so an
//!   island kept busy by user code never makes its end look dead (the
//!   subscription time-out is the actor system's clock's).
//!
//! # Delivery guarantees
//!
//! | Mechanism | Guarantee | Order | Flow control | What it survives; loss is |
//! |---|---|---|---|---|
//! | Remote tell ([`RemoteRef::tell`]) | At most once: a tell in flight when the receiving process or the connection goes is lost; a tell that finds the outbox full is a dead letter here, counted | Per sender and destination | Credit window per destination, then a bounded outbox | Nothing: a restarted receiver gets only what is sent after it subscribed |
//! | Reliable delivery ([`ReliableProducer`] / [`ReliableConsumer`]) | At least once: every message is handed over until confirmed; the consumer drops duplicates by sequence number, so the consuming actor sees a message twice only when the consumer restarted before its confirmation reached the producer, or left it unconfirmed for a resend interval | Sequence order | The consumer's window, as [`RequestNext`] | Consumer restarts; producer restarts with [`ReliableProducer::start_durable`] (JetStream) |
//! | Stream ref ([`SourceRef`], [`SinkRef`]) | At most once, never silent: a lost element fails the stream | In order (sequence numbers) | Credit window of the consuming stream | Server restarts shorter than the heartbeat time-out; otherwise the stream fails typed: [`StreamRefError::SequenceGap`] or [`StreamRefError::Unreachable`] |
//! | JetStream ([`NatsSource::jetstream`] + [`NatsSink::ack`]) | At least once: what is not acked is redelivered after the consumer's AckWait ([`NatsSource::jetstream_auto_ack`]: at most once) | Stream order; redeliveries come later | Pulls sized by downstream demand; bounded publishes in flight | Restarts of either side, and of the server with file storage |

mod committable;
mod core;
mod jetstream;
mod jetstream_context;
mod reliable;
mod remote;
mod stream_refs;

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::runtime::Handle;

pub use self::committable::Committable;
use self::core::SlowConsumers;
pub use self::core::{DroppedCount, Subscription};
pub use self::jetstream::JetStreamSettings;
pub use self::jetstream_context::AckContext;
pub use self::reliable::{
    ConfirmTo, Delivery, ReliableConsumer, ReliableError, ReliableProducer, ReliableSettings,
    RequestNext,
};
pub use self::remote::{
    RemoteActorSystem, RemoteAskError, RemoteError, RemoteFailure, RemoteLetter, RemoteRef,
    RemoteSettings, RemoteTerminated, TerminationReason,
};
pub use self::stream_refs::{SinkRef, SourceRef, StreamRefError, StreamRefs};

/// The error type async-nats reports with.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A NATS connection as the connectors use it: an `async_nats::Client`
/// and the tokio runtime that drives it.
///
/// Connected with [`connect`](Self::connect) or
/// [`connect_with`](Self::connect_with), it also listens to the client's
/// slow-consumer events, so that messages the client itself drops for a
/// [`NatsSource::subscribe`] source are counted in that source's
/// [`DroppedCount`]. A client wrapped with [`new`](Self::new) does not
/// report them (async-nats gives its events only to the callback set
/// when connecting).
///
/// # Examples
///
/// ```no_run
/// let runtime = tokio::runtime::Runtime::new().unwrap();
/// let nats = weir_interop::Nats::connect(runtime.handle(), "nats://127.0.0.1:4222").unwrap();
/// assert!(nats.client().server_info().max_payload > 0);
/// ```
#[derive(Clone, Debug)]
pub struct Nats {
    handle: Handle,
    client: async_nats::Client,
    slow_consumers: SlowConsumers,
}

impl Nats {
    /// Wrap a client connected on `handle`'s runtime. Slow-consumer drops
    /// of the client are not seen (see the type's docs).
    pub fn new(handle: &Handle, client: async_nats::Client) -> Self {
        Self {
            handle: handle.clone(),
            client,
            slow_consumers: SlowConsumers::default(),
        }
    }

    /// Connect to `url` on `handle`'s runtime, blocking the calling thread
    /// until connected (call it outside the runtime).
    ///
    /// # Errors
    ///
    /// [`NatsError::Connect`] when the server cannot be reached.
    pub fn connect(handle: &Handle, url: &str) -> Result<Self, NatsError> {
        Self::connect_with(handle, url, async_nats::ConnectOptions::new())
    }

    /// [`connect`](Self::connect) with `options`. The options' event
    /// callback is replaced by one that counts slow-consumer drops (and
    /// ignores the other events).
    ///
    /// # Errors
    ///
    /// [`NatsError::Connect`] when the server cannot be reached.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// let runtime = tokio::runtime::Runtime::new().unwrap();
    /// let options = async_nats::ConnectOptions::new().subscription_capacity(1024);
    /// let nats = weir_interop::Nats::connect_with(runtime.handle(), "nats://127.0.0.1:4222", options)
    ///     .unwrap();
    /// # drop(nats);
    /// ```
    pub fn connect_with(
        handle: &Handle,
        url: &str,
        options: async_nats::ConnectOptions,
    ) -> Result<Self, NatsError> {
        let slow_consumers = SlowConsumers::default();
        let events = slow_consumers.clone();
        let options = options.event_callback(move |event| {
            if let async_nats::Event::SlowConsumer(sid) = event {
                events.dropped(sid);
            }
            std::future::ready(())
        });
        let client = handle
            .block_on(options.connect(url))
            .map_err(|error| NatsError::Connect {
                url: url.to_owned(),
                source: Box::new(error),
            })?;
        Ok(Self {
            handle: handle.clone(),
            client,
            slow_consumers,
        })
    }
    /// The client.
    pub fn client(&self) -> &async_nats::Client {
        &self.client
    }

    /// The runtime the client runs on.
    pub fn handle(&self) -> &Handle {
        &self.handle
    }

    /// A JetStream context on this connection (it starts a task on the
    /// runtime).
    pub fn jetstream(&self) -> async_nats::jetstream::Context {
        let _runtime = self.handle.enter();
        async_nats::jetstream::new(self.client.clone())
    }
}

/// Sources that read from NATS: JetStream pull consumers and core NATS
/// subscriptions (see the [`nats` module docs](crate::nats) for the overview).
#[derive(Debug)]
#[non_exhaustive]
pub struct NatsSource;

/// Sinks that write to NATS: acks, JetStream publishing and core NATS
/// publishing (see the [`nats` module docs](crate::nats) for the overview).
#[derive(Debug)]
#[non_exhaustive]
pub struct NatsSink;

/// Why a NATS connector failed; streams fail with it as
/// `StreamError::custom(NatsError)`.
#[derive(Debug)]
#[non_exhaustive]
pub enum NatsError {
    /// Connecting to the server failed.
    Connect {
        /// The server's URL.
        url: String,
        /// What async-nats reported.
        source: BoxError,
    },
    /// The stream or the consumer could not be found or created.
    Consumer {
        /// The JetStream stream.
        stream: String,
        /// What async-nats reported.
        source: BoxError,
    },
    /// A pull request failed, or the server answered one with an error
    /// status other than a time-out.
    Fetch {
        /// The JetStream stream.
        stream: String,
        /// What async-nats reported.
        source: BoxError,
    },
    /// An ack could not be sent.
    Ack {
        /// What async-nats reported.
        source: BoxError,
    },
    /// A publish failed or JetStream rejected it (no stream for the
    /// subject, a limit, a time-out waiting for its ack).
    Publish {
        /// The subject published to.
        subject: String,
        /// What async-nats reported.
        source: BoxError,
    },
    /// Subscribing failed.
    Subscribe {
        /// The subject subscribed to.
        subject: String,
        /// What async-nats reported.
        source: BoxError,
    },
    /// The server did not take or confirm a publish in time (it is
    /// unreachable, or too slow to keep up): the client's buffer stayed
    /// full, or the final flush went unconfirmed, for `after`.
    TimedOut {
        /// The subject of the publish that waited; `None` for the flush.
        subject: Option<String>,
        /// The time-out that passed.
        after: Duration,
    },
}

impl NatsError {
    /// The subject a publish or subscribe failed on, if any.
    pub fn subject(&self) -> Option<&str> {
        match self {
            Self::Publish { subject, .. } | Self::Subscribe { subject, .. } => Some(subject),
            Self::TimedOut { subject, .. } => subject.as_deref(),
            _ => None,
        }
    }
}

impl fmt::Display for NatsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Connect { url, source } => write!(f, "nats: cannot connect to {url}: {source}"),
            Self::Consumer { stream, source } => {
                write!(f, "nats: no consumer on stream {stream}: {source}")
            }
            Self::Fetch { stream, source } => {
                write!(f, "nats: pulling from stream {stream} failed: {source}")
            }
            Self::Ack { source } => write!(f, "nats: ack failed: {source}"),
            Self::Publish { subject, source } => {
                write!(f, "nats: publish to {subject} failed: {source}")
            }
            Self::Subscribe { subject, source } => {
                write!(f, "nats: subscribe to {subject} failed: {source}")
            }
            Self::TimedOut {
                subject: Some(subject),
                after,
            } => write!(
                f,
                "nats: publish to {subject} found no room in the client's buffer in {after:?}"
            ),
            Self::TimedOut {
                subject: None,
                after,
            } => write!(f, "nats: the server did not confirm a flush in {after:?}"),
        }
    }
}

impl std::error::Error for NatsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Connect { source, .. }
            | Self::Consumer { source, .. }
            | Self::Fetch { source, .. }
            | Self::Ack { source }
            | Self::Publish { source, .. }
            | Self::Subscribe { source, .. } => Some(&**source),
            Self::TimedOut { .. } => None,
        }
    }
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// A future polled inside `handle`'s runtime context, wherever it is
/// polled from (async-nats starts tokio timers when first polled).
struct InRuntime<T> {
    handle: Handle,
    future: BoxFuture<T>,
}

impl<T> InRuntime<T> {
    fn new(handle: &Handle, future: impl Future<Output = T> + Send + 'static) -> Self {
        Self {
            handle: handle.clone(),
            future: Box::pin(future),
        }
    }
}

impl<T> Future for InRuntime<T> {
    type Output = T;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let this = &mut *self;
        let _runtime = this.handle.enter();
        this.future.as_mut().poll(cx)
    }
}
