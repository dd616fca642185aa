//! The consumer side of `BroadcastHub` and `PartitionHub`, written once:
//! each run of a hub's source registers a hand-over with the hub and emits
//! what the hub hands over.

use super::registry::Registry;
use super::{In, Out};
use crate::error::StreamError;
use crate::handover::{self, Order, Refill, Wait};
use crate::stage::{
    AsyncCallback, GraphStage, GraphStageLogic, MatContext, OutPort, SourceShape, StageContext,
    StageResult,
};
use crate::sync::Arc;

/// End a consumer's hand-over as the hub ended: a completion after the
/// elements before it, a failure at once, over them (as Pekko's hubs do).
pub(super) fn end_out<T>(out: &mut Out<T>, outcome: &Result<(), StreamError>) {
    match outcome {
        Ok(()) => out.finish(Ok(())),
        Err(error) => out.abort(error.clone()),
    };
}

/// Where a hub's consumers leave their hand-overs for the hub to take in.
pub(super) type ConsumerRegistry<T> = Registry<Out<T>, AsyncCallback<()>>;

/// One consumer of a hub: each run of the hub's source.
pub(super) struct HubConsumer<T> {
    pub(super) registry: Arc<ConsumerRegistry<T>>,
    /// Wakes the hub (its async callback) when this consumer gives credit
    /// back or cancels.
    pub(super) wake: AsyncCallback<()>,
    pub(super) buffer: usize,
    pub(super) name: &'static str,
    /// On cancel, leave what was not passed on for the hub to take back
    /// (`BroadcastHub`: the next consumer gets it).
    pub(super) give_back: bool,
}

impl<T: Send + 'static> GraphStage for HubConsumer<T> {
    type Shape = SourceShape<T>;
    type Mat = ();

    fn name(&self) -> &'static str {
        self.name
    }

    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        let (producer, consumer) = handover::channel(self.buffer, Order::Pop);
        producer.set_notify(self.wake.clone());
        if let Err((mut producer, outcome)) = self.registry.register(producer) {
            producer.finish(outcome); // the hub has ended: so does this consumer
        }
        let logic = HubConsumerLogic::new(consumer, self.give_back);
        (Box::new(logic), ())
    }
}

/// The logic of a [`HubConsumer`]: emits what arrives on its hand-over.
struct HubConsumerLogic<T: Send + 'static> {
    shape: SourceShape<T>,
    consumer: In<T>,
    finished: bool,
    /// On cancel, leave what was not passed on for the hub to take back
    /// (`BroadcastHub`: the next consumer gets it).
    give_back: bool,
}

impl<T: Send + 'static> HubConsumerLogic<T> {
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

impl<T: Send + 'static> GraphStageLogic for HubConsumerLogic<T> {
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
