//! `limit` and `limit_weighted`: fail the stream once more than allowed
//! has passed (Akka's `StreamLimitReachedException`), instead of letting an
//! unexpectedly long stream fill memory downstream.

use super::util::{logic_flow, ports};
use crate::stage::{FlowShape, GraphStageLogic, InPort, OutPort, StageContext, StageResult};
use crate::{ErrorKind, Flow, StreamError};

struct Limit<T, C> {
    shape: FlowShape<T, T>,
    max: u64,
    cost_fn: C,
    left: u64,
}

impl<T: Send + 'static, C: FnMut(&T) -> u64 + Send + 'static> GraphStageLogic for Limit<T, C> {
    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.pull(self.shape.inlet)
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        let cost = (self.cost_fn)(&element);
        match self.left.checked_sub(cost) {
            Some(left) => {
                self.left = left;
                ctx.push(self.shape.out, element)
            }
            None => Err(StreamError::from_kind(ErrorKind::LimitExceeded { max: self.max })),
        }
    }
}

pub(crate) fn limit_weighted<T, C>(max: u64, cost_fn: C) -> Flow<T, T>
where
    T: Send + 'static,
    C: FnMut(&T) -> u64 + Clone + Send + Sync + 'static,
{
    logic_flow("limit", move || Limit {
        shape: ports(),
        max,
        cost_fn: cost_fn.clone(),
        left: max,
    })
}
