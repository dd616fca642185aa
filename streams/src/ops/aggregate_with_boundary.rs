//! `aggregate_with_boundary` (Pekko 1.1's `aggregateWithBoundary`): elements
//! folded into an aggregate that `aggregate` closes (a boundary) or,
//! optionally, a periodic timer closes when `ready` says so; each closed
//! aggregate is harvested and emitted.
//!
//! As Pekko: upstream is pulled only when downstream has asked; an
//! aggregate is allocated at the first element after the previous one
//! went (so empty aggregates are never emitted); one closed while
//! downstream has not asked waits, in order, for its pull; upstream's
//! completion emits the open aggregate, then completes.

use std::time::Duration;

use super::util::{logic_flow, ports};
use crate::blueprint::Flow;
use crate::error::ArgumentError;
use crate::stage::{
    FlowShape, GraphStageLogic, InPort, OutPort, StageContext, StageResult, TimerKey,
};

const BOUNDARY: TimerKey = TimerKey(0);

struct AggregateWithBoundary<T, A, E, Al, Ag, H, R> {
    shape: FlowShape<T, E>,
    allocate: Al,
    aggregate: Ag,
    harvest: H,
    /// The timer's check and its interval.
    timer: Option<(R, Duration)>,
    /// The open aggregate: allocated at the first element after a harvest.
    open: Option<A>,
}

impl<T, A, E, Al, Ag, H, R> AggregateWithBoundary<T, A, E, Al, Ag, H, R>
where
    T: Send + 'static,
    A: Send + 'static,
    E: Send + 'static,
    Al: FnMut() -> A + Send + 'static,
    Ag: FnMut(&mut A, T) -> bool + Send + 'static,
    H: FnMut(A) -> E + Send + 'static,
    R: FnMut(&A) -> bool + Send + 'static,
{
    /// Emit the open aggregate, harvested (queued until downstream asks).
    fn harvest(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        if let Some(open) = self.open.take() {
            ctx.emit(self.shape.out, (self.harvest)(open))?;
        }
        Ok(())
    }

    fn pull_if_asked(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let inlet = self.shape.inlet;
        if ctx.is_available(self.shape.out) && !ctx.has_been_pulled(inlet) && !ctx.is_closed(inlet)
        {
            ctx.pull(inlet)?;
        }
        Ok(())
    }
}

impl<T, A, E, Al, Ag, H, R> GraphStageLogic for AggregateWithBoundary<T, A, E, Al, Ag, H, R>
where
    T: Send + 'static,
    A: Send + 'static,
    E: Send + 'static,
    Al: FnMut() -> A + Send + 'static,
    Ag: FnMut(&mut A, T) -> bool + Send + 'static,
    H: FnMut(A) -> E + Send + 'static,
    R: FnMut(&A) -> bool + Send + 'static,
{
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        if let Some((_, interval)) = self.timer {
            ctx.schedule_periodically(BOUNDARY, interval, interval);
        }
        Ok(())
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        let open = self.open.get_or_insert_with(&mut self.allocate);
        if (self.aggregate)(open, element) {
            // Pulled again when downstream asks for more.
            self.harvest(ctx)
        } else {
            self.pull_if_asked(ctx)
        }
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.pull_if_asked(ctx)
    }

    fn on_timer(&mut self, _: TimerKey, ctx: &mut StageContext<'_>) -> StageResult {
        let ready = match (&mut self.timer, &self.open) {
            (Some((ready, _)), Some(open)) => ready(open),
            _ => false,
        };
        if ready { self.harvest(ctx) } else { Ok(()) }
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.cancel_timer(BOUNDARY);
        self.harvest(ctx)?;
        ctx.complete_stage();
        Ok(())
    }
}

/// The timer's interval: at least 1 ms, as Pekko.
pub(crate) fn check_interval(interval: Duration) -> Result<(), ArgumentError> {
    if interval < Duration::from_millis(1) {
        return Err(ArgumentError::Invalid {
            argument: "interval",
            reason: "must be at least 1 ms",
        });
    }
    Ok(())
}

/// The `aggregate_with_boundary` flow; `timer`'s interval checked by the
/// caller ([`check_interval`]).
pub(crate) fn aggregate_with_boundary<T, A, E, Al, Ag, H, R>(
    allocate: Al,
    aggregate: Ag,
    harvest: H,
    timer: Option<(R, Duration)>,
) -> Flow<T, E>
where
    T: Send + 'static,
    A: Send + 'static,
    E: Send + 'static,
    Al: FnMut() -> A + Clone + Send + Sync + 'static,
    Ag: FnMut(&mut A, T) -> bool + Clone + Send + Sync + 'static,
    H: FnMut(A) -> E + Clone + Send + Sync + 'static,
    R: FnMut(&A) -> bool + Clone + Send + Sync + 'static,
{
    logic_flow("aggregate_with_boundary", move || AggregateWithBoundary {
        shape: ports(),
        allocate: allocate.clone(),
        aggregate: aggregate.clone(),
        harvest: harvest.clone(),
        timer: timer.clone(),
        open: None,
    })
}
