//! [`StreamRefs`] makes refs; [`SourceRef`] and [`SinkRef`] are what it
//! materializes and what another process runs.

use std::any::type_name;
use std::fmt;
use std::marker::PhantomData;
use std::time::Duration;

use async_nats::Subject;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use weir_streams::Completion;
use weir_streams::prelude::*;

use super::consumer::Consumer;
use super::link::{Endpoint, Role, Side, Timing};
use super::producer::Producer;
use crate::nats::RemoteActorSystem;

/// Makes stream refs on a [`RemoteActorSystem`]'s connection, and runs
/// refs made elsewhere (see [stream refs](crate::nats#stream-refs) in the
/// `nats` module docs). The heartbeat interval and time-out are the remote
/// system's ([`RemoteSettings::heartbeat`](crate::nats::RemoteSettings::heartbeat)).
///
/// # Examples
///
/// A stream made in one system and run in another (here both on one
/// connection; usually the ref travels in a remote actor message):
///
/// ```no_run
/// use weir_actor::ActorSystem;
/// use weir_interop::nats::{Nats, RemoteActorSystem, RemoteSettings, StreamRefs};
/// use weir_streams::prelude::*;
///
/// let runtime = tokio::runtime::Runtime::new().unwrap();
/// let nats = Nats::connect(runtime.handle(), "nats://127.0.0.1:4222").unwrap();
/// let here = ActorSystem::new("here").unwrap();
/// let remote = RemoteActorSystem::start(&here, &nats, RemoteSettings::default()).unwrap();
/// let refs = StreamRefs::new(&remote).window(64);
/// let numbers = Source::range(1u64..=100).run_with(refs.source_ref(), &Materializer::new(&here));
///
/// // `numbers` is serde-serializable: send it to another process, and there:
/// let there = ActorSystem::new("there").unwrap();
/// let remote_there = RemoteActorSystem::start(&there, &nats, RemoteSettings::default()).unwrap();
/// let sum = numbers
///     .source(&StreamRefs::new(&remote_there))
///     .run_with(Sink::fold(0, |a, x| a + x), &Materializer::new(&there));
/// assert_eq!(sum.wait().unwrap(), 5050);
/// ```
#[derive(Clone)]
pub struct StreamRefs {
    remote: RemoteActorSystem,
    window: u32,
    subscription_timeout: Duration,
}

impl fmt::Debug for StreamRefs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamRefs")
            .field("system", &self.remote.name())
            .field("window", &self.window)
            .field("subscription_timeout", &self.subscription_timeout)
            .finish()
    }
}

impl StreamRefs {
    /// Refs on `remote`'s connection, with a window of 32 elements and a
    /// subscription time-out of 30 s (Akka's defaults).
    pub fn new(remote: &RemoteActorSystem) -> Self {
        Self {
            remote: remote.clone(),
            window: 32,
            subscription_timeout: Duration::from_secs(30),
        }
    }

    /// How many elements the producer may send beyond what the consuming
    /// stream has taken (at least 1): the consuming end's buffer. It is
    /// the consuming end's setting (the end made by
    /// [`sink_ref`](Self::sink_ref), or the one that runs a [`SourceRef`]).
    /// Credit goes back every `window / 4` elements.
    #[must_use]
    pub fn window(mut self, window: u32) -> Self {
        self.window = window.max(1);
        self
    }

    /// How long a ref this makes waits to be run before its stream fails
    /// with [`StreamRefError::SubscriptionTimeout`](super::StreamRefError::SubscriptionTimeout),
    /// measured on the actor system's clock (a `TestClock` drives it).
    #[must_use]
    pub fn subscription_timeout(mut self, timeout: Duration) -> Self {
        self.subscription_timeout = timeout;
        self
    }

    /// The window.
    pub fn window_size(&self) -> u32 {
        self.window
    }

    fn timing(&self) -> Timing {
        let settings = self.remote.settings();
        Timing {
            interval: settings.heartbeat_interval(),
            timeout: settings.heartbeat_timeout(),
            subscription_timeout: self.subscription_timeout,
        }
    }

    /// What a ref's stage makes at each run: an end of `side` on a fresh
    /// inbox of this connection, the origin's (`origin` is `None`) or a
    /// runner's of the origin listening on `origin`, beside `made(inbox)`
    /// (the ref the origin hands out; nothing for a runner).
    fn per_run<T, V>(
        &self,
        origin: Option<Subject>,
        side: Side,
        made: impl Fn(String) -> V + Send + Sync + 'static,
    ) -> Box<dyn Fn() -> (Endpoint, V) + Send + Sync> {
        let (nats, timing) = (self.remote.nats().clone(), self.timing());
        Box::new(move || {
            let own = nats.client().new_inbox();
            let role = origin.clone().map_or(Role::Origin, Role::Runner);
            let end = Endpoint::new(&nats, own.clone(), role, side, timing, type_name::<T>());
            (end, made(own))
        })
    }

    /// A sink whose materialized value is a [`SourceRef`]: the elements
    /// this sink takes are the elements of the source that runs the ref,
    /// in another process (Akka's `StreamRefs.sourceRef`). The sink pulls
    /// only as far as that source's window reaches.
    ///
    /// When the ref is not run within the subscription time-out, the sink
    /// cancels its upstream with [`StreamRefError::SubscriptionTimeout`](super::StreamRefError::SubscriptionTimeout)
    /// (`Flow::watch_termination` upstream sees it); when the other end
    /// goes silent, with [`StreamRefError::Unreachable`](super::StreamRefError::Unreachable);
    /// when it cancels, with its cause.
    pub fn source_ref<T>(&self) -> Sink<T, SourceRef<T>>
    where
        T: Serialize + Send + 'static,
    {
        let system = self.remote.name().to_owned();
        let make = self.per_run::<T, _>(None, Side::Producer, move |origin| SourceRef {
            origin,
            system: system.clone(),
            _elements: PhantomData,
        });
        Sink::from_graph(Producer {
            make,
            _elements: PhantomData,
        })
        .map_materialized_value(|(made, _)| made)
    }

    /// A source whose materialized value is a [`SinkRef`]: what the sink
    /// that runs the ref takes, in another process, this source emits
    /// (Akka's `StreamRefs.sinkRef`). It grants that sink credit for its
    /// window.
    ///
    /// When the ref is not run within the subscription time-out, the
    /// source fails with [`StreamRefError::SubscriptionTimeout`](super::StreamRefError::SubscriptionTimeout).
    pub fn sink_ref<T>(&self) -> Source<T, SinkRef<T>>
    where
        T: DeserializeOwned + Send + 'static,
    {
        let system = self.remote.name().to_owned();
        let make = self.per_run::<T, _>(None, Side::Consumer, move |origin| SinkRef {
            origin,
            system: system.clone(),
            _elements: PhantomData,
        });
        Source::from_graph(Consumer {
            make,
            window: self.window,
            _elements: PhantomData,
        })
    }
}

/// A reference to a stream made in another process by
/// [`StreamRefs::source_ref`]: run it here as a [`Source`] with
/// [`source`](Self::source). Serde-serializable (send it in a remote actor
/// message); it runs once.
///
/// # Examples
///
/// An actor that runs the source refs it is sent (expose it with
/// [`RemoteActorSystem::expose`]; a `RemoteRef<SourceRef<u64>>` tells it
/// one):
///
/// ```
/// use weir_actor::{Actor, Context};
/// use weir_interop::nats::{SourceRef, StreamRefs};
/// use weir_streams::prelude::*;
///
/// struct Summer {
///     refs: StreamRefs,
///     materializer: Materializer,
/// }
///
/// impl Actor for Summer {
///     type Msg = SourceRef<u64>;
///     fn receive(&mut self, _: &mut Context<Self>, numbers: SourceRef<u64>) {
///         let sum = numbers
///             .source(&self.refs)
///             .run_with(Sink::fold(0, |a, x| a + x), &self.materializer);
///         std::thread::spawn(move || println!("sum: {:?}", sum.wait()));
///     }
/// }
/// ```
#[derive(Serialize, Deserialize)]
#[serde(bound = "")]
pub struct SourceRef<T> {
    origin: String,
    system: String,
    #[serde(skip)]
    _elements: PhantomData<fn() -> T>,
}

/// A reference to a stream's entry made in another process by
/// [`StreamRefs::sink_ref`]: run it here as a [`Sink`] with
/// [`sink`](Self::sink). Serde-serializable (send it in a remote actor
/// message); it runs once.
///
/// # Examples
///
/// ```no_run
/// use weir_actor::ActorSystem;
/// use weir_interop::nats::{Nats, RemoteActorSystem, RemoteSettings, StreamRefs};
/// use weir_streams::prelude::*;
///
/// let runtime = tokio::runtime::Runtime::new().unwrap();
/// let nats = Nats::connect(runtime.handle(), "nats://127.0.0.1:4222").unwrap();
/// let system = ActorSystem::new("collector").unwrap();
/// let remote = RemoteActorSystem::start(&system, &nats, RemoteSettings::default()).unwrap();
/// let refs = StreamRefs::new(&remote);
/// let (entry, lines) = refs
///     .sink_ref::<String>()
///     .to_mat(Sink::collect(), Keep::both)
///     .run(&Materializer::new(&system));
/// // Send `entry` to another process; there (here, for the example):
/// let done = Source::from_iter(["a".to_string(), "b".to_string()])
///     .run_with(entry.sink(&refs), &Materializer::new(&system));
/// assert_eq!(done.wait(), Ok(()));
/// assert_eq!(lines.wait().unwrap(), ["a", "b"]);
/// ```
#[derive(Serialize, Deserialize)]
#[serde(bound = "")]
pub struct SinkRef<T> {
    origin: String,
    system: String,
    #[serde(skip)]
    _elements: PhantomData<fn(T)>,
}

macro_rules! ref_common {
    ($name:ident) => {
        impl<T> Clone for $name<T> {
            fn clone(&self) -> Self {
                Self {
                    origin: self.origin.clone(),
                    system: self.system.clone(),
                    _elements: PhantomData,
                }
            }
        }

        impl<T> fmt::Debug for $name<T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($name))
                    .field("system", &self.system)
                    .field("subject", &self.origin)
                    .finish()
            }
        }

        impl<T> $name<T> {
            /// The name of the actor system that made the ref.
            pub fn system(&self) -> &str {
                &self.system
            }
        }
    };
}

ref_common!(SourceRef);
ref_common!(SinkRef);

impl<T: DeserializeOwned + Send + 'static> SourceRef<T> {
    /// The source that runs this ref on `refs`' connection, with `refs`'
    /// window (Akka's `SourceRef.source`). Its elements are the ones the
    /// origin's sink took, in order; it completes or fails as the origin's
    /// stream does ([`StreamRefError::RemoteFailed`](super::StreamRefError::RemoteFailed)
    /// with its message), and cancelling it cancels that stream.
    ///
    /// A ref runs once: a second run fails with
    /// [`StreamRefError::AlreadyRun`](super::StreamRefError::AlreadyRun)
    /// (or [`OriginNotFound`](super::StreamRefError::OriginNotFound) once
    /// the origin has finished: no answer for the heartbeat time-out,
    /// measured on the actor system's clock).
    pub fn source(&self, refs: &StreamRefs) -> Source<T, ()> {
        let origin = Subject::from(self.origin.as_str());
        let make = refs.per_run::<T, _>(Some(origin), Side::Consumer, |_| ());
        Source::from_graph(Consumer {
            make,
            window: refs.window,
            _elements: PhantomData,
        })
    }
}

impl<T: Serialize + Send + 'static> SinkRef<T> {
    /// The sink that runs this ref on `refs`' connection (Akka's
    /// `SinkRef.sink`): what it takes, the origin's source emits, as far as
    /// that source's window reaches. Its completion completes when its
    /// upstream completed and the origin was told, and fails with why the
    /// stream ended otherwise (the origin's stream cancelled with a
    /// failure: [`StreamRefError::RemoteCancelled`](super::StreamRefError::RemoteCancelled)).
    ///
    /// A ref runs once: a second run fails with
    /// [`StreamRefError::AlreadyRun`](super::StreamRefError::AlreadyRun)
    /// (or [`OriginNotFound`](super::StreamRefError::OriginNotFound) once
    /// the origin has finished: no answer for the heartbeat time-out,
    /// measured on the actor system's clock).
    pub fn sink(&self, refs: &StreamRefs) -> Sink<T, Completion<()>> {
        let origin = Subject::from(self.origin.as_str());
        let make = refs.per_run::<T, _>(Some(origin), Side::Producer, |_| ());
        Sink::from_graph(Producer {
            make,
            _elements: PhantomData,
        })
        .map_materialized_value(|((), done)| done)
    }
}
