//! [`ActorSystemBuilder`]: a system's name, threads, pools, throughput,
//! instrumentation and clock, and `build`, which starts it.

use std::collections::HashMap;
use std::fmt;

use super::services;
use super::termination::Ending;
use super::{ActorSystem, Guardian, Guardians, NEXT_SYSTEM_ID, RootGuardian, SystemInner};
use crate::core::actor::Props;
use crate::core::cell::{new_root, spawn_child};
use crate::core::instrument::{Hooks, Installed, Instrumentation};
use crate::error::BuildError;
use crate::name::validate_name;
use crate::path::ActorPath;
use crate::sync::{Arc, AtomicBool, AtomicU64, Mutex, Ordering};
use crate::system::events::EventStream;
use crate::threads::{ThreadContext, Threads};

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
    pub(super) name: String,
    pub(super) throughput: usize,
    pub(super) threads: usize,
    pub(super) pools: Vec<(&'static str, usize, Option<std::time::Duration>)>,
    pub(super) throughput_deadline: Option<std::time::Duration>,
    pub(super) instrumentation: Vec<Box<dyn Installed>>,
    pub(super) clock: Option<crate::core::scheduler::TestClock>,
    pub(super) thread_context: Option<ThreadContext>,
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
    /// Default [`DEFAULT_THROUGHPUT`](crate::DEFAULT_THROUGHPUT).
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
            temp_dir: ActorPath::root(system_name.clone(), 0).child(crate::name::TEMP, 0),
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
