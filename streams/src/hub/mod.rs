//! Hubs: attach producers and consumers to a stream while it runs.
//!
//! - [`MergeHub`]: a source whose materialized [`Sink`](crate::Sink) any
//!   number of producers run; each is back-pressured on its own buffer.
//! - [`BroadcastHub`]: a sink whose materialized [`Source`](crate::Source)
//!   any number of consumers run; each sees every element from the moment
//!   it attached, and the slowest sets the pace.
//! - [`PartitionHub`]: like `BroadcastHub`, but a partitioner picks one
//!   consumer per element.
//!
//! Every producer or consumer that attaches is joined to the hub by its
//! own hand-over ([`crate::handover`]): credit-bounded, batched, and
//! waking the other side with an async callback. Attaching goes through a
//! small registry (`hub/registry.rs`, with a loom model).

mod broadcast;
mod merge;
mod partition;
pub(crate) mod registry;

pub use broadcast::BroadcastHub;
pub use merge::{DrainingControl, MergeHub};
pub use partition::PartitionHub;

use crate::handover::{Consumer, Producer, Refill, Wait};
use crate::stage::{
    AsyncCallback, GraphStageLogic, OutPort, SourceShape, StageContext, StageResult,
};

/// A hand-over end whose both sides are islands.
type Out<T> = Producer<T, AsyncCallback<()>, AsyncCallback<()>>;
type In<T> = Consumer<T, AsyncCallback<()>, AsyncCallback<()>>;

/// A stage that emits what arrives on a hand-over: a consumer of a
/// `BroadcastHub` or `PartitionHub`.
struct FromHandover<T: Send + 'static> {
    shape: SourceShape<T>,
    consumer: In<T>,
    finished: bool,
}

impl<T: Send + 'static> FromHandover<T> {
    fn new(consumer: In<T>) -> Self {
        Self {
            shape: SourceShape::new(),
            consumer,
            finished: false,
        }
    }

    /// Push one element if downstream wants it; pass the end on once
    /// everything before it is delivered (without waiting for demand).
    fn deliver(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let out = self.shape.out;
        if self.finished {
            return Ok(());
        }
        let demand = ctx.is_available(out);
        if demand && let Some(element) = self.consumer.pop() {
            return ctx.push(out, element);
        }
        match self
            .consumer
            .refill(if demand { Wait::Yes } else { Wait::No })
        {
            Refill::Ready => {
                if demand && let Some(element) = self.consumer.pop() {
                    ctx.push(out, element)?;
                }
            }
            Refill::Empty => {}
            Refill::End(outcome) => {
                self.finished = true;
                match outcome {
                    Ok(()) => ctx.complete(out),
                    Err(error) => ctx.fail(out, error),
                }
            }
            Refill::Done => {
                self.finished = true;
                ctx.complete(out);
            }
        }
        Ok(())
    }
}

impl<T: Send + 'static> GraphStageLogic for FromHandover<T> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let wake = ctx.async_callback(|this: &mut Self, (), ctx| this.deliver(ctx));
        self.consumer.set_notify(wake);
        self.deliver(ctx)
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.deliver(ctx)
    }

    fn on_downstream_finish(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.consumer.cancel();
        ctx.complete_stage();
        Ok(())
    }

    fn post_stop(&mut self) {
        self.consumer.cancel();
    }
}
