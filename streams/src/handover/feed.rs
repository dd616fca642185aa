//! The producer end of a hand-over as a sink stage's logic: the one way a
//! running island feeds a hand-over from a port (an async boundary's
//! upstream half, a `MergeHub` producer, interop's `as_stream` island
//! form).

use crate::error::{Cancellation, StreamError};
use crate::stage::{
    AsyncCallback, GraphStageLogic, InPort, MatContext, SinkShape, StageContext, StageResult,
};

use super::{Notify, Producer};

/// A sink stage's logic that pulls while the hand-over gives credit, hands
/// elements over in batches (a full batch at once, a partial one when the
/// island runs dry), and passes completion and failure on. When the
/// consumer cancels, the stage stops and upstream is cancelled with the
/// cause the consumer gave (a failure downstream, or a plain cancel); when
/// the stage is torn down, the consumer ends with `AbruptTermination`.
///
/// # Examples
///
/// A sink whose materialized value is the consumer end of its hand-over:
///
/// ```
/// use std::thread::Thread;
/// use weir_streams::handover::{self, Consumer, FeedLogic, Order, Refill, Wait};
/// use weir_streams::prelude::*;
/// use weir_streams::stage::{AsyncCallback, GraphStage, GraphStageLogic, MatContext, SinkShape};
///
/// struct IntoHandover;
/// impl GraphStage for IntoHandover {
///     type Shape = SinkShape<u32>;
///     type Mat = Consumer<u32, AsyncCallback<()>, Thread>;
///     fn name(&self) -> &'static str {
///         "into_handover"
///     }
///     fn create_logic(&self, cx: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, Self::Mat) {
///         let (producer, consumer) = handover::channel(16, Order::Pop);
///         (Box::new(FeedLogic::new(producer, cx)), consumer)
///     }
/// }
///
/// let system = weir_actor::ActorSystem::new("feed").unwrap();
/// let materializer = Materializer::new(&system);
/// let mut consumer = Source::range(1u32..=100).run_with(Sink::from_graph(IntoHandover), &materializer);
/// let (mut sum, me) = (0, std::thread::current());
/// loop {
///     match consumer.refill(Wait::Register(&me)) {
///         Refill::Ready => {
///             while let Some(x) = consumer.pop() {
///                 sum += x;
///             }
///         }
///         Refill::Empty => std::thread::park(), // woken by the producer
///         Refill::End(outcome) => break outcome.unwrap(),
///         Refill::Done => unreachable!("the end is returned once"),
///     }
/// }
/// assert_eq!(sum, 5050);
/// system.terminate().wait().unwrap();
/// ```
pub struct FeedLogic<T, C: Notify> {
    shape: SinkShape<T>,
    producer: Producer<T, AsyncCallback<()>, C>,
}

impl<T: Send + 'static, C: Notify + 'static> FeedLogic<T, C> {
    /// The logic feeding `producer`; it is woken (credit given back, the
    /// consumer cancelled) through an async callback of the stage.
    pub fn new(producer: Producer<T, AsyncCallback<()>, C>, cx: &mut MatContext<'_>) -> Self {
        producer.set_notify(cx.async_callback(|this: &mut Self, (), ctx| this.hand_over(ctx)));
        Self::wrapped(producer)
    }

    /// The logic feeding `producer` inside another stage's logic, which
    /// sets `producer`'s notify to a callback of its own that calls
    /// [`woken`](Self::woken) (a callback is bound to the stage's logic
    /// type, so `new`'s would not reach this one).
    pub(crate) fn wrapped(producer: Producer<T, AsyncCallback<()>, C>) -> Self {
        Self {
            shape: SinkShape::new(),
            producer,
        }
    }

    /// The producer's notify fired (credit given back, the consumer
    /// cancelled): see [`wrapped`](Self::wrapped).
    pub(crate) fn woken(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        self.hand_over(ctx)
    }

    /// The end it feeds (for a snapshot's buffer fill).
    pub(crate) fn producer(&self) -> &Producer<T, AsyncCallback<()>, C> {
        &self.producer
    }

    fn pull_if_credit(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let inlet = self.shape.inlet;
        if self.producer.credit() > 0 && !ctx.has_been_pulled(inlet) && !ctx.is_closed(inlet) {
            ctx.pull(inlet)?;
        }
        Ok(())
    }

    /// Hand the local batch over and take the credit given back; stop when
    /// the consumer is gone, else pull if there is credit.
    fn hand_over(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        if self.producer.hand_over() {
            let cause = self.producer.cancel_cause();
            ctx.cancel_stage(Cancellation::from_failure(cause));
            return Ok(());
        }
        self.pull_if_credit(ctx)
    }
}

impl<T: Send + 'static, C: Notify + 'static> GraphStageLogic for FeedLogic<T, C> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        self.hand_over(ctx)
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        if self.producer.push(element) {
            self.hand_over(ctx)
        } else {
            // Hand the partial batch over when the island runs dry.
            ctx.request_idle_callback();
            self.pull_if_credit(ctx)
        }
    }

    fn on_idle(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        if self.producer.has_pending() {
            self.hand_over(ctx)
        } else {
            Ok(())
        }
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.producer.finish(Ok(()));
        ctx.complete_stage();
        Ok(())
    }

    fn on_upstream_failure(
        &mut self,
        _: InPort,
        error: StreamError,
        ctx: &mut StageContext<'_>,
    ) -> StageResult {
        self.producer.finish(Err(error));
        ctx.complete_stage();
        Ok(())
    }

    fn post_stop(&mut self) {
        // Torn down (the system stopped): the consumer must not wait for
        // ever. A no-op when the stream already ended.
        self.producer.finish_abruptly();
    }
}

impl<T, C: Notify> std::fmt::Debug for FeedLogic<T, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FeedLogic")
            .field("producer", &self.producer)
            .finish()
    }
}
