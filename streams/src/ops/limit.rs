//! `limit` and `limit_weighted`: fail the stream once more than allowed
//! has passed (Akka's `StreamLimitReachedException`), instead of letting an
//! unexpectedly long stream fill memory downstream.
//!
//! `limit_weighted` honours a supervision strategy (as Akka's
//! `LimitWeighted`): a panic in `cost_fn` drops the element; `Restart`
//! also gives back the whole budget and takes a fresh clone of `cost_fn`.

use super::util::{logic_flow_with, ports};
use crate::blueprint::Flow;
use crate::error::{ErrorKind, StreamError};
use crate::stage::{
    Directive, FlowShape, GraphStageLogic, InPort, OutPort, StageContext, StageResult,
    SupervisionStrategy, supervised,
};

struct Limit<T, C> {
    shape: FlowShape<T, T>,
    max: u64,
    cost_fn: C,
    left: u64,
    /// The strategy and a clone of `cost_fn` to restart with.
    restart: Option<(SupervisionStrategy, C)>,
}

impl<T: Send + 'static, C: FnMut(&T) -> u64 + Clone + Send + 'static> GraphStageLogic
    for Limit<T, C>
{
    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.pull(self.shape.inlet)
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        let cost_fn = &mut self.cost_fn;
        let cost = match supervised(self.restart.as_ref().map(|(s, _)| s), || cost_fn(&element)) {
            Ok(cost) => cost,
            Err(directive) => {
                if let (Directive::Restart, Some((_, fresh))) = (directive, &self.restart) {
                    self.cost_fn = fresh.clone();
                    self.left = self.max;
                }
                return ctx.pull(self.shape.inlet); // dropped; downstream still asks
            }
        };
        match self.left.checked_sub(cost) {
            Some(left) => {
                self.left = left;
                ctx.push(self.shape.out, element)
            }
            None => Err(StreamError::from_kind(ErrorKind::LimitExceeded {
                max: self.max,
            })),
        }
    }
}

pub(crate) fn limit_weighted<T, C>(max: u64, cost_fn: C) -> Flow<T, T>
where
    T: Send + 'static,
    C: FnMut(&T) -> u64 + Clone + Send + Sync + 'static,
{
    logic_flow_with("limit", move |attributes| Limit {
        shape: ports(),
        max,
        cost_fn: cost_fn.clone(),
        left: max,
        restart: attributes
            .supervision_strategy()
            .map(|strategy| (strategy.clone(), cost_fn.clone())),
    })
}
