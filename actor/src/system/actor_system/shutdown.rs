//! Coordinated shutdown (Akka's `CoordinatedShutdown`): tasks registered
//! in named phases that run in a fixed order before the system terminates,
//! each phase bounded by a time-out, so that a service stops taking work,
//! drains what it has and closes its resources before its actors go.
//!
//! The run is a small state machine layered above the core: each task's
//! future runs on the shared pool as a detached task (the machinery behind
//! [`ActorRef::pipe`](crate::ActorRef::pipe)) that counts the phase down
//! when it ends, and the phase's time-out is a scheduler job (so a test
//! clock drives it in tests).
//! Whichever comes first, the last task or the time-out, starts the next
//! phase; a task still running then is reported and left behind, never
//! waited for. The last phase terminates the system.

use std::fmt;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use crate::core::scheduler::Cancellable;
use crate::core::task::PipeTask;
use crate::error::WaitError;
use crate::sync::{Arc, Mutex};
use crate::system::actor_system::ActorSystem;
use crate::system::promise::Promise;

/// The phases of a coordinated shutdown, in the order they run (Akka's,
/// without the cluster phases Weir has no use for).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Phase {
    /// Before anything is unbound.
    BeforeServiceUnbind,
    /// Stop accepting new work: unbind listeners, leave load balancers.
    ServiceUnbind,
    /// Wait for requests in flight to finish.
    ServiceRequestsDone,
    /// Stop services: close streams, connections, pools.
    ServiceStop,
    /// Last chance before the actors stop.
    BeforeActorSystemTerminate,
    /// The system terminates after this phase's tasks.
    ActorSystemTerminate,
}

impl Phase {
    /// Every phase, in order.
    pub const ALL: [Phase; 6] = [
        Phase::BeforeServiceUnbind,
        Phase::ServiceUnbind,
        Phase::ServiceRequestsDone,
        Phase::ServiceStop,
        Phase::BeforeActorSystemTerminate,
        Phase::ActorSystemTerminate,
    ];

    /// Akka's name for the phase (`"service-unbind"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Phase::BeforeServiceUnbind => "before-service-unbind",
            Phase::ServiceUnbind => "service-unbind",
            Phase::ServiceRequestsDone => "service-requests-done",
            Phase::ServiceStop => "service-stop",
            Phase::BeforeActorSystemTerminate => "before-actor-system-terminate",
            Phase::ActorSystemTerminate => "actor-system-terminate",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// The reason in the report of a shutdown that
/// [`ActorSystem::terminate`] started (Akka's `ActorSystemTerminateReason`).
pub const TERMINATE_REASON: &str = "actor-system-terminate";

/// How long a phase may take when none is set (Akka's default, 5 s).
pub const DEFAULT_PHASE_TIMEOUT: Duration = Duration::from_secs(5);

/// Why [`CoordinatedShutdown::add_task`] refused a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ShutdownError {
    /// The system is terminating, or the shutdown has run every phase: no
    /// task added now would run.
    AlreadyStarted,
    /// The running shutdown has reached this phase (it runs or has run):
    /// a task added to it now would never run. Later phases still take
    /// tasks.
    PhaseStarted(Phase),
}

impl fmt::Display for ShutdownError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::AlreadyStarted => f.write_str("the coordinated shutdown has already run"),
            Self::PhaseStarted(phase) => write!(
                f,
                "the coordinated shutdown has already reached its phase {}",
                phase.name()
            ),
        }
    }
}

impl std::error::Error for ShutdownError {}

/// What happened to one task.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TaskOutcome {
    /// Its future completed within the phase's time-out.
    Done,
    /// It panicked, with this message.
    Panicked(String),
    /// It was still running when the phase timed out; it was left behind.
    TimedOut,
}

/// The result of a coordinated shutdown: its reason and every task's
/// outcome, in phase order (tasks of one phase in the order they were added).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShutdownReport {
    /// The reason given to [`CoordinatedShutdown::run`] that started it.
    pub reason: String,
    /// `(phase, task name, outcome)` for every task.
    pub tasks: Vec<(Phase, String, TaskOutcome)>,
}

impl ShutdownReport {
    /// Whether every task finished in time without panicking.
    pub fn all_done(&self) -> bool {
        self.tasks
            .iter()
            .all(|(_, _, outcome)| *outcome == TaskOutcome::Done)
    }
}

type BoxFuture = Pin<Box<dyn Future<Output = ()> + Send>>;
type BoxTask = Box<dyn FnOnce() -> BoxFuture + Send>;

/// One system's shutdown: held by the system, shared with the callbacks
/// of a run.
#[derive(Default)]
pub(crate) struct Shared {
    state: Mutex<State>,
    /// Completed when the last phase has run (the system is then told to
    /// terminate).
    done: Promise<()>,
}

#[derive(Default)]
struct State {
    /// Tasks not started yet, in the order they were added.
    tasks: Vec<(Phase, String, BoxTask)>,
    timeouts: [Option<Duration>; 6],
    /// `Some` once `run` was called.
    run: Option<Run>,
    report: Option<ShutdownReport>,
}

struct Run {
    /// The phase running now (`Phase::ALL.len()` once finished).
    phase: usize,
    /// Bumped per phase: a completion or time-out from an earlier phase is
    /// recognised and ignored.
    generation: u64,
    /// Indexes into the report of the current phase's tasks still running.
    pending: Vec<usize>,
    timer: Option<Cancellable>,
}

impl Shared {
    /// How long `phase` may take.
    pub(crate) fn phase_timeout(&self, phase: Phase) -> Duration {
        self.state.lock().timeouts[phase.index()].unwrap_or(DEFAULT_PHASE_TIMEOUT)
    }

    /// Start the phases from `run.phase` on, skipping those with no task;
    /// after the last one, complete `done` and terminate the system.
    fn start_phase(self: &Arc<Self>, system: &ActorSystem) {
        let mut state = self.state.lock();
        loop {
            let State {
                tasks,
                timeouts,
                run,
                report,
            } = &mut *state;
            let (Some(run), Some(report)) = (run.as_mut(), report.as_mut()) else {
                unreachable!("started by run")
            };
            let Some(&phase) = Phase::ALL.get(run.phase) else {
                drop(state);
                let _ = self.done.complete(());
                system.stop_actors();
                return;
            };
            let mine: Vec<(String, BoxTask)> = extract(tasks, |(p, _, _)| *p == phase)
                .into_iter()
                .map(|(_, name, task)| (name, task))
                .collect();
            if mine.is_empty() {
                run.phase += 1;
                continue;
            }
            run.generation += 1;
            let generation = run.generation;
            let first = report.tasks.len();
            report.tasks.extend(
                mine.iter()
                    .map(|(name, _)| (phase, name.clone(), TaskOutcome::TimedOut)),
            );
            run.pending = (first..report.tasks.len()).collect();
            let timeout = timeouts[phase.index()].unwrap_or(DEFAULT_PHASE_TIMEOUT);
            let on_timeout = (self.clone(), system.internal());
            run.timer = Some(system.scheduler().schedule_once_fn(timeout, move || {
                let (shared, system) = on_timeout;
                shared.phase_ended(&system, generation, None);
            }));
            drop(state);
            for (offset, (_, task)) in mine.into_iter().enumerate() {
                let (shared, system_for_task) = (self.clone(), system.internal());
                spawn_detached(system, async move {
                    let outcome = Guarded(catch_unwind(AssertUnwindSafe(task)).ok()).await;
                    shared.phase_ended(
                        &system_for_task,
                        generation,
                        Some((first + offset, outcome)),
                    );
                });
            }
            return;
        }
    }

    /// A task of phase `generation` finished with `outcome`, or (`None`)
    /// its time-out fired. Starts the next phase when this ends the current one.
    fn phase_ended(
        self: &Arc<Self>,
        system: &ActorSystem,
        generation: u64,
        finished: Option<(usize, TaskOutcome)>,
    ) {
        let mut state = self.state.lock();
        let State { run, report, .. } = &mut *state;
        let (Some(run), Some(report)) = (run.as_mut(), report.as_mut()) else {
            return;
        };
        if run.generation != generation {
            return; // a late task or time-out of a phase that already ended
        }
        match finished {
            Some((index, outcome)) => {
                report.tasks[index].2 = outcome;
                run.pending.retain(|&i| i != index);
                if !run.pending.is_empty() {
                    return;
                }
                if let Some(timer) = run.timer.take() {
                    timer.cancel();
                }
            }
            None => run.pending.clear(), // they stay `TimedOut`
        }
        // The phase has ended: whatever of it comes later is late, also
        // when no later phase has a task (which would bump it again).
        run.generation += 1;
        run.phase += 1;
        drop(state);
        self.start_phase(system);
    }
}

/// Remove and return the elements of `v` that match, keeping the others'
/// order.
fn extract<T>(v: &mut Vec<T>, matches: impl Fn(&T) -> bool) -> Vec<T> {
    let (taken, kept) = std::mem::take(v).into_iter().partition(|x| matches(x));
    *v = kept;
    taken
}

/// A task's future, with a panic in it caught as the task's outcome
/// (`None`: the closure making the future panicked).
struct Guarded(Option<BoxFuture>);

impl Future for Guarded {
    type Output = TaskOutcome;

    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<TaskOutcome> {
        let Some(future) = self.0.as_mut() else {
            return Poll::Ready(TaskOutcome::Panicked(
                "the task panicked before it returned its future".into(),
            ));
        };
        match catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx))) {
            Ok(Poll::Ready(())) => Poll::Ready(TaskOutcome::Done),
            Ok(Poll::Pending) => Poll::Pending,
            Err(panic) => Poll::Ready(TaskOutcome::Panicked(panic_message(&*panic))),
        }
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic with a non-text payload".to_owned())
}

/// A system's coordinated shutdown: add tasks to phases, then
/// [`run`](Self::run) them in order; the last phase terminates the system.
/// Reached with [`ActorSystem::coordinated_shutdown`].
///
/// The tasks of one phase run concurrently, as futures on the system's
/// pool; the next phase starts when they have all finished or the phase's
/// time-out ([`DEFAULT_PHASE_TIMEOUT`] unless set) has passed. A task that
/// is still running then is reported as [`TaskOutcome::TimedOut`] and left
/// behind; a task that panics is reported as [`TaskOutcome::Panicked`].
/// Neither stops the shutdown.
///
/// [`ActorSystem::terminate`] (and dropping the last owning handle of the
/// system) runs it too, with the reason [`TERMINATE_REASON`]; `run` lets
/// you give your own reason and wait for the report.
///
/// # Examples
///
/// ```
/// use std::sync::atomic::{AtomicBool, Ordering};
/// use std::sync::Arc;
/// use weir_actor::ActorSystem;
/// use weir_actor::shutdown::{Phase, TaskOutcome};
///
/// let system = ActorSystem::new("service").unwrap();
/// let closed = Arc::new(AtomicBool::new(false));
/// let flag = closed.clone();
/// let shutdown = system.coordinated_shutdown();
/// shutdown
///     .add_task(Phase::ServiceStop, "close-pool", move || async move {
///         flag.store(true, Ordering::SeqCst);
///     })
///     .unwrap();
/// let report = shutdown.run("deploy").wait().unwrap();
/// assert!(closed.load(Ordering::SeqCst));
/// assert_eq!(report.tasks, [(Phase::ServiceStop, "close-pool".to_owned(), TaskOutcome::Done)]);
/// assert!(system.when_terminated().is_completed());
/// ```
#[derive(Debug)]
pub struct CoordinatedShutdown<'a> {
    system: &'a ActorSystem,
}

impl<'a> CoordinatedShutdown<'a> {
    pub(crate) fn new(system: &'a ActorSystem) -> Self {
        Self { system }
    }

    fn shared(&self) -> &Arc<Shared> {
        &self.system.inner.shutdown
    }

    /// Add a task to `phase`: `task` is called when the phase starts and
    /// the future it returns is run to completion on the system's pool.
    ///
    /// A running shutdown still takes tasks for the phases it has not
    /// reached: a task of an earlier phase (or a service starting meanwhile)
    /// may add one to a later phase, and it runs there (as in Akka).
    ///
    /// # Errors
    ///
    /// [`ShutdownError::PhaseStarted`] when the running shutdown has
    /// reached `phase` (it runs or has run); [`ShutdownError::AlreadyStarted`]
    /// when every phase has run or the system is terminating without the
    /// shutdown (an escalated failure stopped it).
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_actor::ActorSystem;
    /// use weir_actor::shutdown::{Phase, ShutdownError};
    ///
    /// let system = ActorSystem::new("late-task").unwrap();
    /// let inner = system.non_owning();
    /// system
    ///     .coordinated_shutdown()
    ///     .add_task(Phase::ServiceUnbind, "unbind", move || {
    ///         let shutdown = inner.coordinated_shutdown();
    ///         // A later phase still takes tasks; this one has started.
    ///         assert!(shutdown.add_task(Phase::ServiceStop, "close", || async {}).is_ok());
    ///         assert_eq!(
    ///             shutdown.add_task(Phase::ServiceUnbind, "too-late", || async {}),
    ///             Err(ShutdownError::PhaseStarted(Phase::ServiceUnbind))
    ///         );
    ///         std::future::ready(())
    ///     })
    ///     .unwrap();
    /// let report = system.coordinated_shutdown().run("deploy").wait().unwrap();
    /// assert_eq!(report.tasks.len(), 2);
    /// ```
    pub fn add_task<F, Fut>(
        &self,
        phase: Phase,
        name: impl Into<String>,
        task: F,
    ) -> Result<(), ShutdownError>
    where
        F: FnOnce() -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let mut state = self.shared().state.lock();
        match &state.run {
            // `run.phase` only grows, under this lock, and a phase takes its
            // tasks when the run reaches it (`start_phase`): a task for a
            // later phase is there in time.
            Some(run) if run.phase >= Phase::ALL.len() => {
                return Err(ShutdownError::AlreadyStarted);
            }
            Some(run) if phase.index() <= run.phase => {
                return Err(ShutdownError::PhaseStarted(phase));
            }
            Some(_) => {}
            None if self.system.is_terminating() => return Err(ShutdownError::AlreadyStarted),
            None => {}
        }
        state.tasks.push((
            phase,
            name.into(),
            Box::new(move || Box::pin(task()) as BoxFuture),
        ));
        Ok(())
    }

    /// How long `phase` may take before its unfinished tasks are left
    /// behind (default [`DEFAULT_PHASE_TIMEOUT`]). Applies to a run that
    /// has not reached the phase yet.
    pub fn set_phase_timeout(&self, phase: Phase, timeout: Duration) {
        self.shared().state.lock().timeouts[phase.index()] = Some(timeout);
    }

    /// Run the phases in order, then terminate the system; `reason` goes
    /// into the report. Runs once: a later call (or one racing it) returns
    /// a handle on the same run and its reason is ignored.
    ///
    /// On a system that is already terminating without it (an escalated
    /// failure stopped the root guardian), no task runs: the actors they
    /// were meant for are going or gone.
    pub fn run(&self, reason: impl Into<String>) -> ShutdownHandle {
        let handle = ShutdownHandle {
            shared: self.shared().clone(),
            system: self.system.internal(),
        };
        let mut state = self.shared().state.lock();
        if state.run.is_none() {
            // Skipping to the end completes the run (and its waiters).
            let phase = if self.system.is_terminating() {
                Phase::ALL.len()
            } else {
                0
            };
            state.run = Some(Run {
                phase,
                generation: 0,
                pending: Vec::new(),
                timer: None,
            });
            state.report = Some(ShutdownReport {
                reason: reason.into(),
                tasks: Vec::new(),
            });
            drop(state);
            self.shared().start_phase(self.system);
        }
        handle
    }

    /// Whether [`run`](Self::run) has been called.
    pub fn is_started(&self) -> bool {
        self.shared().state.lock().run.is_some()
    }
}

/// A running (or finished) coordinated shutdown; wait for its report.
pub struct ShutdownHandle {
    shared: Arc<Shared>,
    system: ActorSystem,
}

impl ShutdownHandle {
    /// Block until every phase has run and the system has terminated (its
    /// threads joined); returns the report.
    ///
    /// # Errors
    ///
    /// [`WaitError::OnDispatcherThread`] on one of the system's own
    /// threads, which the shutdown needs.
    pub fn wait(self) -> Result<ShutdownReport, WaitError> {
        if self.system.inner.threads.is_own_thread() {
            return Err(WaitError::OnDispatcherThread);
        }
        self.shared.done.wait_completed();
        self.system.when_terminated().wait()?;
        Ok(self.report())
    }

    /// The report so far: tasks of phases not reached yet are missing, and
    /// tasks of the running phase read `TimedOut` until they finish.
    pub fn report(&self) -> ShutdownReport {
        self.shared
            .state
            .lock()
            .report
            .clone()
            .expect("a handle exists only once run started")
    }

    /// Whether every phase has run.
    pub fn is_finished(&self) -> bool {
        self.shared.done.is_completed()
    }
}

impl fmt::Debug for ShutdownHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ShutdownHandle")
            .field("finished", &self.is_finished())
            .finish()
    }
}

impl ActorSystem {
    /// This system's [`CoordinatedShutdown`]: tasks in phases that run
    /// before the system terminates.
    pub fn coordinated_shutdown(&self) -> CoordinatedShutdown<'_> {
        CoordinatedShutdown::new(self)
    }
}

/// Run `future` on `system`'s shared pool as a task of its own: the future
/// reports its result itself. A panic in it is caught and drops it.
fn spawn_detached<F>(system: &ActorSystem, future: F)
where
    F: Future<Output = ()> + Send + 'static,
{
    PipeTask::new(Some(future), None, system.inner.pool.clone()).schedule();
}
