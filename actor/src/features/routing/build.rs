//! The two ways to make a router: a [`Pool`] of new routees, a [`Group`]
//! of existing ones.

use std::fmt;

use super::logic::Kind;
use super::router_actor::{PoolSpec, RouterActor};
use super::{Op, Router, RouterMsg, Routing, RoutingTable};
use crate::core::actor::{Actor, Props};
use crate::core::actor_ref::ActorRef;
use crate::core::context::Context;
use crate::core::mailbox::BalanceQueue;
use crate::error::{ResolveError, SpawnError};
use crate::supervision::SupervisorStrategy;
use crate::sync::Arc;
use crate::system::actor_system::ActorSystem;

/// A router that spawns and supervises its routees; see the
/// [module docs](super).
///
/// ```
/// use std::time::Duration;
/// use weir_actor::routing::{Pool, Routing};
/// use weir_actor::{Actor, ActorSystem, Context, Props, SupervisorStrategy};
///
/// struct Worker;
/// impl Actor for Worker {
///     type Msg = u32;
///     fn receive(&mut self, _: &mut Context<Self>, _: u32) {}
/// }
///
/// let system = ActorSystem::new("pool").unwrap();
/// let pool = Pool::new(2, Props::new(|| Worker))
///     .with_routing(Routing::smallest_mailbox())
///     .with_supervisor_strategy(SupervisorStrategy::default().with_max_restarts(3, Duration::from_secs(1)))
///     .spawn(&system, "workers")
///     .unwrap();
/// pool.tell(1);
/// pool.resize(3); // handled by the router actor, asynchronously
/// system.terminate().wait().unwrap();
/// ```
pub struct Pool<A: Actor> {
    size: usize,
    props: Props<A>,
    routing: Routing<A::Msg>,
    strategy: SupervisorStrategy,
}

impl<A: Actor> fmt::Debug for Pool<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pool")
            .field("size", &self.size)
            .field("routing", &self.routing)
            .field("strategy", &self.strategy)
            .finish_non_exhaustive()
    }
}

impl<A: Actor> Pool<A> {
    /// A round-robin pool of `size` routees made from `props`, restarted on
    /// failure by the default [`SupervisorStrategy`].
    pub fn new(size: usize, props: Props<A>) -> Self {
        Self {
            size,
            props,
            routing: Routing::round_robin(),
            strategy: SupervisorStrategy::default(),
        }
    }

    /// A balancing pool of `size` routees made from `props` (Akka's
    /// `BalancingPool`): the routees share one queue, and whichever is free
    /// first takes the next message, so a slow message holds up only the
    /// routee handling it.
    ///
    /// [`Router::tell`](super::Router::tell) puts the message in the shared
    /// queue and starts an idle routee, if any. A routee takes the messages
    /// sent to it directly (signals, a poison pill) before the shared ones,
    /// and takes one message at a time, so this costs more per message than
    /// [`Routing::round_robin`]. Instrumentation sees no queue time for the
    /// shared messages. Resizing works as for any pool; when the pool stops,
    /// the messages still shared go to dead letters
    /// ([`NoRoutee`](crate::DeadLetterReason::NoRoutee)).
    /// [`with_routing`](Self::with_routing) makes it an ordinary pool.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use weir_actor::routing::Pool;
    /// use weir_actor::{Actor, ActorRef, ActorSystem, Context, Props};
    ///
    /// struct Work;
    /// impl Actor for Work {
    ///     type Msg = (u64, ActorRef<u64>);
    ///     fn receive(&mut self, _: &mut Context<Self>, (n, reply_to): (u64, ActorRef<u64>)) {
    ///         reply_to.tell(n + 1);
    ///     }
    /// }
    ///
    /// let system = ActorSystem::new("balancing").unwrap();
    /// let pool = Pool::balancing(3, Props::new(|| Work)).spawn(&system, "work").unwrap();
    /// assert_eq!(pool.ask(|reply_to| (41, reply_to), Duration::from_secs(5)).wait(), Ok(42));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn balancing(size: usize, mut props: Props<A>) -> Self {
        let queue = Arc::new(BalanceQueue::default());
        props.balance = Some(queue.clone());
        Self {
            size,
            props,
            routing: Routing {
                kind: Kind::Balancing(queue),
            },
            strategy: SupervisorStrategy::default(),
        }
    }

    /// How messages are spread over the routees.
    pub fn with_routing(mut self, routing: Routing<A::Msg>) -> Self {
        if matches!(self.routing.kind, Kind::Balancing(_)) {
            self.props.balance = None;
        }
        self.routing = routing;
        self
    }

    /// How the router actor handles a routee's failure.
    pub fn with_supervisor_strategy(mut self, strategy: SupervisorStrategy) -> Self {
        self.strategy = strategy;
        self
    }

    /// Spawn the router actor as a top-level actor called `name`, and its
    /// routees under it.
    ///
    /// # Errors
    ///
    /// As [`ActorSystem::spawn`], for the router or any routee (the router
    /// is stopped again then); [`SpawnError::Zero`] for a pool of no
    /// routees.
    pub fn spawn(self, system: &ActorSystem, name: &str) -> Result<Router<A::Msg>, SpawnError> {
        self.start(|props| system.spawn(props, name))
    }

    /// Spawn the router actor as a child of the actor `ctx` belongs to.
    ///
    /// # Errors
    ///
    /// As [`Context::spawn`], for the router or any routee;
    /// [`SpawnError::Zero`] for a pool of no routees.
    pub fn spawn_in<P: Actor>(
        self,
        ctx: &mut Context<P>,
        name: &str,
    ) -> Result<Router<A::Msg>, SpawnError> {
        self.start(|props| ctx.spawn(props, name))
    }

    fn start(
        self,
        spawn: impl FnOnce(
            Props<RouterActor<A::Msg>>,
        ) -> Result<ActorRef<RouterMsg<A::Msg>>, SpawnError>,
    ) -> Result<Router<A::Msg>, SpawnError> {
        if self.size == 0 {
            // A pool keeps at least one routee (see `RouterMsg::resize`).
            return Err(SpawnError::Zero("pool size"));
        }
        let shared = RoutingTable::new(self.routing, Vec::new());
        let props = self.props.clone();
        let spec = PoolSpec {
            spawn: Box::new(move |ctx: &mut Context<RouterActor<A::Msg>>| {
                ctx.spawn_anonymous(props.clone()).ok()
            }),
            strategy: self.strategy,
        };
        let manager = spawn(RouterActor::props(shared.clone(), Some(Arc::new(spec))))?;
        // The routees are made here, not in the router's `pre_start`, so
        // that the handle routes from the moment it is returned.
        let mut refs = Vec::with_capacity(self.size);
        for _ in 0..self.size {
            match crate::core::cell::spawn_child(&manager.handle(), self.props.clone(), None, 0) {
                Ok(routee) => refs.push(routee),
                Err(e) => {
                    manager.stop();
                    return Err(e);
                }
            }
        }
        shared.publish(refs);
        manager.tell(RouterMsg(Op::WatchAll));
        Ok(Router { shared, manager })
    }
}

/// Why [`Group::from_paths`] could not make a routee of a path.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RouteeError {
    /// The path names no live actor, or is malformed.
    Resolve {
        /// The path as given.
        path: String,
        /// Why it did not resolve.
        error: ResolveError,
    },
    /// The actor at the path takes another message type.
    WrongMessageType {
        /// The path as given.
        path: String,
        /// The Rust type of the actor found there.
        actor_type: &'static str,
    },
}

impl fmt::Display for RouteeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Resolve { path, error } => write!(f, "no routee at {path}: {error}"),
            Self::WrongMessageType { path, actor_type } => {
                write!(
                    f,
                    "the actor at {path} ({actor_type}) takes another message type"
                )
            }
        }
    }
}

impl std::error::Error for RouteeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Resolve { error, .. } => Some(error),
            Self::WrongMessageType { .. } => None,
        }
    }
}

/// A router over actors that exist already; a routee that stops is removed.
/// See the [module docs](super).
///
/// ```
/// use weir_actor::routing::{Group, Routing};
/// use weir_actor::{Actor, ActorSystem, Context, Props};
///
/// struct Shard;
/// impl Actor for Shard {
///     type Msg = (u64, String);
///     fn receive(&mut self, _: &mut Context<Self>, _: (u64, String)) {}
/// }
///
/// let system = ActorSystem::new("group").unwrap();
/// let shards: Vec<_> = (0..3).map(|i| system.spawn(Props::new(|| Shard), &format!("shard-{i}")).unwrap()).collect();
/// let router = Group::new(shards)
///     .with_routing(Routing::consistent_hashing(|(user, _): &(u64, String)| *user))
///     .spawn(&system, "shards")
///     .unwrap();
/// router.tell((42, "login".to_owned())); // user 42 always lands on the same shard
/// system.terminate().wait().unwrap();
/// ```
pub struct Group<M: Send + 'static> {
    routees: Vec<ActorRef<M>>,
    routing: Routing<M>,
}

impl<M: Send + 'static> fmt::Debug for Group<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Group")
            .field("routees", &self.routees)
            .field("routing", &self.routing)
            .finish()
    }
}

impl<M: Send + 'static> Group<M> {
    /// A round-robin group over `routees`.
    pub fn new(routees: impl IntoIterator<Item = ActorRef<M>>) -> Self {
        Self {
            routees: routees.into_iter().collect(),
            routing: Routing::round_robin(),
        }
    }

    /// A round-robin group over the actors at `paths` (see
    /// [`ActorSystem::resolve`]), each resolved once, now: an actor started
    /// at one of the paths later is not a routee (add it with
    /// [`Router::add_routee`]).
    ///
    /// # Errors
    ///
    /// [`RouteeError::Resolve`] for a path that names no live actor or is
    /// malformed, [`RouteeError::WrongMessageType`] for an actor that takes
    /// another message type than `M`.
    ///
    /// ```
    /// use weir_actor::routing::Group;
    /// use weir_actor::{Actor, ActorSystem, Context, Props};
    ///
    /// struct Worker;
    /// impl Actor for Worker {
    ///     type Msg = u32;
    ///     fn receive(&mut self, _: &mut Context<Self>, _: u32) {}
    /// }
    ///
    /// let system = ActorSystem::new("paths").unwrap();
    /// system.spawn(Props::new(|| Worker), "w1").unwrap();
    /// system.spawn(Props::new(|| Worker), "w2").unwrap();
    /// let group = Group::<u32>::from_paths(&system, ["/user/w1", "/user/w2"]).unwrap();
    /// let router = group.spawn(&system, "workers").unwrap();
    /// assert_eq!(router.routees().len(), 2);
    /// assert!(Group::<String>::from_paths(&system, ["/user/w1"]).is_err()); // they take u32
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn from_paths(
        system: &ActorSystem,
        paths: impl IntoIterator<Item = impl AsRef<str>>,
    ) -> Result<Self, RouteeError> {
        let mut routees = Vec::new();
        for path in paths {
            let path = path.as_ref();
            let handle = system.resolve(path).map_err(|error| RouteeError::Resolve {
                path: path.to_owned(),
                error,
            })?;
            let routee = handle
                .downcast::<M>()
                .ok_or_else(|| RouteeError::WrongMessageType {
                    path: path.to_owned(),
                    actor_type: handle.actor_type_name(),
                })?;
            routees.push(routee);
        }
        Ok(Self::new(routees))
    }

    /// How messages are spread over the routees.
    pub fn with_routing(mut self, routing: Routing<M>) -> Self {
        self.routing = routing;
        self
    }

    /// Spawn the router actor as a top-level actor called `name`.
    ///
    /// # Errors
    ///
    /// As [`ActorSystem::spawn`].
    pub fn spawn(self, system: &ActorSystem, name: &str) -> Result<Router<M>, SpawnError> {
        self.start(|props| system.spawn(props, name))
    }

    /// Spawn the router actor as a child of the actor `ctx` belongs to.
    ///
    /// # Errors
    ///
    /// As [`Context::spawn`].
    pub fn spawn_in<P: Actor>(
        self,
        ctx: &mut Context<P>,
        name: &str,
    ) -> Result<Router<M>, SpawnError> {
        self.start(|props| ctx.spawn(props, name))
    }

    fn start(
        self,
        spawn: impl FnOnce(Props<RouterActor<M>>) -> Result<ActorRef<RouterMsg<M>>, SpawnError>,
    ) -> Result<Router<M>, SpawnError> {
        let mut routees: Vec<ActorRef<M>> = Vec::with_capacity(self.routees.len());
        for routee in self.routees {
            if !routees.contains(&routee) {
                routees.push(routee);
            }
        }
        // Published before the router starts: its `pre_start` watches them.
        let shared = RoutingTable::new(self.routing, routees);
        let manager = spawn(RouterActor::props(shared.clone(), None))?;
        Ok(Router { shared, manager })
    }
}
