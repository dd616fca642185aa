//! The fusable kinds of blueprint node, with their element types erased so
//! that the planner (`crate::plan`) can join them without knowing them.
//!
//! A constructor records what the user asked for as one node of one kind:
//! an iterator source ([`IterNode`]), a simple operator ([`StepNode`]), a
//! folding sink ([`ConsumerNode`]), a source that can host a folding sink
//! ([`HostNode`]) or a sink that can drive a fused source itself
//! ([`PullNode`]). Each node knows its own element types; a join between
//! two nodes is asked of the node that knows the types it needs, and the
//! other side is recovered from `dyn Any` (the planner only joins nodes
//! that an edge of the blueprint joins, so the types match by construction).

use std::any::Any;
use std::sync::Arc;

use super::consumer::{
    Consumer, ConsumerFactory, ConsumerSinkStage, HostsConsumer, IterConsumerStage,
};
use super::iter::{IterAdapter, IterFactory, IterSource};
use super::pull::{Pull, PullFactory};
use super::step::{Step, StepFactory, StepFn, StepStage};
use crate::error::StreamError;
use crate::stage::{
    Attributes, GraphStageLogic, InPort, Inlet, OutPort, Outlet, SlotKind, StageContext,
    StageResult, SupervisionStrategy,
};
use crate::stage::{ErasedStage, MatContext};

const JOINED: &str = "the planner joins only nodes whose element types match";

/// A source that is a batch iterator ([`IterFactory`]): simple operators
/// fuse into it as adapters, and a folding sink can drive it in a loop.
pub(crate) trait IterNode: Send + Sync {
    fn as_any(&self) -> &dyn Any;
    /// The source as an ordinary stage.
    fn stage(&self) -> Arc<dyn ErasedStage>;
}

/// The [`IterNode`] for elements of type `T`.
pub(crate) struct FusedIter<T>(pub(crate) IterFactory<T>);

impl<T: Send + 'static> FusedIter<T> {
    pub(crate) fn of(node: &dyn IterNode) -> IterFactory<T> {
        Arc::clone(&node.as_any().downcast_ref::<Self>().expect(JOINED).0)
    }
}

impl<T: Send + 'static> IterNode for FusedIter<T> {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn stage(&self) -> Arc<dyn ErasedStage> {
        Arc::new(IterSource {
            name: "iter",
            factory: Arc::clone(&self.0),
        })
    }
}

/// A sink that folds over its elements ([`Consumer`]).
pub(crate) trait ConsumerNode: Send + Sync {
    fn as_any(&self) -> &dyn Any;
    /// The sink as an ordinary stage.
    fn stage(&self) -> Arc<dyn ErasedStage>;
    /// One port-less stage that drives `iter` into this sink in a loop.
    fn after_iter(&self, iter: &dyn IterNode) -> Arc<dyn ErasedStage>;
}

/// The [`ConsumerNode`] for elements of type `T`.
pub(crate) struct FusedConsumer<T>(pub(crate) ConsumerFactory<T>);

impl<T: Send + 'static> FusedConsumer<T> {
    pub(crate) fn of(node: &dyn ConsumerNode) -> ConsumerFactory<T> {
        Arc::clone(&node.as_any().downcast_ref::<Self>().expect(JOINED).0)
    }
}

impl<T: Send + 'static> ConsumerNode for FusedConsumer<T> {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn stage(&self) -> Arc<dyn ErasedStage> {
        Arc::new(ConsumerSinkStage {
            name: "consumer",
            factory: Arc::clone(&self.0),
        })
    }
    fn after_iter(&self, iter: &dyn IterNode) -> Arc<dyn ErasedStage> {
        Arc::new(IterConsumerStage {
            name: "fused",
            source: FusedIter::<T>::of(iter),
            sink: Arc::clone(&self.0),
        })
    }
}

/// A source stage that can run a folding sink inside itself.
pub(crate) trait HostNode: Send + Sync {
    /// The fused stage; `source` are the source node's attributes. It
    /// materializes the source's value, then the sink's.
    fn with_consumer(
        &self,
        source: &Attributes,
        consumer: &dyn ConsumerNode,
    ) -> Arc<dyn ErasedStage>;
}

/// The [`HostNode`] of a typed host.
pub(crate) struct Hosting<T>(pub(crate) Arc<dyn HostsConsumer<T>>);

impl<T: Send + 'static> HostNode for Hosting<T> {
    fn with_consumer(
        &self,
        source: &Attributes,
        consumer: &dyn ConsumerNode,
    ) -> Arc<dyn ErasedStage> {
        self.0
            .with_consumer(source, FusedConsumer::<T>::of(consumer))
    }
}

/// A flattening stage (`flat_map_concat`) that can run a folding sink
/// after it inside itself.
pub(crate) trait FlattenNode: Send + Sync {
    /// One sink stage: the flattening, feeding `consumer` (of the inner
    /// sources' elements) directly.
    fn with_consumer(&self, consumer: &dyn ConsumerNode) -> Arc<dyn ErasedStage>;
}

/// The result a folding flow run as a consumer ([`FoldNode`]) leaves
/// when its input ends: its accumulator, or the failure it ended with.
pub(crate) type FoldSlot<A> = Arc<std::sync::Mutex<Option<Result<A, StreamError>>>>;

/// A flow stage that folds every element into one result, emitted when
/// its input completes (`fold`): it can also run as a consumer, which a
/// substream of simple operators and the fold runs directly
/// (`crate::ops::substreams`).
pub(crate) trait FoldNode: Send + Sync {
    /// The fold as a folding sink of its input, under the node's
    /// `attributes` (its supervision strategy); the sink's materialized
    /// value is the `FoldSlot<A>` of its output type `A`, which the
    /// consumer fills when it finishes.
    fn consumer(&self, attributes: &Attributes) -> Arc<dyn ConsumerNode>;
}

/// A splitting stage (`crate::ops::substreams`) that can take its
/// elements from a fused source itself, one per element it routes.
pub(crate) trait SplitNode: Send + Sync {
    /// One stage with no inlet: the splitting stage, pulling `iter`.
    fn after_iter(&self, iter: &dyn IterNode) -> Arc<dyn ErasedStage>;
}

/// A sink that can drive a fused source itself ([`Sink::with_pull`](crate::Sink::with_pull)).
pub(crate) trait PullNode: Send + Sync {
    /// Run `iter` through the sink's pull; the sink's materialized value.
    fn run(
        &self,
        iter: &dyn IterNode,
        name: Arc<str>,
        attributes: Attributes,
    ) -> Box<dyn Any + Send>;
}

/// The [`PullNode`] for elements of type `T`.
pub(crate) struct PullSink<T>(pub(crate) PullFactory<T>);

impl<T: Send + 'static> PullNode for PullSink<T> {
    fn run(
        &self,
        iter: &dyn IterNode,
        name: Arc<str>,
        attributes: Attributes,
    ) -> Box<dyn Any + Send> {
        (self.0)(Pull::new(FusedIter::<T>::of(iter)(), name, attributes))
    }
}

/// One step of a fused run, continuing into the rest of the run: it gets
/// an element and the run's output slot (`Option<Last>` for the run's
/// output type); it says what became of the element.
pub(crate) type ContFn<T> = Box<dyn FnMut(T, &mut dyn Any) -> Step<()> + Send>;
type ContFactory<T> = Arc<dyn Fn() -> ContFn<T> + Send + Sync>;

/// The start of a fused run in a stage: grab from inlet 0, run the steps.
pub(crate) type HeadFn =
    Box<dyn FnMut(&mut StageContext<'_>, &mut dyn Any) -> Result<Step<()>, StreamError> + Send>;
pub(crate) type HeadFactory = Arc<dyn Fn() -> HeadFn + Send + Sync>;

/// A simple element-wise operator ([`Step`]), or an operator that
/// [leads](StepNode::leads) (`scan`), which has only the stage and
/// adapter forms: every rule that asks for another form checks `leads`
/// first ([`any_leads`]), and the leading node's other forms are
/// unreachable.
pub(crate) trait StepNode: Send + Sync {
    /// The operator as an ordinary flow stage.
    fn stage(&self) -> Arc<dyn ErasedStage>;
    /// `iter` with this operator fused into it as an adapter.
    fn after_iter(&self, iter: &dyn IterNode) -> Arc<dyn IterNode>;
    /// This operator run inside `consumer`: a consumer of this operator's input.
    fn before_consumer(&self, consumer: &dyn ConsumerNode) -> Arc<dyn ConsumerNode>;
    /// This operator continuing into `rest` (a continuation of this
    /// operator's output), or writing into the run's output slot when it is
    /// the last of the run. Erased `ContFactory<In>`.
    fn before(&self, rest: Option<Box<dyn Any>>) -> Box<dyn Any>;
    /// The first operator of a run: grab its input and run `cont` (an
    /// erased `ContFactory<In>` from [`before`](Self::before)).
    fn head(&self, cont: Box<dyn Any>) -> HeadFactory;
    /// The last operator of a run: the stage that runs `head` and pushes
    /// this operator's output.
    fn run_stage(&self, head: HeadFactory) -> Arc<dyn ErasedStage>;
    /// This operator run under `strategy` (see `super::supervised`).
    fn supervised(&self, strategy: &SupervisionStrategy) -> Arc<dyn StepNode>;
    /// Whether the operator emits an element before its first input
    /// (`scan`'s seed, on the first demand). A step, a continuation and a
    /// consumer are driven by inputs, so such an operator has only two
    /// forms, [`stage`](Self::stage) and [`after_iter`](Self::after_iter):
    /// the planner never asks it for the others (see `plan::rules`).
    fn leads(&self) -> bool {
        false
    }
}

/// Whether any operator of `run` [leads](StepNode::leads): the run cannot
/// continue into a consumer or run as a run of steps.
pub(crate) fn any_leads(run: &[&Arc<dyn StepNode>]) -> bool {
    run.iter().any(|step| step.leads())
}

/// The [`StepNode`] of an operator from `I` to `O`: its step, and the same
/// operator as an iterator adapter.
pub(crate) struct SimpleOp<I, O> {
    pub(crate) step: StepFactory<I, O>,
    pub(crate) adapt: IterAdapter<I, O>,
}

fn put<O: 'static>(slot: &mut dyn Any, element: O) {
    *slot.downcast_mut::<Option<O>>().expect(JOINED) = Some(element);
}

impl<I: Send + 'static, O: Send + 'static> StepNode for SimpleOp<I, O> {
    fn stage(&self) -> Arc<dyn ErasedStage> {
        Arc::new(StepStage {
            name: "step",
            step: Arc::clone(&self.step),
        })
    }

    fn after_iter(&self, iter: &dyn IterNode) -> Arc<dyn IterNode> {
        let (iter, adapt) = (FusedIter::<I>::of(iter), Arc::clone(&self.adapt));
        let factory: IterFactory<O> = Arc::new(move || adapt(iter()));
        Arc::new(FusedIter(factory))
    }

    fn before_consumer(&self, consumer: &dyn ConsumerNode) -> Arc<dyn ConsumerNode> {
        let (step, consumer) = (Arc::clone(&self.step), FusedConsumer::<O>::of(consumer));
        let stepped: ConsumerFactory<I> = Arc::new(move || {
            let (inner, value) = consumer();
            let stepped = Stepped {
                step: step(),
                inner,
            };
            (Box::new(stepped) as Box<dyn Consumer<I>>, value)
        });
        Arc::new(FusedConsumer(stepped))
    }

    fn before(&self, rest: Option<Box<dyn Any>>) -> Box<dyn Any> {
        let step = Arc::clone(&self.step);
        let cont: ContFactory<I> = match rest {
            None => Arc::new(move || {
                let mut step = step();
                Box::new(move |element, out| match step(element) {
                    Step::Emit(o) => {
                        put(out, o);
                        Step::Emit(())
                    }
                    Step::Last(o) => {
                        put(out, o);
                        Step::Last(())
                    }
                    Step::Skip => Step::Skip,
                    Step::Done => Step::Done,
                })
            }),
            Some(rest) => {
                let rest = rest.downcast::<ContFactory<O>>().expect(JOINED);
                Arc::new(move || {
                    let (mut step, mut rest) = (step(), rest());
                    Box::new(move |element, out| match step(element) {
                        Step::Emit(o) => rest(o, out),
                        Step::Skip => Step::Skip,
                        // This operator completes after this element: the
                        // run does too, with whatever the rest made of it.
                        Step::Last(o) => match rest(o, out) {
                            Step::Emit(()) | Step::Last(()) => Step::Last(()),
                            Step::Skip | Step::Done => Step::Done,
                        },
                        Step::Done => Step::Done,
                    })
                })
            }
        };
        Box::new(cont)
    }

    fn head(&self, cont: Box<dyn Any>) -> HeadFactory {
        let cont = cont.downcast::<ContFactory<I>>().expect(JOINED);
        Arc::new(move || {
            let mut cont = cont();
            Box::new(move |ctx, out| {
                let element = ctx.grab(Inlet::<I>::new(0))?;
                Ok(cont(element, out))
            })
        })
    }

    fn run_stage(&self, head: HeadFactory) -> Arc<dyn ErasedStage> {
        Arc::new(RunStage::<O> {
            head,
            _out: std::marker::PhantomData,
        })
    }

    fn supervised(&self, strategy: &SupervisionStrategy) -> Arc<dyn StepNode> {
        self.supervised_op(strategy)
    }
}

/// A step, then a consumer: a consumer.
struct Stepped<A, B> {
    step: StepFn<A, B>,
    inner: Box<dyn Consumer<B>>,
}

impl<A: Send + 'static, B: Send + 'static> Consumer<A> for Stepped<A, B> {
    fn on_next(&mut self, element: A) -> std::ops::ControlFlow<()> {
        use std::ops::ControlFlow;
        match (self.step)(element) {
            Step::Emit(out) => self.inner.on_next(out),
            Step::Skip => ControlFlow::Continue(()),
            // The operator completes after this one: as through stages, the
            // sink gets it, then the completion, and upstream is cancelled.
            Step::Last(out) => {
                if self.inner.on_next(out).is_continue() {
                    self.inner.finish(Ok(()));
                }
                ControlFlow::Break(())
            }
            Step::Done => {
                self.inner.finish(Ok(()));
                ControlFlow::Break(())
            }
        }
    }

    fn finish(&mut self, outcome: Result<(), StreamError>) {
        self.inner.finish(outcome);
    }

    fn wants_elements(&self) -> bool {
        self.inner.wants_elements()
    }

    fn batch_size(&self) -> usize {
        self.inner.batch_size()
    }
}

/// A run of two or more simple operators as one flow stage.
struct RunStage<O> {
    head: HeadFactory,
    _out: std::marker::PhantomData<fn() -> O>,
}

impl<O: Send + 'static> ErasedStage for RunStage<O> {
    fn name(&self) -> &'static str {
        "fused"
    }
    fn initial_attributes(&self) -> Attributes {
        Attributes::new()
    }
    fn ports(&self) -> (u16, u16) {
        (1, 1)
    }
    fn outlet_slot(&self, _: u16) -> SlotKind {
        SlotKind::of::<O>()
    }
    fn create(
        &self,
        _: &mut MatContext<'_>,
        mats: &mut Vec<Box<dyn Any + Send>>,
    ) -> Box<dyn GraphStageLogic> {
        mats.push(Box::new(()));
        Box::new(RunLogic::<O> {
            head: (self.head)(),
            out: None,
        })
    }
}

struct RunLogic<O> {
    head: HeadFn,
    out: Option<O>,
}

impl<O: Send + 'static> GraphStageLogic for RunLogic<O> {
    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let outlet = Outlet::<O>::new(0);
        let step = (self.head)(ctx, &mut self.out)?;
        match step {
            Step::Emit(()) => ctx.push(outlet, self.out.take().expect("the run emitted")),
            Step::Skip => ctx.pull(Inlet::<()>::new(0)),
            Step::Last(()) => {
                ctx.push(outlet, self.out.take().expect("the run emitted"))?;
                ctx.complete_stage();
                Ok(())
            }
            Step::Done => {
                ctx.complete_stage();
                Ok(())
            }
        }
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.pull(Inlet::<()>::new(0))
    }
}
