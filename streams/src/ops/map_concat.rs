//! `map_concat`: each element becomes zero or more, emitted lazily on demand.

use crate::stage::{FlowShape, GraphStageLogic, InPort, OutPort, StageContext, StageResult};

pub(crate) struct MapConcat<T, I: IntoIterator, F> {
    pub(crate) shape: FlowShape<T, I::Item>,
    pub(crate) f: F,
    pub(crate) current: Option<std::iter::Peekable<I::IntoIter>>,
    pub(crate) upstream_done: bool,
}

impl<T, I, F> MapConcat<T, I, F>
where
    T: Send + 'static,
    I: IntoIterator + 'static,
    I::Item: Send + 'static,
    I::IntoIter: Send,
    F: FnMut(T) -> I + Send + 'static,
{
    /// Push the next element of the current iterator, or ask upstream for more.
    fn advance(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        if let Some(next) = self.current.as_mut().and_then(Iterator::next) {
            ctx.push(self.shape.out, next)?;
            // Know at once when the iterator is spent, so an upstream
            // completion is passed on without waiting for another pull.
            if self.current.as_mut().is_some_and(|it| it.peek().is_none()) {
                self.current = None;
                if self.upstream_done {
                    ctx.complete_stage();
                }
            }
            return Ok(());
        }
        self.current = None;
        if self.upstream_done {
            ctx.complete_stage();
            Ok(())
        } else {
            ctx.pull(self.shape.inlet)
        }
    }
}

impl<T, I, F> GraphStageLogic for MapConcat<T, I, F>
where
    T: Send + 'static,
    I: IntoIterator + 'static,
    I::Item: Send + 'static,
    I::IntoIter: Send,
    F: FnMut(T) -> I + Send + 'static,
{
    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.advance(ctx)
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        self.current = Some((self.f)(element).into_iter().peekable());
        self.advance(ctx)
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.upstream_done = true;
        if self.current.is_none() {
            ctx.complete_stage();
        }
        Ok(())
    }
}
