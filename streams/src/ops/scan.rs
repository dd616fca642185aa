//! `scan`, `fold`, `reduce`: operators that carry an accumulator.
//!
//! `scan` and `fold` honour a supervision strategy: a panic in `f` drops
//! the element; `Resume` keeps the accumulator, `Restart` sets it back to
//! the seed (without emitting it again) and takes a fresh clone of `f`.
//!
//! `scan` is a node the planner fuses into a fused source before it
//! (`fused.rs`); elsewhere it runs as the [`Scan`] stage.

mod fused;

use std::marker::PhantomData;
use std::ops::ControlFlow;
use std::sync::{Arc, PoisonError};

use super::util::{logic_flow, logic_flow_with, ports};
use crate::blueprint::graph::Fuses;
use crate::fusion::{Consumer, ConsumerFactory, ConsumerNode, FoldNode, FoldSlot, FusedConsumer};
use crate::stage::{
    Attributes, Directive, FlowShape, GraphStageLogic, InPort, OutPort, StageContext, StageResult,
    SupervisionStrategy, supervised,
};
use crate::{ErrorKind, Flow, StreamError};

/// The strategy and what a restart goes back to: the seed and a clone of
/// the closure as the blueprint holds it. `None` without a strategy.
struct Restart<A, F> {
    strategy: SupervisionStrategy,
    zero: A,
    f: F,
}

impl<A: Clone, F: Clone> Restart<A, F> {
    fn new(strategy: &SupervisionStrategy, zero: &A, f: &F) -> Self {
        Self {
            strategy: strategy.clone(),
            zero: zero.clone(),
            f: f.clone(),
        }
    }
}

fn restart_point<A: Clone, F: Clone>(
    attributes: &Attributes,
    zero: &A,
    f: &F,
) -> Option<Restart<A, F>> {
    attributes
        .supervision_strategy()
        .map(|strategy| Restart::new(strategy, zero, f))
}

/// Emits `zero`, then the running accumulation.
struct Scan<T, A, F> {
    shape: FlowShape<T, A>,
    acc: A,
    f: F,
    zero_sent: bool,
    restart: Option<Restart<A, F>>,
}

impl<T, A: Clone, F: Clone> Scan<T, A, F> {
    /// The stage's logic for a run with `attributes` (its supervision).
    fn new(zero: &A, f: &F, attributes: &Attributes) -> Self {
        Self {
            shape: ports(),
            acc: zero.clone(),
            f: f.clone(),
            zero_sent: false,
            restart: restart_point(attributes, zero, f),
        }
    }
}

impl<T, A, F> GraphStageLogic for Scan<T, A, F>
where
    T: Send + 'static,
    A: Clone + Send + 'static,
    F: FnMut(A, T) -> A + Clone + Send + 'static,
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
        let f = &mut self.f;
        match supervised(self.restart.as_ref().map(|r| &r.strategy), || {
            f(acc, element)
        }) {
            Ok(acc) => {
                self.acc = acc;
                ctx.push(self.shape.out, self.acc.clone())
            }
            Err(directive) => {
                if let (Directive::Restart, Some(restart)) = (directive, &self.restart) {
                    self.acc = restart.zero.clone();
                    self.f = restart.f.clone();
                }
                ctx.pull(self.shape.inlet)
            }
        }
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

/// Folds everything into `acc`; emits it when upstream completes.
struct Fold<T, A, F> {
    shape: FlowShape<T, A>,
    /// Always `Some` between handlers (taken only to move it through `f`).
    acc: Option<A>,
    f: F,
    restart: Option<Restart<A, F>>,
}

impl<T, A, F> GraphStageLogic for Fold<T, A, F>
where
    T: Send + 'static,
    A: Clone + Send + 'static,
    F: FnMut(A, T) -> A + Clone + Send + 'static,
{
    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.pull(self.shape.inlet)
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        let Some(restart) = &self.restart else {
            // Unsupervised: the accumulator moves through `f`, no clone
            // (a panic fails the stage, so nothing reads it after one).
            let acc = self.acc.take().expect("fold holds its accumulator");
            self.acc = Some((self.f)(acc, element));
            return ctx.pull(self.shape.inlet);
        };
        // Supervised: `f` gets a clone, so a resumed fold keeps its value.
        let (acc, f) = (
            self.acc.clone().expect("fold holds its accumulator"),
            &mut self.f,
        );
        match restart.strategy.catching(|| f(acc, element)) {
            Ok(acc) => self.acc = Some(acc),
            Err(Directive::Restart) => {
                self.acc = Some(restart.zero.clone());
                self.f = restart.f.clone();
            }
            Err(_) => {}
        }
        ctx.pull(self.shape.inlet)
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let acc = self.acc.take().expect("fold holds its accumulator");
        ctx.emit(self.shape.out, acc)?;
        ctx.complete_stage();
        Ok(())
    }
}

/// Combines elements, the first being the start; emits the result when
/// upstream completes (`EmptyStream` when there was none).
struct Reduce<T, F> {
    shape: FlowShape<T, T>,
    acc: Option<T>,
    f: F,
}

impl<T: Send + 'static, F: FnMut(T, T) -> T + Send + 'static> GraphStageLogic for Reduce<T, F> {
    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.pull(self.shape.inlet)
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        self.acc = Some(match self.acc.take() {
            Some(acc) => (self.f)(acc, element),
            None => element,
        });
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

pub(crate) fn scan<T, A, F>(zero: A, f: F) -> Flow<T, A>
where
    T: Send + 'static,
    A: Clone + Send + Sync + 'static,
    F: FnMut(A, T) -> A + Clone + Send + Sync + 'static,
{
    let node = fused::ScanNode {
        zero,
        f,
        strategy: None,
        _input: std::marker::PhantomData,
    };
    Flow::from_step_node("scan", Arc::new(node))
}

pub(crate) fn fold<T, A, F>(zero: A, f: F) -> Flow<T, A>
where
    T: Send + 'static,
    A: Clone + Send + Sync + 'static,
    F: FnMut(A, T) -> A + Clone + Send + Sync + 'static,
{
    let (z, g) = (zero.clone(), f.clone());
    let mut flow = logic_flow_with("fold", move |attributes: &Attributes| Fold {
        shape: ports(),
        acc: Some(z.clone()),
        f: g.clone(),
        restart: restart_point(attributes, &z, &g),
    });
    let node: Arc<dyn FoldNode> = Arc::new(FoldFuse::<T, A, F> {
        zero,
        f,
        _t: PhantomData,
    });
    flow.graph.nodes[0].fuses = Some(Fuses::Fold(node));
    flow
}

/// `fold`'s [`FoldNode`]: the same fold as a consumer.
struct FoldFuse<T, A, F> {
    zero: A,
    f: F,
    _t: PhantomData<fn(T)>,
}

impl<T, A, F> FoldNode for FoldFuse<T, A, F>
where
    T: Send + 'static,
    A: Clone + Send + Sync + 'static,
    F: FnMut(A, T) -> A + Clone + Send + Sync + 'static,
{
    fn consumer(&self, attributes: &Attributes) -> Arc<dyn ConsumerNode> {
        let (zero, f) = (self.zero.clone(), self.f.clone());
        let strategy = attributes.supervision_strategy().cloned();
        let factory: ConsumerFactory<T> = Arc::new(move || {
            let slot: FoldSlot<A> = Arc::default();
            let restart = strategy.clone().map(|strategy| Restart {
                strategy,
                zero: zero.clone(),
                f: f.clone(),
            });
            let consumer = FoldConsumer {
                acc: Some(zero.clone()),
                f: f.clone(),
                restart,
                slot: Arc::clone(&slot),
            };
            (
                Box::new(consumer) as Box<dyn Consumer<T>>,
                Box::new(slot) as _,
            )
        });
        Arc::new(FusedConsumer(factory))
    }
}

/// [`Fold`] as a consumer: the same steps per element (supervision
/// included); the result goes into `slot` when its input ends.
struct FoldConsumer<A, F> {
    /// `None` once finished.
    acc: Option<A>,
    f: F,
    restart: Option<Restart<A, F>>,
    slot: FoldSlot<A>,
}

impl<T, A, F> Consumer<T> for FoldConsumer<A, F>
where
    T: Send + 'static,
    A: Clone + Send + 'static,
    F: FnMut(A, T) -> A + Clone + Send + 'static,
{
    fn on_next(&mut self, element: T) -> ControlFlow<()> {
        let Some(acc) = self.acc.take() else {
            return ControlFlow::Break(());
        };
        let Some(restart) = &self.restart else {
            self.acc = Some((self.f)(acc, element));
            return ControlFlow::Continue(());
        };
        let f = &mut self.f;
        self.acc = Some(
            match restart.strategy.catching(|| f(acc.clone(), element)) {
                Ok(acc) => acc,
                Err(Directive::Restart) => {
                    self.f = restart.f.clone();
                    restart.zero.clone()
                }
                Err(_) => acc,
            },
        );
        ControlFlow::Continue(())
    }

    fn finish(&mut self, outcome: Result<(), StreamError>) {
        let result = match outcome {
            Ok(()) => match self.acc.take() {
                Some(acc) => Ok(acc),
                None => return,
            },
            Err(error) => {
                self.acc = None;
                Err(error)
            }
        };
        *self.slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(result);
    }
}

pub(crate) fn reduce<T, F>(f: F) -> Flow<T, T>
where
    T: Send + 'static,
    F: FnMut(T, T) -> T + Clone + Send + Sync + 'static,
{
    logic_flow("reduce", move || Reduce {
        shape: ports(),
        acc: None,
        f: f.clone(),
    })
}
