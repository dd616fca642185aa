//! A framing stage with a folding sink run inside it (the planner's
//! flatten rule, `crate::plan::rules`): one sink stage that cuts each
//! chunk into frames and feeds every frame straight into the sink's
//! [`Consumer`], a call per frame where the two stages would take an
//! interpreter event each way per frame (`weir-bench io`: line framing
//! into a fold cost about 640 instructions per line that way).
//!
//! It keeps what the two stages do: the same frames (slices of the chunk
//! when they lie within one), the same [`FramingError`](crate::io::FramingError)
//! at the same offset, named after the framing stage, reaching the
//! sink's completion after the frames before it; a sink that stops
//! cancels upstream and no further frame is cut.

use std::any::Any;
use std::sync::Arc;

use bytes::Bytes;

use super::stage::{Decoder, Frames};
use crate::error::StreamError;
use crate::fusion::{Consumer, ConsumerFactory, ConsumerNode, FlattenNode, FusedConsumer};
use crate::stage::{
    Attributes, ErasedStage, GraphStageLogic, InPort, Inlet, MatContext, SlotKind, StageContext,
    StageResult,
};

/// The planner's handle on a framing node: the same decoder, as a stage
/// that runs a folding sink.
pub(super) struct FramingNode<D> {
    pub(super) name: &'static str,
    pub(super) decoder: D,
}

impl<D: Decoder> FlattenNode for FramingNode<D> {
    fn with_consumer(&self, consumer: &dyn ConsumerNode) -> Arc<dyn ErasedStage> {
        Arc::new(FramingSinkStage {
            name: self.name,
            decoder: self.decoder.clone(),
            sink: FusedConsumer::<Bytes>::of(consumer),
        })
    }
}

struct FramingSinkStage<D> {
    name: &'static str,
    decoder: D,
    sink: ConsumerFactory<Bytes>,
}

impl<D: Decoder> ErasedStage for FramingSinkStage<D> {
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
        let (consumer, mat) = (self.sink)();
        mats.push(mat);
        Box::new(FramingSinkLogic {
            frames: Frames::new(self.decoder.clone()),
            consumer,
            finished: false,
        })
    }
}

struct FramingSinkLogic<D> {
    frames: Frames<D>,
    consumer: Box<dyn Consumer<Bytes>>,
    /// The consumer has been finished (or has stopped): a failure after
    /// that is not reported to it again.
    finished: bool,
}

const INLET: Inlet<Bytes> = Inlet::new(0);

impl<D: Decoder> GraphStageLogic for FramingSinkLogic<D> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        if self.consumer.wants_elements() {
            return ctx.pull(INLET);
        }
        self.finished = true;
        self.consumer.finish(Ok(()));
        ctx.cancel(INLET);
        Ok(())
    }

    /// Every whole frame of the chunk, into the consumer. A framing error
    /// fails the stage (after the frames before it), as it fails the
    /// framing stage unfused: the consumer gets it in `on_failure`.
    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let chunk = ctx.grab(INLET)?;
        self.frames.push(chunk);
        let consumer = &mut self.consumer;
        if self
            .frames
            .for_each_frame(|frame| consumer.on_next(frame))?
            .is_break()
        {
            self.finished = true;
            ctx.cancel(INLET);
            return Ok(());
        }
        self.frames.keep_partial();
        ctx.pull(INLET)
    }

    fn on_upstream_finish(&mut self, _: InPort, _: &mut StageContext<'_>) -> StageResult {
        // The whole frames went in on push: only a last, partial one is left.
        if let Some(frame) = self.frames.last_frame()?
            && self.consumer.on_next(frame).is_break()
        {
            self.finished = true;
            return Ok(());
        }
        self.finished = true;
        self.consumer.finish(Ok(()));
        Ok(())
    }

    fn on_upstream_failure(
        &mut self,
        _: InPort,
        error: StreamError,
        _: &mut StageContext<'_>,
    ) -> StageResult {
        self.finished = true;
        self.consumer.finish(Err(error));
        Ok(())
    }

    /// A framing error, or a panic in the consumer's closure, reaches the
    /// sink's completion, naming this stage.
    fn on_failure(&mut self, error: &StreamError) {
        if !self.finished {
            self.finished = true;
            self.consumer.finish(Err(error.clone()));
        }
    }
}
