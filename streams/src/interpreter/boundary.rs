//! The async boundary: two stages in two islands joined by one bounded
//! queue, moving elements in batches.
//!
//! Credit bounds the queue: the upstream half starts with `capacity`
//! credits, spends one per element it pulls, and the downstream half
//! returns them in batches of `capacity / 2` as it pushes elements on
//! (so at most `capacity` elements are between the two islands). The
//! upstream half collects elements locally and hands them over under one
//! lock per batch (when the batch is full, and whenever its island has
//! run out of events); the downstream half takes the whole queue under
//! one lock when its local batch is empty. A half that finds nothing to
//! do marks itself waiting; the other half wakes it with an async
//! callback (one message per wake-up, not per element).

use std::collections::VecDeque;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, PoisonError};

use super::materialize::BoundaryFactory;
use crate::StreamError;
use crate::stage::{
    AsyncCallback, GraphStageLogic, InPort, Inlet, OutPort, Outlet, SlotKind, StageContext,
    StageResult,
};

struct State<T> {
    queue: VecDeque<T>,
    /// Credits the downstream half has returned that upstream has not taken.
    credit: usize,
    /// Upstream finished: `Some(None)` completed, `Some(Some(e))` failed.
    done: Option<Option<StreamError>>,
    cancelled: bool,
    up_waiting: bool,
    down_waiting: bool,
    wake_up: Option<AsyncCallback<()>>,
    wake_down: Option<AsyncCallback<()>>,
}

struct Shared<T> {
    state: Mutex<State<T>>,
}

impl<T> Shared<T> {
    fn lock(&self) -> std::sync::MutexGuard<'_, State<T>> {
        // Neither half panics while holding the lock; recover the state anyway.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

pub(crate) struct Boundary<T>(PhantomData<fn(T)>);

impl<T> Boundary<T> {
    pub(crate) fn new() -> Self {
        Self(PhantomData)
    }
}

impl<T: Send + 'static> BoundaryFactory for Boundary<T> {
    fn create(
        &self,
        capacity: usize,
    ) -> (Box<dyn GraphStageLogic>, Box<dyn GraphStageLogic>, SlotKind) {
        let capacity = capacity.max(1);
        let shared: Arc<Shared<T>> = Arc::new(Shared {
            state: Mutex::new(State {
                queue: VecDeque::with_capacity(capacity),
                credit: 0,
                done: None,
                cancelled: false,
                up_waiting: false,
                down_waiting: false,
                wake_up: None,
                wake_down: None,
            }),
        });
        let batch = (capacity / 2).max(1);
        let up = BoundaryOut {
            shared: Arc::clone(&shared),
            local: VecDeque::with_capacity(capacity),
            credit: capacity,
            batch,
        };
        let down = BoundaryIn {
            shared,
            local: VecDeque::with_capacity(capacity),
            consumed: 0,
            batch,
            finished: false,
        };
        (Box::new(up), Box::new(down), SlotKind::of::<T>())
    }
}

/// The upstream half: a sink in the upstream island.
pub(crate) struct BoundaryOut<T> {
    shared: Arc<Shared<T>>,
    local: VecDeque<T>,
    credit: usize,
    batch: usize,
}

const IN: Inlet<()> = Inlet::new(0);

impl<T: Send + 'static> BoundaryOut<T> {
    fn inlet() -> Inlet<T> {
        Inlet::new(IN.port().0)
    }

    /// Hand the local batch over; learn about cancellation; take credit.
    fn flush(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let mut wake = None;
        let cancelled;
        {
            let mut state = self.shared.lock();
            cancelled = state.cancelled;
            if !self.local.is_empty() && !cancelled {
                if state.queue.is_empty() {
                    std::mem::swap(&mut state.queue, &mut self.local);
                } else {
                    state.queue.extend(self.local.drain(..));
                }
                if state.down_waiting {
                    state.down_waiting = false;
                    wake = state.wake_down.clone();
                }
            }
            self.credit += std::mem::take(&mut state.credit);
            if self.credit == 0 {
                state.up_waiting = true;
            }
        }
        if let Some(wake) = wake {
            wake.invoke(());
        }
        if cancelled {
            self.local.clear();
            ctx.complete_stage();
            return Ok(());
        }
        self.pull_if_credit(ctx)
    }

    fn pull_if_credit(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let inlet = Self::inlet();
        if self.credit > 0 && !ctx.has_been_pulled(inlet) && !ctx.is_closed(inlet) {
            ctx.pull(inlet)?;
        }
        Ok(())
    }

    fn finish(&mut self, outcome: Option<StreamError>) {
        let wake = {
            let mut state = self.shared.lock();
            state.queue.extend(self.local.drain(..));
            state.done = Some(outcome);
            state.up_waiting = false;
            state.down_waiting = false;
            if state.cancelled {
                None
            } else {
                state.wake_down.clone()
            }
        };
        if let Some(wake) = wake {
            wake.invoke(());
        }
    }
}

impl<T: Send + 'static> GraphStageLogic for BoundaryOut<T> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let wake = ctx.async_callback(|this: &mut Self, (), ctx| this.flush(ctx));
        self.shared.lock().wake_up = Some(wake);
        ctx.register_flush(|logic, ctx| {
            let logic: &mut dyn std::any::Any = logic;
            match logic.downcast_mut::<Self>() {
                Some(this) if !this.local.is_empty() => this.flush(ctx),
                _ => Ok(()),
            }
        });
        self.pull_if_credit(ctx)
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(Self::inlet())?;
        self.local.push_back(element);
        self.credit -= 1;
        if self.local.len() >= self.batch || self.credit == 0 {
            self.flush(ctx)
        } else {
            self.pull_if_credit(ctx)
        }
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.finish(None);
        ctx.complete_stage();
        Ok(())
    }

    fn on_upstream_failure(
        &mut self,
        _: InPort,
        error: StreamError,
        ctx: &mut StageContext<'_>,
    ) -> StageResult {
        self.finish(Some(error));
        ctx.complete_stage();
        Ok(())
    }

    fn post_stop(&mut self) {
        // Torn down without a finish (the island aborted): tell downstream.
        let finished = self.shared.lock().done.is_some();
        if !finished {
            self.finish(Some(StreamError::from_kind(
                crate::ErrorKind::AbruptTermination,
            )));
        }
    }
}

/// The downstream half: a source in the downstream island.
pub(crate) struct BoundaryIn<T> {
    shared: Arc<Shared<T>>,
    local: VecDeque<T>,
    consumed: usize,
    batch: usize,
    finished: bool,
}

impl<T: Send + 'static> BoundaryIn<T> {
    fn outlet() -> Outlet<T> {
        Outlet::new(0)
    }

    /// Push one element if downstream wants it, refilling from the shared
    /// queue when the local batch is empty; once everything upstream sent
    /// is delivered, pass its completion or failure on (no demand needed).
    fn deliver(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let out = Self::outlet();
        let available = ctx.is_available(out);
        if self.local.is_empty() && (available || !self.finished) {
            let mut state = self.shared.lock();
            std::mem::swap(&mut state.queue, &mut self.local);
            if self.local.is_empty() {
                match state.done.clone() {
                    Some(outcome) => {
                        drop(state);
                        self.finished = true;
                        match outcome {
                            None => ctx.complete(out),
                            Some(error) => ctx.fail(out, error),
                        }
                    }
                    None => state.down_waiting = available,
                }
                return Ok(());
            }
        }
        if !available {
            return Ok(());
        }
        let Some(element) = self.local.pop_front() else {
            return Ok(());
        };
        ctx.push(out, element)?;
        self.consumed += 1;
        if self.consumed >= self.batch {
            self.return_credit();
        }
        Ok(())
    }

    fn return_credit(&mut self) {
        let wake = {
            let mut state = self.shared.lock();
            state.credit += std::mem::take(&mut self.consumed);
            if state.up_waiting {
                state.up_waiting = false;
                state.wake_up.clone()
            } else {
                None
            }
        };
        if let Some(wake) = wake {
            wake.invoke(());
        }
    }
}

impl<T: Send + 'static> GraphStageLogic for BoundaryIn<T> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let wake = ctx.async_callback(|this: &mut Self, (), ctx| this.deliver(ctx));
        self.shared.lock().wake_down = Some(wake);
        Ok(())
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.deliver(ctx)
    }

    fn on_downstream_finish(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.cancel_upstream();
        ctx.complete_stage();
        Ok(())
    }

    fn post_stop(&mut self) {
        self.cancel_upstream();
    }
}

impl<T> BoundaryIn<T> {
    fn cancel_upstream(&mut self) {
        let wake = {
            let mut state = self.shared.lock();
            if state.cancelled || state.done.is_some() {
                return;
            }
            state.cancelled = true;
            state.queue.clear();
            state.wake_up.clone()
        };
        self.local.clear();
        if let Some(wake) = wake {
            wake.invoke(());
        }
    }
}
