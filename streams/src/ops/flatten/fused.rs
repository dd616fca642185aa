//! `flat_map_concat` with a folding sink run inside it (the planner's
//! flatten rule, `crate::plan::rules`): one sink stage that asks upstream
//! for one element at a time and feeds each inner source straight into
//! the sink's [`Consumer`]. An inner source that fuses into a batch
//! iterator is drained in batches, with no port and no interpreter event
//! per element; any other inner source runs as the flattening stage runs
//! it (a sub-island driven here, or its own stream through the bridge)
//! and its elements are fed to the sink as they come. Either way the
//! inner sources run one after another, in order; an inner failure fails
//! the sink, a sink that stops cancels the inner source and upstream.

use std::any::Any;
use std::marker::PhantomData;
use std::sync::Arc;

use super::super::sub_island::{SubEvent, SubOwner, SubPoll};
use super::sub::{SubHost, SubSource};
use super::{Flatten, Mode};
use crate::blueprint::{Flow, Source};
use crate::error::StreamError;
use crate::fusion::{Consumer, ConsumerFactory, ConsumerNode, Drained, FlattenNode, FusedConsumer};
use crate::ops::util::logic_flow;
use crate::plan::graph::Fuses;
use crate::stage::{
    AsyncCallback, Attributes, ErasedStage, GraphStageLogic, InPort, Inlet, MatContext, SlotKind,
    StageContext, StageResult,
};

/// `flat_map_concat(f)` as a flow whose node the planner may fuse with a
/// folding sink after it.
pub(crate) fn concat_flow<In, T, M, F>(f: F) -> Flow<In, T>
where
    In: Send + 'static,
    T: Send + 'static,
    M: 'static,
    F: FnMut(In) -> Source<T, M> + Clone + Send + Sync + 'static,
{
    let make = f.clone();
    let mut flow = logic_flow("flat_map_concat", move || {
        Flatten::new(make.clone(), Mode::Merge(1))
    });
    let node: Arc<dyn FlattenNode> = Arc::new(ConcatNode::<In, T, M, F> { f, _t: PhantomData });
    flow.graph.nodes[0].fuses = Some(Fuses::Flatten(node));
    flow
}

struct ConcatNode<In, T, M, F> {
    f: F,
    _t: PhantomData<fn(In) -> Source<T, M>>,
}

impl<In, T, M, F> FlattenNode for ConcatNode<In, T, M, F>
where
    In: Send + 'static,
    T: Send + 'static,
    M: 'static,
    F: FnMut(In) -> Source<T, M> + Clone + Send + Sync + 'static,
{
    fn with_consumer(&self, consumer: &dyn ConsumerNode) -> Arc<dyn ErasedStage> {
        Arc::new(FlattenSinkStage::<In, T, M, F> {
            f: self.f.clone(),
            sink: FusedConsumer::<T>::of(consumer),
            _t: PhantomData,
        })
    }
}

struct FlattenSinkStage<In, T, M, F> {
    f: F,
    sink: ConsumerFactory<T>,
    _t: PhantomData<fn(In) -> Source<T, M>>,
}

impl<In, T, M, F> ErasedStage for FlattenSinkStage<In, T, M, F>
where
    In: Send + 'static,
    T: Send + 'static,
    M: 'static,
    F: FnMut(In) -> Source<T, M> + Clone + Send + Sync + 'static,
{
    fn name(&self) -> &'static str {
        "flat_map_concat"
    }
    fn initial_attributes(&self) -> Attributes {
        Attributes::new()
    }
    fn ports(&self) -> (u16, u16) {
        (1, 0)
    }
    fn outlet_slot(&self, _: u16) -> SlotKind {
        unreachable!("a sink has no outlet")
    }
    fn create(
        &self,
        _: &mut MatContext<'_>,
        mats: &mut Vec<Box<dyn Any + Send>>,
    ) -> Box<dyn GraphStageLogic> {
        let (consumer, mat) = (self.sink)();
        mats.push(mat);
        Box::new(FlattenSinkLogic::<In, T, M, F> {
            f: self.f.clone(),
            consumer,
            host: None,
            sub: None,
            buf: Vec::new(),
            resume: None,
            upstream_done: false,
            finished: false,
            _t: PhantomData,
        })
    }
}

struct FlattenSinkLogic<In, T, M, F> {
    f: F,
    consumer: Box<dyn Consumer<T>>,
    host: Option<SubHost<T>>,
    /// The running inner source.
    sub: Option<SubSource<T>>,
    buf: Vec<T>,
    /// Drives the inner source again after a budget.
    resume: Option<AsyncCallback<()>>,
    upstream_done: bool,
    /// The consumer has been finished (or stopped): the stage is done.
    finished: bool,
    _t: PhantomData<fn(In) -> M>,
}

/// Elements per turn of the stage, as a fused source-to-sink loop.
const BUDGET: usize = 32_768;

impl<In, T, M, F> FlattenSinkLogic<In, T, M, F>
where
    In: Send + 'static,
    T: Send + 'static,
    M: 'static,
    F: FnMut(In) -> Source<T, M> + Clone + Send + Sync + 'static,
{
    fn inlet() -> Inlet<In> {
        Inlet::new(0)
    }

    fn finish(&mut self, outcome: Result<(), StreamError>, ctx: &mut StageContext<'_>) {
        if let Some(mut sub) = self.sub.take() {
            sub.cancel();
        }
        if !self.finished {
            self.finished = true;
            self.consumer.finish(outcome);
        }
        ctx.complete_stage();
    }

    /// The consumer stopped: cancel everything, without finishing it.
    fn stop(&mut self, ctx: &mut StageContext<'_>) {
        self.finished = true;
        self.finish(Ok(()), ctx);
    }

    /// Run the inner source into the consumer as far as it goes now.
    fn drive(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let Some(sub) = self.sub.as_mut() else {
            return Ok(());
        };
        let drained = match sub.drain_into(&mut *self.consumer, &mut self.buf, BUDGET) {
            Some(drained) => drained,
            None => poll_into(sub, &mut *self.consumer, BUDGET),
        };
        match drained {
            Drained::Budget => {
                if let Some(resume) = &self.resume {
                    resume.invoke(());
                }
            }
            Drained::Pending => {} // the inner source's event drives again
            Drained::Exhausted => {
                self.sub = None;
                if self.upstream_done {
                    self.finish(Ok(()), ctx);
                } else {
                    ctx.pull(Self::inlet())?;
                }
            }
            Drained::Failed(error) => self.finish(Err(error), ctx),
            Drained::Stopped => self.stop(ctx),
        }
        Ok(())
    }
}

/// Feed an inner source of another form into `consumer`, one element at a
/// time as it has them.
fn poll_into<T: Send + 'static>(
    sub: &mut SubSource<T>,
    consumer: &mut dyn Consumer<T>,
    budget: usize,
) -> Drained {
    for _ in 0..budget {
        match sub.poll() {
            SubPoll::Ready(element) => {
                if consumer.on_next(element).is_break() {
                    sub.cancel();
                    return Drained::Stopped;
                }
            }
            SubPoll::Pending => return Drained::Pending,
            SubPoll::Completed => return Drained::Exhausted,
            SubPoll::Failed(error) => return Drained::Failed(error),
        }
    }
    Drained::Budget
}

impl<In, T, M, F> GraphStageLogic for FlattenSinkLogic<In, T, M, F>
where
    In: Send + 'static,
    T: Send + 'static,
    M: 'static,
    F: FnMut(In) -> Source<T, M> + Clone + Send + Sync + 'static,
{
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        if !self.consumer.wants_elements() {
            self.finished = true;
            self.consumer.finish(Ok(()));
            ctx.cancel(Self::inlet());
            return Ok(());
        }
        // Upstream may finish while an inner source still runs: the
        // stage ends when the consumer is finished, not with its inlet.
        ctx.set_keep_going(true);
        self.host = Some(SubHost::new::<Self>(ctx));
        self.resume = Some(ctx.async_callback(|this: &mut Self, (), ctx| this.drive(ctx)));
        ctx.pull(Self::inlet())
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(Self::inlet())?;
        let source = (self.f)(element);
        let host = self.host.as_mut().expect("made in pre_start");
        self.sub = Some(host.materialize(source, ctx));
        self.drive(ctx)
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.upstream_done = true;
        if self.sub.is_none() {
            self.finish(Ok(()), ctx);
        }
        Ok(())
    }

    fn on_upstream_failure(
        &mut self,
        _: InPort,
        error: StreamError,
        ctx: &mut StageContext<'_>,
    ) -> StageResult {
        self.finish(Err(error), ctx);
        Ok(())
    }

    /// A panic in `f`, in the consumer or in an inner source reaches the
    /// sink's completion, naming this stage.
    fn on_failure(&mut self, error: &StreamError) {
        if let Some(mut sub) = self.sub.take() {
            sub.cancel();
        }
        if !self.finished {
            self.finished = true;
            self.consumer.finish(Err(error.clone()));
        }
    }

    fn post_stop(&mut self) {
        if let Some(mut sub) = self.sub.take() {
            sub.cancel();
        }
    }
}

impl<In, T, M, F> SubOwner<T> for FlattenSinkLogic<In, T, M, F>
where
    In: Send + 'static,
    T: Send + 'static,
    M: 'static,
    F: FnMut(In) -> Source<T, M> + Clone + Send + Sync + 'static,
{
    fn on_sub_event(&mut self, event: SubEvent<T>, ctx: &mut StageContext<'_>) -> StageResult {
        let id = event.id();
        // Events of inner sources already gone are dropped.
        if let Some(sub) = self.sub.as_mut().filter(|s| s.id() == id) {
            sub.on_event(event);
            self.drive(ctx)?;
        }
        Ok(())
    }
}
