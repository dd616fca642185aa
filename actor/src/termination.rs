//! How a system ends: [`Termination`], the completion `terminate` returns,
//! and the owner shared by the owning handles, which terminates the system
//! when the last of them is dropped.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use crate::error::WaitError;
use crate::promise::Promise;
use crate::sync::Arc;
use crate::system::{ActorSystem, SystemInner};

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
/// started has finished its work.
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
    pub fn wait(self) -> Result<(), WaitError> {
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
    pub fn wait_timeout(&self, timeout: std::time::Duration) -> Result<(), WaitError> {
        self.wait_with(|termination| termination.wait_completed_for(timeout))
    }

    /// Refuse on a dispatcher thread; block with `block` (which says whether
    /// termination completed); then join the threads.
    fn wait_with(&self, block: impl FnOnce(&Promise<()>) -> bool) -> Result<(), WaitError> {
        if self.system.threads.is_own_thread() {
            return Err(WaitError::OnDispatcherThread);
        }
        if !block(&self.system.termination) {
            return Err(WaitError::TimedOut);
        }
        self.system.threads.join_all();
        Ok(())
    }

    /// Whether termination has completed.
    pub fn is_completed(&self) -> bool {
        self.system.termination.is_completed()
    }
}

impl Future for Termination {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<()> {
        self.system.termination.poll_completed(cx)
    }
}

impl fmt::Debug for Termination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Termination")
            .field("completed", &self.is_completed())
            .finish()
    }
}
