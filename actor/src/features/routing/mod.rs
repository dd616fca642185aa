//! Routers: one address in front of several actors (Akka's routers).
//!
//! * A [`Pool`] spawns its routees as children of a router actor, which
//!   supervises them with the pool's [`SupervisorStrategy`](crate::SupervisorStrategy): a routee that
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
//! replaced whole by the router actor on every change; a send reads it once
//! (a read lock and an `Arc` clone, about 22 instructions). Two cheaper-
//! looking reads were measured and not taken: an `arc-swap` load costs
//! about 56 instructions and a per-thread cached snapshot about 80, for a
//! saving (no shared write per send) that a two-core machine could not show.
//!
//! A balancing pool ([`Pool::balancing`]) gives its routees one shared
//! queue besides their own mailboxes: a send puts the message there and
//! starts an idle routee, and a routee takes shared messages whenever its
//! own mailbox is empty, so whichever routee is free first takes the next
//! message (the mailbox module's rule 6, loom-checked, says why none is
//! left waiting while a routee is idle).
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

mod build;
mod logic;
mod router_actor;

use std::fmt;
use std::time::Duration;

pub use crate::error::RoutingError;
pub use build::{Group, Pool, RouteeError};
use logic::Routees;
pub use logic::{DEFAULT_VIRTUAL_NODES, MAX_VIRTUAL_NODES, Routing};

use crate::core::actor_ref::{ActorRef, Delivery};
use crate::core::dead_letters::DeadLetterReason;
use crate::features::ask::{AskHandle, ask_with};
use crate::path::ActorPath;
use crate::sync::{Arc, AtomicUsize, RwLock};
use crate::system::actor_system::ActorSystem;

/// The state senders route with: the routee table and the round-robin
/// counter.
pub(crate) struct RoutingTable<M> {
    routees: RwLock<Arc<Routees<M>>>,
    next: AtomicUsize,
    routing: Routing<M>,
}

impl<M: Send + 'static> RoutingTable<M> {
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
        self.routees
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    fn publish(&self, refs: Vec<ActorRef<M>>) {
        let table = Arc::new(Routees::new(refs, &self.routing));
        *self
            .routees
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = table;
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
    /// pill, so they finish the messages they already have), keeping at
    /// least one. A group ignores it.
    pub fn resize(size: usize) -> Self {
        Self(Op::Resize(size))
    }

    /// A pool: add (positive) or remove (negative) routees (Akka's
    /// `AdjustPoolSize`), keeping at least one. A group ignores it.
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
    shared: Arc<RoutingTable<M>>,
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
        ActorSystem::of(self.manager.inner.system())
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
    pub fn ask<R: Send + 'static>(
        &self,
        make: impl FnOnce(ActorRef<R>) -> M,
        timeout: Duration,
    ) -> AskHandle<R> {
        ask_with(
            ActorSystem::of(self.manager.inner.system()),
            self.manager.path().name(),
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
    /// is no routee; [`AskError::ZeroTimeout`](crate::AskError::ZeroTimeout)
    /// at once, without sending, for a zero `timeout`.
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
            ActorSystem::of(self.manager.inner.system()),
            self.manager.path().name(),
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

    /// A pool: grow or shrink to `size` routees, keeping at least one
    /// ([`RouterMsg::resize`]).
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
