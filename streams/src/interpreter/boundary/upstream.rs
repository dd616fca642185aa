//! The upstream half of an async boundary: the end of the upstream island.
//! Fed from a port, it is the hand-over's [`FeedLogic`] (the one way an
//! island feeds a hand-over from a port); run with a fused source, it is
//! [`BoundaryOut`], a loop from the source into the batch.

use crate::sync::Arc;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::task::{Context, Waker};

use super::FUSED_BUDGET;
use crate::error::{Cancellation, StreamError};
use crate::fusion::{BoxChunks, Fill};
use crate::handover::{FeedLogic, Notify, Producer};
use crate::stage::{AsyncCallback, GraphStageLogic, InPort, StageContext, StageResult};

/// The upstream half fed from its inlet: a [`FeedLogic`], bound to its
/// island's callback at start (the factory that makes it has no stage
/// context), with the boundary's size for snapshots.
pub(super) struct PortOut<T, C: Notify> {
    pub(super) feed: FeedLogic<T, C>,
    pub(super) capacity: usize,
}

impl<T: Send + 'static, C: Notify + 'static> GraphStageLogic for PortOut<T, C> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let wake = ctx.async_callback(|this: &mut Self, (), ctx| this.feed.woken(ctx));
        self.feed.producer().set_notify(wake);
        ctx.set_gauge(super::gauge_port::<T, C>);
        self.feed.pre_start(ctx)
    }

    fn on_push(&mut self, port: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.feed.on_push(port, ctx)
    }

    fn on_idle(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        self.feed.on_idle(ctx)
    }

    fn on_upstream_finish(&mut self, port: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.feed.on_upstream_finish(port, ctx)
    }

    fn on_upstream_failure(
        &mut self,
        port: InPort,
        error: StreamError,
        ctx: &mut StageContext<'_>,
    ) -> StageResult {
        self.feed.on_upstream_failure(port, error, ctx)
    }

    fn post_stop(&mut self) {
        self.feed.post_stop();
    }
}

/// What the fused upstream half takes its elements from.
pub(super) enum Upstream<T> {
    /// A fused iterator source.
    Iter(BoxChunks<T>),
    /// The half has stopped: whatever it took elements from is dropped
    /// (a relayed boundary's consumer cancels its upstream this way).
    Stopped,
}

/// The upstream half with a fused source: a port-less stage at the end of
/// the upstream island. `C` is how the downstream half is notified: an
/// async callback into its island, or a waker when the downstream half is
/// relayed into the next boundary.
pub(super) struct BoundaryOut<T, C: Notify> {
    /// Its end of the hand-over (dropped without a finish, when the
    /// island aborts, it tells downstream).
    pub(super) producer: Producer<T, AsyncCallback<()>, C>,
    /// The boundary's buffer size, for snapshots.
    pub(super) capacity: usize,
    pub(super) upstream: Upstream<T>,
    /// For a fused source: run again after yielding the thread, or when
    /// the source wakes (the waker invokes the callback).
    pub(super) resume: Option<(AsyncCallback<()>, Waker)>,
}

impl<T: Send + 'static, C: Notify + 'static> BoundaryOut<T, C> {
    /// Hand the local batch over; learn about cancellation; take credit.
    /// Returns whether downstream cancelled.
    fn hand_over(&mut self) -> bool {
        self.producer.hand_over()
    }

    /// Hand over, then run the source again.
    fn flush(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        if self.hand_over() {
            self.cancelled(ctx);
            return Ok(());
        }
        self.pump(ctx)
    }

    /// The fused source: fill the batch while there is credit, a budget
    /// of elements per call; a pending source wakes this half again.
    fn pump(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let mut budget = FUSED_BUDGET;
        loop {
            let (Upstream::Iter(source), Some((_, waker))) = (&mut self.upstream, &self.resume)
            else {
                return Ok(());
            };
            let credit = self.producer.credit();
            let take = credit.min(budget);
            let (outcome, full) = self.producer.fill(budget, |local, take| {
                if take == 0 {
                    Ok(Fill::More)
                } else {
                    let mut cx = Context::from_waker(waker);
                    catch_unwind(AssertUnwindSafe(|| source.fill(&mut cx, local, take)))
                }
            });
            budget -= take;
            // `Some(outcome)`: the source ended (`None` completed, else failed).
            let end = match outcome {
                Ok(Fill::More) => None,
                Ok(Fill::Pending) => {
                    // Hand over what there is; the source's waker goes on.
                    if self.hand_over() {
                        self.cancelled(ctx);
                    }
                    return Ok(());
                }
                Ok(Fill::Exhausted) => Some(None),
                Ok(Fill::Failed(error)) => Some(Some(error)),
                Err(payload) => {
                    let name: Arc<str> = ctx.stage_name().into();
                    let error = StreamError::panicked(&*payload).in_stage(&name);
                    // Cancel the fused source with the cause (a relayed
                    // boundary hands it back to the island before), as a
                    // failing stage cancels its inlets; dropped, it would
                    // cancel plainly.
                    source.cancel(&error);
                    Some(Some(error))
                }
            };
            if let Some(outcome) = end {
                self.finish(outcome);
                ctx.complete_stage();
                return Ok(());
            }
            if full {
                if self.hand_over() {
                    self.cancelled(ctx);
                    return Ok(());
                }
                if self.producer.credit() == 0 {
                    return Ok(()); // woken when credit comes back
                }
            }
            if budget == 0 {
                self.hand_over();
                if let Some((resume, _)) = &self.resume {
                    resume.invoke(());
                }
                return Ok(());
            }
        }
    }

    fn finish(&mut self, outcome: Option<StreamError>) {
        self.producer.finish(outcome.map_or(Ok(()), Err));
    }

    /// Downstream cancelled: stop, cancelling upstream with the cause the
    /// downstream half handed over (a failure there, or a normal cancel).
    fn cancelled(&mut self, ctx: &mut StageContext<'_>) {
        let cause = self.producer.cancel_cause();
        if let (Some(error), Upstream::Iter(source)) = (&cause, &mut self.upstream) {
            source.cancel(error);
        }
        ctx.cancel_stage(Cancellation::from_failure(cause));
    }
}

impl<T: Send + 'static, C: Notify + 'static> GraphStageLogic for BoundaryOut<T, C> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let wake = ctx.async_callback(|this: &mut Self, (), ctx| this.flush(ctx));
        self.producer.set_notify(wake.clone());
        ctx.set_gauge(super::gauge_out::<T, C>);
        if let Upstream::Stopped = self.upstream {
            return Ok(());
        }
        ctx.set_keep_going(true);
        let waker = wake.waker(());
        self.resume = Some((wake, waker));
        self.pump(ctx)
    }

    fn post_stop(&mut self) {
        // Torn down without a finish (the island aborted): tell downstream
        // (a no-op after a finish or a cancellation).
        self.producer.finish_abruptly();
        // Let go of the source now, not when the island is dropped: a
        // relayed boundary's consumer cancels its upstream island.
        self.upstream = Upstream::Stopped;
    }
}
