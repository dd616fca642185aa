//! Rate decoupling: `batch` / `batch_weighted` / `conflate` /
//! `conflate_with_seed` (a fast upstream is summarised while downstream is
//! slow) and `expand` / `extrapolate` (a slow upstream is stretched while
//! downstream is fast). As Akka's `Batch` and `Expand`: both pull upstream
//! eagerly, so they decouple the two sides' rates.
//!
//! The batch family honours a supervision strategy (as Akka's `Batch`): a
//! panic in `cost_fn`, `seed` or `aggregate` drops the element. `Restart`
//! also drops the batch being built (and a pending element) and takes
//! fresh clones of the closures. `Resume` keeps the batch, except after a
//! panic in `aggregate`, which had taken the batch by value: that batch is
//! lost too.

use super::util::{logic_flow, logic_flow_with, ports};
use crate::blueprint::Flow;
use crate::error::ArgumentError;
use crate::stage::{
    Directive, FlowShape, GraphStageLogic, InPort, OutPort, StageContext, StageResult,
    SupervisionStrategy, supervised,
};

/// The strategy and clones of the closures, as the blueprint holds them.
struct Restart<C, W, A> {
    strategy: SupervisionStrategy,
    cost_fn: C,
    seed: W,
    aggregate: A,
}

struct Batch<T, S, C, W, A> {
    shape: FlowShape<T, S>,
    max: u64,
    cost_fn: C,
    seed: W,
    aggregate: A,
    agg: Option<S>,
    /// The cost still allowed in `agg`.
    left: u64,
    /// An element that would take `agg` past `max`: it seeds the next one.
    pending: Option<T>,
    restart: Option<Restart<C, W, A>>,
}

impl<T, S, C, W, A> Batch<T, S, C, W, A>
where
    T: Send + 'static,
    S: Send + 'static,
    C: FnMut(&T) -> u64 + Clone + Send + 'static,
    W: FnMut(T) -> S + Clone + Send + 'static,
    A: FnMut(S, T) -> S + Clone + Send + 'static,
{
    /// User code panicked under a strategy that did not stop: the element
    /// is gone; on `Restart` so is the batch, and the closures are fresh.
    fn failed(&mut self, directive: Directive) {
        if let (Directive::Restart, Some(restart)) = (directive, &self.restart) {
            self.cost_fn = restart.cost_fn.clone();
            self.seed = restart.seed.clone();
            self.aggregate = restart.aggregate.clone();
            self.agg = None;
            self.left = self.max;
            self.pending = None;
        }
    }

    fn start(&mut self, element: T) {
        let (cost_fn, seed) = (&mut self.cost_fn, &mut self.seed);
        match supervised(self.restart.as_ref().map(|r| &r.strategy), || {
            let cost = cost_fn(&element);
            (cost, seed(element))
        }) {
            Ok((cost, agg)) => {
                self.agg = Some(agg);
                self.left = self.max.saturating_sub(cost);
            }
            Err(directive) => self.failed(directive),
        }
    }

    /// Add `element` to `agg`, or keep it pending when it does not fit.
    fn add(&mut self, agg: S, element: T) {
        let cost_fn = &mut self.cost_fn;
        let cost = match supervised(self.restart.as_ref().map(|r| &r.strategy), || {
            cost_fn(&element)
        }) {
            Ok(cost) => cost,
            Err(directive) => {
                self.agg = Some(agg);
                return self.failed(directive);
            }
        };
        if cost > self.left {
            self.agg = Some(agg);
            self.pending = Some(element);
            return;
        }
        let aggregate = &mut self.aggregate;
        match supervised(self.restart.as_ref().map(|r| &r.strategy), || {
            aggregate(agg, element)
        }) {
            Ok(agg) => {
                self.left -= cost;
                self.agg = Some(agg);
            }
            Err(directive) => {
                // The batch went into `aggregate` with the element.
                self.left = self.max;
                self.failed(directive);
            }
        }
    }

    /// Push the batch and start the next from the pending element.
    fn flush(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        if let Some(agg) = self.agg.take() {
            ctx.push(self.shape.out, agg)?;
            self.left = self.max;
        }
        if let Some(element) = self.pending.take() {
            self.start(element);
        }
        Ok(())
    }

    /// Upstream has finished and nothing of it is left to arrive. An inlet
    /// reads as closed as soon as upstream completes, even while its last
    /// element is still on its way (pushed and completed in one go): that
    /// element comes with `on_push` first, and completing on `is_closed`
    /// alone lost it.
    fn upstream_done(&self, ctx: &StageContext<'_>) -> bool {
        ctx.is_closed(self.shape.inlet) && !ctx.has_been_pulled(self.shape.inlet)
    }

    fn pull_unless_pending(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let inlet = self.shape.inlet;
        if self.pending.is_none() && !ctx.has_been_pulled(inlet) && !ctx.is_closed(inlet) {
            ctx.pull(inlet)?;
        }
        Ok(())
    }
}

impl<T, S, C, W, A> GraphStageLogic for Batch<T, S, C, W, A>
where
    T: Send + 'static,
    S: Send + 'static,
    C: FnMut(&T) -> u64 + Clone + Send + 'static,
    W: FnMut(T) -> S + Clone + Send + 'static,
    A: FnMut(S, T) -> S + Clone + Send + 'static,
{
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.pull(self.shape.inlet)
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        match self.agg.take() {
            None => self.start(element),
            Some(agg) => self.add(agg, element),
        }
        if ctx.is_available(self.shape.out) {
            self.flush(ctx)?;
        }
        self.pull_unless_pending(ctx)
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        if self.agg.is_none() {
            if self.upstream_done(ctx) {
                ctx.complete_stage();
            }
            return Ok(());
        }
        self.flush(ctx)?;
        if self.upstream_done(ctx) {
            if self.agg.is_none() {
                ctx.complete_stage();
            }
            return Ok(());
        }
        self.pull_unless_pending(ctx)
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        if self.agg.is_none() {
            ctx.complete_stage();
        }
        Ok(())
    }
}

/// The `batch_weighted` flow (checked arguments).
pub(crate) fn batch_weighted<T, S, C, W, A>(
    max: u64,
    cost_fn: C,
    seed: W,
    aggregate: A,
) -> Result<Flow<T, S>, ArgumentError>
where
    T: Send + 'static,
    S: Send + 'static,
    C: FnMut(&T) -> u64 + Clone + Send + Sync + 'static,
    W: FnMut(T) -> S + Clone + Send + Sync + 'static,
    A: FnMut(S, T) -> S + Clone + Send + Sync + 'static,
{
    if max == 0 {
        return Err(ArgumentError::Zero { argument: "max" });
    }
    Ok(logic_flow_with("batch", move |attributes| Batch {
        shape: ports(),
        max,
        cost_fn: cost_fn.clone(),
        seed: seed.clone(),
        aggregate: aggregate.clone(),
        agg: None,
        left: max,
        pending: None,
        restart: attributes.supervision_strategy().map(|strategy| Restart {
            strategy: strategy.clone(),
            cost_fn: cost_fn.clone(),
            seed: seed.clone(),
            aggregate: aggregate.clone(),
        }),
    }))
}

struct Expand<T, U, F, I> {
    shape: FlowShape<T, U>,
    extrapolate: F,
    iter: Option<I>,
    /// The current element's first output, not yet pushed: until it has
    /// gone out, upstream is back-pressured.
    first: Option<U>,
    /// Upstream completed (heard in `on_upstream_finish`; a closed inlet
    /// alone may be a failure still on its way, which must fail the stage).
    upstream_done: bool,
    _in: std::marker::PhantomData<fn(T)>,
}

impl<T, U, F, I> GraphStageLogic for Expand<T, U, F, I>
where
    T: Send + 'static,
    U: Send + 'static,
    F: FnMut(T) -> I + Send + 'static,
    I: Iterator<Item = U> + Send + 'static,
{
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.pull(self.shape.inlet)
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        let mut iter = (self.extrapolate)(element);
        let first = iter.next();
        self.iter = Some(iter);
        match first {
            None => ctx.pull(self.shape.inlet),
            Some(first) if ctx.is_available(self.shape.out) => {
                ctx.pull(self.shape.inlet)?;
                ctx.push(self.shape.out, first)
            }
            Some(first) => {
                self.first = Some(first);
                Ok(())
            }
        }
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        if let Some(first) = self.first.take() {
            ctx.push(self.shape.out, first)?;
            if self.upstream_done {
                ctx.complete_stage();
                return Ok(());
            }
            if ctx.is_closed(self.shape.inlet) {
                // A failure is on its way: it fails the stage when it comes.
                return Ok(());
            }
            return ctx.pull(self.shape.inlet);
        }
        match self.iter.as_mut().and_then(Iterator::next) {
            Some(next) => ctx.push(self.shape.out, next),
            None => {
                if self.upstream_done {
                    ctx.complete_stage();
                }
                Ok(())
            }
        }
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.upstream_done = true;
        if self.first.is_none() {
            ctx.complete_stage();
        }
        Ok(())
    }
}

pub(crate) fn expand<T, U, F, I>(extrapolate: F) -> Flow<T, U>
where
    T: Send + 'static,
    U: Send + 'static,
    F: FnMut(T) -> I + Clone + Send + Sync + 'static,
    I: IntoIterator<Item = U>,
    I::IntoIter: Send + 'static,
{
    logic_flow("expand", move || {
        let mut f = extrapolate.clone();
        Expand::<T, U, _, I::IntoIter> {
            shape: ports(),
            extrapolate: move |x| f(x).into_iter(),
            iter: None,
            first: None,
            upstream_done: false,
            _in: std::marker::PhantomData,
        }
    })
}
