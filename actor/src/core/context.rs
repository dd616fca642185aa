//! The context an actor's methods receive: its own ref, its children, watch,
//! stop, timers. `system()` is added by the system layer (`crate::system::actor_system`),
//! the stash API by `crate::stash`, `pipe_to_self` by `crate::pipe`.

use std::collections::HashMap;
use std::fmt;
use std::time::Duration;

use crate::core::actor::{Actor, Props};
use crate::core::actor_ref::{ActorHandle, ActorRef, SystemMsg};
use crate::core::cell::Stash;
use crate::core::cell::Timers;
use crate::core::cell::awaited::AwaitedFuture;
use crate::core::cell::receive_timeout::ReceiveTimeout;
use crate::core::cell::timers::TimerTable;
use crate::core::cell::{Cell, spawn_child};
use crate::core::runtime::Runtime;
use crate::error::{ScheduleError, SpawnError};
use crate::path::ActorPath;
use crate::sync::Arc;

/// What an actor can do besides handling its message: spawn and find
/// children, stop actors, watch them, and reach its own ref and the system.
///
/// # Examples
///
/// ```
/// use weir_actor::{Actor, ActorSystem, Context, Props, Terminated};
///
/// struct Worker;
/// impl Actor for Worker {
///     type Msg = ();
///     fn receive(&mut self, ctx: &mut Context<Self>, _: ()) {
///         ctx.stop_self();
///     }
/// }
///
/// struct Boss;
/// impl Actor for Boss {
///     type Msg = ();
///     fn pre_start(&mut self, ctx: &mut Context<Self>) {
///         let worker = ctx.spawn(Props::new(|| Worker), "worker").unwrap();
///         ctx.watch(&worker);
///         worker.tell(());
///     }
///     fn receive(&mut self, _: &mut Context<Self>, _: ()) {}
///     fn on_terminated(&mut self, ctx: &mut Context<Self>, t: Terminated) {
///         assert_eq!(t.actor().path().name(), "worker");
///         assert!(ctx.child("worker").is_none());
///         ctx.system().terminate();
///     }
/// }
///
/// let system = ActorSystem::new("ctx").unwrap();
/// system.spawn(Props::new(|| Boss), "boss").unwrap();
/// system.when_terminated().wait().unwrap();
/// ```
pub struct Context<A: Actor> {
    cell: Arc<Cell<A>>,
    /// The untyped handle of `cell`, kept for timers and checks.
    pub(crate) me: ActorHandle,
    /// Actors this one watches, by incarnation.
    pub(crate) watching: HashMap<usize, ActorHandle>,
    pub(crate) timers: TimerTable<A::Msg>,
    /// Created by the first `set_receive_timeout`.
    pub(crate) receive_timeout: Option<Box<ReceiveTimeout<A::Msg>>>,
    pub(crate) stash: Stash<A::Msg>,
    /// Set by [`fail`](Self::fail) or `run_async`; the run loop takes it
    /// after the handler. One slot for both, so the handler's fast path
    /// checks one field.
    pub(crate) deferred: Option<Deferred<A>>,
    /// How many ancestors' failures hold this actor's user messages (see
    /// `cell::supervise`).
    pub(crate) suspended: u32,
    /// This actor's failure suspended its children; they are owed one
    /// `Unsuspend` each when it is decided.
    pub(crate) children_suspended: bool,
}

impl<A: Actor> Context<A> {
    pub(crate) fn new(cell: Arc<Cell<A>>, stash_capacity: usize) -> Self {
        Self {
            me: ActorHandle {
                inner: cell.clone(),
            },
            cell,
            watching: HashMap::new(),
            timers: TimerTable::default(),
            receive_timeout: None,
            stash: Stash::new(stash_capacity),
            deferred: None,
            suspended: 0,
            children_suspended: false,
        }
    }

    /// Fail with `error` once the current handler returns: the actor is
    /// suspended and its parent's [`SupervisorStrategy`](crate::SupervisorStrategy)
    /// decides, as for a panic, and its decider sees the value through
    /// [`Failure::error`](crate::Failure::error). A second call in the same
    /// handler replaces the first (and an earlier
    /// [`run_async`](Self::run_async)); a panic after it wins.
    ///
    /// This is how a handler that returns `Result` hands its error to
    /// supervision without a panic:
    ///
    /// ```
    /// use weir_actor::{Actor, ActorSystem, Context, Props};
    ///
    /// #[derive(Debug)]
    /// struct Invalid(u32);
    /// impl std::fmt::Display for Invalid {
    ///     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
    ///         write!(f, "invalid input {}", self.0)
    ///     }
    /// }
    /// impl std::error::Error for Invalid {}
    ///
    /// struct Parser;
    /// impl Parser {
    ///     fn handle(&mut self, n: u32) -> Result<(), Invalid> {
    ///         if n == 0 { Err(Invalid(n)) } else { Ok(()) }
    ///     }
    /// }
    /// impl Actor for Parser {
    ///     type Msg = u32;
    ///     fn receive(&mut self, ctx: &mut Context<Self>, n: u32) {
    ///         if let Err(e) = self.handle(n) {
    ///             ctx.fail(e);
    ///         }
    ///     }
    /// }
    ///
    /// let system = ActorSystem::new("fail").unwrap();
    /// let parser = system.spawn(Props::new(|| Parser), "parser").unwrap();
    /// parser.tell(0); // restarted by the default strategy
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn fail<E: std::error::Error + Send + Sync + 'static>(&mut self, error: E) {
        self.deferred = Some(Deferred::Fail(Arc::new(error)));
    }

    /// This actor's own typed reference.
    pub fn myself(&self) -> ActorRef<A::Msg> {
        ActorRef::new(self.cell.clone())
    }

    /// This actor's untyped handle.
    pub fn handle(&self) -> ActorHandle {
        self.me.clone()
    }

    /// This actor's keyed timers.
    pub fn timers(&mut self) -> Timers<'_, A> {
        Timers {
            table: &mut self.timers,
            me: &self.me,
            scheduler: self.cell.core.runtime.scheduler(),
        }
    }

    /// After `timeout` with no influencing message processed (see
    /// [`Actor::influences_receive_timeout`]), send this actor `msg`; again
    /// after every further idle period, until cancelled. Measured from the
    /// end of the last influencing message, or from this call. Replaces an
    /// earlier setting. Survives restarts; cancelled by stop.
    ///
    /// A timeout is not a proof of idleness: a message may arrive just as it
    /// fires.
    ///
    /// # Errors
    ///
    /// [`ScheduleError::ZeroTimeout`] for a zero duration; use
    /// [`cancel_receive_timeout`](Self::cancel_receive_timeout) to turn it
    /// off.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use weir_actor::{Actor, ActorSystem, Context, Props};
    ///
    /// #[derive(Clone)]
    /// enum Msg {
    ///     Work,
    ///     Idle,
    /// }
    ///
    /// struct Session(std::sync::mpsc::Sender<&'static str>);
    /// impl Actor for Session {
    ///     type Msg = Msg;
    ///     fn pre_start(&mut self, ctx: &mut Context<Self>) {
    ///         ctx.set_receive_timeout(Duration::from_millis(20), Msg::Idle).unwrap();
    ///     }
    ///     fn receive(&mut self, ctx: &mut Context<Self>, msg: Msg) {
    ///         match msg {
    ///             Msg::Work => {}
    ///             Msg::Idle => {
    ///                 self.0.send("idle").unwrap();
    ///                 ctx.cancel_receive_timeout();
    ///             }
    ///         }
    ///     }
    /// }
    ///
    /// let system = ActorSystem::new("idle").unwrap();
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// let session = system.spawn(Props::new(move || Session(tx.clone())), "s").unwrap();
    /// session.tell(Msg::Work);
    /// assert_eq!(rx.recv_timeout(Duration::from_secs(5)), Ok("idle"));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn set_receive_timeout(
        &mut self,
        timeout: Duration,
        msg: A::Msg,
    ) -> Result<(), ScheduleError>
    where
        A::Msg: Clone,
    {
        if timeout.is_zero() {
            return Err(ScheduleError::ZeroTimeout);
        }
        let scheduler = self.cell.core.runtime.scheduler();
        let now = scheduler.now();
        match &mut self.receive_timeout {
            Some(state) => state.set(timeout, msg, now, &self.me, scheduler),
            None => {
                let mut state = Box::new(ReceiveTimeout::new(
                    timeout,
                    msg,
                    <A::Msg as Clone>::clone,
                    now,
                ));
                state.restart_from(now, &self.me, scheduler);
                self.receive_timeout = Some(state);
            }
        }
        Ok(())
    }

    /// Turn the receive timeout off. A check already on its way is ignored.
    pub fn cancel_receive_timeout(&mut self) {
        if let Some(state) = &mut self.receive_timeout {
            state.cancel();
        }
    }

    /// The receive timeout in force, if any.
    pub fn receive_timeout(&self) -> Option<Duration> {
        self.receive_timeout.as_ref().and_then(|s| s.timeout())
    }

    /// This actor's path.
    pub fn path(&self) -> &ActorPath {
        &self.cell.core.path
    }

    /// The services of the system this actor belongs to.
    pub(crate) fn runtime(&self) -> &dyn Runtime {
        &*self.cell.core.runtime
    }

    /// The parent (`None` only for the root guardian).
    pub fn parent(&self) -> Option<&ActorHandle> {
        self.cell.core.parent.as_ref()
    }

    /// Spawn a child called `name`.
    ///
    /// # Errors
    ///
    /// [`SpawnError::InvalidName`] for a name that breaks the rules of
    /// [`validate_name`](crate::validate_name), [`SpawnError::DuplicateName`]
    /// when a live child already has it, [`SpawnError::ParentStopped`] while
    /// this actor is stopping.
    pub fn spawn<C: Actor>(
        &mut self,
        props: Props<C>,
        name: &str,
    ) -> Result<ActorRef<C::Msg>, SpawnError> {
        spawn_child(&self.handle(), props, Some(name), self.child_suspensions())
    }

    /// Spawn a child with a generated name (`$a`, `$b`, ...).
    ///
    /// # Errors
    ///
    /// [`SpawnError::ParentStopped`] while this actor is stopping.
    pub fn spawn_anonymous<C: Actor>(
        &mut self,
        props: Props<C>,
    ) -> Result<ActorRef<C::Msg>, SpawnError> {
        spawn_child(&self.handle(), props, None, self.child_suspensions())
    }

    /// The suspensions a child made now starts with: the ones this actor
    /// will pass on or lift from all its children (an ancestor's failure,
    /// its own), so that a child made meanwhile waits with the subtree.
    fn child_suspensions(&self) -> u32 {
        self.suspended + u32::from(self.children_suspended)
    }

    /// The live child called `name`.
    pub fn child(&self, name: &str) -> Option<ActorHandle> {
        self.cell.core.child(name)
    }

    /// The child called `name` even if it has already stopped (for the
    /// root, which must watch its guardians whatever their state).
    pub(crate) fn child_entry(&self, name: &str) -> Option<ActorHandle> {
        self.cell.core.child_entry(name)
    }

    /// All live children, in the order they were spawned.
    pub fn children(&self) -> Vec<ActorHandle> {
        self.cell.core.children()
    }

    /// Stop an actor (usually a child, or this actor). Asynchronous: the
    /// actor finishes its current message, stops its children, then stops.
    pub fn stop(&mut self, target: impl Into<ActorHandle>) {
        let target = target.into();
        if let Some(entry) = self
            .cell
            .core
            .children
            .lock()
            .by_name
            .get_mut(target.path().name())
            && entry.handle == target
        {
            entry.stopping = true;
        }
        target.send_system(SystemMsg::Terminate);
    }

    /// Stop this actor once the current message is handled.
    pub fn stop_self(&mut self) {
        self.handle().send_system(SystemMsg::Terminate);
    }

    /// Stop every child.
    pub fn stop_all_children(&mut self) {
        for child in self.children() {
            self.stop(child);
        }
    }

    /// Watch `target`: when it stops, [`Actor::on_terminated`] runs once
    /// (also when it had already stopped). Watching twice still gives one
    /// notice.
    pub fn watch(&mut self, target: impl Into<ActorHandle>) {
        let target = target.into();
        if target == self.handle() || self.watching.contains_key(&target.key()) {
            return;
        }
        self.watching.insert(target.key(), target.clone());
        target.send_system(SystemMsg::Watch {
            watchee: target.clone(),
            watcher: self.handle(),
        });
    }

    /// Stop watching `target`; a notice already on its way is discarded.
    pub fn unwatch(&mut self, target: impl Into<ActorHandle>) {
        let target = target.into();
        if self.watching.remove(&target.key()).is_some() {
            target.send_system(SystemMsg::Unwatch(self.handle()));
        }
    }
}

/// What a handler left for the run loop to do after it returns.
pub(crate) enum Deferred<A: Actor> {
    /// `ctx.fail`: fail with this error.
    Fail(crate::supervision::FailureError),
    /// `ctx.run_async`: await this future (see `cell::awaited`).
    Await(AwaitedFuture<A>),
    /// `ctx.run_async_reentrant`: run these futures while messages go on
    /// (see `cell::reentrant`).
    Reentrant(Vec<AwaitedFuture<A>>),
}

impl<A: Actor> fmt::Debug for Context<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("path", self.path())
            .finish_non_exhaustive()
    }
}
