//! [`ReliableError`]: why starting a reliable producer or consumer failed.

use std::fmt;

use crate::nats::{NatsError, RemoteError};

/// Why a reliable producer or consumer could not start.
///
/// # Examples
///
/// ```no_run
/// use std::time::Duration;
/// use weir_actor::{Actor, ActorSystem, Context, Props};
/// use weir_interop::nats::{Delivery, Nats, ReliableConsumer, ReliableError, ReliableSettings, RemoteActorSystem, RemoteSettings};
///
/// struct Ignore;
/// impl Actor for Ignore {
///     type Msg = Delivery<u64>;
///     fn receive(&mut self, _: &mut Context<Self>, d: Delivery<u64>) { d.confirm(); }
/// }
///
/// let runtime = tokio::runtime::Runtime::new().unwrap();
/// let nats = Nats::connect(runtime.handle(), "nats://127.0.0.1:4222").unwrap();
/// let system = ActorSystem::new("consumer").unwrap();
/// let remote = RemoteActorSystem::start(&system, &nats, RemoteSettings::default()).unwrap();
/// let ignore = system.spawn(Props::new(|| Ignore), "ignore").unwrap();
/// let zero = ReliableSettings::default().resend_after(Duration::ZERO);
/// let started = ReliableConsumer::start(&remote, "numbers", "weir+nats://producer/user/numbers", &ignore, zero);
/// assert!(matches!(started, Err(ReliableError::InvalidSettings(_))));
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum ReliableError {
    /// Exposing the controller or resolving the other side failed (an
    /// invalid path or URI, a path already taken).
    Remote(RemoteError),
    /// The controller actor could not be spawned (a bad or taken name,
    /// the system is terminating).
    System(String),
    /// The settings cannot apply.
    InvalidSettings(String),
    /// The JetStream stream of a durable producer could not be created or
    /// read.
    Store(NatsError),
}

impl fmt::Display for ReliableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Remote(error) => write!(f, "reliable delivery: {error}"),
            Self::System(error) => {
                write!(f, "reliable delivery: the actor system refused: {error}")
            }
            Self::InvalidSettings(why) => write!(f, "reliable delivery: invalid settings: {why}"),
            Self::Store(error) => write!(f, "reliable delivery: durable queue: {error}"),
        }
    }
}

impl std::error::Error for ReliableError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Remote(error) => Some(error),
            Self::Store(error) => Some(error),
            _ => None,
        }
    }
}

impl From<RemoteError> for ReliableError {
    fn from(error: RemoteError) -> Self {
        Self::Remote(error)
    }
}
