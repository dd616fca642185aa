//! The downstream half of an async boundary: the start of the downstream island.

use crate::sync::Arc;
use std::ops::ControlFlow;
use std::panic::{AssertUnwindSafe, catch_unwind};

use super::{Down, FUSED_BUDGET};
use crate::error::StreamError;
use crate::fusion::Consumer;
use crate::handover::{Refill, Wait};
use crate::stage::{AsyncCallback, GraphStageLogic, OutPort, Outlet, StageContext, StageResult};

pub(super) enum Downstream<T> {
    /// Elements leave through outlet 0.
    Port,
    /// Elements go into a fused folding sink.
    Consumer(Box<dyn Consumer<T>>),
}

/// The downstream half: a source in the downstream island.
pub(super) struct BoundaryIn<T> {
    /// Its end of the hand-over; the batch is oldest first for a fused
    /// sink, newest first (popped) for the outlet.
    pub(super) consumer: Down<T>,
    /// The boundary's buffer size, for snapshots.
    pub(super) capacity: usize,
    pub(super) finished: bool,
    pub(super) downstream: Downstream<T>,
    pub(super) resume: Option<AsyncCallback<()>>,
}

impl<T: Send + 'static> BoundaryIn<T> {
    fn outlet() -> Outlet<T> {
        Outlet::new(0)
    }

    /// Take what upstream handed over when the local batch is empty.
    /// `Some(outcome)` once everything upstream sent is delivered and it
    /// has finished.
    fn refill(&mut self, waiting: bool) -> Option<Option<StreamError>> {
        match self
            .consumer
            .refill(if waiting { Wait::Yes } else { Wait::No })
        {
            Refill::Ready | Refill::Empty => None,
            Refill::End(outcome) => Some(outcome.err()),
            // Only after `finished` is set, which stops every caller.
            Refill::Done => Some(None),
        }
    }

    fn step(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        match self.downstream {
            Downstream::Port => self.deliver(ctx),
            Downstream::Consumer(_) => self.drain(ctx),
        }
    }

    /// Push one element if downstream wants it; once everything upstream
    /// sent is delivered, pass its completion or failure on (no demand
    /// needed for that: it goes on with the last element, not on the next
    /// pull).
    fn deliver(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let out = Self::outlet();
        if self.finished {
            return Ok(());
        }
        if ctx.is_available(out) {
            if let Some(outcome) = self.refill(true) {
                return self.end(ctx, outcome);
            }
            let Some(element) = self.consumer.pop() else {
                return Ok(()); // woken when upstream hands more over
            };
            ctx.push(out, element)?;
        }
        match self.refill(false) {
            Some(outcome) => self.end(ctx, outcome),
            None => Ok(()),
        }
    }

    fn end(&mut self, ctx: &mut StageContext<'_>, outcome: Option<StreamError>) -> StageResult {
        self.finished = true;
        let out = Self::outlet();
        match outcome {
            None => ctx.complete(out),
            Some(error) => ctx.fail(out, error),
        }
        Ok(())
    }

    /// The fused sink: feed it batches, a budget of elements per call.
    fn drain(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let mut budget = FUSED_BUDGET;
        while budget > 0 && !self.finished {
            if let Some(outcome) = self.refill(true) {
                self.finished = true;
                if let Downstream::Consumer(consumer) = &mut self.downstream {
                    consumer.finish(outcome.map_or(Ok(()), Err));
                }
                ctx.complete_stage();
                return Ok(());
            }
            if self.consumer.is_empty() {
                return Ok(()); // woken when upstream hands more over
            }
            let local = self.consumer.batch_mut();
            let n = local.len().min(budget);
            let Downstream::Consumer(consumer) = &mut self.downstream else {
                return Ok(());
            };
            let drained = catch_unwind(AssertUnwindSafe(|| consumer.drain_batch(local, n)));
            budget -= n;
            match drained {
                Ok(ControlFlow::Break(())) => {
                    self.finished = true;
                    self.cancel_upstream();
                    ctx.complete_stage();
                    return Ok(());
                }
                Ok(ControlFlow::Continue(())) => self.consumer.consumed(n),
                Err(payload) => {
                    self.finished = true;
                    let name: Arc<str> = ctx.stage_name().into();
                    let error = StreamError::panicked(&*payload).in_stage(&name);
                    consumer.finish(Err(error.clone()));
                    self.consumer.cancel_failed(error);
                    ctx.complete_stage();
                    return Ok(());
                }
            }
        }
        if !self.finished
            && let Some(resume) = &self.resume
        {
            resume.invoke(());
        }
        Ok(())
    }
}

impl<T: Send + 'static> GraphStageLogic for BoundaryIn<T> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let wake = ctx.async_callback(|this: &mut Self, (), ctx| this.step(ctx));
        self.consumer.set_notify(wake.clone());
        ctx.set_gauge(super::gauge_in::<T>);
        if let Downstream::Consumer(consumer) = &mut self.downstream {
            if !consumer.wants_elements() {
                consumer.finish(Ok(()));
                self.cancel_upstream();
                return Ok(());
            }
            ctx.set_keep_going(true);
            self.resume = Some(wake);
            return self.drain(ctx);
        }
        // Upstream may have finished before this island started (its
        // wake-up found no callback yet): its completion or failure goes
        // on now, without waiting for demand (Reactive Streams 1.4, 1.5).
        self.deliver(ctx)
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.deliver(ctx)
    }

    fn on_downstream_finish(&mut self, port: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        // The cause crosses to the upstream island with the cancel.
        match ctx.cancellation(port).failure() {
            Some(error) => self.consumer.cancel_failed(error.clone()),
            None => self.consumer.cancel(),
        };
        ctx.complete_stage();
        Ok(())
    }

    fn post_stop(&mut self) {
        self.cancel_upstream();
    }
}

impl<T> BoundaryIn<T> {
    fn cancel_upstream(&mut self) {
        self.consumer.cancel();
    }
}
