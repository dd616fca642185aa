//! Hubs: attach producers and consumers to a stream while it runs.
//!
//! - [`MergeHub`]: a source whose materialized [`Sink`](crate::Sink) any
//!   number of producers run; each is back-pressured on its own buffer.
//! - [`BroadcastHub`]: a sink whose materialized [`Source`](crate::Source)
//!   any number of consumers run; each sees every element from the moment
//!   it attached, and the slowest sets the pace.
//! - [`PartitionHub`]: like `BroadcastHub`, but a partitioner picks one
//!   consumer per element (a stateful one sees each consumer's queue,
//!   [`ConsumerInfo`]).
//!
//! Every producer or consumer that attaches is joined to the hub by its
//! own hand-over ([`crate::handover`]): credit-bounded, batched, and
//! waking the other side with an async callback. Attaching goes through a
//! small registry (`hub/registry.rs`, with a loom model).

mod broadcast;
mod consumer_info;
mod merge;
mod merge_gate;
mod partition;
pub(crate) mod registry;

pub use broadcast::BroadcastHub;
pub use consumer_info::ConsumerInfo;
pub use merge::{DrainingControl, MergeHub};
pub use partition::PartitionHub;

use crate::error::StreamError;
use crate::handover::{Consumer, Producer, Refill, Wait};
use crate::stage::{
    AsyncCallback, GraphStageLogic, OutPort, SourceShape, StageContext, StageResult,
};

/// A hand-over end whose both sides are islands.
type Out<T> = Producer<T, AsyncCallback<()>, AsyncCallback<()>>;
type In<T> = Consumer<T, AsyncCallback<()>, AsyncCallback<()>>;

/// End a consumer's hand-over as the hub ended: a completion after the
/// elements before it, a failure at once, over them (as Pekko's hubs do).
fn end_out<T>(out: &mut Out<T>, outcome: &Result<(), StreamError>) {
    match outcome {
        Ok(()) => out.finish(Ok(())),
        Err(error) => out.abort(error.clone()),
    };
}

/// A stage that emits what arrives on a hand-over: a consumer of a
/// `BroadcastHub` or `PartitionHub`.
struct FromHandover<T: Send + 'static> {
    shape: SourceShape<T>,
    consumer: In<T>,
    finished: bool,
    /// On cancel, leave what was not passed on for the hub to take back
    /// (`BroadcastHub`: the next consumer gets it).
    give_back: bool,
}

impl<T: Send + 'static> FromHandover<T> {
    fn new(consumer: In<T>, give_back: bool) -> Self {
        Self {
            shape: SourceShape::new(),
            consumer,
            finished: false,
            give_back,
        }
    }

    /// The hub notified: a failure overtakes what is held, without
    /// waiting for demand.
    fn woken(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        if !self.finished
            && let Some(error) = self.consumer.take_abort()
        {
            self.finished = true;
            ctx.fail(self.shape.out, error);
            return Ok(());
        }
        self.deliver(ctx)
    }

    fn cancel(&mut self) {
        if self.give_back {
            self.consumer.cancel_keeping();
        } else {
            self.consumer.cancel();
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
        let wake = ctx.async_callback(|this: &mut Self, (), ctx| this.woken(ctx));
        self.consumer.set_notify(wake);
        self.woken(ctx)
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.deliver(ctx)
    }

    fn on_downstream_finish(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.cancel();
        ctx.complete_stage();
        Ok(())
    }

    fn post_stop(&mut self) {
        self.cancel();
    }
}
