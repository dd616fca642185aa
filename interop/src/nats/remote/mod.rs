//! Remote actors over core NATS: [`RemoteActorSystem`]. The overview
//! (subjects, encoding, back-pressure, failures, death watch) is in the
//! public `nats` module's docs, under "Remote actors".
//!
//! Files: `settings` and `error` (the public types), `exposed` (handing a
//! message to an actor, credit), `serve` (the receiving side), `remote_ref`
//! (the sending side), `watch` (heartbeats and death watch), `wire`.

mod error;
mod exposed;
mod remote_ref;
mod serve;
mod settings;
mod watch;
mod wire;

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures_core::Stream;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::task::AbortHandle;
use weir_actor::{ActorRef, ActorSystem, Cancellable, FunctionRef};

use super::{BoxError, Nats, NatsError};
pub use error::{RemoteAskError, RemoteError, RemoteFailure, RemoteLetter};
use exposed::{Asked, Exposed, Told};
pub use remote_ref::RemoteRef;
pub use settings::RemoteSettings;
pub use watch::{RemoteTerminated, TerminationReason};

/// An actor system reachable over NATS under its name (see
/// [remote actors](crate::nats#remote-actors) in the `nats` module docs). Cheap to clone; the serving tasks stop when the
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
    /// The heartbeats heard from watched systems.
    peers: watch::Peers,
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
    heartbeats: Cancellable,
}

impl Drop for Tasks {
    fn drop(&mut self) {
        self.heartbeats.cancel();
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
    /// its actors' subjects and start its heartbeats (on the actor system's
    /// scheduler). Blocks until the server has the subscriptions (call it
    /// outside the runtime).
    ///
    /// # Errors
    ///
    /// [`RemoteError::Nats`] when subscribing fails,
    /// [`RemoteError::System`] when the heartbeats cannot be scheduled (a
    /// zero interval, or the system is terminating).
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
            peers: watch::Peers::default(),
        });
        let client = nats.client().clone();
        let subject = wire::user_wildcard(&name);
        let (subscriber, probes, beats) = nats
            .handle()
            .block_on(async {
                let subscriber = client.subscribe(subject.clone()).await?;
                let probes = client.subscribe(wire::probe_subject(&name)).await?;
                let beats = client.subscribe(wire::ALL_HEARTBEATS).await?;
                client.flush().await?;
                Ok::<_, BoxError>((subscriber, probes, beats))
            })
            .map_err(|source| RemoteError::Nats(NatsError::Subscribe { subject, source }))?;
        let heartbeats = watch::start_heartbeats(&shared)
            .map_err(|error| RemoteError::System(error.to_string()))?;
        let serve = nats
            .handle()
            .spawn(serve::serve(shared.clone(), subscriber));
        let probes = nats
            .handle()
            .spawn(serve::answer_probes(shared.clone(), probes));
        let beats = nats
            .handle()
            .spawn(watch::hear_heartbeats(shared.clone(), beats));
        let tasks = Tasks {
            shared: shared.clone(),
            own: vec![
                serve.abort_handle(),
                probes.abort_handle(),
                beats.abort_handle(),
            ],
            heartbeats,
        };
        Ok(Self {
            shared,
            _tasks: Arc::new(tasks),
        })
    }

    /// The NATS connection it serves on (for reliable delivery and
    /// stream refs).
    pub(crate) fn nats(&self) -> &Nats {
        &self.shared.nats
    }

    /// The actor system it serves.
    pub(crate) fn system(&self) -> &ActorSystem {
        &self.shared.system
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

    /// The settings it was started with (stream refs take their
    /// heartbeat interval and time-out from them).
    pub(in crate::nats) fn settings(&self) -> &RemoteSettings {
        &self.shared.settings
    }

    /// The heartbeats this system has heard from the system `name` since
    /// it started (every system hears all heartbeats on its connection).
    pub fn heartbeats_from(&self, name: &str) -> u64 {
        self.shared.peers.beats(name)
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
        self.expose_entry(actor, path, Box::new(Told::new(actor, &self.shared.nats)))
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

/// The next message of `subscriber`.
pub(in crate::nats) async fn next(
    subscriber: &mut async_nats::Subscriber,
) -> Option<async_nats::Message> {
    std::future::poll_fn(|cx| std::pin::Pin::new(&mut *subscriber).poll_next(cx)).await
}
