//! `buffer(n, strategy)`: decouple upstream from a slower downstream.

use std::collections::VecDeque;

use crate::overflow::{OverflowStrategy, offer};
use crate::stage::{FlowShape, GraphStageLogic, InPort, OutPort, StageContext, StageResult};

pub(crate) struct Buffer<T> {
    pub(crate) shape: FlowShape<T, T>,
    pub(crate) buf: VecDeque<T>,
    pub(crate) capacity: usize,
    pub(crate) strategy: OverflowStrategy,
    pub(crate) upstream_done: bool,
}

impl<T: Send + 'static> Buffer<T> {
    fn pull_if_room(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let room =
            self.strategy != OverflowStrategy::Backpressure || self.buf.len() < self.capacity;
        if room && !self.upstream_done && !ctx.has_been_pulled(self.shape.inlet) {
            ctx.pull(self.shape.inlet)?;
        }
        Ok(())
    }
}

impl<T: Send + 'static> GraphStageLogic for Buffer<T> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.pull(self.shape.inlet)
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        if self.buf.is_empty() && ctx.is_available(self.shape.out) {
            ctx.push(self.shape.out, element)?;
        } else {
            // What the strategy drops is gone: the user chose to drop it.
            offer(&mut self.buf, self.capacity, self.strategy, element, drop)?;
        }
        self.pull_if_room(ctx)
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        if let Some(element) = self.buf.pop_front() {
            ctx.push(self.shape.out, element)?;
        }
        if self.upstream_done && self.buf.is_empty() {
            ctx.complete_stage();
            return Ok(());
        }
        self.pull_if_room(ctx)
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.upstream_done = true;
        if self.buf.is_empty() {
            ctx.complete_stage();
        }
        Ok(())
    }
}
