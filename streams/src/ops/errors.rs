//! `map_error` and `recover`: operators on the failure of upstream.

use crate::error::StreamError;
use crate::stage::{FlowShape, GraphStageLogic, InPort, OutPort, StageContext, StageResult};

/// Passes elements on; turns an upstream failure into `f(error)`.
pub(crate) struct MapError<T, F> {
    pub(crate) shape: FlowShape<T, T>,
    pub(crate) f: F,
}

impl<T: Send + 'static, F: FnMut(StreamError) -> StreamError + Send + 'static> GraphStageLogic
    for MapError<T, F>
{
    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.pull(self.shape.inlet)
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        ctx.push(self.shape.out, element)
    }

    fn on_upstream_failure(
        &mut self,
        _: InPort,
        error: StreamError,
        _: &mut StageContext<'_>,
    ) -> StageResult {
        Err((self.f)(error))
    }
}

/// Passes elements on; on an upstream failure emits `f(&error)` (when it
/// is `Some`) and completes, else fails with the same error.
pub(crate) struct Recover<T, F> {
    pub(crate) shape: FlowShape<T, T>,
    pub(crate) f: F,
}

impl<T: Send + 'static, F: FnMut(&StreamError) -> Option<T> + Send + 'static> GraphStageLogic
    for Recover<T, F>
{
    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.pull(self.shape.inlet)
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        ctx.push(self.shape.out, element)
    }

    fn on_upstream_failure(
        &mut self,
        _: InPort,
        error: StreamError,
        ctx: &mut StageContext<'_>,
    ) -> StageResult {
        match (self.f)(&error) {
            Some(element) => {
                ctx.emit(self.shape.out, element)?;
                ctx.complete_stage();
                Ok(())
            }
            None => Err(error),
        }
    }
}

/// Completes at once, pulling nothing: `take(0)`.
pub(crate) struct TakeNone<T> {
    pub(crate) shape: FlowShape<T, T>,
}

impl<T: Send + 'static> GraphStageLogic for TakeNone<T> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let _ = self.shape.out;
        ctx.complete_stage();
        Ok(())
    }
}
