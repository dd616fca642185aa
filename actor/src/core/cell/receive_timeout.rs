//! The receive timeout: after a set idle time with no *influencing* message
//! processed, the actor gets a message of its choosing, again after every
//! further idle period, until cancelled (Akka / Pekko semantics).
//!
//! # No allocation per message
//!
//! Nothing is cancelled or created per message. The state (created on the
//! first `set_receive_timeout`, so an actor that never sets one pays one
//! branch per message) holds a *deadline* and a *generation*:
//!
//! * processing an influencing message only sets a flag in the run; at the
//!   end of the run the deadline becomes "now + timeout" (one clock read per
//!   run, at the end of the last message processed);
//! * at most one *check* is pending on the scheduler, carrying the
//!   generation it was armed with. When it arrives (in order with the other
//!   messages) and the deadline has passed, the timeout message is delivered;
//!   if the deadline has moved on, the check is re-armed for it;
//! * changing or cancelling the setting bumps the generation, so older checks
//!   are ignored, and arms a check for the new deadline at once. That is why
//!   a change takes effect even from a handler of a message that does not
//!   influence the timeout.
//!
//! The state lives in the actor's context, not in the actor, so it survives
//! a restart; it is dropped at stop, after which a late check finds a closed
//! mailbox and is discarded (no dead letter).

use std::time::{Duration, Instant};

use crate::core::actor_ref::{ActorHandle, Control};
use crate::core::scheduler::deadline;
use crate::core::scheduler::{Cancellable, Scheduler};
use crate::sync::Arc;

pub(crate) struct ReceiveTimeout<M> {
    timeout: Duration,
    msg: M,
    copy: fn(&M) -> M,
    deadline: Instant,
    generation: u32,
    /// When the pending check of this generation fires (`None`: none).
    check_at: Option<Instant>,
    active: bool,
}

/// What a check found.
pub(crate) enum Check<M> {
    /// Stale, cancelled, or the deadline moved on (and the check was re-armed).
    Nothing,
    /// Deliver this.
    Deliver(M),
}

impl<M> ReceiveTimeout<M> {
    pub(crate) fn new(timeout: Duration, msg: M, copy: fn(&M) -> M, now: Instant) -> Self {
        Self {
            timeout,
            msg,
            copy,
            deadline: deadline::add(now, timeout),
            generation: 0,
            check_at: None,
            active: true,
        }
    }

    /// A new setting: measured from now; older checks become stale.
    pub(crate) fn set(
        &mut self,
        timeout: Duration,
        msg: M,
        now: Instant,
        me: &ActorHandle,
        scheduler: &Scheduler,
    ) {
        self.timeout = timeout;
        self.msg = msg;
        self.active = true;
        self.restart_from(now, me, scheduler);
    }

    pub(crate) fn cancel(&mut self) {
        self.active = false;
        self.generation = self.generation.wrapping_add(1);
        self.check_at = None;
    }

    pub(crate) fn timeout(&self) -> Option<Duration> {
        self.active.then_some(self.timeout)
    }

    /// Measure from `now` with a fresh generation (after a change, a
    /// delivery or a restart) and arm a check.
    pub(crate) fn restart_from(&mut self, now: Instant, me: &ActorHandle, scheduler: &Scheduler) {
        if !self.active {
            return;
        }
        self.generation = self.generation.wrapping_add(1);
        self.deadline = deadline::add(now, self.timeout);
        self.check_at = None;
        self.arm(me, scheduler);
    }

    /// Influencing messages were processed in this run, which ended at `now`.
    pub(crate) fn touched(&mut self, now: Instant, me: &ActorHandle, scheduler: &Scheduler) {
        if self.active {
            self.deadline = deadline::add(now, self.timeout);
            self.arm(me, scheduler);
        }
    }

    /// Make sure a check of the current generation fires by the deadline.
    fn arm(&mut self, me: &ActorHandle, scheduler: &Scheduler) {
        if self.check_at.is_some_and(|at| at <= self.deadline) {
            return; // the pending check comes first and will re-arm
        }
        let generation = self.generation;
        let me = Arc::downgrade(&me.inner);
        let check = Box::new(move || {
            if let Some(me) = me.upgrade() {
                ActorHandle { inner: me }.send_control(Control::ReceiveTimeout(generation));
            }
        });
        let delay = self.deadline.saturating_duration_since(scheduler.now());
        if scheduler
            .run_once(delay, &Cancellable::new(), check)
            .is_ok()
        {
            self.check_at = Some(self.deadline);
        }
    }

    /// A check of `generation` arrived at `now`.
    pub(crate) fn check(
        &mut self,
        generation: u32,
        now: Instant,
        me: &ActorHandle,
        scheduler: &Scheduler,
    ) -> Check<M> {
        if !self.active || generation != self.generation {
            return Check::Nothing;
        }
        self.check_at = None;
        if now >= self.deadline {
            let msg = (self.copy)(&self.msg);
            // Fires again after every further idle period.
            self.restart_from(now, me, scheduler);
            Check::Deliver(msg)
        } else {
            self.arm(me, scheduler);
            Check::Nothing
        }
    }
}
