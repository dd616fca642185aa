//! Remote actors over core NATS: [`RemoteActorSystem`] serves actors of a
//! local system to other processes and resolves theirs as [`RemoteRef`]s.
//!
//! - Subjects: the actor `weir+nats://<system>/user/<a>/<b>` is reached on
//!   `weir.<system>.user.<a>.<b>`; each system serves all of its exposed
//!   actors through one subscription on `weir.<system>.user.>`, so a
//!   message for a path it does not serve is seen and reported.
//! - Messages are serde types encoded with postcard, in an envelope that
//!   names the Rust type: the receiver checks it against the exposed
//!   actor's type.
//! - Back-pressure: core NATS has none, so every [`RemoteRef`] keeps a
//!   window of tells in flight; the receiving system returns credit in
//!   batches once the tells are in the actor's mailbox. Tells beyond the
//!   window wait in a bounded outbox; beyond that they are dead letters
//!   (`DeadLetterReason::Dropped`) and counted ([`RemoteRef::dropped`]).
//! - Failures on the receiving side are dead letters with a reason there
//!   (`NoMatch` for an unknown path, `WrongMessageType`, `Undeliverable`
//!   for a payload that does not decode) and typed errors for an ask
//!   ([`RemoteAskError`]); never a panic.
//! - Death watch: every system publishes heartbeats and a notice when an
//!   exposed actor stops; [`RemoteRef::watch`] turns them into a
//!   [`RemoteTerminated`].

mod remote_ref;
mod wire;

use std::any::type_name;
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_nats::{Subject, Subscriber};
use bytes::Bytes;
use futures_core::Stream;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use tokio::task::AbortHandle;
use weir_actor::{ActorPath, ActorRef, ActorSystem, DeadLetterReason, FunctionRef};

use super::{BoxError, Nats, NatsError};
pub use remote_ref::{RemoteAskError, RemoteRef, RemoteTerminated, TerminationReason};
use wire::{Envelope, Reply};

/// How remote tells, credit and heartbeats behave.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use weir_interop::RemoteSettings;
///
/// let settings = RemoteSettings::default()
///     .window(128)
///     .outbox(1_000)
///     .heartbeat(Duration::from_millis(200), Duration::from_secs(2));
/// assert_eq!(settings.window_size(), 128);
/// ```
#[derive(Debug, Clone)]
pub struct RemoteSettings {
    window: u32,
    outbox: usize,
    heartbeat_interval: Duration,
    heartbeat_timeout: Duration,
}

impl Default for RemoteSettings {
    /// A window of 256 tells per destination, an outbox of 10,000, a
    /// heartbeat every second, unreachable after 5 s without one.
    fn default() -> Self {
        Self {
            window: 256,
            outbox: 10_000,
            heartbeat_interval: Duration::from_secs(1),
            heartbeat_timeout: Duration::from_secs(5),
        }
    }
}

impl RemoteSettings {
    /// Tells in flight per destination before the sender waits for credit
    /// (at least 1). The receiver returns credit every `window / 4` tells.
    #[must_use]
    pub fn window(mut self, window: u32) -> Self {
        self.window = window.max(1);
        self
    }

    /// Tells a destination may hold waiting for credit before further
    /// tells become dead letters.
    #[must_use]
    pub fn outbox(mut self, outbox: usize) -> Self {
        self.outbox = outbox;
        self
    }

    /// Publish a heartbeat every `interval`; a watched system that sends
    /// none for `timeout` is taken for dead.
    #[must_use]
    pub fn heartbeat(mut self, interval: Duration, timeout: Duration) -> Self {
        self.heartbeat_interval = interval;
        self.heartbeat_timeout = timeout;
        self
    }

    /// The window.
    pub fn window_size(&self) -> u32 {
        self.window
    }

    fn credit_batch(&self) -> u32 {
        (self.window / 4).max(1)
    }
}

/// Why a remote message was refused by the receiving system (an ask's
/// error, and the reason of the dead letter published there).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum RemoteFailure {
    /// No actor is exposed at this path.
    UnknownPath(String),
    /// The actor takes another message type.
    WrongType {
        /// The type the exposed actor takes.
        expected: String,
        /// The type that was sent.
        got: String,
    },
    /// The payload did not decode.
    Undecodable(String),
    /// The actor did not answer the ask (it stopped, or timed out).
    NoAnswer(String),
    /// The actor is exposed for tells, not asks (or the reverse).
    WrongKind(String),
}

impl fmt::Display for RemoteFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownPath(path) => write!(f, "no actor exposed at /user/{path}"),
            Self::WrongType { expected, got } => {
                write!(f, "the actor takes {expected}, not {got}")
            }
            Self::Undecodable(error) => write!(f, "the message did not decode: {error}"),
            Self::NoAnswer(error) => write!(f, "the actor did not answer: {error}"),
            Self::WrongKind(what) => write!(f, "{what}"),
        }
    }
}

impl std::error::Error for RemoteFailure {}

/// What the receiving system publishes as the dead letter of a remote
/// message it could not deliver.
#[derive(Debug, Clone)]
pub struct RemoteLetter {
    /// The subject it came on.
    pub subject: String,
    /// Why it was not delivered.
    pub failure: RemoteFailure,
    /// The raw payload.
    pub payload: Bytes,
}

/// Why a remote-actor call failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum RemoteError {
    /// Not a `weir+nats://<system>/user/<path>` URI.
    InvalidUri(String),
    /// Another actor is already exposed at this path.
    PathTaken(String),
    /// A message could not be encoded.
    Encode(String),
    /// NATS failed (subscribing, connecting).
    Nats(NatsError),
    /// The local actor system refused (it is terminating).
    System(String),
}

impl fmt::Display for RemoteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidUri(uri) => {
                write!(f, "not a weir+nats://<system>/user/<path> URI: {uri}")
            }
            Self::PathTaken(path) => write!(f, "an actor is already exposed at /user/{path}"),
            Self::Encode(error) => write!(f, "the message did not encode: {error}"),
            Self::Nats(error) => write!(f, "{error}"),
            Self::System(error) => write!(f, "the actor system refused: {error}"),
        }
    }
}

impl std::error::Error for RemoteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Nats(error) => Some(error),
            _ => None,
        }
    }
}

/// An actor system reachable over NATS under its name (see the
/// [module docs](self)). Cheap to clone; the serving tasks stop when the
/// last clone is dropped.
///
/// # Examples
///
/// ```no_run
/// use weir_actor::{Actor, ActorSystem, Context, Props};
/// use weir_interop::{Nats, RemoteActorSystem, RemoteSettings};
///
/// struct Printer;
/// impl Actor for Printer {
///     type Msg = String;
///     fn receive(&mut self, _: &mut Context<Self>, msg: String) { println!("{msg}"); }
/// }
///
/// let runtime = tokio::runtime::Runtime::new().unwrap();
/// let nats = Nats::connect(runtime.handle(), "nats://127.0.0.1:4222").unwrap();
/// let server = ActorSystem::new("server").unwrap();
/// let printer = server.spawn(Props::new(|| Printer), "printer").unwrap();
/// let remote = RemoteActorSystem::start(&server, &nats, RemoteSettings::default()).unwrap();
/// let uri = remote.expose(&printer, "printer").unwrap();
/// assert_eq!(uri, "weir+nats://server/user/printer");
///
/// let client = ActorSystem::new("client").unwrap();
/// let remote_client = RemoteActorSystem::start(&client, &nats, RemoteSettings::default()).unwrap();
/// let printer = remote_client.resolve::<String>(&uri).unwrap();
/// printer.tell("hello".to_string()).unwrap();
/// ```
#[derive(Clone)]
pub struct RemoteActorSystem {
    shared: Arc<Shared>,
    _tasks: Arc<Tasks>,
}

impl fmt::Debug for RemoteActorSystem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteActorSystem")
            .field("name", &self.shared.name)
            .finish_non_exhaustive()
    }
}

/// What the serving tasks share with the handle.
struct Shared {
    system: ActorSystem,
    nats: Nats,
    name: String,
    settings: RemoteSettings,
    exposed: Mutex<HashMap<String, Arc<Entry>>>,
    /// Tasks to abort with the system (watchers, senders).
    tasks: Mutex<Vec<AbortHandle>>,
    undelivered: AtomicU64,
}

struct Entry {
    exposed: Box<dyn Exposed>,
    /// Watches the actor to withdraw it and tell watchers when it stops.
    _watch: FunctionRef<()>,
}

/// Aborts the serving tasks when the last handle goes.
struct Tasks {
    shared: Arc<Shared>,
    own: Vec<AbortHandle>,
}

impl Drop for Tasks {
    fn drop(&mut self) {
        for task in &self.own {
            task.abort();
        }
        for task in self.shared.tasks.lock().expect("not poisoned").drain(..) {
            task.abort();
        }
    }
}

impl RemoteActorSystem {
    /// Serve `system` over `nats` under the system's name: subscribe to
    /// its actors' subjects and start its heartbeats. Blocks until the
    /// server has the subscription (call it outside the runtime).
    ///
    /// # Errors
    ///
    /// [`RemoteError::Nats`] when the subscription fails.
    pub fn start(
        system: &ActorSystem,
        nats: &Nats,
        settings: RemoteSettings,
    ) -> Result<Self, RemoteError> {
        let name = system.name().to_owned();
        let shared = Arc::new(Shared {
            system: system.clone(),
            nats: nats.clone(),
            name: name.clone(),
            settings,
            exposed: Mutex::new(HashMap::new()),
            tasks: Mutex::new(Vec::new()),
            undelivered: AtomicU64::new(0),
        });
        let client = nats.client().clone();
        let subject = wire::user_wildcard(&name);
        let subscriber = nats
            .handle()
            .block_on(async {
                let subscriber = client.subscribe(subject.clone()).await?;
                client.flush().await?;
                Ok::<_, BoxError>(subscriber)
            })
            .map_err(|source| RemoteError::Nats(NatsError::Subscribe { subject, source }))?;
        let serve = nats.handle().spawn(serve(shared.clone(), subscriber));
        let heartbeat = nats.handle().spawn(heartbeat(
            nats.client().clone(),
            wire::heartbeat_subject(&name),
            shared.settings.heartbeat_interval,
        ));
        let tasks = Tasks {
            shared: shared.clone(),
            own: vec![serve.abort_handle(), heartbeat.abort_handle()],
        };
        Ok(Self {
            shared,
            _tasks: Arc::new(tasks),
        })
    }

    /// The name other systems reach this one by (the actor system's).
    pub fn name(&self) -> &str {
        &self.shared.name
    }

    /// Remote messages this system could not deliver (unknown path, wrong
    /// type, undecodable): each is also a dead letter here.
    pub fn undelivered(&self) -> u64 {
        self.shared.undelivered.load(Ordering::Relaxed)
    }

    /// Serve `actor` for remote tells at `/user/<path>` (segments of
    /// letters, digits, `-`, `_`, separated by `/`), and return its URI.
    /// It is withdrawn when the actor stops, and watchers are told.
    ///
    /// # Errors
    ///
    /// [`RemoteError::InvalidUri`] for an invalid path,
    /// [`RemoteError::PathTaken`] when another actor is exposed there.
    pub fn expose<M>(&self, actor: &ActorRef<M>, path: &str) -> Result<String, RemoteError>
    where
        M: DeserializeOwned + Send + 'static,
    {
        self.expose_entry(
            actor,
            path,
            Box::new(Told {
                actor: actor.clone(),
            }),
        )
    }

    /// Serve `actor` for remote asks at `/user/<path>`: a question `Req`
    /// becomes the message `make(question, reply_to)`, and what the actor
    /// tells `reply_to` within `timeout` goes back to the asker.
    ///
    /// # Errors
    ///
    /// As [`expose`](Self::expose).
    pub fn expose_ask<Req, Resp, M, F>(
        &self,
        actor: &ActorRef<M>,
        path: &str,
        timeout: Duration,
        make: F,
    ) -> Result<String, RemoteError>
    where
        Req: DeserializeOwned + Send + 'static,
        Resp: Serialize + Send + 'static,
        M: Send + 'static,
        F: Fn(Req, ActorRef<Resp>) -> M + Clone + Send + Sync + 'static,
    {
        let exposed = Asked {
            actor: actor.clone(),
            make,
            timeout,
            nats: self.shared.nats.clone(),
            _types: std::marker::PhantomData::<fn(Req) -> Resp>,
        };
        self.expose_entry(actor, path, Box::new(exposed))
    }

    fn expose_entry<M: Send + 'static>(
        &self,
        actor: &ActorRef<M>,
        path: &str,
        exposed: Box<dyn Exposed>,
    ) -> Result<String, RemoteError> {
        let uri = format!("{}{}/user/{path}", wire::SCHEME, self.shared.name);
        if wire::parse_uri(&uri).is_none() {
            return Err(RemoteError::InvalidUri(uri));
        }
        let mut exposed_map = self.shared.exposed.lock().expect("not poisoned");
        if exposed_map.contains_key(path) {
            return Err(RemoteError::PathTaken(path.to_owned()));
        }
        let weak = Arc::downgrade(&self.shared);
        let owned_path = path.to_owned();
        let watch_name = format!("remote-watch-{}", path.replace('/', "-"));
        let watch = FunctionRef::with_death_watch(
            &self.shared.system,
            &watch_name,
            |()| Ok(()),
            move |_terminated| {
                let Some(shared) = weak.upgrade() else { return };
                let path = owned_path.clone();
                let subject = wire::down_subject(&shared.name);
                let handle = shared.nats.handle().clone();
                handle.spawn(async move {
                    // Withdrawn off the island that told us (the entry
                    // holds this very watcher).
                    shared.exposed.lock().expect("not poisoned").remove(&path);
                    let client = shared.nats.client();
                    let _ = client
                        .publish(subject, Bytes::from(path.into_bytes()))
                        .await;
                    let _ = client.flush().await;
                });
            },
        )
        .map_err(|error| RemoteError::System(error.to_string()))?;
        watch.watch(actor);
        exposed_map.insert(
            path.to_owned(),
            Arc::new(Entry {
                exposed,
                _watch: watch,
            }),
        );
        Ok(uri)
    }

    /// A reference to the actor at `uri` (`weir+nats://<system>/user/<path>`),
    /// taking messages of type `M`. No round trip: an unknown path shows up
    /// as a dead letter on the receiving side, or as an ask's error.
    ///
    /// # Errors
    ///
    /// [`RemoteError::InvalidUri`] for a malformed URI.
    pub fn resolve<M>(&self, uri: &str) -> Result<RemoteRef<M>, RemoteError>
    where
        M: Serialize + Send + 'static,
    {
        let (system, path) =
            wire::parse_uri(uri).ok_or_else(|| RemoteError::InvalidUri(uri.to_owned()))?;
        Ok(RemoteRef::new(self.shared.clone(), uri, system, path))
    }
}

/// An exposed actor, as the serving task delivers to it.
trait Exposed: Send + Sync {
    fn deliver(&self, envelope: &Envelope<'_>, reply: Option<Subject>)
    -> Result<(), RemoteFailure>;

    fn actor_type(&self) -> &'static str;
}

fn check_type(envelope: &Envelope<'_>, expected: &'static str) -> Result<(), RemoteFailure> {
    if envelope.type_name == expected {
        Ok(())
    } else {
        Err(RemoteFailure::WrongType {
            expected: expected.to_owned(),
            got: envelope.type_name.to_owned(),
        })
    }
}

fn decode<T: DeserializeOwned>(body: &[u8]) -> Result<T, RemoteFailure> {
    postcard::from_bytes(body).map_err(|error| RemoteFailure::Undecodable(error.to_string()))
}

struct Told<M: Send + 'static> {
    actor: ActorRef<M>,
}

impl<M: DeserializeOwned + Send + 'static> Exposed for Told<M> {
    fn deliver(
        &self,
        envelope: &Envelope<'_>,
        reply: Option<Subject>,
    ) -> Result<(), RemoteFailure> {
        check_type(envelope, type_name::<M>())?;
        if reply.is_some() {
            return Err(RemoteFailure::WrongKind(format!(
                "the actor is exposed for tells of {}, not asks",
                type_name::<M>()
            )));
        }
        self.actor.tell(decode::<M>(envelope.body)?);
        Ok(())
    }

    fn actor_type(&self) -> &'static str {
        type_name::<M>()
    }
}

struct Asked<Req, Resp, M: Send + 'static, F> {
    actor: ActorRef<M>,
    make: F,
    timeout: Duration,
    nats: Nats,
    _types: std::marker::PhantomData<fn(Req) -> Resp>,
}

impl<Req, Resp, M, F> Exposed for Asked<Req, Resp, M, F>
where
    Req: DeserializeOwned + Send + 'static,
    Resp: Serialize + Send + 'static,
    M: Send + 'static,
    F: Fn(Req, ActorRef<Resp>) -> M + Clone + Send + Sync + 'static,
{
    fn deliver(
        &self,
        envelope: &Envelope<'_>,
        reply: Option<Subject>,
    ) -> Result<(), RemoteFailure> {
        check_type(envelope, type_name::<Req>())?;
        let Some(reply) = reply else {
            return Err(RemoteFailure::WrongKind(format!(
                "the actor is exposed for asks of {}, not tells",
                type_name::<Req>()
            )));
        };
        let question = decode::<Req>(envelope.body)?;
        let make = self.make.clone();
        let answer = weir_actor::ask(&self.actor, move |r| make(question, r), self.timeout);
        let client = self.nats.client().clone();
        self.nats.handle().spawn(async move {
            let reply_body = match answer.await {
                Ok(answer) => match postcard::to_allocvec(&answer) {
                    Ok(bytes) => Reply::Ok(bytes),
                    Err(error) => Reply::Err(RemoteFailure::NoAnswer(format!(
                        "the answer did not encode: {error}"
                    ))),
                },
                Err(error) => Reply::Err(RemoteFailure::NoAnswer(error.to_string())),
            };
            if let Ok(bytes) = postcard::to_allocvec(&reply_body) {
                let _ = client.publish(reply, bytes.into()).await;
            }
        });
        Ok(())
    }

    fn actor_type(&self) -> &'static str {
        type_name::<M>()
    }
}

/// The serving loop: deliver each message to its exposed actor, return
/// credit in batches, and report what cannot be delivered.
async fn serve(shared: Arc<Shared>, mut subscriber: Subscriber) {
    let prefix = format!("weir.{}.user.", shared.name);
    let client = shared.nats.client().clone();
    let mut credits: HashMap<String, u32> = HashMap::new();
    while let Some(message) =
        std::future::poll_fn(|cx| std::pin::Pin::new(&mut subscriber).poll_next(cx)).await
    {
        let path = message
            .subject
            .strip_prefix(prefix.as_str())
            .unwrap_or_default()
            .replace('.', "/");
        let (outcome, credit_to) = match postcard::from_bytes::<Envelope<'_>>(&message.payload) {
            Err(error) => (
                Err((RemoteFailure::Undecodable(error.to_string()), None)),
                None,
            ),
            Ok(envelope) => {
                let entry = shared
                    .exposed
                    .lock()
                    .expect("not poisoned")
                    .get(&path)
                    .cloned();
                let outcome = match entry {
                    None => Err((RemoteFailure::UnknownPath(path.clone()), None)),
                    Some(entry) => entry
                        .exposed
                        .deliver(&envelope, message.reply.clone())
                        .map_err(|failure| (failure, Some(entry.exposed.actor_type()))),
                };
                let credit = envelope
                    .credit_to
                    .map(|to| (to.to_owned(), envelope.credit_every.max(1)));
                (outcome, credit)
            }
        };
        if let Err((failure, actor_type)) = outcome {
            shared.undelivered.fetch_add(1, Ordering::Relaxed);
            let reason = match (&failure, actor_type) {
                (RemoteFailure::UnknownPath(_), _) => DeadLetterReason::NoMatch,
                (RemoteFailure::WrongType { .. }, Some(actor_type)) => {
                    DeadLetterReason::WrongMessageType { actor_type }
                }
                _ => DeadLetterReason::Undeliverable,
            };
            let recipient = format!("weir://{}/user/{path}", shared.name)
                .parse::<ActorPath>()
                .or_else(|_| format!("weir://{}/user", shared.name).parse::<ActorPath>());
            if let Some(reply) = &message.reply
                && let Ok(bytes) = postcard::to_allocvec(&Reply::Err(failure.clone()))
            {
                let _ = client.publish(reply.clone(), bytes.into()).await;
            }
            if let Ok(recipient) = recipient {
                shared.system.event_stream().publish_dead_letter(
                    &recipient,
                    RemoteLetter {
                        subject: message.subject.to_string(),
                        failure,
                        payload: message.payload.clone(),
                    },
                    reason,
                );
            }
        }
        // Credit for every tell taken off the wire, delivered or not.
        if let Some((credit_to, batch)) = credit_to {
            let count = credits.entry(credit_to.clone()).or_default();
            *count += 1;
            if *count >= batch {
                let n = *count;
                credits.remove(&credit_to);
                let _ = client
                    .publish(credit_to, Bytes::copy_from_slice(&n.to_le_bytes()))
                    .await;
            }
        }
    }
}

async fn heartbeat(client: async_nats::Client, subject: String, interval: Duration) {
    loop {
        let _ = client.publish(subject.clone(), Bytes::new()).await;
        tokio::time::sleep(interval).await;
    }
}
