//! Scheduled sends: the [`Scheduler`] methods that tell an [`ActorRef`]
//! later, once or periodically. A layer over the scheduler, which itself
//! runs closures and knows nothing of actors.

use std::time::Duration;

use crate::core::actor_ref::ActorRef;
use crate::core::scheduler::{Cancellable, Scheduler};
use crate::error::ScheduleError;

impl Scheduler {
    /// Send `msg` to `target` after `delay`.
    pub fn schedule_once<M: Send + 'static>(
        &self,
        delay: Duration,
        target: &ActorRef<M>,
        msg: M,
    ) -> Cancellable {
        let cancellable = Cancellable::new();
        let to = target.clone();
        let send = Box::new(move || to.tell(msg));
        if let Err(send) = self.run_once(delay, &cancellable, send) {
            // Terminated: the target is stopped too, so sending now puts the
            // message in dead letters instead of losing it.
            cancellable.cancel();
            send();
        }
        cancellable
    }

    /// Send a clone of `msg` to `target` after `initial_delay`, then again
    /// `delay` after each send.
    ///
    /// # Errors
    ///
    /// [`ScheduleError::ZeroInterval`] when `delay` is zero.
    pub fn schedule_with_fixed_delay<M: Clone + Send + 'static>(
        &self,
        initial_delay: Duration,
        delay: Duration,
        target: &ActorRef<M>,
        msg: M,
    ) -> Result<Cancellable, ScheduleError> {
        self.periodic(initial_delay, delay, false, target, msg)
    }

    /// Send a clone of `msg` to `target` after `initial_delay`, then every
    /// `interval` measured from the first deadline: a late send is followed by
    /// quicker ones until the schedule has caught up.
    ///
    /// # Errors
    ///
    /// [`ScheduleError::ZeroInterval`] when `interval` is zero.
    pub fn schedule_at_fixed_rate<M: Clone + Send + 'static>(
        &self,
        initial_delay: Duration,
        interval: Duration,
        target: &ActorRef<M>,
        msg: M,
    ) -> Result<Cancellable, ScheduleError> {
        self.periodic(initial_delay, interval, true, target, msg)
    }

    fn periodic<M: Clone + Send + 'static>(
        &self,
        initial_delay: Duration,
        interval: Duration,
        fixed_rate: bool,
        target: &ActorRef<M>,
        msg: M,
    ) -> Result<Cancellable, ScheduleError> {
        let cancellable = Cancellable::new();
        let to = target.clone();
        let send = Box::new(move || {
            if to.is_terminated() {
                return false;
            }
            to.tell(msg.clone());
            true
        });
        if !self.run_repeatedly(initial_delay, interval, fixed_rate, &cancellable, send)? {
            cancellable.cancel();
        }
        Ok(cancellable)
    }
}
