//! How a system ends: [`Termination`], the completion `terminate` returns,
//! with its [`TerminationReport`]; the bound on how long the actors may
//! take to stop; and the owner shared by the owning handles, which
//! terminates the system when the last of them is dropped.
//!
//! Termination completes in one of two ways, whichever comes first
//! ([`Ending::finish`] runs once):
//! - every counted thread has exited after the root guardian stopped (the
//!   last one to exit finishes it, with a clean report);
//! - the stop bound passes: the actors were told to stop (the coordinated
//!   shutdown's last phase ended, or an escalated failure stopped `/user`)
//!   and the `ActorSystemTerminate` phase's time-out has passed since. The
//!   actors still running are listed, the pools and the rest torn down as
//!   if the root had stopped, the threads given [`THREAD_EXIT_GRACE`] to
//!   exit, and those still running then (blocked in user code: a system
//!   call, a lock) are left behind, listed and not joined.
//!
//! The timer thread that runs the bound does not count (see
//! `Threads::spawn_uncounted`): it is shut down when termination finishes.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use crate::core::actor_ref::ActorHandle;
use crate::core::scheduler::Scheduler;
use crate::error::WaitError;
use crate::path::ActorPath;
use crate::sync::{Arc, AtomicBool, Mutex, OnceLock, Ordering};
use crate::system::actor_system::shutdown::Phase;
use crate::system::actor_system::{ActorSystem, SystemInner};
use crate::system::promise::Promise;

/// How long a termination that gave up on its actors waits for the
/// system's threads to exit once their pools are shut down: an idle worker
/// exits within microseconds of being woken; this leaves room for a loaded
/// machine. A thread still running after it is left behind.
pub(crate) const THREAD_EXIT_GRACE: Duration = Duration::from_millis(100);

/// What a termination left behind: empty when every actor stopped and
/// every thread finished. A termination leaves things behind only when
/// the actors did not all stop within the `ActorSystemTerminate` phase's
/// time-out (see [`ActorSystem::terminate`]).
///
/// # Examples
///
/// ```
/// let system = weir_actor::ActorSystem::new("clean").unwrap();
/// let report = system.terminate().wait().unwrap();
/// assert!(report.is_clean());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TerminationReport {
    /// The actors that had not stopped when the time-out passed (not
    /// counting parents that waited only for them).
    pub actors: Vec<ActorPath>,
    /// The names of the system's threads still running then (blocked in a
    /// system call or in user code that does not return): they are not
    /// joined, and run on until what blocks them returns.
    pub threads: Vec<String>,
}

impl TerminationReport {
    /// Whether nothing was left behind.
    pub fn is_clean(&self) -> bool {
        self.actors.is_empty() && self.threads.is_empty()
    }
}

/// How one system ends: its termination's completion and report.
#[derive(Default)]
pub(crate) struct Ending {
    promise: Promise<()>,
    report: Mutex<TerminationReport>,
    /// Set once `finish` ran.
    finished: AtomicBool,
    /// Set once the stop bound is armed.
    bounded: AtomicBool,
    /// Set once the pools were shut down (the root stopped, or the bound
    /// gave up on it).
    torn_down: AtomicBool,
    /// Shut down when termination finishes (set once built).
    scheduler: OnceLock<Scheduler>,
}

impl Ending {
    pub(crate) fn set_scheduler(&self, scheduler: Scheduler) {
        let _ = self.scheduler.set(scheduler);
    }

    /// The first call ends the system: `threads` is what it left running.
    pub(crate) fn finish(&self, threads: Vec<String>) {
        if self.finished.swap(true, Ordering::AcqRel) {
            return;
        }
        self.report.lock().threads = threads;
        if let Some(scheduler) = self.scheduler.get() {
            scheduler.shutdown();
        }
        let _ = self.promise.complete(());
    }

    /// Record the actors a giving up leaves behind, unless termination
    /// finished meanwhile.
    fn note_actors(&self, actors: Vec<ActorPath>) {
        let mut report = self.report.lock();
        if !self.finished.load(Ordering::Acquire) {
            report.actors = actors;
        }
    }

    /// Whether the pools have been shut down already (and mark them so).
    pub(crate) fn tear_down_once(&self) -> bool {
        self.torn_down.swap(true, Ordering::AcqRel)
    }

    fn is_completed(&self) -> bool {
        self.promise.is_completed()
    }

    fn report(&self) -> TerminationReport {
        self.report.lock().clone()
    }
}

impl ActorSystem {
    /// The actors have been told to stop: give them the
    /// `ActorSystemTerminate` phase's time-out, then give up on what has
    /// not stopped (see the module docs). Once per system.
    pub(crate) fn bound_stopping(&self) {
        let ending = &self.inner.ending;
        if ending.bounded.swap(true, Ordering::AcqRel) {
            return;
        }
        let timeout = self
            .inner
            .shutdown
            .phase_timeout(Phase::ActorSystemTerminate);
        let system = self.internal();
        // Dropped (with the system it holds) when the scheduler shuts down.
        drop(
            self.scheduler()
                .schedule_once_fn(timeout, move || system.give_up_stopping()),
        );
    }

    /// Drop the guardians and shut the pools down, once: the root stopped,
    /// or termination gave up waiting for it. The scheduler goes when
    /// termination finishes (it times the giving up).
    pub(crate) fn tear_down(&self) {
        if self.inner.ending.tear_down_once() {
            return;
        }
        let guardians = self.inner.guardians.lock().take();
        drop(guardians);
        self.inner.terminating.store(true, Ordering::Release);
        let pools = std::iter::once(&self.inner.pool).chain(self.inner.named_pools.values());
        for pool in pools.filter_map(crate::core::dispatcher::Dispatcher::as_pool) {
            pool.shutdown();
        }
        self.inner.threads.release_system_count();
    }

    /// The actors still running, innermost first: those without a running
    /// child (their parents wait only for them).
    pub(crate) fn actors_left(&self) -> Vec<ActorPath> {
        fn walk(actor: &ActorHandle, out: &mut Vec<ActorPath>) {
            let children = actor.inner.core().map(|c| c.children()).unwrap_or_default();
            if children.is_empty() && !actor.is_terminated() {
                out.push(actor.path().clone());
            }
            for child in &children {
                walk(child, out);
            }
        }
        let root = self.root();
        let mut left = Vec::new();
        if let Some(root) = root {
            walk(&root, &mut left);
        }
        left
    }

    /// The stop bound passed: list what is still running, tear the system
    /// down without it and finish termination.
    fn give_up_stopping(&self) {
        let ending = &self.inner.ending;
        if ending.is_completed() {
            return;
        }
        ending.note_actors(self.actors_left());
        self.tear_down();
        self.inner.threads.wait_exited(THREAD_EXIT_GRACE);
        ending.finish(self.inner.threads.abandon_running());
    }
}

/// Shared by the owning handles of a system; terminates it when the last
/// goes (see [Dropping the system](ActorSystem#dropping-the-system)).
pub(crate) struct Owner(Arc<SystemInner>);

impl Owner {
    pub(crate) fn new(system: Arc<SystemInner>) -> Self {
        Self(system)
    }
}

impl Drop for Owner {
    fn drop(&mut self) {
        let system = ActorSystem {
            inner: self.0.clone(),
            owner: None,
        };
        let termination = system.terminate();
        if !std::thread::panicking() {
            // Refused (not blocking) on the system's own threads.
            let _ = termination.wait();
        }
    }
}

/// Completion of a system's termination: a future, or a blocking
/// [`wait`](Self::wait).
///
/// It completes once every actor has stopped and every thread the system
/// started has finished its work, or once the time-out for the actors to
/// stop has passed: then its [`TerminationReport`] lists what was left
/// behind.
///
/// Cancel safety: dropping it cancels nothing; termination goes on.
#[must_use = "a Termination does nothing unless awaited or waited for"]
pub struct Termination {
    system: Arc<SystemInner>,
}

impl Termination {
    pub(crate) fn new(system: Arc<SystemInner>) -> Self {
        Self { system }
    }

    /// Block until the system has terminated, then join its threads.
    ///
    /// # Errors
    ///
    /// [`WaitError::OnDispatcherThread`] when called on one of this system's
    /// own threads (from inside an actor), which would wait for itself.
    ///
    /// Returns what was left behind (see [`TerminationReport`]): nothing,
    /// unless the actors did not all stop in time.
    pub fn wait(self) -> Result<TerminationReport, WaitError> {
        self.wait_with(|termination| {
            termination.wait_completed();
            true
        })
    }

    /// Like [`wait`](Self::wait), giving up after `timeout`.
    ///
    /// # Errors
    ///
    /// [`WaitError::OnDispatcherThread`] as for `wait`;
    /// [`WaitError::TimedOut`] when termination has not completed in time
    /// (it goes on; wait again or drop the handle).
    pub fn wait_timeout(&self, timeout: Duration) -> Result<TerminationReport, WaitError> {
        self.wait_with(|termination| termination.wait_completed_for(timeout))
    }

    /// Refuse on a dispatcher thread; block with `block` (which says whether
    /// termination completed); then join the threads.
    fn wait_with(
        &self,
        block: impl FnOnce(&Promise<()>) -> bool,
    ) -> Result<TerminationReport, WaitError> {
        if self.system.threads.is_own_thread() {
            return Err(WaitError::OnDispatcherThread);
        }
        if !block(&self.system.ending.promise) {
            return Err(WaitError::TimedOut);
        }
        self.system.threads.join_all();
        Ok(self.system.ending.report())
    }

    /// Whether termination has completed.
    pub fn is_completed(&self) -> bool {
        self.system.ending.is_completed()
    }
}

impl Future for Termination {
    type Output = TerminationReport;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<TerminationReport> {
        self.system
            .ending
            .promise
            .poll_completed(cx)
            .map(|()| self.system.ending.report())
    }
}

impl fmt::Debug for Termination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Termination")
            .field("completed", &self.is_completed())
            .finish()
    }
}
