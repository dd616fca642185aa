//! The run loop of a cell and everything it does: start, invoke, supervise,
//! restart, stop.
//!
//! Every function here runs on the thread holding the mailbox's run token
//! (see [`crate::core::mailbox`]), with exclusive access to the [`RunState`]. User
//! code (factory, hooks, `receive`, deciders) is always called inside
//! `catch_unwind`, so a panic becomes a [`Failure`] for the parent, never a
//! dead thread.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Instant;

use std::any::type_name;

use super::receive_timeout::Check;
use crate::core::instrument::{
    COMPILED_IN, LifecycleEvent, MessageInfo, Meta, MetaOf, Outcome, Stamp,
};
use crate::path::ActorPath;

use super::awaited::drop_guarded;
use super::{Cell, Phase, RunState};
use crate::core::actor::{Actor, Terminated};
use crate::core::actor_ref::{ActorHandle, Control, Envelope, SystemMsg};
use crate::core::context::Deferred;
use crate::core::dead_letters::DeadLetterReason;
use crate::core::dispatcher::Runnable;
use crate::supervision::{Failure, FailurePhase};
use crate::sync::Arc;

/// What to do with the run token after a batch.
enum AfterRun {
    /// Messages are left in the batch: keep the token and run again after
    /// the actors already waiting (fairness).
    Resubmit,
    /// Hand the token back (mailbox rule 3), waking for user messages or not;
    /// `used_up` says the run ended on its throughput limit, so a run claimed
    /// back goes behind the waiting actors too.
    Release { with_user: bool, used_up: bool },
    /// The actor stopped; the token is kept forever (mailbox rule 4).
    Stopped,
}

impl<A: Actor> Runnable for Cell<A> {
    fn run(self: Arc<Self>) {
        let after = self.state.with_mut(|state| {
            // SAFETY: the dispatcher only runs a cell that was submitted by the
            // holder of its run token, which handed the token over with it.
            let state = unsafe { &mut *state };
            match state {
                Some(st) => {
                    let after = self.run_batch(st);
                    if let AfterRun::Stopped = after {
                        // Drops the actor, the context and its self-reference.
                        *state = None;
                    }
                    after
                }
                None => AfterRun::Stopped,
            }
        });
        match after {
            AfterRun::Resubmit => {
                let dispatcher = self.core.dispatcher.clone();
                dispatcher.submit_yielded(self);
            }
            AfterRun::Release { with_user, used_up } => {
                // SAFETY: this thread holds the run token and touches neither
                // the batch nor the state again unless `release` returns `true`.
                if unsafe { self.mailbox.release(with_user) } {
                    if used_up {
                        let dispatcher = self.core.dispatcher.clone();
                        dispatcher.submit_yielded(self);
                    } else {
                        self.schedule_self();
                    }
                }
            }
            AfterRun::Stopped => {}
        }
    }
}

impl<A: Actor> Cell<A> {
    fn schedule_self(self: Arc<Self>) {
        crate::core::actor_ref::AnyActor::schedule(self);
    }

    fn run_batch(&self, st: &mut RunState<A>) -> AfterRun {
        if let Phase::Created = st.phase {
            self.start(st);
        }
        let mut left = self.throughput;
        let deadline = self
            .core
            .dispatcher
            .throughput_deadline()
            .map(crate::core::scheduler::deadline::after);
        loop {
            loop {
                // SAFETY: this thread holds the run token.
                while let Some(msg) = unsafe { self.mailbox.next_system() } {
                    self.process_system(st, msg);
                    if let Phase::Stopped = st.phase {
                        return AfterRun::Stopped;
                    }
                }
                if !st.takes_user_messages() || left == 0 {
                    break;
                }
                // Unstashed messages first (see `stash`).
                let envelope = match st.ctx.stash.next_unstashed() {
                    Some(msg) => Envelope::Msg(msg, Stamp::default()),
                    // SAFETY: this thread holds the run token.
                    None => match unsafe { self.mailbox.next_user() } {
                        Some(envelope) => envelope,
                        None => break,
                    },
                };
                self.process_user(st, envelope);
                left -= 1;
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    left = 0; // the run took long enough: yield like a used-up throughput
                }
                if let Phase::Stopped = st.phase {
                    return AfterRun::Stopped;
                }
            }
            if std::mem::take(&mut st.timeout_touched) {
                self.receive_timeout_touched(st);
            }
            let with_user = st.takes_user_messages();
            let more = with_user
                && (st.ctx.stash.has_unstashed() || {
                    // SAFETY: this thread holds the run token.
                    !unsafe { self.mailbox.batch_is_empty() }
                });
            if more {
                return AfterRun::Resubmit;
            }
            if with_user || !st.repoll {
                return AfterRun::Release {
                    with_user,
                    used_up: left == 0,
                };
            }
            // The awaited future was woken while this run polled it: poll
            // it again, as one message of the run (see `cell::awaited`); a
            // used-up run keeps the token and polls in its next turn.
            if left == 0 {
                return AfterRun::Resubmit;
            }
            left -= 1;
            self.repoll(st);
            if let Phase::Stopped = st.phase {
                return AfterRun::Stopped;
            }
        }
    }

    fn failure(&self, payload: &(dyn std::any::Any + Send), phase: FailurePhase) -> Failure {
        Failure::from_panic(payload, phase, self.core.path.clone())
    }

    /// Make the first instance and run `pre_start`.
    fn start(&self, st: &mut RunState<A>) {
        st.phase = Phase::Running;
        if let Err(failure) = self.instantiate(st, FailurePhase::Start) {
            return self.fail(st, failure, None);
        }
        let actor = st.actor.as_mut().expect("just instantiated");
        let result = catch_unwind(AssertUnwindSafe(|| actor.pre_start(&mut st.ctx)));
        if self.outcome(st, result, FailurePhase::Start) == Outcome::Handled {
            self.lifecycle(|path, actor_type| LifecycleEvent::Started { path, actor_type });
        }
    }

    pub(super) fn instantiate(
        &self,
        st: &mut RunState<A>,
        phase: FailurePhase,
    ) -> Result<(), Failure> {
        let factory = &st.props.factory;
        match catch_unwind(AssertUnwindSafe(|| factory())) {
            Ok(actor) => {
                st.actor = Some(actor);
                Ok(())
            }
            Err(p) => Err(self.failure(&*p, phase)),
        }
    }

    /// Hand one message to `receive`. While a receive timeout is set, ask
    /// whether the message influences it first (so a panicking handler still
    /// counts as activity); the deadline itself moves once, at the end of
    /// the run (see `scheduler::receive_timeout`).
    #[inline]
    fn deliver(&self, st: &mut RunState<A>, msg: A::Msg) -> Outcome {
        let actor = st.actor.as_mut().expect("a running actor has an instance");
        let (ctx, touched) = (&mut st.ctx, &mut st.timeout_touched);
        // Only a simulated actor looks for an injected panic: a tag compare,
        // not a thread-local read per message, in every testkit build.
        #[cfg(feature = "testkit")]
        let inject = matches!(
            self.core.dispatcher,
            crate::core::dispatcher::Dispatcher::Simulated(_)
        ) && crate::core::dispatcher::simulated::take_panic()
            && self.core.path.is_user();
        let handled = catch_unwind(AssertUnwindSafe(|| {
            if ctx.receive_timeout.is_some() && actor.influences_receive_timeout(&msg) {
                *touched = true;
            }
            #[cfg(feature = "testkit")]
            assert!(!inject, "a panic injected by the simulation");
            actor.receive(ctx, msg);
        }));
        self.outcome(st, handled, FailurePhase::Receive)
    }

    /// Turn a caught result of user code into an outcome, failing the actor
    /// on a panic.
    pub(super) fn outcome(
        &self,
        st: &mut RunState<A>,
        result: std::thread::Result<()>,
        phase: FailurePhase,
    ) -> Outcome {
        // An error handed over with `ctx.fail` counts as a failure too; a
        // panic after it wins; a future handed over with `ctx.run_async`
        // is awaited. The common case (neither) only reads the slot:
        // taking it on every message cost ~12 instructions.
        if result.is_ok() && st.ctx.deferred.is_none() {
            return Outcome::Handled;
        }
        self.outcome_deferred(st, result, phase)
    }

    /// `outcome` when the handler panicked or left something to do.
    #[cold]
    #[inline(never)]
    fn outcome_deferred(
        &self,
        st: &mut RunState<A>,
        result: std::thread::Result<()>,
        phase: FailurePhase,
    ) -> Outcome {
        let deferred = st.ctx.deferred.take();
        let failure = match (result, deferred) {
            (Ok(()), None) => return Outcome::Handled,
            (Ok(()), Some(Deferred::Await(future))) => {
                return self.start_awaiting(st, future, phase);
            }
            (Ok(()), Some(Deferred::Reentrant(futures))) => {
                self.start_reentrant(st, futures);
                return Outcome::Handled;
            }
            (Ok(()), Some(Deferred::Fail(error))) => {
                Failure::from_error(error, phase, self.core.path.clone())
            }
            (Err(p), deferred) => {
                // The panic wins over what the handler left.
                drop_guarded(deferred);
                self.failure(&*p, phase)
            }
        };
        let outcome = Outcome::Panicked(failure.message().into());
        self.fail(st, failure, None);
        outcome
    }

    /// Process one user-queue envelope, between the hooks if any.
    #[inline]
    fn process_user(&self, st: &mut RunState<A>, envelope: Envelope<A::Msg>) {
        match &self.core.hooks {
            Some(hooks) if COMPILED_IN => {
                let (meta, stamp) = match &envelope {
                    Envelope::Msg(_, stamp) => (MetaOf::<A, A::Msg>::USER, *stamp),
                    Envelope::Control(
                        Control::Timer(_) | Control::ReceiveTimeout(_) | Control::Failed(_),
                    ) => (MetaOf::<A, A::Msg>::USER, Stamp::default()),
                    Envelope::Control(Control::Terminated(_)) => {
                        (MetaOf::<A, A::Msg>::TERMINATED, Stamp::default())
                    }
                    Envelope::Control(Control::PoisonPill) => {
                        (MetaOf::<A, A::Msg>::POISON_PILL, Stamp::default())
                    }
                };
                let info = MessageInfo {
                    path: &self.core.path,
                    meta,
                    stamp,
                };
                if hooks.timed() {
                    let started = hooks.before_timed(&info);
                    let outcome = self.invoke(st, envelope);
                    hooks.after_timed(&info, outcome, started);
                } else {
                    hooks.before(&info);
                    let outcome = self.invoke(st, envelope);
                    hooks.after(&info, outcome);
                }
            }
            _ => {
                self.invoke(st, envelope);
            }
        }
    }

    /// Process one system message, between the hooks if any.
    fn process_system(&self, st: &mut RunState<A>, msg: SystemMsg) {
        match &self.core.hooks {
            Some(hooks) if COMPILED_IN => {
                let meta = Meta::system::<A>(msg.type_name());
                let info = MessageInfo {
                    path: &self.core.path,
                    meta: &meta,
                    stamp: Stamp::default(),
                };
                hooks.around_handled(&info, || self.handle_system(st, msg));
            }
            _ => self.handle_system(st, msg),
        }
    }

    pub(super) fn lifecycle(
        &self,
        event: for<'p> fn(&'p ActorPath, &'static str) -> LifecycleEvent<'p>,
    ) {
        if let Some(hooks) = &self.core.hooks
            && COMPILED_IN
        {
            hooks.lifecycle(&event(&self.core.path, type_name::<A>()));
        }
    }

    /// Inlined into both paths of `process_user`: called from two places it
    /// was kept out of line, which cost the path without hooks about 15
    /// instructions per message over a build without instrumentation.
    #[inline(always)]
    fn invoke(&self, st: &mut RunState<A>, envelope: Envelope<A::Msg>) -> Outcome {
        match envelope {
            Envelope::Msg(msg, _) => self.deliver(st, msg),
            Envelope::Control(Control::Timer(id)) => match st.ctx.timers.take_due(id) {
                Some(msg) => self.deliver(st, msg),
                None => Outcome::Handled, // replaced or cancelled: nothing to deliver
            },
            Envelope::Control(Control::ReceiveTimeout(generation)) => {
                self.receive_timeout_check(st, generation)
            }
            Envelope::Control(Control::PoisonPill) => {
                self.begin_stop(st);
                Outcome::Handled
            }
            Envelope::Control(Control::Failed(failure)) => {
                let outcome = Outcome::Panicked(failure.message().into());
                self.fail(st, *failure, None);
                outcome
            }
            Envelope::Control(Control::Terminated(who)) => {
                // Exactly once per watch: the entry is removed on first notice.
                if st.ctx.watching.remove(&who.key()).is_none() {
                    return Outcome::Handled;
                }
                let actor = st.actor.as_mut().expect("a running actor has an instance");
                let notice = Terminated { actor: who };
                let result = catch_unwind(AssertUnwindSafe(|| {
                    actor.on_terminated(&mut st.ctx, notice)
                }));
                self.outcome(st, result, FailurePhase::Receive)
            }
        }
    }

    /// An influencing message was processed in this run: the receive
    /// timeout's deadline moves. Out of line, like the check below: they
    /// reach the scheduler through the runtime (a dynamic call), which
    /// inlined into the run loop cost it a register (one instruction per
    /// run in the pingpong profile).
    #[cold]
    #[inline(never)]
    pub(super) fn receive_timeout_touched(&self, st: &mut RunState<A>) {
        if let Some(state) = st.ctx.receive_timeout.as_mut() {
            let scheduler = self.core.runtime.scheduler();
            state.touched(scheduler.now(), &st.ctx.me, scheduler);
        }
    }

    /// A receive-timeout check armed with `generation` fired.
    #[cold]
    #[inline(never)]
    fn receive_timeout_check(&self, st: &mut RunState<A>, generation: u32) -> Outcome {
        let ctx = &mut st.ctx;
        let Some(state) = ctx.receive_timeout.as_mut() else {
            return Outcome::Handled;
        };
        let scheduler = self.core.runtime.scheduler();
        match state.check(generation, scheduler.now(), &ctx.me, scheduler) {
            Check::Deliver(msg) => self.deliver(st, msg),
            Check::Nothing => Outcome::Handled,
        }
    }

    fn handle_system(&self, st: &mut RunState<A>, msg: SystemMsg) {
        match msg {
            SystemMsg::Terminate => self.begin_stop(st),
            SystemMsg::Watch { watcher, .. } => {
                st.watchers.insert(watcher.key(), watcher);
            }
            SystemMsg::Unwatch(watcher) => {
                st.watchers.remove(&watcher.key());
            }
            SystemMsg::ChildFailed(child, failure) => self.supervise(st, &child, failure),
            SystemMsg::ChildTerminated(child) => self.child_terminated(st, &child),
            SystemMsg::Resume => self.resume(st),
            SystemMsg::Suspend => self.suspended_by_ancestor(st, true),
            SystemMsg::Unsuspend => self.suspended_by_ancestor(st, false),
            SystemMsg::Wake => self.wake_awaited(st),
            SystemMsg::Recreate(failure) => {
                if !matches!(st.phase, Phase::Terminating | Phase::Stopped) {
                    self.restart(st, failure);
                }
            }
        }
    }

    fn child_terminated(&self, st: &mut RunState<A>, child: &ActorHandle) {
        let no_children_left = {
            let mut children = self.core.children.lock();
            let name = child.path().name();
            if children
                .by_name
                .get(name)
                .is_some_and(|e| e.handle == *child)
            {
                children.by_name.remove(name);
            }
            children.by_name.is_empty()
        };
        match st.phase {
            Phase::Terminating if no_children_left => self.finish_stop(st),
            Phase::Recreating(_) => self.finish_restart_if_ready(st),
            _ => {}
        }
    }

    /// Stop: children first (each is told to stop), then [`Self::finish_stop`].
    pub(super) fn begin_stop(&self, st: &mut RunState<A>) {
        if matches!(st.phase, Phase::Terminating | Phase::Stopped) {
            return;
        }
        // A stop drops a handler's futures at once (Akka.NET's ReceiveAsync).
        Self::drop_awaited(st);
        Self::drop_reentrant(st);
        st.phase = Phase::Terminating;
        let children: Vec<ActorHandle> = {
            let mut children = self.core.children.lock();
            children.accepting = false;
            children
                .by_name
                .values_mut()
                .map(|e| {
                    e.stopping = true;
                    e.handle.clone()
                })
                .collect()
        };
        if children.is_empty() {
            return self.finish_stop(st);
        }
        for child in children {
            child.send_system(SystemMsg::Terminate);
        }
    }

    /// All children are gone: `post_stop`, close the mailbox, route what is
    /// left, tell watchers and the parent.
    fn finish_stop(&self, st: &mut RunState<A>) {
        // Before post_stop, as before pre_restart: no timer is active there.
        st.ctx.timers.cancel_all();
        st.ctx.cancel_receive_timeout();
        if let Some(mut actor) = st.actor.take() {
            // A panic in post_stop cannot be supervised any more; the stop goes on.
            let _ = catch_unwind(AssertUnwindSafe(|| actor.post_stop(&mut st.ctx)));
        }
        st.phase = Phase::Stopped;
        self.lifecycle(|path, actor_type| LifecycleEvent::Stopped { path, actor_type });
        // Again: post_stop may have started one.
        st.ctx.timers.cancel_all();
        st.ctx.cancel_receive_timeout();
        // SAFETY: this thread holds the run token.
        let drained = unsafe { self.mailbox.close() };
        self.core.mark_terminated();
        let me = st.ctx.handle();
        let letters = self.core.runtime.dead_letters();
        for msg in st.ctx.stash.drain() {
            letters.publish(&self.core.path, msg, DeadLetterReason::RecipientStopped);
        }
        for envelope in drained.user {
            if let Envelope::Msg(msg, _) = envelope {
                letters.publish(&self.core.path, msg, DeadLetterReason::RecipientStopped);
            }
        }
        for msg in drained.system {
            system_msg_to_closed(msg);
        }
        for (_, watcher) in st.watchers.drain() {
            watcher.send_control(Control::Terminated(me.clone()));
        }
        for (_, watched) in st.ctx.watching.drain() {
            watched.send_system(SystemMsg::Unwatch(me.clone()));
        }
        self.core.dispatcher.retire();
        match &self.core.parent {
            Some(parent) => {
                parent.send_system(SystemMsg::ChildTerminated(me));
            }
            None => self.core.runtime.root_stopped(),
        }
    }
}

/// What a system message to a stopped actor still has to do: a watch gets
/// its `Terminated` notice at once; everything else is moot.
pub(super) fn system_msg_to_closed(msg: SystemMsg) {
    if let SystemMsg::Watch { watchee, watcher } = msg {
        watcher.send_control(Control::Terminated(watchee));
    }
}
