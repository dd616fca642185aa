//! `grouped_within` and `grouped_weighted_within`: groups closed by size
//! (or weight) or by time, whichever comes first.
//!
//! As Akka's `groupedWeightedWithin`: the stage pulls upstream eagerly and
//! a group closes when its weight reaches the maximum or when `within` has
//! passed since the last group was emitted (a periodic timer, restarted at
//! each emission). A closed group waits for demand; meanwhile it keeps
//! taking every element that fits: a group closed by time anything up to
//! the maximum, a full one elements of weight zero. The first element that
//! does not fit is held for the next group, and upstream is back-pressured
//! until the group goes. An element heavier than the maximum joins a group
//! of weight zero (it would never fit anywhere) and closes it. Empty groups
//! are never emitted. At upstream completion what was collected is
//! emitted (the held element in a group of its own), then the stage
//! completes: no element is lost.
//!
//! `weight_fn` honours a supervision strategy: a panic in it drops that
//! element; `Restart` also takes a fresh clone of `weight_fn`. The open
//! group is kept either way (its elements were weighed without failing).

use std::time::Duration;

use super::util::{logic_flow_with, ports};
use crate::blueprint::Flow;
use crate::error::ArgumentError;
use crate::stage::{
    Directive, FlowShape, GraphStageLogic, InPort, OutPort, StageContext, StageResult,
    SupervisionStrategy, TimerKey, supervised,
};

const WINDOW: TimerKey = TimerKey(0);

struct GroupedWithin<T, W> {
    shape: FlowShape<T, Vec<T>>,
    max_weight: u64,
    within: Duration,
    weight_fn: W,
    /// The strategy and a clone of `weight_fn` to restart with.
    restart: Option<(SupervisionStrategy, W)>,
    group: Vec<T>,
    weight: u64,
    /// An element that did not fit in the group; starts the next one.
    /// While it waits, upstream is not pulled.
    pending: Option<(T, u64)>,
    /// The window passed with elements collected: emit on the next pull.
    timed_out: bool,
}

impl<T: Send + 'static, W: FnMut(&T) -> u64 + Clone + Send + 'static> GroupedWithin<T, W> {
    /// The group is closed by weight: it goes on the next pull.
    fn full(&self) -> bool {
        self.weight >= self.max_weight || self.pending.is_some()
    }

    /// Whether an element of `weight` joins the group: it fits, or the
    /// group weighs nothing yet (an element heavier than the maximum fits
    /// nowhere, so it goes with what weighs nothing).
    fn fits(&self, weight: u64) -> bool {
        self.weight == 0 || self.weight.saturating_add(weight) <= self.max_weight
    }

    fn emit_group(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let group = std::mem::take(&mut self.group);
        self.weight = 0;
        self.timed_out = false;
        if let Some((element, weight)) = self.pending.take() {
            self.add(element, weight);
        }
        ctx.schedule_periodically(WINDOW, self.within, self.within);
        ctx.push(self.shape.out, group)?;
        self.pull_if_room(ctx)
    }

    fn add(&mut self, element: T, weight: u64) {
        self.group.push(element);
        self.weight = self.weight.saturating_add(weight);
    }

    /// Pull unless an element waits for the next group: even a full group
    /// takes elements of weight zero until it goes.
    fn pull_if_room(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let inlet = self.shape.inlet;
        if self.pending.is_none() && !ctx.has_been_pulled(inlet) && !ctx.is_closed(inlet) {
            ctx.pull(inlet)?;
        }
        Ok(())
    }
}

impl<T: Send + 'static, W: FnMut(&T) -> u64 + Clone + Send + 'static> GraphStageLogic
    for GroupedWithin<T, W>
{
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.schedule_periodically(WINDOW, self.within, self.within);
        ctx.pull(self.shape.inlet)
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        let weight_fn = &mut self.weight_fn;
        let weight = match supervised(self.restart.as_ref().map(|(s, _)| s), || {
            weight_fn(&element)
        }) {
            Ok(weight) => weight,
            Err(directive) => {
                if let (Directive::Restart, Some((_, fresh))) = (directive, &self.restart) {
                    self.weight_fn = fresh.clone();
                }
                return self.pull_if_room(ctx); // dropped
            }
        };
        if self.fits(weight) {
            self.add(element, weight);
        } else {
            // Does not fit: the group is closed, this one opens the next.
            self.pending = Some((element, weight));
        }
        if self.full() && ctx.is_available(self.shape.out) {
            return self.emit_group(ctx);
        }
        self.pull_if_room(ctx)
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        if !self.group.is_empty() && (self.full() || self.timed_out) {
            return self.emit_group(ctx);
        }
        Ok(())
    }

    fn on_timer(&mut self, _: TimerKey, ctx: &mut StageContext<'_>) -> StageResult {
        if self.group.is_empty() {
            return Ok(());
        }
        if ctx.is_available(self.shape.out) {
            self.emit_group(ctx)
        } else {
            self.timed_out = true;
            Ok(())
        }
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.cancel_timer(WINDOW);
        if !self.group.is_empty() {
            ctx.emit(self.shape.out, std::mem::take(&mut self.group))?;
        }
        if let Some((element, _)) = self.pending.take() {
            ctx.emit(self.shape.out, vec![element])?;
        }
        ctx.complete_stage();
        Ok(())
    }
}

/// The `grouped_weighted_within` flow (checked arguments).
pub(crate) fn grouped_weighted_within<T, W>(
    max_weight: u64,
    within: Duration,
    weight_fn: W,
) -> Result<Flow<T, Vec<T>>, ArgumentError>
where
    T: Send + 'static,
    W: FnMut(&T) -> u64 + Clone + Send + Sync + 'static,
{
    if max_weight == 0 {
        return Err(ArgumentError::Zero {
            argument: "max_weight",
        });
    }
    if within.is_zero() {
        return Err(ArgumentError::Zero { argument: "within" });
    }
    Ok(logic_flow_with("grouped_within", move |attributes| {
        GroupedWithin {
            shape: ports(),
            max_weight,
            within,
            weight_fn: weight_fn.clone(),
            restart: attributes
                .supervision_strategy()
                .map(|strategy| (strategy.clone(), weight_fn.clone())),
            group: Vec::new(),
            weight: 0,
            pending: None,
            timed_out: false,
        }
    }))
}
