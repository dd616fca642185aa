//! `grouped` and `sliding`: elements in vectors.

use std::collections::VecDeque;

use crate::overflow::upfront_capacity;
use crate::stage::{FlowShape, GraphStageLogic, InPort, OutPort, StageContext, StageResult};

/// Groups of `size`; the last may be shorter.
pub(crate) struct Grouped<T> {
    pub(crate) shape: FlowShape<T, Vec<T>>,
    pub(crate) size: usize,
    pub(crate) buf: Vec<T>,
}

impl<T: Send + 'static> GraphStageLogic for Grouped<T> {
    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.pull(self.shape.inlet)
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.buf.push(ctx.grab(self.shape.inlet)?);
        if self.buf.len() == self.size {
            let group = std::mem::replace(
                &mut self.buf,
                Vec::with_capacity(upfront_capacity(self.size)),
            );
            ctx.push(self.shape.out, group)
        } else {
            ctx.pull(self.shape.inlet)
        }
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        if !self.buf.is_empty() {
            ctx.emit(self.shape.out, std::mem::take(&mut self.buf))?;
        }
        ctx.complete_stage();
        Ok(())
    }
}

/// Windows of `size`, each `step` after the previous; at the end, a
/// shorter window if elements arrived that no window has shown yet.
pub(crate) struct Sliding<T> {
    pub(crate) shape: FlowShape<T, Vec<T>>,
    pub(crate) size: usize,
    pub(crate) step: usize,
    pub(crate) buf: VecDeque<T>,
    pub(crate) to_skip: usize,
    pub(crate) fresh: bool,
}

impl<T: Clone + Send + 'static> GraphStageLogic for Sliding<T> {
    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.pull(self.shape.inlet)
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        if self.to_skip > 0 {
            self.to_skip -= 1;
            return ctx.pull(self.shape.inlet);
        }
        self.buf.push_back(element);
        self.fresh = true;
        if self.buf.len() < self.size {
            return ctx.pull(self.shape.inlet);
        }
        let window: Vec<T> = self.buf.iter().cloned().collect();
        self.fresh = false;
        self.buf.drain(..self.step.min(self.size));
        self.to_skip = self.step.saturating_sub(self.size);
        ctx.push(self.shape.out, window)
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        if self.fresh && !self.buf.is_empty() {
            ctx.emit(self.shape.out, self.buf.drain(..).collect())?;
        }
        ctx.complete_stage();
        Ok(())
    }
}
