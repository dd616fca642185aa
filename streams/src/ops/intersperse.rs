//! `intersperse`: a separator between elements, with an optional start and end.

use crate::stage::{FlowShape, GraphStageLogic, InPort, OutPort, StageContext, StageResult};

pub(crate) struct Intersperse<T> {
    pub(crate) shape: FlowShape<T, T>,
    pub(crate) start: Option<T>,
    pub(crate) inject: T,
    pub(crate) end: Option<T>,
    pub(crate) seen_first: bool,
}

impl<T: Clone + Send + 'static> GraphStageLogic for Intersperse<T> {
    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        match self.start.take() {
            Some(start) => ctx.push(self.shape.out, start),
            None => ctx.pull(self.shape.inlet),
        }
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        if self.seen_first {
            ctx.emit(self.shape.out, self.inject.clone())?;
        }
        self.seen_first = true;
        ctx.emit(self.shape.out, element)
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        if let Some(start) = self.start.take() {
            ctx.emit(self.shape.out, start)?;
        }
        if let Some(end) = self.end.take() {
            ctx.emit(self.shape.out, end)?;
        }
        ctx.complete_stage();
        Ok(())
    }
}
