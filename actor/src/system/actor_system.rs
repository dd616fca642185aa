//! The actor system: guardians, dispatcher, scheduler, event stream and
//! termination. Its parts, each adding to [`ActorSystem`]: the
//! [`builder`], the dispatchers and services it starts, the registry of
//! [`extension`]s, the coordinated [`shutdown`] and [`termination`].

use std::collections::HashMap;
use std::convert::Infallible;
use std::fmt;

use crate::core::actor::{Actor, Props, Terminated};
use crate::core::actor_ref::{ActorHandle, ActorRef, AnyActor};
use crate::core::cell::spawn_child;
use crate::core::context::Context;
use crate::core::dispatcher::Dispatcher;
use crate::core::dispatcher::pool::Blocking;
use crate::core::instrument::Hooks;
use crate::core::scheduler::Scheduler;
use crate::error::{BuildError, SpawnError};
use crate::path::ActorPath;
use crate::supervision::{Directive, SupervisorStrategy};
use crate::sync::{Arc, AtomicBool, AtomicU64, AtomicUsize, Mutex, Ordering, Weak};
use crate::system::events::EventStream;
use crate::threads::Threads;
use termination::{Ending, Owner, Termination};

mod builder;
mod dispatchers;
pub(crate) mod extension;
mod services;
pub mod shutdown;
pub(crate) mod termination;

pub use builder::ActorSystemBuilder;

/// Default messages per run before an actor yields its thread.
pub const DEFAULT_THROUGHPUT: usize = 32;

static NEXT_SYSTEM_ID: AtomicUsize = AtomicUsize::new(1);

/// A running actor system: the shared dispatcher, the guardians, the
/// scheduler and the event stream. Cheap to clone; every clone is the same
/// system.
///
/// Call [`terminate`](Self::terminate) when done: it runs the coordinated
/// shutdown's tasks, then stops every actor top-down and every thread the
/// system started. Dropping the last
/// handle does the same (as tokio's `Runtime` does on drop): see
/// [Dropping the system](#dropping-the-system).
///
/// # Examples
///
/// ```
/// use weir_actor::{Actor, ActorSystem, Context, Props};
///
/// struct Hello;
/// impl Actor for Hello {
///     type Msg = &'static str;
///     fn receive(&mut self, ctx: &mut Context<Self>, who: &'static str) {
///         println!("hello, {who}, from {}", ctx.path());
///     }
/// }
///
/// let system = ActorSystem::new("hello").unwrap();
/// let hello = system.spawn(Props::new(|| Hello), "greeter").unwrap();
/// hello.tell("world");
/// system.terminate().wait().unwrap();
/// ```
///
/// # Dropping the system
///
/// The handles [`build`](ActorSystemBuilder::build) returns, and their
/// clones, own the system: when the last of them is dropped without
/// `terminate`, the system terminates (coordinated shutdown included) and
/// the drop blocks until every actor has stopped and every thread has been
/// joined. Handles that do not own it:
/// [`Context::system`] inside an actor (and its clones), and the ones refs,
/// selections and function refs keep. An owning handle stored in an actor
/// keeps the system alive until it is terminated.
///
/// The drop only starts termination, without blocking, on one of the
/// system's own threads (an actor held the last owning handle) and while
/// the thread is panicking (a failed test stays a failure, not a hang).
/// A handler that never returns delays the drop, as it delays
/// [`Termination::wait`], by the `ActorSystemTerminate` phase's time-out
/// at most: its actor and thread are then left behind (see
/// [`terminate`](Self::terminate)).
///
/// ```
/// use weir_actor::{Actor, ActorSystem, Context, Props};
///
/// struct Idle;
/// impl Actor for Idle {
///     type Msg = ();
///     fn receive(&mut self, _: &mut Context<Self>, _: ()) {}
/// }
///
/// let system = ActorSystem::new("dropped").unwrap();
/// system.spawn(Props::new(|| Idle), "idle").unwrap();
/// let terminated = system.when_terminated();
/// let other = system.clone();
/// drop(system); // `other` still owns it
/// assert!(!terminated.is_completed());
/// drop(other); // the last owner: terminates, joins the threads
/// assert!(terminated.is_completed());
/// ```
#[derive(Clone)]
pub struct ActorSystem {
    pub(crate) inner: Arc<SystemInner>,
    /// Shared by the owning handles; `None` in internal ones.
    // Never read: held for its `Drop`, which terminates the system.
    #[allow(dead_code)]
    pub(crate) owner: Option<Arc<Owner>>,
}

pub(crate) struct SystemInner {
    pub(crate) name: Arc<str>,
    pub(crate) default_throughput: usize,
    /// The shared pool (or, simulated, the simulation's run queue).
    pub(crate) pool: Dispatcher,
    /// The extra pools declared with [`ActorSystemBuilder::pool`].
    pub(crate) named_pools: HashMap<&'static str, Dispatcher>,
    scheduler: Scheduler,
    pub(crate) threads: Arc<Threads>,
    events: EventStream,
    pub(crate) hooks: Option<Hooks>,
    next_uid: AtomicU64,
    next_temp: AtomicU64,
    /// Dropped when the root stops, which breaks the cycle system -> cells.
    pub(crate) guardians: Mutex<Option<Guardians>>,
    pub(crate) terminating: AtomicBool,
    pub(crate) ending: Arc<Ending>,
    pub(crate) shutdown: Arc<crate::system::actor_system::shutdown::Shared>,
    pub(crate) extensions: crate::system::actor_system::extension::Extensions,
    /// The temporary actors of pending asks, by name, for `/temp` lookups.
    temp: Mutex<HashMap<Arc<str>, Weak<dyn AnyActor>, foldhash::fast::RandomState>>,
    /// `/temp`, the parent path of every temporary actor, made once.
    pub(crate) temp_dir: ActorPath,
}

pub(crate) struct Guardians {
    root: ActorHandle,
    user: ActorHandle,
    system: ActorHandle,
}

impl ActorSystem {
    fn owned(inner: Arc<SystemInner>) -> Self {
        let owner = Some(Arc::new(Owner::new(inner.clone())));
        Self { inner, owner }
    }

    /// A handle that does not own the system, for the parts of the system
    /// that keep one (cells, refs): they must not keep it alive.
    pub(crate) fn internal(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            owner: None,
        }
    }

    /// A handle on the same system that does not own it: it does not keep
    /// the system from terminating when the last owning handle is dropped
    /// (see [Dropping the system](#dropping-the-system)), and after that it
    /// sees a terminated system (spawning fails, tells are dead letters).
    /// What [`Context::system`] gives inside an actor.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_actor::ActorSystem;
    ///
    /// let system = ActorSystem::new("non-owning").unwrap();
    /// let handle = system.non_owning();
    /// drop(system); // the last owner: terminates
    /// assert!(handle.when_terminated().is_completed());
    /// ```
    pub fn non_owning(&self) -> Self {
        self.internal()
    }

    /// A system with default settings and the given name.
    ///
    /// # Errors
    ///
    /// As [`ActorSystemBuilder::build`].
    pub fn new(name: &str) -> Result<Self, BuildError> {
        Self::builder().name(name).build()
    }

    /// A builder with default settings.
    pub fn builder() -> ActorSystemBuilder {
        ActorSystemBuilder {
            name: "weir".to_owned(),
            throughput: DEFAULT_THROUGHPUT,
            threads: std::thread::available_parallelism().map_or(1, usize::from),
            pools: Vec::new(),
            throughput_deadline: None,
            instrumentation: Vec::new(),
            clock: None,
            thread_context: None,
            #[cfg(feature = "testkit")]
            simulated: None,
        }
    }

    /// The system's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// Spawn a top-level actor (a child of the `/user` guardian).
    ///
    /// # Errors
    ///
    /// As [`Context::spawn`]; [`SpawnError::ParentStopped`] once the system
    /// is terminating.
    pub fn spawn<A: Actor>(
        &self,
        props: Props<A>,
        name: &str,
    ) -> Result<ActorRef<A::Msg>, SpawnError> {
        spawn_child(&self.user_guardian()?, props, Some(name), 0)
    }

    /// Spawn a top-level actor with a generated name.
    ///
    /// # Errors
    ///
    /// [`SpawnError::ParentStopped`] once the system is terminating.
    pub fn spawn_anonymous<A: Actor>(
        &self,
        props: Props<A>,
    ) -> Result<ActorRef<A::Msg>, SpawnError> {
        spawn_child(&self.user_guardian()?, props, None, 0)
    }

    fn user_guardian(&self) -> Result<ActorHandle, SpawnError> {
        self.inner
            .guardians
            .lock()
            .as_ref()
            .map(|g| g.user.clone())
            .ok_or(SpawnError::ParentStopped)
    }

    /// Spawn an actor under the `/system` guardian (for Weir's own services).
    #[doc(hidden)]
    pub fn spawn_system_actor<A: Actor>(
        &self,
        props: Props<A>,
        name: &str,
    ) -> Result<ActorRef<A::Msg>, SpawnError> {
        let guardian = self
            .inner
            .guardians
            .lock()
            .as_ref()
            .map(|g| g.system.clone());
        spawn_child(
            &guardian.ok_or(SpawnError::ParentStopped)?,
            props,
            Some(name),
            0,
        )
    }

    pub(crate) fn root(&self) -> Option<ActorHandle> {
        self.inner.guardians.lock().as_ref().map(|g| g.root.clone())
    }

    /// Register a pending ask's temporary actor under its name, shared with
    /// its path (no copy).
    pub(crate) fn register_temp(&self, name: Arc<str>, actor: Weak<dyn AnyActor>) {
        self.inner.temp.lock().insert(name, actor);
    }

    pub(crate) fn unregister_temp(&self, name: &str) {
        self.inner.temp.lock().remove(name);
    }

    pub(crate) fn temp_actor(&self, name: &str) -> Option<ActorHandle> {
        let inner = self.inner.temp.lock().get(name)?.upgrade()?;
        Some(ActorHandle { inner })
    }

    /// Before blocking on this system's work: `None` where that could
    /// deadlock (the scheduler's thread, a pool's last free worker).
    pub(crate) fn enter_blocking_wait(&self) -> Option<Option<Blocking<'_>>> {
        #[cfg(feature = "testkit")]
        if crate::core::dispatcher::simulated::in_step() {
            // The one thread of a simulation would wait for itself.
            return None;
        }
        let mut pools = std::iter::once(&self.inner.pool)
            .chain(self.inner.named_pools.values())
            .filter_map(Dispatcher::as_pool);
        match pools.find(|pool| pool.is_own_worker()) {
            _ if self.inner.scheduler.is_timer_thread() => None,
            Some(pool) => pool.enter_blocking().map(Some),
            None => Some(None),
        }
    }

    /// The scheduler: timed and periodic sends and closures.
    pub fn scheduler(&self) -> &Scheduler {
        &self.inner.scheduler
    }

    /// The event stream (dead letters).
    pub fn event_stream(&self) -> &EventStream {
        &self.inner.events
    }

    /// Terminate the system: run its [coordinated
    /// shutdown](crate::system::actor_system::shutdown::CoordinatedShutdown) (as Akka's
    /// `ActorSystem.terminate` does), whose last phase stops every actor,
    /// top-down (user actors first, then system actors), then every thread.
    /// Returns at once; the returned [`Termination`] is a future and has a
    /// blocking [`wait`](Termination::wait). Calling it again is harmless,
    /// also from inside an actor or from a shutdown task (it joins the run
    /// already going on, whose report gives the reason
    /// [`TERMINATE_REASON`](crate::system::actor_system::shutdown::TERMINATE_REASON) when
    /// `terminate` started it).
    ///
    /// With no shutdown task added, the actors start stopping before
    /// `terminate` returns. Tasks run on the system's pool; each phase is
    /// bounded by its time-out, so a task that never finishes delays
    /// termination by that time-out, no more, even one that blocks its
    /// thread. The actors' stopping is bounded too, by the
    /// [`ActorSystemTerminate`](crate::system::actor_system::shutdown::Phase::ActorSystemTerminate)
    /// phase's time-out: an actor that does not stop by then (its thread
    /// blocked in a system call, say) is left behind, with the threads
    /// still running a short grace (100 ms) after the pools were shut
    /// down, and the [`TerminationReport`](crate::TerminationReport) lists
    /// them. Termination never waits for ever.
    pub fn terminate(&self) -> Termination {
        if !self.is_terminating() {
            drop(
                self.coordinated_shutdown()
                    .run(crate::system::actor_system::shutdown::TERMINATE_REASON),
            );
        }
        self.when_terminated()
    }

    /// Stop every actor, top-down, then every thread, without the
    /// coordinated shutdown: its last phase ends with this.
    pub(crate) fn stop_actors(&self) {
        if !self.inner.terminating.swap(true, Ordering::AcqRel)
            && let Some(user) = self.inner.guardians.lock().as_ref().map(|g| g.user.clone())
        {
            user.stop();
        }
        self.bound_stopping();
    }

    /// Completes when the system has terminated, without starting it.
    pub fn when_terminated(&self) -> Termination {
        Termination::new(self.inner.clone())
    }

    pub(crate) fn is_terminating(&self) -> bool {
        self.inner.terminating.load(Ordering::Acquire)
    }

    pub(crate) fn next_uid(&self) -> u64 {
        self.inner.next_uid.fetch_add(1, Ordering::Relaxed)
    }

    /// The name of the next temporary actor, for an ask sent to an actor
    /// called `target`.
    pub(crate) fn next_temp_name(&self, target: &str) -> Arc<str> {
        crate::name::temp_name(target, self.inner.next_temp.fetch_add(1, Ordering::Relaxed))
    }

    /// The root guardian has stopped: every actor is gone. Stop the threads.
    pub(crate) fn root_stopped(&self) {
        self.tear_down();
    }
}

impl fmt::Debug for ActorSystem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ActorSystem")
            .field("name", &self.inner.name)
            .finish_non_exhaustive()
    }
}

/// The `/user` and `/system` guardians: parents of top-level actors, with the
/// default strategy (restart).
struct Guardian;

impl Actor for Guardian {
    type Msg = Infallible;

    fn receive(&mut self, _: &mut Context<Self>, msg: Infallible) {
        match msg {}
    }
}

/// The root: watches `/user`; when it stops, stops `/system`; when that stops,
/// stops itself, which ends the system. A guardian that escalates a failure
/// is stopped, so escalation to the top terminates the system (as in Akka).
struct RootGuardian;

impl Actor for RootGuardian {
    type Msg = Infallible;

    fn pre_start(&mut self, ctx: &mut Context<Self>) {
        // `child_entry`, not `child`: `terminate` may have stopped `/user`
        // before the root first ran, and the watch must still be placed (it
        // then answers at once).
        if let Some(user) = ctx.child_entry("user") {
            ctx.watch(user);
        }
    }

    fn receive(&mut self, _: &mut Context<Self>, msg: Infallible) {
        match msg {}
    }

    fn on_terminated(&mut self, ctx: &mut Context<Self>, terminated: Terminated) {
        ctx.system()
            .inner
            .terminating
            .store(true, Ordering::Release);
        // Stopping without the coordinated shutdown (an escalated failure)
        // is bounded too.
        ctx.system().bound_stopping();
        match ctx
            .child_entry("system")
            .filter(|_| terminated.actor().path().name() == "user")
        {
            Some(system_guardian) => {
                ctx.watch(&system_guardian);
                ctx.stop(system_guardian);
            }
            None => ctx.stop_self(),
        }
    }

    fn supervisor_strategy(&self) -> SupervisorStrategy {
        SupervisorStrategy::one_for_one().with_decider(|_| Directive::Stop)
    }
}
