//! `scan`, `fold`, `reduce`: operators that carry an accumulator.

use super::util::ports;
use crate::stage::{FlowShape, GraphStageLogic, InPort, OutPort, StageContext, StageResult};
use crate::{ErrorKind, StreamError};

/// Emits `zero`, then the running accumulation.
pub(crate) struct Scan<T, A, F> {
    pub(crate) shape: FlowShape<T, A>,
    pub(crate) acc: A,
    pub(crate) f: F,
    pub(crate) zero_sent: bool,
}

impl<T: Send + 'static, A: Clone + Send + 'static, F: FnMut(A, T) -> A + Send + 'static>
    GraphStageLogic for Scan<T, A, F>
{
    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        if self.zero_sent {
            ctx.pull(self.shape.inlet)
        } else {
            self.zero_sent = true;
            ctx.push(self.shape.out, self.acc.clone())
        }
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        let acc = self.acc.clone();
        self.acc = (self.f)(acc, element);
        ctx.push(self.shape.out, self.acc.clone())
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        if !self.zero_sent {
            self.zero_sent = true;
            ctx.emit(self.shape.out, self.acc.clone())?;
        }
        ctx.complete_stage();
        Ok(())
    }
}

/// Folds everything; emits the result when upstream completes.
/// `acc` is `None` until the first element for `reduce`.
pub(crate) struct Fold<T, A, F> {
    pub(crate) shape: FlowShape<T, A>,
    pub(crate) acc: Option<A>,
    pub(crate) f: F,
}

impl<T: Send + 'static, A: Send + 'static, F: FnMut(Option<A>, T) -> A + Send + 'static>
    GraphStageLogic for Fold<T, A, F>
{
    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.pull(self.shape.inlet)
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        self.acc = Some((self.f)(self.acc.take(), element));
        ctx.pull(self.shape.inlet)
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let acc = self
            .acc
            .take()
            .ok_or_else(|| StreamError::from_kind(ErrorKind::EmptyStream))?;
        ctx.emit(self.shape.out, acc)?;
        ctx.complete_stage();
        Ok(())
    }
}

pub(crate) fn fold_logic<T, A, F>(acc: Option<A>, f: F) -> Fold<T, A, F> {
    Fold {
        shape: ports(),
        acc,
        f,
    }
}
