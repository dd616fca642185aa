//! The actor system: guardians, dispatcher, scheduler, event stream and
//! termination.

use std::collections::HashMap;
use std::convert::Infallible;
use std::fmt;

use crate::core::actor::{Actor, Props, Terminated};
use crate::core::actor_ref::{ActorHandle, ActorRef, AnyActor};
use crate::core::cell::{new_root, spawn_child};
use crate::core::context::Context;
use crate::core::dispatcher::Dispatcher;
use crate::core::dispatcher::pool::Blocking;
use crate::core::instrument::{Hooks, Installed, Instrumentation};
use crate::core::scheduler::Scheduler;
use crate::error::{BuildError, SpawnError};
use crate::name::validate_name;
use crate::path::ActorPath;
use crate::supervision::{Directive, SupervisorStrategy};
use crate::sync::{Arc, AtomicBool, AtomicU64, AtomicUsize, Mutex, Ordering, Weak};
use crate::system::events::EventStream;
use crate::system::termination::{Ending, Owner, Termination};
use crate::threads::{ThreadContext, Threads};

mod dispatchers;
mod services;

/// Default messages per run before an actor yields its thread.
pub const DEFAULT_THROUGHPUT: usize = 32;

static NEXT_SYSTEM_ID: AtomicUsize = AtomicUsize::new(1);

/// Builds an [`ActorSystem`].
///
/// # Examples
///
/// ```
/// use weir_actor::ActorSystem;
///
/// let system = ActorSystem::builder().name("tuned").throughput(64).threads(2).build().unwrap();
/// assert_eq!(system.name(), "tuned");
/// system.terminate().wait().unwrap();
/// ```
#[derive(Clone)]
pub struct ActorSystemBuilder {
    name: String,
    throughput: usize,
    threads: usize,
    pools: Vec<(&'static str, usize, Option<std::time::Duration>)>,
    throughput_deadline: Option<std::time::Duration>,
    instrumentation: Vec<Box<dyn Installed>>,
    clock: Option<crate::core::scheduler::TestClock>,
    thread_context: Option<ThreadContext>,
    /// Set by `Simulation`: every dispatcher is its run queue, and no
    /// thread is started.
    #[cfg(feature = "testkit")]
    pub(crate) simulated: Option<Arc<crate::core::dispatcher::simulated::RunQueue>>,
}

impl fmt::Debug for ActorSystemBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ActorSystemBuilder")
            .field("name", &self.name)
            .field("throughput", &self.throughput)
            .field("threads", &self.threads)
            .field("pools", &self.pools)
            .field("throughput_deadline", &self.throughput_deadline)
            .field("instrumentation", &self.instrumentation.len())
            .field("clock", &self.clock)
            .field("thread_context", &self.thread_context.is_some())
            .finish()
    }
}

impl ActorSystemBuilder {
    /// The system's name (first element of every path). Follows the actor
    /// name rules. Default `weir`.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Default messages per run for actors whose props do not set one.
    /// Default [`DEFAULT_THROUGHPUT`].
    pub fn throughput(mut self, throughput: usize) -> Self {
        self.throughput = throughput;
        self
    }

    /// Worker threads in the shared pool. Default: one per core.
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }

    /// Declare an extra pool of `threads` threads for actors whose props say
    /// [`DispatcherKind::Named(name)`](crate::DispatcherKind::Named), to keep
    /// their work apart from the shared pool (which stays the default).
    pub fn pool(mut self, name: &'static str, threads: usize) -> Self {
        self.pools.push((name, threads, None));
        self
    }

    /// Like [`pool`](Self::pool), with its own throughput deadline (see
    /// [`throughput_deadline`](Self::throughput_deadline)).
    pub fn pool_with_deadline(
        mut self,
        name: &'static str,
        threads: usize,
        deadline: std::time::Duration,
    ) -> Self {
        self.pools.push((name, threads, Some(deadline)));
        self
    }

    /// Make an actor on the shared pool yield its thread once a run has taken
    /// this long, even before it has processed `throughput` messages (Akka's
    /// `throughput-deadline-time`). Named pools take theirs from
    /// [`pool_with_deadline`](Self::pool_with_deadline). Costs a clock read
    /// per message while set.
    pub fn throughput_deadline(mut self, deadline: std::time::Duration) -> Self {
        self.throughput_deadline = Some(deadline);
        self
    }

    /// Install an [`Instrumentation`]: it is called before and after every
    /// message of every actor of this system. Several can be installed; the
    /// first is outermost (called first before a message, last after it).
    /// Takes an `Arc` of the hook's own type (called without a second
    /// indirection) or an `Arc<dyn Instrumentation>`.
    pub fn instrumentation<H: Instrumentation + ?Sized>(mut self, hook: Arc<H>) -> Self {
        self.instrumentation
            .push(crate::core::instrument::installed(hook));
        self
    }

    /// Make every timer of the system read `clock` instead of the real
    /// time: nothing fires until the test advances it (see
    /// [`TestClock`](crate::core::scheduler::TestClock)).
    #[cfg(feature = "testkit")]
    pub fn clock(mut self, clock: crate::core::scheduler::TestClock) -> Self {
        self.clock = Some(clock);
        self
    }

    /// Run the whole work of every thread the system starts (the shared
    /// pool's workers, named pools, pinned actors' threads, the timer
    /// thread) inside `context`: it is given the thread's work and calls
    /// it, so whatever it sets up lives for the thread's whole life. Every
    /// actor, stream island and task then runs in that context, and every
    /// future Weir polls on its threads (`pipe_to_self`, `spawn_task`,
    /// `map_async`'s futures) can use what it provides. This is how
    /// futures that need a tokio runtime's reactor or timers run on Weir's
    /// pool: weir-interop's `TokioContext::tokio_context(handle)` enters
    /// the runtime here.
    ///
    /// `context` should call the work once. If it returns or panics
    /// without calling it, the work runs after it anyway (a thread that
    /// never ran would hang the system); a second call does nothing.
    /// Threads of the caller (a test's own thread blocking on a result) are
    /// not the system's and do not run in `context`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::cell::Cell;
    /// use weir_actor::ActorSystem;
    ///
    /// thread_local! { static TENANT: Cell<u32> = const { Cell::new(0) }; }
    /// let system = ActorSystem::builder()
    ///     .thread_context(|work| {
    ///         TENANT.with(|t| t.set(7));
    ///         work();
    ///     })
    ///     .build()
    ///     .unwrap();
    /// let (reply, seen) = std::sync::mpsc::channel();
    /// system.spawn_task(async move { reply.send(TENANT.with(Cell::get)).unwrap() }).unwrap();
    /// assert_eq!(seen.recv().unwrap(), 7);
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn thread_context(
        mut self,
        context: impl Fn(&mut dyn FnMut()) + Send + Sync + 'static,
    ) -> Self {
        self.thread_context = Some(Arc::new(context));
        self
    }

    /// Start the system: its threads and guardians.
    ///
    /// # Errors
    ///
    /// [`BuildError::InvalidName`] (for the system or a pool name),
    /// [`BuildError::Zero`] for a zero throughput, thread count or deadline,
    /// [`BuildError::DuplicatePool`], [`BuildError::ThreadSpawn`] when the
    /// operating system refuses a thread.
    pub fn build(self) -> Result<ActorSystem, BuildError> {
        validate_name(&self.name).map_err(BuildError::InvalidName)?;
        if self.throughput == 0 {
            return Err(BuildError::Zero("throughput"));
        }
        if self.threads == 0 || self.pools.iter().any(|&(_, n, _)| n == 0) {
            return Err(BuildError::Zero("threads"));
        }
        for (i, &(name, _, _)) in self.pools.iter().enumerate() {
            validate_name(name).map_err(BuildError::InvalidName)?;
            if self.pools[..i].iter().any(|&(other, _, _)| other == name) {
                return Err(BuildError::DuplicatePool(name));
            }
        }
        let deadlines =
            std::iter::once(self.throughput_deadline).chain(self.pools.iter().map(|p| p.2));
        if deadlines.flatten().any(|d| d.is_zero()) {
            return Err(BuildError::Zero("throughput_deadline"));
        }
        let id = NEXT_SYSTEM_ID.fetch_add(1, Ordering::Relaxed);
        let ending = Arc::new(Ending::default());
        let on_exit = ending.clone();
        let threads = Arc::new(Threads::new(
            id,
            Box::new(move || on_exit.finish(Vec::new())),
            self.thread_context.clone(),
        ));
        let (pool, named_pools, scheduler) = match self.start_dispatchers(&threads) {
            Ok(started) => started,
            Err(e) => {
                threads.release_system_count();
                return Err(BuildError::ThreadSpawn(e.to_string()));
            }
        };
        ending.set_scheduler(scheduler.clone());
        let hooks = Hooks::new(self.instrumentation);
        let system_name: Arc<str> = self.name.into();
        let system = ActorSystem::owned(Arc::new(SystemInner {
            events: EventStream::new(hooks.clone()),
            hooks,
            name: system_name.clone(),
            default_throughput: self.throughput,
            pool,
            named_pools,
            scheduler,
            threads,
            next_uid: AtomicU64::new(1),
            next_temp: AtomicU64::new(0),
            guardians: Mutex::new(None),
            terminating: AtomicBool::new(false),
            ending,
            temp: Mutex::new(HashMap::default()),
            temp_dir: ActorPath::root(system_name.clone(), 0)
                .child(crate::name::TEMP, 0),
            shutdown: Arc::default(),
            extensions: Default::default(),
        }));
        let services = Arc::new(services::Services(system.internal()));
        let root = new_root(
            services,
            system.inner.name.clone(),
            Props::new(|| RootGuardian),
        )
        .map_err(|e| BuildError::ThreadSpawn(e.to_string()))?;
        let guardian = |name| {
            spawn_child(&root, Props::new(|| Guardian), Some(name), 0)
                .expect("a fresh root takes its guardians")
                .handle()
        };
        let user = guardian("user");
        let system_guardian = guardian("system");
        *system.inner.guardians.lock() = Some(Guardians {
            root: root.clone(),
            user,
            system: system_guardian,
        });
        // The root was created holding its run token; start it now that the
        // guardians it watches exist.
        root.inner.schedule();
        Ok(system)
    }
}

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
    pub(crate) shutdown: Arc<crate::system::shutdown::Shared>,
    pub(crate) extensions: crate::system::extension::Extensions,
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
    /// shutdown](crate::system::shutdown::CoordinatedShutdown) (as Akka's
    /// `ActorSystem.terminate` does), whose last phase stops every actor,
    /// top-down (user actors first, then system actors), then every thread.
    /// Returns at once; the returned [`Termination`] is a future and has a
    /// blocking [`wait`](Termination::wait). Calling it again is harmless,
    /// also from inside an actor or from a shutdown task (it joins the run
    /// already going on, whose report gives the reason
    /// [`TERMINATE_REASON`](crate::system::shutdown::TERMINATE_REASON) when
    /// `terminate` started it).
    ///
    /// With no shutdown task added, the actors start stopping before
    /// `terminate` returns. Tasks run on the system's pool; each phase is
    /// bounded by its time-out, so a task that never finishes delays
    /// termination by that time-out, no more, even one that blocks its
    /// thread. The actors' stopping is bounded too, by the
    /// [`ActorSystemTerminate`](crate::system::shutdown::Phase::ActorSystemTerminate)
    /// phase's time-out: an actor that does not stop by then (its thread
    /// blocked in a system call, say) is left behind, with the threads
    /// still running a short grace (100 ms) after the pools were shut
    /// down, and the [`TerminationReport`](crate::TerminationReport) lists
    /// them. Termination never waits for ever.
    pub fn terminate(&self) -> Termination {
        if !self.is_terminating() {
            drop(
                self.coordinated_shutdown()
                    .run(crate::system::shutdown::TERMINATE_REASON),
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
