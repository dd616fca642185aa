//! Reentrant futures of async handlers (`Context::run_async_reentrant`):
//! the actor keeps taking messages while they run.
//!
//! # The protocol
//!
//! * A handler hands futures over with `ctx.run_async_reentrant` /
//!   `run_async_reentrant_then` (`Deferred::Reentrant`, which collects all
//!   of one handler's). Right after the handler each gets an id (never
//!   reused), its own waker ([`FutureWake`]) and a place in
//!   [`Reentrant::running`], and is polled once: a ready one runs its
//!   continuation at once, as a non-reentrant one does.
//! * The phase stays `Running`: user messages keep flowing. A future's
//!   waker appends its id to the cell's woken list (at most once until it
//!   is polled, its `listed` flag) and wakes the cell as an awaited future
//!   does: one [`SystemMsg::Wake`](crate::core::actor_ref::SystemMsg::Wake)
//!   queued at a time (`AwaitWake::queued`). So the mailbox's state
//!   machine is unchanged, and the non-reentrant path pays nothing for it.
//! * Handling `Wake` polls the woken futures in the order they were woken,
//!   while the actor takes user messages: continuations run on the actor's
//!   thread, between two messages, in the order their futures completed.
//!   A continuation that calls `run_async` (non-reentrant) holds the rest
//!   until its future is done; one that fails the actor holds them until
//!   the directive. The ids not polled yet go back to the front of the
//!   list, and a wake is sent again when the actor takes user messages
//!   once more ([`Cell::rewake_reentrant`]: the end of a non-reentrant
//!   future, a resume, the last ancestor's unsuspend).
//! * A stop drops every running future before `post_stop`; a restart drops
//!   them before `pre_restart` (their continuations were written for the
//!   old instance); a failure keeps them, so a resumed actor gets their
//!   continuations. A panic in a future or its continuation, or a
//!   `ctx.fail` in the continuation, fails the actor like a handler.
//! * They do not hold the receive timeout: between messages the actor is
//!   idle, whatever is running (the continuation is not a message either).

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::task::{Context as TaskContext, Poll, Wake, Waker};

use super::awaited::{AwaitWake, AwaitedFuture, drop_guarded};
use super::{Cell, Phase, RunState};
use crate::core::actor::Actor;
use crate::supervision::FailurePhase;
use crate::sync::{Arc, AtomicBool, Ordering};

/// The reentrant futures of one actor that are not done yet.
pub(crate) struct Reentrant<A: Actor> {
    /// By id.
    running: HashMap<u64, Running<A>>,
    next_id: u64,
}

impl<A: Actor> Default for Reentrant<A> {
    fn default() -> Self {
        Self {
            running: HashMap::new(),
            next_id: 0,
        }
    }
}

/// One running reentrant future and its waker.
struct Running<A: Actor> {
    future: AwaitedFuture<A>,
    wake: Arc<FutureWake>,
    waker: Waker,
}

/// The waker of one reentrant future: it lists the future as woken and
/// wakes the cell.
struct FutureWake {
    id: u64,
    cell: Arc<AwaitWake>,
    /// The id is in the woken list and not polled yet.
    listed: AtomicBool,
}

impl Wake for FutureWake {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if !self.listed.swap(true, Ordering::AcqRel) {
            self.cell.woken.lock().push(self.id);
        }
        self.cell.wake_by_ref();
    }
}

impl<A: Actor> Cell<A> {
    /// The handler just returned with reentrant `futures`: start them.
    #[cold]
    #[inline(never)]
    pub(super) fn start_reentrant(&self, st: &mut RunState<A>, futures: Vec<AwaitedFuture<A>>) {
        if !matches!(st.phase, Phase::Running) || st.actor.is_none() {
            // Not a handler of a running actor (a hook of a stopping one).
            drop_guarded(futures);
            return;
        }
        let cell = self.await_wake(st).clone();
        let mut first = Vec::with_capacity(futures.len());
        for future in futures {
            let id = st.reentrant.next_id;
            st.reentrant.next_id += 1;
            let wake = Arc::new(FutureWake {
                id,
                cell: cell.clone(),
                listed: AtomicBool::new(true),
            });
            let waker = Waker::from(wake.clone());
            st.reentrant.running.insert(
                id,
                Running {
                    future,
                    wake,
                    waker,
                },
            );
            first.push(id);
        }
        // Polled at once, in the order they were handed over; what is not
        // polled (the actor stopped taking messages) waits in the list.
        self.poll_reentrant(st, first);
    }

    /// A `Wake` arrived: poll the woken reentrant futures, if the actor
    /// takes user messages now (else they wait for `rewake_reentrant`).
    pub(super) fn wake_reentrant(&self, st: &mut RunState<A>) {
        if st.reentrant.running.is_empty() || !st.takes_user_messages() {
            return;
        }
        let Some((wake, _)) = &st.waker else { return };
        let woken = std::mem::take(&mut *wake.woken.lock());
        self.poll_reentrant(st, woken);
    }

    /// Poll the futures `ids` in order while the actor takes user messages;
    /// put the rest back at the front of the woken list.
    fn poll_reentrant(&self, st: &mut RunState<A>, ids: Vec<u64>) {
        let mut ids = ids.into_iter();
        while st.takes_user_messages() {
            let Some(id) = ids.next() else { return };
            // Gone: done, or dropped by a restart.
            let Some(mut running) = st.reentrant.running.remove(&id) else {
                continue;
            };
            // Before the poll: a wake-up during it lists the id again.
            running.wake.listed.store(false, Ordering::Release);
            let mut cx = TaskContext::from_waker(&running.waker);
            let actor = st.actor.as_mut().expect("running needs an instance");
            let ctx = &mut st.ctx;
            let polled = catch_unwind(AssertUnwindSafe(|| {
                running.future.poll_finish(&mut cx, actor, ctx)
            }));
            match polled {
                Ok(Poll::Pending) => {
                    st.reentrant.running.insert(id, running);
                }
                Ok(Poll::Ready(())) => {
                    drop_guarded(running);
                    // The continuation may have failed or handed over more.
                    self.outcome(st, Ok(()), FailurePhase::Receive);
                }
                Err(panic) => {
                    drop_guarded(running);
                    self.outcome(st, Err(panic), FailurePhase::Receive);
                }
            }
        }
        let rest: Vec<u64> = ids.collect();
        if !rest.is_empty()
            && let Some((wake, _)) = &st.waker
        {
            let mut woken = wake.woken.lock();
            woken.splice(0..0, rest);
        }
    }

    /// The actor takes user messages again: if reentrant futures were
    /// woken meanwhile, wake the cell for them.
    pub(super) fn rewake_reentrant(st: &RunState<A>) {
        if st.reentrant.running.is_empty() || !st.takes_user_messages() {
            return;
        }
        if let Some((wake, _)) = &st.waker
            && !wake.woken.lock().is_empty()
        {
            wake.wake_by_ref();
        }
    }

    /// A stop or a restart: drop every reentrant future (their wakers may
    /// outlive them; a later wake finds no id and does nothing).
    pub(super) fn drop_reentrant(st: &mut RunState<A>) {
        if st.reentrant.running.is_empty() {
            return;
        }
        let running = std::mem::take(&mut st.reentrant.running);
        drop_guarded(running);
        if let Some((wake, _)) = &st.waker {
            wake.woken.lock().clear();
        }
    }
}
