//! The future of an async handler (`Context::run_async`): how the cell
//! holds it, polls it and wakes for it.
//!
//! # The protocol
//!
//! * A handler hands a future over with `ctx.run_async` / `run_async_then`;
//!   it waits in `Context::deferred` until the handler returns (a handler
//!   calls at most one of `fail` / `run_async`, the last call wins).
//! * Right after the handler, the run loop polls it once (the cold path of
//!   `Cell::outcome`). Ready: its continuation runs at once, on the actor,
//!   and nothing else changes. Pending: the phase becomes
//!   [`Phase::Awaiting`], which holds the future.
//! * `Awaiting` takes no user messages, exactly like `Phase::Suspended`:
//!   the run ends and releases the run token for system messages only
//!   (mailbox rule 3), leaving user messages, timer messages and receive
//!   timeout checks queued in order. System messages still act: a stop, a
//!   failure (its own, escalated, a restart directive) drops the future
//!   (`Cell::drop_awaited`) before the new phase takes over.
//! * The future's waker ([`AwaitWake`], one per cell, made at the first
//!   suspension) sends the cell a [`SystemMsg::Wake`]; its state word
//!   ([`AwaitState`]) keeps at most one queued. A system message claims
//!   the run token like any other (mailbox rule 1), so the mailbox's state
//!   machine is unchanged: no lost wake-up follows from its rules 1 and 3
//!   (and the loom model `suspended_wakes_for_system_message`). Handling
//!   `Wake` clears the flag, then polls.
//! * A wake-up *during* a poll (a future that wakes itself, or one woken
//!   by another thread meanwhile) sends nothing: it leaves a note in the
//!   state word, and the run that polled polls again before it ends
//!   (`RunState::repoll`, `Cell::repoll`; one poll counts as one message
//!   of the run's throughput, and a run that used it up resubmits itself
//!   to poll in its next turn). The loom models of `await_state` check
//!   that no wake-up is lost either way.
//!   The same waker and `Wake` serve the reentrant futures
//!   ([`super::reentrant`]), which list themselves in `AwaitWake::woken`.
//! * Ready: the continuation runs with `&mut` actor and context, the
//!   phase goes back to `Running`, the receive timeout's idle period starts
//!   now (the actor was busy), and the queued user messages run. A panic
//!   in the future or its continuation, or a `ctx.fail` in the
//!   continuation, is a failure of the actor like a handler's.
//!
//! So one thread at a time polls the future, always the holder of the run
//! token, and always on the actor's dispatcher: no extra thread, no task.

use std::fmt;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll, Wake, Waker};

use super::{Cell, Phase, RunState};
use crate::core::actor::Actor;
use crate::core::actor_ref::{ActorHandle, SystemMsg};
use crate::core::context::Context;
use crate::core::instrument::Outcome;
use crate::supervision::FailurePhase;
use crate::sync::{Arc, Mutex};

use crate::core::await_state::AwaitState;

/// How many times a poll woken during itself polls again at once, before
/// the run's own `repoll` (which counts against its throughput) takes
/// over. One saves the pending-once future (a yield) the phase change and
/// the run loop's turn: 861 -> 705 instructions per message under
/// callgrind (`weir-bench peers --only async --rows "weir, 1 thread"
/// --await yield-once`, the difference between 50,000 and 100,000
/// messages; 984 with a `Wake` system message per wake-up, 640 for a
/// ready future). A future that wakes itself forever still yields the
/// thread after `2 * throughput` polls.
const INLINE_REPOLLS: u32 = 1;

/// A future and what runs on the actor when it is ready.
pub(crate) trait Awaited<A: Actor>: Send {
    /// Poll the future; when ready, run the continuation with the actor and
    /// its context, and return `Ready`. Not called again after `Ready`.
    fn poll_finish(
        self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        actor: &mut A,
        ctx: &mut Context<A>,
    ) -> Poll<()>;
}

/// The boxed future a cell awaits.
pub(crate) struct AwaitedFuture<A: Actor>(Pin<Box<dyn Awaited<A>>>);

impl<A: Actor> AwaitedFuture<A> {
    pub(crate) fn new<F, T>(future: F, then: T) -> Self
    where
        F: Future + Send + 'static,
        T: FnOnce(&mut A, &mut Context<A>, F::Output) + Send + 'static,
    {
        Self(Box::pin(Then {
            future,
            then: Some(then),
        }))
    }
}

impl<A: Actor> AwaitedFuture<A> {
    /// Poll the future; when ready, run its continuation (`Awaited`).
    pub(super) fn poll_finish(
        &mut self,
        cx: &mut TaskContext<'_>,
        actor: &mut A,
        ctx: &mut Context<A>,
    ) -> Poll<()> {
        self.0.as_mut().poll_finish(cx, actor, ctx)
    }
}

impl<A: Actor> fmt::Debug for AwaitedFuture<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AwaitedFuture")
    }
}

/// A future and its continuation.
struct Then<F, T> {
    /// Structurally pinned: never moved out of a pinned `Then`.
    future: F,
    /// Not pinned; taken when the future is ready.
    then: Option<T>,
}

impl<A, F, T> Awaited<A> for Then<F, T>
where
    A: Actor,
    F: Future + Send,
    T: FnOnce(&mut A, &mut Context<A>, F::Output) + Send,
{
    fn poll_finish(
        self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        actor: &mut A,
        ctx: &mut Context<A>,
    ) -> Poll<()> {
        // SAFETY: `future` is pinned structurally: it is never moved out of
        // `Then` (no method takes it, `Then` has no `Drop` that could), and
        // `then` is never treated as pinned.
        let this = unsafe { self.get_unchecked_mut() };
        // SAFETY: as above; `this` came from a pinned `Then`.
        let future = unsafe { Pin::new_unchecked(&mut this.future) };
        match future.poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(output) => {
                let then = this.then.take().expect("polled again after ready");
                then(actor, ctx, output);
                Poll::Ready(())
            }
        }
    }
}

/// The waker of a cell's awaited futures: it sends the cell one
/// [`SystemMsg::Wake`] per wake-up that finds none queued and nobody
/// polling (see [`AwaitState`]).
pub(crate) struct AwaitWake {
    cell: ActorHandle,
    /// Whether a `Wake` is queued, and whether the cell is polling.
    state: AwaitState,
    /// The ids of reentrant futures woken and not polled yet, in wake
    /// order (see [`super::reentrant`]).
    pub(super) woken: Mutex<Vec<u64>>,
}

impl Wake for AwaitWake {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if self.state.wake() {
            // A stopped cell drops it: its future is gone too.
            self.cell.send_system(SystemMsg::Wake);
        }
    }
}

impl<A: Actor> Cell<A> {
    /// The handler just returned with `future` (module docs): poll it once,
    /// and await it if it is not ready.
    #[cold]
    #[inline(never)]
    pub(super) fn start_awaiting(
        &self,
        st: &mut RunState<A>,
        future: AwaitedFuture<A>,
        phase: FailurePhase,
    ) -> Outcome {
        if !matches!(st.phase, Phase::Running) || st.actor.is_none() {
            // Not a handler of a running actor (a hook of a stopping one):
            // nothing will await it.
            drop_guarded(future);
            return Outcome::Handled;
        }
        self.poll_awaited(st, future, phase)
    }

    /// A `Wake` arrived: poll the awaited future, if any, then the woken
    /// reentrant futures (see [`super::reentrant`]).
    pub(super) fn wake_awaited(&self, st: &mut RunState<A>) {
        if let Some((wake, _)) = &st.waker {
            // Before the poll: a wake-up during it queues another `Wake`.
            wake.state.handled();
        }
        // Else stale: the future was dropped or is done.
        if matches!(st.phase, Phase::Awaiting(_)) {
            let Phase::Awaiting(future) = std::mem::replace(&mut st.phase, Phase::Running) else {
                unreachable!("checked above");
            };
            self.poll_awaited(st, future, FailurePhase::Receive);
        }
        // Also after a non-reentrant future that is done just now: the
        // reentrant ones woken while it ran wait for no other wake.
        self.wake_reentrant(st);
    }

    /// The cell's waker, made at the first future that needs it.
    pub(super) fn await_wake<'s>(&self, st: &'s mut RunState<A>) -> &'s Arc<AwaitWake> {
        &st.waker
            .get_or_insert_with(|| {
                let wake = Arc::new(AwaitWake {
                    cell: st.ctx.handle(),
                    state: AwaitState::new(),
                    woken: Mutex::new(Vec::new()),
                });
                (wake.clone(), Waker::from(wake))
            })
            .0
    }

    fn poll_awaited(
        &self,
        st: &mut RunState<A>,
        mut future: AwaitedFuture<A>,
        phase: FailurePhase,
    ) -> Outcome {
        self.await_wake(st);
        let (wake, waker) = st.waker.as_ref().expect("made just now");
        let mut cx = TaskContext::from_waker(waker);
        let actor = st.actor.as_mut().expect("awaiting needs an instance");
        let ctx = &mut st.ctx;
        let mut inline = INLINE_REPOLLS;
        let polled = loop {
            // A wake-up during the poll leaves a note instead of a `Wake`
            // (`AwaitState` rule 3).
            wake.state.polling();
            let polled = catch_unwind(AssertUnwindSafe(|| {
                future.0.as_mut().poll_finish(&mut cx, actor, ctx)
            }));
            if !wake.state.polled() {
                break polled;
            }
            if !matches!(polled, Ok(Poll::Pending)) {
                // Done or failed: the note may be a reentrant future's
                // (which lists itself, then wakes the cell): send it on.
                wake.wake_by_ref();
                break polled;
            }
            if inline == 0 {
                // Polled again by this run, before it ends (`Cell::repoll`).
                st.repoll = true;
                break polled;
            }
            inline -= 1;
        };
        match polled {
            Ok(Poll::Pending) => {
                st.phase = Phase::Awaiting(future);
                // A `ctx.fail` or `run_async` in the future's own code
                // cannot happen (it has no context); nothing to take.
                Outcome::Handled
            }
            Ok(Poll::Ready(())) => {
                drop_guarded(future);
                // Busy until now: the idle period starts here. Directly,
                // not at the end of the run: a check queued meanwhile is
                // handled in this run and must see the new deadline.
                if st.ctx.receive_timeout.is_some() {
                    self.receive_timeout_touched(st);
                }
                // The continuation may have failed or chained another future.
                self.outcome(st, Ok(()), phase)
            }
            Err(panic) => {
                drop_guarded(future);
                self.outcome(st, Err(panic), phase)
            }
        }
    }

    /// The awaited future was woken while this run polled it: poll it
    /// again now (module docs of `await_state`), as a `Wake` would.
    #[cold]
    #[inline(never)]
    pub(super) fn repoll(&self, st: &mut RunState<A>) {
        st.repoll = false;
        if matches!(st.phase, Phase::Awaiting(_)) {
            let Phase::Awaiting(future) = std::mem::replace(&mut st.phase, Phase::Running) else {
                unreachable!("checked above");
            };
            self.poll_awaited(st, future, FailurePhase::Receive);
        }
        self.wake_reentrant(st);
    }

    /// A stop or a failure ends the wait: drop the future, if any, before
    /// the new phase takes over (so hooks run with no future alive).
    pub(super) fn drop_awaited(st: &mut RunState<A>) {
        st.repoll = false;
        if let Phase::Awaiting(_) = st.phase
            && let Phase::Awaiting(future) = std::mem::replace(&mut st.phase, Phase::Running)
        {
            drop_guarded(future);
        }
    }
}

/// Drop a future (or a value holding one), catching a panic in its
/// destructor: it has nowhere to go (the future is being abandoned), as in
/// `pipe`.
pub(super) fn drop_guarded<T>(value: T) {
    let _ = catch_unwind(AssertUnwindSafe(move || drop(value)));
}
