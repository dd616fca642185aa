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
use crate::blueprint::Flow;
use crate::error::{ErrorKind, StreamError};
use crate::fusion::{Consumer, ConsumerFactory, ConsumerNode, FoldNode, FoldSlot, FusedConsumer};
use crate::plan::graph::Fuses;
use crate::stage::{
    Attributes, Directive, FlowShape, GraphStageLogic, InPort, OutPort, StageContext, StageResult,
    SupervisionStrategy,
};

/// The strategy and what a restart goes back to: the seed and a clone of
/// the closure as the blueprint holds it.
struct Restart<A, F> {
    strategy: SupervisionStrategy,
    zero: A,
    f: F,
}

/// The accumulator of a `scan` or a `fold` (stage, adapter or consumer),
/// and the one rule by which an element goes into it.
struct Accumulator<A, F> {
    /// `None` only once taken (a finished fold), or while `f` runs.
    acc: Option<A>,
    f: F,
    /// `None` without a strategy.
    restart: Option<Restart<A, F>>,
}

impl<A: Clone, F: Clone> Accumulator<A, F> {
    /// Starting at `zero`, under `strategy` if any.
    fn new(zero: &A, f: &F, strategy: Option<&SupervisionStrategy>) -> Self {
        Self {
            acc: Some(zero.clone()),
            f: f.clone(),
            restart: strategy.map(|strategy| Restart {
                strategy: strategy.clone(),
                zero: zero.clone(),
                f: f.clone(),
            }),
        }
    }

    /// [`new`](Self::new) with the strategy of `attributes`.
    fn with(zero: &A, f: &F, attributes: &Attributes) -> Self {
        Self::new(zero, f, attributes.supervision_strategy())
    }

    /// The accumulator (not taken yet).
    fn get(&self) -> &A {
        self.acc
            .as_ref()
            .expect("the accumulator is there until taken")
    }

    /// The accumulator, leaving none: the fold is over.
    fn take(&mut self) -> Option<A> {
        self.acc.take()
    }

    /// Accumulate `element`; whether it went in. Unsupervised, the
    /// accumulator moves through `f` (a panic fails the stream, so nothing
    /// reads it after one). Supervised, `f` gets a clone, so a panic that
    /// drops the element keeps the value (`Resume`), or `Restart` goes back
    /// to the seed (without emitting it) with a fresh clone of `f`.
    #[inline]
    fn step<T>(&mut self, element: T) -> bool
    where
        F: FnMut(A, T) -> A,
    {
        let Some(restart) = &self.restart else {
            let acc = self
                .acc
                .take()
                .expect("the accumulator is there until taken");
            self.acc = Some((self.f)(acc, element));
            return true;
        };
        let (acc, f) = (self.get().clone(), &mut self.f);
        match restart.strategy.catching(|| f(acc, element)) {
            Ok(acc) => {
                self.acc = Some(acc);
                true
            }
            Err(Directive::Restart) => {
                self.acc = Some(restart.zero.clone());
                self.f = restart.f.clone();
                false
            }
            Err(_) => false,
        }
    }

    /// Whether a panic may drop an element.
    fn supervised(&self) -> bool {
        self.restart.is_some()
    }
}

/// Emits `zero`, then the running accumulation.
struct Scan<T, A, F> {
    shape: FlowShape<T, A>,
    acc: Accumulator<A, F>,
    zero_sent: bool,
}

impl<T, A: Clone, F: Clone> Scan<T, A, F> {
    /// The stage's logic for a run with `attributes` (its supervision).
    fn new(zero: &A, f: &F, attributes: &Attributes) -> Self {
        Self {
            shape: ports(),
            acc: Accumulator::with(zero, f, attributes),
            zero_sent: false,
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
            ctx.push(self.shape.out, self.acc.get().clone())
        }
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        if self.acc.step(element) {
            ctx.push(self.shape.out, self.acc.get().clone())
        } else {
            ctx.pull(self.shape.inlet)
        }
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        if !self.zero_sent {
            self.zero_sent = true;
            ctx.emit(self.shape.out, self.acc.get().clone())?;
        }
        ctx.complete_stage();
        Ok(())
    }
}

/// Folds everything into `acc`; emits it when upstream completes.
struct Fold<T, A, F> {
    shape: FlowShape<T, A>,
    acc: Accumulator<A, F>,
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
        self.acc.step(element);
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
        acc: Accumulator::with(&z, &g, attributes),
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
            let consumer = FoldConsumer {
                acc: Accumulator::new(&zero, &f, strategy.as_ref()),
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
    /// Taken when finished.
    acc: Accumulator<A, F>,
    slot: FoldSlot<A>,
}

impl<T, A, F> Consumer<T> for FoldConsumer<A, F>
where
    T: Send + 'static,
    A: Clone + Send + 'static,
    F: FnMut(A, T) -> A + Clone + Send + 'static,
{
    fn on_next(&mut self, element: T) -> ControlFlow<()> {
        if self.acc.acc.is_none() {
            return ControlFlow::Break(());
        }
        self.acc.step(element);
        ControlFlow::Continue(())
    }

    fn finish(&mut self, outcome: Result<(), StreamError>) {
        let result = match outcome {
            Ok(()) => match self.acc.take() {
                Some(acc) => Ok(acc),
                None => return,
            },
            Err(error) => {
                self.acc.take();
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
