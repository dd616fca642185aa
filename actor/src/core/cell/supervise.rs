//! Failure and supervision: what a cell does when it fails, when a child
//! fails, and when its parent's directive arrives.
//!
//! As in Akka, a failure suspends the failing actor's whole subtree until the
//! directive comes:
//!
//! * The failing actor stops taking user messages (`Phase::Suspended`) and
//!   sends every child one [`SystemMsg::Suspend`]; each descendant counts
//!   the suspensions of its ancestors (`Context::suspended`) and passes
//!   them on to its own children, so the whole subtree holds its messages.
//! * A resume sends the children one [`SystemMsg::Unsuspend`] each (passed
//!   on the same way) and resumes the children whose failure this actor
//!   escalated (their own failure was decided with this one).
//! * A restart runs `pre_restart`; once the children it stopped are gone and
//!   the fresh instance has run `post_restart`, the children it kept are
//!   restarted with the same cause (which also ends the failure of a child
//!   whose failure was escalated), and then unsuspended.
//! * A child made while its parent holds suspensions (an ancestor's failure
//!   not yet decided, or the parent's own, as in its restart hooks) starts
//!   with them (`Context::child_suspensions`, as Akka gives a new child its
//!   parent's suspend count): the `Unsuspend`s the parent later sends all
//!   its children are owed to it too, and it waits with the subtree.
//!
//! Each `Suspend` a child gets (or starts with) is matched by one
//! `Unsuspend` from the same parent (`Context::children_suspended` says one
//! is owed), so the counts balance however failures nest.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Instant;

use super::awaited::drop_guarded;
use super::{Cell, Phase, RunState, restart_stats};
use crate::core::actor::Actor;
use crate::core::actor_ref::{ActorHandle, SystemMsg};
use crate::core::instrument::{LifecycleEvent, Outcome};
use crate::supervision::{Directive, Failure, FailurePhase, Scope};

impl<A: Actor> Cell<A> {
    /// Suspend (with the subtree) and report `failure` to the parent;
    /// `escalated_from` is the child whose failure this is, when escalated.
    /// The root has no parent: it stops, which ends the system.
    pub(super) fn fail(
        &self,
        st: &mut RunState<A>,
        failure: Failure,
        escalated_from: Option<&ActorHandle>,
    ) {
        if matches!(st.phase, Phase::Terminating | Phase::Stopped) {
            return; // already going away; nothing to decide
        }
        Self::drop_awaited(st);
        st.phase = Phase::Suspended;
        if let Some(child) = escalated_from {
            st.escalated.push(child.clone());
        }
        if !std::mem::replace(&mut st.ctx.children_suspended, true) {
            for child in self.core.children() {
                child.send_system(SystemMsg::Suspend);
            }
        }
        match &self.core.parent {
            Some(parent) => {
                parent.send_system(SystemMsg::ChildFailed(st.ctx.handle(), failure));
            }
            None => self.begin_stop(st),
        }
    }

    /// An ancestor failed (`suspend`) or its failure was decided
    /// (`!suspend`): count it and pass it on to the children.
    pub(super) fn suspended_by_ancestor(&self, st: &mut RunState<A>, suspend: bool) {
        if suspend {
            st.ctx.suspended += 1;
        } else {
            // Saturating: a child made by a system spawn or a router
            // (not by its parent's `Context`) starts with none.
            st.ctx.suspended = st.ctx.suspended.saturating_sub(1);
            Self::rewake_reentrant(st);
        }
        for child in self.core.children() {
            child.send_system(if suspend {
                SystemMsg::Suspend
            } else {
                SystemMsg::Unsuspend
            });
        }
    }

    /// Lift the suspension this actor's failure put on its children.
    fn unsuspend_children(&self, st: &mut RunState<A>) {
        if std::mem::take(&mut st.ctx.children_suspended) {
            for child in self.core.children() {
                child.send_system(SystemMsg::Unsuspend);
            }
        }
    }

    /// The parent's directive for this actor's failure is `Resume`.
    pub(super) fn resume(&self, st: &mut RunState<A>) {
        if !matches!(st.phase, Phase::Suspended) {
            return;
        }
        if st.actor.is_none() {
            // Failed before an instance existed: resuming means trying to
            // make one again.
            let failure = Failure::from_panic(
                &"resumed without an instance",
                FailurePhase::Start,
                self.core.path.clone(),
            );
            return self.restart(st, failure);
        }
        st.phase = Phase::Running;
        Self::rewake_reentrant(st);
        self.unsuspend_children(st);
        // The failures this actor escalated were decided with its own.
        for child in std::mem::take(&mut st.escalated) {
            child.send_system(SystemMsg::Resume);
        }
    }

    /// Apply this actor's supervisor strategy to a failed child.
    pub(super) fn supervise(&self, st: &mut RunState<A>, child: &ActorHandle, failure: Failure) {
        if matches!(st.phase, Phase::Terminating | Phase::Stopped) {
            return; // the child is being stopped with us
        }
        let strategy = match &st.actor {
            Some(actor) => {
                catch_unwind(AssertUnwindSafe(|| actor.supervisor_strategy())).unwrap_or_default()
            }
            None => Default::default(),
        };
        let mut directive = catch_unwind(AssertUnwindSafe(|| strategy.decide(&failure)))
            .unwrap_or(Directive::Escalate);
        let mut children = self.core.children.lock();
        let Some(entry) = children
            .by_name
            .get_mut(child.path().name())
            .filter(|e| e.handle == *child)
        else {
            return; // not (or no longer) our child
        };
        let now = Instant::now();
        if directive == Directive::Restart
            && !strategy.allow_restart(restart_stats(entry, now), now)
        {
            directive = Directive::Stop; // the restart budget is spent
        }
        let targets: Vec<ActorHandle> = match strategy.scope {
            Scope::OneForOne => vec![child.clone()],
            Scope::AllForOne => children
                .by_name
                .values()
                .filter(|e| !e.stopping)
                .map(|e| e.handle.clone())
                .collect(),
        };
        if directive == Directive::Stop {
            for entry in children
                .by_name
                .values_mut()
                .filter(|e| targets.contains(&e.handle))
            {
                entry.stopping = true;
            }
        }
        drop(children);
        match directive {
            // Resume applies to the failed child only, in either scope.
            Directive::Resume => {
                child.send_system(SystemMsg::Resume);
            }
            Directive::Restart => {
                for target in targets {
                    target.send_system(SystemMsg::Recreate(failure.clone()));
                }
            }
            Directive::Stop => {
                for target in targets {
                    target.send_system(SystemMsg::Terminate);
                }
            }
            Directive::Escalate => self.fail(st, failure.escalated(), Some(child)),
        }
    }

    /// Replace the instance: `pre_restart` on the old one, then a fresh one
    /// once the children it stopped have gone.
    pub(super) fn restart(&self, st: &mut RunState<A>, failure: Failure) {
        // A handler's futures die with the instance they worked for.
        Self::drop_awaited(st);
        Self::drop_reentrant(st);
        st.ctx.timers.cancel_all();
        if let Some(mut old) = st.actor.take() {
            // Best effort, as in Akka: a panic here does not stop the restart.
            let _ = catch_unwind(AssertUnwindSafe(|| old.pre_restart(&mut st.ctx, &failure)));
            // Best effort too: not the new instance's failure (nor future).
            if let Some(deferred) = st.ctx.deferred.take() {
                drop_guarded(deferred);
            }
        }
        // Escalated failures end with this restart: the children it keeps
        // are restarted when it is done.
        st.escalated.clear();
        // Kept across the restart: the new instance handles them first.
        st.ctx.stash.unstash_all();
        st.phase = Phase::Recreating(failure);
        self.finish_restart_if_ready(st);
    }

    pub(super) fn finish_restart_if_ready(&self, st: &mut RunState<A>) {
        if !matches!(st.phase, Phase::Recreating(_))
            || self
                .core
                .children
                .lock()
                .by_name
                .values()
                .any(|c| c.stopping)
        {
            return;
        }
        let Phase::Recreating(failure) = std::mem::replace(&mut st.phase, Phase::Running) else {
            unreachable!("checked above");
        };
        // The children `pre_restart` kept, before the new instance makes any.
        let kept = self.core.children();
        if let Err(failure) = self.instantiate(st, FailurePhase::Restart) {
            return self.fail(st, failure, None);
        }
        // A receive timeout survives the restart, measured afresh from now
        // (one set again by post_restart replaces it anyway).
        if let Some(state) = st.ctx.receive_timeout.as_mut() {
            let scheduler = self.core.runtime.scheduler();
            state.restart_from(scheduler.now(), &st.ctx.me, scheduler);
        }
        let actor = st.actor.as_mut().expect("just instantiated");
        let result = catch_unwind(AssertUnwindSafe(|| {
            actor.post_restart(&mut st.ctx, &failure)
        }));
        if self.outcome(st, result, FailurePhase::Restart) != Outcome::Handled {
            // Failed again: the kept children stay suspended until the
            // next directive.
            return;
        }
        self.lifecycle(|path, actor_type| LifecycleEvent::Restarted { path, actor_type });
        // Only once this actor runs again, as in Akka: restart the children
        // it kept, with the same cause, then lift its failure's suspension.
        for child in kept {
            child.send_system(SystemMsg::Recreate(failure.clone()));
        }
        self.unsuspend_children(st);
    }
}
