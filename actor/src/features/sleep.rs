//! Timer futures on the system's clock: [`ActorSystem::sleep`] and
//! [`ActorSystem::after`] (Akka's `pattern.after`).
//!
//! Each is one job on the system's scheduler that completes a [`Promise`];
//! the future polls the promise. The job holds a guard that completes the
//! promise with "stopped" if the job is dropped without running (the
//! scheduler shut down with the system), so a pending future never hangs.
//! Dropping the future cancels the job.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use crate::core::scheduler::Cancellable;
use crate::error::SchedulerStopped;
use crate::sync::Arc;
use crate::system::actor_system::ActorSystem;
use crate::system::promise::Promise;

impl ActorSystem {
    /// A future that completes `delay` from now on the system's clock
    /// (tokio's `sleep`, on this system's scheduler).
    ///
    /// It reads the system's clock: on a system built with a test clock
    /// (`testkit::TestClock`, feature `testkit`) it completes when the test
    /// advances the clock past its deadline (during that `advance`, which
    /// wakes the task awaiting it), never by itself. A zero delay is due at
    /// once.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future cancels its timer; nothing is lost, as there is
    /// no value in flight.
    ///
    /// # Errors
    ///
    /// The future gives [`SchedulerStopped`] when the system terminated
    /// before the deadline (or had already terminated): the timer can no
    /// longer fire.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let system = weir_actor::ActorSystem::new("sleep").unwrap();
    /// let sleep = system.sleep(Duration::from_millis(5));
    /// futures_executor::block_on(sleep).unwrap();
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn sleep(&self, delay: Duration) -> Sleep {
        let fired = Arc::new(Promise::new());
        let guard = Fire(fired.clone());
        let cancellable = self
            .scheduler()
            .schedule_once_fn(delay, move || guard.fire());
        Sleep { fired, cancellable }
    }

    /// A future that gives `value` back `delay` from now on the system's
    /// clock (Akka's `pattern.after`, with a value instead of a future).
    /// Time works as for [`sleep`](Self::sleep).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future cancels its timer and drops `value` with it.
    ///
    /// # Errors
    ///
    /// The future gives [`SchedulerStopped`] with `value` when the system
    /// terminated before the deadline.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let system = weir_actor::ActorSystem::new("after").unwrap();
    /// let late = system.after(Duration::from_millis(5), "late");
    /// assert_eq!(futures_executor::block_on(late), Ok("late"));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn after<T>(&self, delay: Duration, value: T) -> After<T> {
        After {
            sleep: self.sleep(delay),
            value: Some(value),
        }
    }
}

/// Completes its promise when the timer fires; when dropped unfired (the
/// scheduler shut down, or the sleep was cancelled and nobody is left to
/// see it), completes it as stopped.
struct Fire(Arc<Promise<bool>>);

impl Fire {
    fn fire(self) {
        let _ = self.0.complete(true);
    }
}

impl Drop for Fire {
    fn drop(&mut self) {
        // After `fire` the promise is already completed and this is a no-op.
        let _ = self.0.complete(false);
    }
}

/// The future of [`ActorSystem::sleep`]: completes at its deadline on the
/// system's clock. Dropping it cancels the timer.
#[must_use = "a sleep does nothing unless awaited"]
pub struct Sleep {
    /// `true` when the timer fired, `false` when it never will.
    fired: Arc<Promise<bool>>,
    cancellable: Cancellable,
}

impl Sleep {
    /// Whether the deadline has passed (or the system terminated): polling
    /// now completes.
    pub fn is_elapsed(&self) -> bool {
        self.fired.is_completed()
    }
}

impl Future for Sleep {
    type Output = Result<(), SchedulerStopped>;

    /// # Panics
    ///
    /// When polled again after it completed.
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.fired.poll_take(cx).map(|fired| {
            if fired {
                Ok(())
            } else {
                Err(SchedulerStopped(()))
            }
        })
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        self.cancellable.cancel();
    }
}

impl fmt::Debug for Sleep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sleep")
            .field("elapsed", &self.is_elapsed())
            .finish()
    }
}

/// The future of [`ActorSystem::after`]: gives its value at its deadline on
/// the system's clock. Dropping it cancels the timer and drops the value.
#[must_use = "an after does nothing unless awaited"]
pub struct After<T> {
    sleep: Sleep,
    /// Taken when the future completes.
    value: Option<T>,
}

// The value is never pinned: it is only moved out, never polled in place.
impl<T> Unpin for After<T> {}

impl<T> Future for After<T> {
    type Output = Result<T, SchedulerStopped<T>>;

    /// # Panics
    ///
    /// When polled again after it completed.
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        Pin::new(&mut this.sleep).poll(cx).map(|fired| {
            let value = this.value.take().expect("After polled after it completed");
            match fired {
                Ok(()) => Ok(value),
                Err(SchedulerStopped(())) => Err(SchedulerStopped(value)),
            }
        })
    }
}

impl<T> fmt::Debug for After<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("After")
            .field("elapsed", &self.sleep.is_elapsed())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::system::actor_system::ActorSystem;

    #[test]
    fn dropping_a_sleep_cancels_its_timer() {
        let system = ActorSystem::new("sleep-drop").unwrap();
        let sleep = system.sleep(Duration::from_secs(3600));
        let cancellable = sleep.cancellable.clone();
        assert!(!cancellable.is_cancelled());
        drop(sleep);
        assert!(cancellable.is_cancelled());
        system.terminate().wait().unwrap();
    }
}
