//! [`Consumer`]: a sink that folds over elements, run as a sink stage or
//! fused with an iterator source into one port-less stage.

use std::any::Any;
use std::ops::ControlFlow;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::task::{Context, Waker};

use super::iter::{BoxChunks, Chunks, Fill, IterFactory};
use crate::error::StreamError;
use crate::stage::{
    AsyncCallback, Attributes, ErasedStage, GraphStageLogic, InPort, Inlet, MatContext, SlotKind,
    StageContext, StageResult,
};
use crate::tuning::FUSED_DRAIN_BUDGET;

/// How far one [`Consumer::drain_chunks`] got.
pub(crate) enum Drained {
    /// The source ended.
    Exhausted,
    /// The source failed (after the elements before the failure).
    Failed(StreamError),
    /// The consumer needs no more elements.
    Stopped,
    /// The budget ran out; call again.
    Budget,
    /// The source has nothing ready; the fill's waker runs it again.
    Pending,
}

impl Drained {
    /// Where a drain loop stands after `fill`: `None` to go on.
    pub(crate) fn after(fill: Fill) -> Option<Self> {
        match fill {
            Fill::More => None,
            Fill::Exhausted => Some(Drained::Exhausted),
            Fill::Pending => Some(Drained::Pending),
            Fill::Failed(error) => Some(Drained::Failed(error)),
        }
    }
}

/// The running part of a folding sink.
pub(crate) trait Consumer<In>: Send + 'static {
    /// One element. `Break` means the consumer has its result and wants no
    /// more (upstream is cancelled).
    fn on_next(&mut self, element: In) -> ControlFlow<()>;

    /// Upstream ended with `outcome`.
    fn finish(&mut self, outcome: Result<(), StreamError>);

    /// Whether to ask for elements at all (`Sink::cancelled` does not).
    fn wants_elements(&self) -> bool {
        true
    }

    /// Start: whether to ask for elements at all; a consumer that wants
    /// none has finished here.
    fn starts(&mut self) -> bool {
        let wants = self.wants_elements();
        if !wants {
            self.finish(Ok(()));
        }
        wants
    }

    /// Elements to ask a fused source for at a time: 1 for a consumer
    /// that may stop after any element (so nothing is made that it
    /// does not take).
    fn batch_size(&self) -> usize {
        256
    }

    /// Feed about `budget` elements from a fused source, in batches.
    /// Instantiated per consumer type, so `on_next` is a direct call here.
    /// If `source.fill` panics, the consumer must still take `on_next`
    /// afterwards: the driver feeds it what the source made before the
    /// panic, then finishes it with the failure.
    fn drain_chunks(
        &mut self,
        cx: &mut Context<'_>,
        source: &mut dyn Chunks<In>,
        buf: &mut Vec<In>,
        budget: usize,
    ) -> Drained {
        let batch = self.batch_size().max(1);
        let mut left = budget;
        while left > 0 {
            let fill = source.fill(cx, buf, batch.min(left));
            left = left.saturating_sub(buf.len().max(1));
            for element in buf.drain(..) {
                if self.on_next(element).is_break() {
                    return Drained::Stopped;
                }
            }
            if let Some(end) = Drained::after(fill) {
                return end;
            }
        }
        Drained::Budget
    }

    /// [`drain_chunks`](Self::drain_chunks) for a consumer that may stop
    /// after any element: one element per request, so nothing is made
    /// that it does not take, and no batch is filled (a `head` after
    /// sources that make one element directly allocates none). `spare` is
    /// for sources that can only fill: empty between elements, and what
    /// such a source made before it panicked (still fed to the consumer by
    /// the driver).
    fn drain_one_by_one(
        &mut self,
        cx: &mut Context<'_>,
        source: &mut dyn Chunks<In>,
        spare: &mut Vec<In>,
        budget: usize,
    ) -> Drained {
        for _ in 0..budget {
            let (element, fill) = source.next_one(cx, spare);
            if let Some(element) = element
                && self.on_next(element).is_break()
            {
                return Drained::Stopped;
            }
            if let Some(end) = Drained::after(fill) {
                return end;
            }
        }
        Drained::Budget
    }

    /// Feed the first `n` elements of `batch`, taking them out of it;
    /// `Break` when the consumer wants no more (the rest of those `n` are
    /// dropped). Instantiated per consumer type, so the loop and `on_next`
    /// are direct code here.
    fn drain_batch(&mut self, batch: &mut Vec<In>, n: usize) -> ControlFlow<()> {
        for element in batch.drain(..n) {
            self.on_next(element)?;
        }
        ControlFlow::Continue(())
    }
}

/// Makes a fresh consumer and its materialized value for each run.
pub(crate) type ConsumerFactory<In> =
    Arc<dyn Fn() -> (Box<dyn Consumer<In>>, Box<dyn Any + Send>) + Send + Sync>;

/// A source stage that can run a folding sink's consumer inside itself:
/// the pair becomes one port-less stage (`Source::actor_ref` into
/// `Sink::fold`) that materializes the same values in the same order (the
/// source's, then the sink's).
pub(crate) trait HostsConsumer<Out>: Send + Sync {
    /// The fused stage; `source` are the source stage's attributes.
    fn with_consumer(
        &self,
        source: &Attributes,
        consumer: ConsumerFactory<Out>,
    ) -> Arc<dyn ErasedStage>;
}

/// A consumer run as an ordinary sink stage.
pub(crate) struct ConsumerSinkStage<In> {
    pub(crate) name: &'static str,
    pub(crate) factory: ConsumerFactory<In>,
}

impl<In: Send + 'static> ErasedStage for ConsumerSinkStage<In> {
    fn name(&self) -> &'static str {
        self.name
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
        let (consumer, mat) = (self.factory)();
        mats.push(mat);
        Box::new(ConsumerLogic { consumer })
    }
}

struct ConsumerLogic<In> {
    consumer: Box<dyn Consumer<In>>,
}

const INLET: u16 = 0;

impl<In: Send + 'static> GraphStageLogic for ConsumerLogic<In> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let inlet = Inlet::<In>::new(INLET);
        if self.consumer.starts() {
            ctx.pull(inlet)
        } else {
            ctx.cancel(inlet);
            Ok(())
        }
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let inlet = Inlet::<In>::new(INLET);
        let element = ctx.grab(inlet)?;
        match self.consumer.on_next(element) {
            ControlFlow::Continue(()) => ctx.pull(inlet),
            ControlFlow::Break(()) => {
                ctx.cancel(inlet);
                Ok(())
            }
        }
    }

    fn on_upstream_finish(&mut self, _: InPort, _: &mut StageContext<'_>) -> StageResult {
        self.consumer.finish(Ok(()));
        Ok(())
    }

    fn on_upstream_failure(
        &mut self,
        _: InPort,
        error: StreamError,
        _: &mut StageContext<'_>,
    ) -> StageResult {
        self.consumer.finish(Err(error));
        Ok(())
    }

    /// A panic in the consumer's closure (or a protocol error) reaches
    /// the sink's completion, naming this stage.
    fn on_failure(&mut self, error: &StreamError) {
        self.consumer.finish(Err(error.clone()));
    }
}

/// An iterator source fused with a consumer: one stage, no ports, that
/// drives the iterator in a loop, a budget of elements at a time. Alone in
/// its graph it runs as a task of the pool (`super::task`); beside other
/// stages, in an island.
pub(crate) struct IterConsumerStage<In> {
    pub(crate) name: &'static str,
    pub(crate) source: IterFactory<In>,
    pub(crate) sink: ConsumerFactory<In>,
}

impl<In: Send + 'static> IterConsumerStage<In> {
    /// A fresh source and consumer; the consumer's materialized value goes
    /// onto `mats`.
    pub(crate) fn drain(&self, mats: &mut Vec<Box<dyn Any + Send>>) -> Drain<In> {
        let (consumer, mat) = (self.sink)();
        mats.push(mat);
        Drain::new((self.source)(), consumer)
    }
}

impl<In: Send + 'static> ErasedStage for IterConsumerStage<In> {
    fn name(&self) -> &'static str {
        self.name
    }
    fn initial_attributes(&self) -> Attributes {
        Attributes::new()
    }
    fn ports(&self) -> (u16, u16) {
        (0, 0)
    }
    fn outlet_slot(&self, _: u16) -> SlotKind {
        unreachable!("a fused source-to-sink stage has no outlet")
    }
    fn create(
        &self,
        _: &mut MatContext<'_>,
        mats: &mut Vec<Box<dyn Any + Send>>,
    ) -> Box<dyn GraphStageLogic> {
        Box::new(IterConsumerLogic {
            drain: self.drain(mats),
            resume: None,
        })
    }
    fn as_task(&self) -> Option<&dyn super::task::TaskStage> {
        Some(self)
    }
}

/// An iterator source feeding a consumer: the loop that an island's
/// [`IterConsumerLogic`] and a pool task (`super::task`) both run.
pub(crate) struct Drain<In> {
    source: BoxChunks<In>,
    buf: Vec<In>,
    consumer: Box<dyn Consumer<In>>,
}

/// Where one [`Drain::turn`] left the stream.
pub(crate) enum Turn {
    /// The budget ran out: take another turn.
    Budget,
    /// The source has nothing ready: its waker calls for the next turn.
    Pending,
    /// The consumer has its outcome.
    Done,
}

impl<In: Send + 'static> Drain<In> {
    /// `source` feeding `consumer`.
    pub(crate) fn new(source: BoxChunks<In>, consumer: Box<dyn Consumer<In>>) -> Self {
        Self {
            source,
            buf: Vec::new(),
            consumer,
        }
    }

    /// Whether the consumer asks for elements at all; if not, it has
    /// finished (`Sink::cancelled`).
    pub(crate) fn starts(&mut self) -> bool {
        self.consumer.starts()
    }

    /// Feed up to a budget of elements; a panic in the source or the
    /// consumer finishes the consumer with it, named `name()`.
    pub(crate) fn turn(&mut self, cx: &mut Context<'_>, name: impl FnOnce() -> Arc<str>) -> Turn {
        let (source, buf, consumer) = (&mut self.source, &mut self.buf, &mut self.consumer);
        let drained = catch_unwind(AssertUnwindSafe(|| {
            consumer.drain_chunks(cx, &mut **source, buf, FUSED_DRAIN_BUDGET)
        }));
        match drained {
            Ok(Drained::Budget) => return Turn::Budget,
            Ok(Drained::Pending) => return Turn::Pending,
            Ok(Drained::Exhausted) => self.consumer.finish(Ok(())),
            Ok(Drained::Failed(error)) => self.consumer.finish(Err(error)),
            Ok(Drained::Stopped) => {}
            Err(payload) => {
                let error = StreamError::panicked(&*payload).in_stage(&name());
                // What the source made before it panicked arrives first, as
                // it would through separate stages; a sink that stops on
                // it (a `head`) never sees the failure.
                let (buf, consumer) = (&mut self.buf, &mut self.consumer);
                let n = buf.len();
                let fed = catch_unwind(AssertUnwindSafe(|| consumer.drain_batch(buf, n)));
                self.buf.clear();
                if !matches!(fed, Ok(ControlFlow::Break(()))) {
                    self.consumer.finish(Err(error));
                }
            }
        }
        Turn::Done
    }
}

/// An [`IterConsumerStage`] in an island.
struct IterConsumerLogic<In> {
    drain: Drain<In>,
    /// Drives the loop again: after a budget, or when the source wakes.
    resume: Option<(AsyncCallback<()>, Waker)>,
}

impl<In: Send + 'static> IterConsumerLogic<In> {
    fn drive(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let Some((resume, waker)) = &self.resume else {
            return Ok(());
        };
        let mut cx = Context::from_waker(waker);
        match self.drain.turn(&mut cx, || ctx.stage_name().into()) {
            Turn::Budget => resume.invoke(()),
            Turn::Pending => {} // the waker drives again
            Turn::Done => ctx.complete_stage(),
        }
        Ok(())
    }
}

impl<In: Send + 'static> GraphStageLogic for IterConsumerLogic<In> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        if !self.drain.starts() {
            return Ok(());
        }
        ctx.set_keep_going(true);
        let resume = ctx.async_callback(|this: &mut Self, (), ctx| this.drive(ctx));
        let waker = resume.waker(());
        resume.invoke(());
        self.resume = Some((resume, waker));
        Ok(())
    }
}
