//! NATS connectors (feature `nats`): JetStream pull consumers and
//! publishers, core NATS subscribe and publish, on a tokio runtime through
//! `async-nats`.
//!
//! Every connector polls its async-nats futures and streams on the stage's
//! own island with a waker that wakes the island (the mechanism of
//! [`Source::from_stream`](crate::SourceFromStream::from_stream) and
//! [`Tcp`](crate::Tcp)), entering the runtime's context while it polls so
//! that async-nats can start its timers; the connection itself is driven by
//! the client's task on that runtime.
//!
//! - [`NatsSource::jetstream`]: a demand-driven pull consumer of
//!   [`Committable`] messages, acked by [`NatsSink::ack`] (at-least-once);
//!   [`NatsSource::jetstream_auto_ack`] acks on receipt (at-most-once).
//! - [`NatsSink::jetstream_publish`]: publishes and waits for JetStream's
//!   acks with a bounded number in flight.
//! - [`NatsSource::subscribe`] / [`NatsSink::publish`]: core NATS, with
//!   dropped messages counted.

mod core;
mod jetstream;
mod remote;

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::runtime::Handle;

use self::core::SlowConsumers;
pub use self::core::{DroppedCount, Subscription};
pub use self::jetstream::{Committable, JetStreamSettings};
pub use self::remote::{
    RemoteActorSystem, RemoteAskError, RemoteError, RemoteFailure, RemoteLetter, RemoteRef,
    RemoteSettings, RemoteTerminated, TerminationReason,
};

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

/// Sources that read from NATS (see the [module docs](self)).
#[derive(Debug)]
#[non_exhaustive]
pub struct NatsSource;

/// Sinks that write to NATS (see the [module docs](self)).
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
