//! Routers: one address in front of several actors (Akka's routers).
//!
//! * A [`Pool`] spawns its routees as children of a router actor, which
//!   supervises them with the pool's [`SupervisorStrategy`]: a routee that
//!   fails is restarted in place by default (same reference, so routing is
//!   unchanged); one that stops is removed, and a pool whose last routee
//!   stopped stops too.
//! * A [`Group`] routes to actors that exist already (references, or
//!   paths resolved once with [`Group::from_paths`]); the router actor
//!   watches them, and a routee that stops is removed.
//!
//! Both give a [`Router`] handle. Its [`tell`](Router::tell) picks the
//! routee with the [`Routing`] logic (round-robin, random, smallest
//! mailbox, consistent hashing, broadcast) **on the sender's thread** and
//! enqueues straight into the routee's mailbox: no hop through the router
//! actor, which handles only management messages ([`RouterMsg`]: resize,
//! add or remove a routee, list the routees). [`Router::scatter_gather`]
//! asks every routee and takes the first answer.
//!
//! The routee table is an immutable snapshot behind a read-write lock,
//! replaced whole by the router actor on every change; a send reads it once.
//!
//! There is no balancing pool (routees sharing one mailbox): a mailbox here
//! has exactly one consumer at a time, the holder of its run token, and
//! routees that pull from a shared queue would need a second, shared queue
//! inside the cell. [`Routing::smallest_mailbox`] gives most of the effect
//! for uneven work.
//!
//! # Examples
//!
//! ```
//! use std::time::Duration;
//! use weir_actor::routing::{Pool, Routing};
//! use weir_actor::{Actor, ActorRef, ActorSystem, Context, Props};
//!
//! struct Square;
//! impl Actor for Square {
//!     type Msg = (u64, ActorRef<u64>);
//!     fn receive(&mut self, _: &mut Context<Self>, (n, reply_to): (u64, ActorRef<u64>)) {
//!         reply_to.tell(n * n);
//!     }
//! }
//!
//! let system = ActorSystem::new("routing").unwrap();
//! let squares = Pool::new(4, Props::new(|| Square))
//!     .with_routing(Routing::round_robin())
//!     .spawn(&system, "squares")
//!     .unwrap();
//! assert_eq!(squares.routees().len(), 4);
//! let answer = squares.ask(|reply_to| (7, reply_to), Duration::from_secs(5)).wait();
//! assert_eq!(answer, Ok(49));
//! system.terminate().wait().unwrap();
//! ```

mod logic;
mod manager;

use std::fmt;
use std::sync::RwLock;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

pub use logic::{DEFAULT_VIRTUAL_NODES, Routing};
use logic::Routees;
use manager::{Manager, PoolSpec};

use crate::actor::{Actor, Props};
use crate::actor_ref::{ActorRef, Delivery};
use crate::ask::{AskHandle, ask_with};
use crate::context::Context;
use crate::error::{ResolveError, SpawnError};
use crate::events::DeadLetterReason;
use crate::path::ActorPath;
use crate::supervision::SupervisorStrategy;
use crate::sync::Arc;
use crate::system::ActorSystem;

/// The state senders route with: the routee table and the round-robin
/// counter.
pub(crate) struct Shared<M> {
    routees: RwLock<Arc<Routees<M>>>,
    next: AtomicUsize,
    routing: Routing<M>,
}

impl<M: Send + 'static> Shared<M> {
    fn new(routing: Routing<M>, refs: Vec<ActorRef<M>>) -> Arc<Self> {
        Arc::new(Self {
            routees: RwLock::new(Arc::new(Routees::new(refs, &routing))),
            next: AtomicUsize::new(0),
            routing,
        })
    }

    /// The table now. The lock is held only to clone the `Arc`, never while
    /// sending (a routee on the calling thread may route again).
    #[inline]
    fn snapshot(&self) -> Arc<Routees<M>> {
        self.routees.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    fn publish(&self, refs: Vec<ActorRef<M>>) {
        let table = Arc::new(Routees::new(refs, &self.routing));
        *self.routees.write().unwrap_or_else(std::sync::PoisonError::into_inner) = table;
    }

    /// Publish the table without the routees `gone` matches; whether any did.
    fn publish_without(&self, gone: impl Fn(&ActorRef<M>) -> bool) -> bool {
        let refs = &self.snapshot().refs;
        if !refs.iter().any(&gone) {
            return false;
        }
        self.publish(refs.iter().filter(|r| !gone(r)).cloned().collect());
        true
    }

    /// Route `msg`; it is given back when there is no routee.
    #[inline]
    fn route(&self, msg: M) -> Result<bool, M> {
        self.snapshot().route(&self.routing, &self.next, msg)
    }
}

/// A management message for a router actor (see [`Router::actor_ref`]).
/// Messages to the routees go through [`Router::tell`], or through the
/// router actor with [`RouterMsg::route`].
pub struct RouterMsg<M>(Op<M>);

enum Op<M> {
    Route(M),
    WatchAll,
    Resize(usize),
    Adjust(isize),
    Add(ActorRef<M>),
    Remove(ActorRef<M>),
    Get(ActorRef<Vec<ActorRef<M>>>),
}

impl<M> RouterMsg<M> {
    /// Route `msg` from inside the router actor (one hop more than
    /// [`Router::tell`]; for holders of the router actor's reference only).
    pub fn route(msg: M) -> Self {
        Self(Op::Route(msg))
    }

    /// A pool: grow or shrink to `size` routees (removed ones get a poison
    /// pill, so they finish the messages they already have). A group
    /// ignores it.
    pub fn resize(size: usize) -> Self {
        Self(Op::Resize(size))
    }

    /// A pool: add (positive) or remove (negative) routees (Akka's
    /// `AdjustPoolSize`). A group ignores it.
    pub fn adjust_pool_size(delta: isize) -> Self {
        Self(Op::Adjust(delta))
    }

    /// A group: route to `routee` too, and watch it. A pool ignores it.
    pub fn add_routee(routee: ActorRef<M>) -> Self {
        Self(Op::Add(routee))
    }

    /// A group: stop routing to `routee`. A pool ignores it.
    pub fn remove_routee(routee: ActorRef<M>) -> Self {
        Self(Op::Remove(routee))
    }

    /// Reply with the routees, after every management message sent before.
    pub fn get_routees(reply_to: ActorRef<Vec<ActorRef<M>>>) -> Self {
        Self(Op::Get(reply_to))
    }
}

impl<M> fmt::Debug for RouterMsg<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match &self.0 {
            Op::Route(_) => "RouterMsg::Route",
            Op::WatchAll => "RouterMsg::WatchAll",
            Op::Resize(_) => "RouterMsg::Resize",
            Op::Adjust(_) => "RouterMsg::AdjustPoolSize",
            Op::Add(_) => "RouterMsg::AddRoutee",
            Op::Remove(_) => "RouterMsg::RemoveRoutee",
            Op::Get(_) => "RouterMsg::GetRoutees",
        })
    }
}

/// A handle to a router: route messages on the calling thread, and manage
/// the routees through the router actor. Cheap to clone, `Send` and `Sync`.
/// See the [module docs](self).
pub struct Router<M: Send + 'static> {
    shared: Arc<Shared<M>>,
    manager: ActorRef<RouterMsg<M>>,
}

impl<M: Send + 'static> Clone for Router<M> {
    fn clone(&self) -> Self {
        Self {
            shared: self.shared.clone(),
            manager: self.manager.clone(),
        }
    }
}

impl<M: Send + 'static> fmt::Debug for Router<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Router")
            .field("path", self.path())
            .field("routing", &self.shared.routing)
            .finish_non_exhaustive()
    }
}

impl<M: Send + 'static> Router<M> {
    /// Send `msg` to the routee(s) the routing logic picks, from this
    /// thread. With no routee (an empty group, a stopped router) it goes to
    /// dead letters with [`DeadLetterReason::NoRoutee`].
    #[inline]
    pub fn tell(&self, msg: M) {
        if let Err(msg) = self.shared.route(msg) {
            self.no_routee(msg);
        }
    }

    #[cold]
    fn no_routee(&self, msg: M) {
        self.manager
            .inner
            .system()
            .event_stream()
            .publish_dead_letter(self.path(), msg, DeadLetterReason::NoRoutee);
    }

    /// Send a copy of `msg` to every routee, whatever the routing logic
    /// (Akka's `Broadcast` envelope).
    pub fn broadcast(&self, msg: M)
    where
        M: Clone,
    {
        let routees = self.shared.snapshot();
        if routees.refs.is_empty() {
            return self.no_routee(msg);
        }
        routees.broadcast(msg, <M as Clone>::clone);
    }

    /// Ask one routee (picked by the routing logic; all of them under
    /// [`Routing::broadcast`], the first answer winning) and wait for the
    /// answer; see [`ask`](crate::ask).
    ///
    /// # Errors
    ///
    /// As [`ask`](crate::ask); [`AskError::TargetStopped`](crate::AskError::TargetStopped)
    /// when there is no routee.
    pub fn ask<R: Send + 'static>(&self, make: impl FnOnce(ActorRef<R>) -> M, timeout: Duration) -> AskHandle<R> {
        ask_with(
            self.manager.inner.system(),
            |reply_to| self.shared.route(make(reply_to)).unwrap_or(false),
            timeout,
        )
    }

    /// Ask every routee the question `make` builds and take the first
    /// answer (Akka's scatter-gather-first-completed). The answers that come
    /// later go to dead letters ([`DeadLetterReason::AskCompleted`]).
    ///
    /// # Errors
    ///
    /// [`AskError::Timeout`](crate::AskError::Timeout) when no routee
    /// answers within `timeout`;
    /// [`AskError::TargetStopped`](crate::AskError::TargetStopped) when there
    /// is no routee.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use weir_actor::routing::Group;
    /// use weir_actor::{Actor, ActorRef, ActorSystem, Context, Props};
    ///
    /// struct Mirror(&'static str);
    /// impl Actor for Mirror {
    ///     type Msg = ActorRef<&'static str>;
    ///     fn receive(&mut self, _: &mut Context<Self>, reply_to: ActorRef<&'static str>) {
    ///         reply_to.tell(self.0);
    ///     }
    /// }
    ///
    /// let system = ActorSystem::new("scatter").unwrap();
    /// let a = system.spawn(Props::new(|| Mirror("a")), "a").unwrap();
    /// let b = system.spawn(Props::new(|| Mirror("b")), "b").unwrap();
    /// let mirrors = Group::new([a, b]).spawn(&system, "mirrors").unwrap();
    /// let first = mirrors.scatter_gather(|reply_to| reply_to, Duration::from_secs(5)).wait();
    /// assert!(matches!(first, Ok("a" | "b")));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn scatter_gather<R: Send + 'static>(
        &self,
        make: impl Fn(ActorRef<R>) -> M,
        timeout: Duration,
    ) -> AskHandle<R> {
        let routees = self.shared.snapshot();
        ask_with(
            self.manager.inner.system(),
            |reply_to| {
                let mut delivered = false;
                for routee in &routees.refs {
                    delivered |= routee.deliver(make(reply_to.clone())) != Delivery::DeadLetter;
                }
                delivered
            },
            timeout,
        )
    }

    /// The routees now (a snapshot; management messages change it
    /// asynchronously, see [`RouterMsg::get_routees`]).
    pub fn routees(&self) -> Vec<ActorRef<M>> {
        self.shared.snapshot().refs.clone()
    }

    /// The router actor: watch it, stop it, send it [`RouterMsg`]s.
    pub fn actor_ref(&self) -> &ActorRef<RouterMsg<M>> {
        &self.manager
    }

    /// The router actor's path.
    pub fn path(&self) -> &ActorPath {
        self.manager.path()
    }

    /// A pool: grow or shrink to `size` routees ([`RouterMsg::resize`]).
    pub fn resize(&self, size: usize) {
        self.manager.tell(RouterMsg::resize(size));
    }

    /// A group: add a routee ([`RouterMsg::add_routee`]).
    pub fn add_routee(&self, routee: ActorRef<M>) {
        self.manager.tell(RouterMsg::add_routee(routee));
    }

    /// A group: remove a routee ([`RouterMsg::remove_routee`]).
    pub fn remove_routee(&self, routee: ActorRef<M>) {
        self.manager.tell(RouterMsg::remove_routee(routee));
    }

    /// Stop the router actor (and a pool's routees with it). Messages sent
    /// after it has stopped go to dead letters.
    pub fn stop(&self) {
        self.manager.stop();
    }
}

/// A router that spawns and supervises its routees; see the
/// [module docs](self).
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

    /// How messages are spread over the routees.
    pub fn with_routing(mut self, routing: Routing<A::Msg>) -> Self {
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
    /// is stopped again then).
    pub fn spawn(self, system: &ActorSystem, name: &str) -> Result<Router<A::Msg>, SpawnError> {
        self.start(|props| system.spawn(props, name))
    }

    /// Spawn the router actor as a child of the actor `ctx` belongs to.
    ///
    /// # Errors
    ///
    /// As [`Context::spawn`], for the router or any routee.
    pub fn spawn_in<P: Actor>(self, ctx: &mut Context<P>, name: &str) -> Result<Router<A::Msg>, SpawnError> {
        self.start(|props| ctx.spawn(props, name))
    }

    fn start(
        self,
        spawn: impl FnOnce(Props<Manager<A::Msg>>) -> Result<ActorRef<RouterMsg<A::Msg>>, SpawnError>,
    ) -> Result<Router<A::Msg>, SpawnError> {
        let shared = Shared::new(self.routing, Vec::new());
        let props = self.props.clone();
        let spec = PoolSpec {
            spawn: Box::new(move |ctx: &mut Context<Manager<A::Msg>>| ctx.spawn_anonymous(props.clone()).ok()),
            strategy: self.strategy,
        };
        let manager = spawn(Manager::props(shared.clone(), Some(Arc::new(spec))))?;
        // The routees are made here, not in the router's `pre_start`, so
        // that the handle routes from the moment it is returned.
        let mut refs = Vec::with_capacity(self.size);
        for _ in 0..self.size {
            match crate::cell::spawn_child(&manager.handle(), self.props.clone(), None) {
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
                write!(f, "the actor at {path} ({actor_type}) takes another message type")
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
/// See the [module docs](self).
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
            let routee = handle.downcast::<M>().ok_or_else(|| RouteeError::WrongMessageType {
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
    pub fn spawn_in<P: Actor>(self, ctx: &mut Context<P>, name: &str) -> Result<Router<M>, SpawnError> {
        self.start(|props| ctx.spawn(props, name))
    }

    fn start(
        self,
        spawn: impl FnOnce(Props<Manager<M>>) -> Result<ActorRef<RouterMsg<M>>, SpawnError>,
    ) -> Result<Router<M>, SpawnError> {
        let mut routees: Vec<ActorRef<M>> = Vec::with_capacity(self.routees.len());
        for routee in self.routees {
            if !routees.contains(&routee) {
                routees.push(routee);
            }
        }
        // Published before the router starts: its `pre_start` watches them.
        let shared = Shared::new(self.routing, routees);
        let manager = spawn(Manager::props(shared.clone(), None))?;
        Ok(Router { shared, manager })
    }
}
