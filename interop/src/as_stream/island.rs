//! `as_stream` for graphs that run on islands: the sink stage hands
//! elements over to the consuming task through a hand-over
//! (`weir_streams::handover`).
//!
//! Credit bounds what is between them (at most the buffer); the stage
//! collects elements locally and hands them over when half the buffer is
//! collected, when its credit runs out, and whenever its island runs out
//! of events; the consumer takes everything handed over when its own
//! batch is empty and gives credit back as it yields. The stage waits for
//! credit on an async callback (which also tells it of a cancellation:
//! the consumer was dropped); the consumer waits on its task's waker.

use std::task::{Context, Poll, Waker};

use weir_streams::handover::{self, Consumer, Order, Producer, Refill, Wait};
use weir_streams::stage::{
    AsyncCallback, GraphStage, GraphStageLogic, InPort, MatContext, SinkShape, StageContext,
    StageResult,
};
use weir_streams::{ErrorKind, StreamError};

use super::{BUFFER, Inner, StreamOut};

/// The consuming task's side.
pub(super) struct Reader<T> {
    consumer: Consumer<T, AsyncCallback<()>, Waker>,
}

impl<T> Reader<T> {
    /// The per-element path: small, so it inlines into the consumer.
    #[inline]
    pub(super) fn poll_next(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<T, StreamError>>> {
        match self.consumer.pop() {
            Some(element) => Poll::Ready(Some(Ok(element))),
            None => self.refill(cx),
        }
    }

    /// The batch is empty: take what was handed over, or tell how the graph
    /// ended, or wait; give back all credit either way.
    #[inline(never)]
    fn refill(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<T, StreamError>>> {
        match self.consumer.refill(Wait::Register(cx.waker())) {
            Refill::Ready => Poll::Ready(self.consumer.pop().map(Ok)),
            Refill::Empty => Poll::Pending,
            Refill::End(outcome) => Poll::Ready(outcome.err().map(Err)),
            Refill::Done => Poll::Ready(None),
        }
    }

    pub(super) fn is_finished(&self) -> bool {
        self.consumer.is_done()
    }
}

/// The sink stage.
pub(super) struct AsStream<T>(pub(super) std::marker::PhantomData<fn(T)>);

struct Logic<T> {
    shape: SinkShape<T>,
    /// Notified (an async callback) of credit and of a cancellation.
    producer: Producer<T, AsyncCallback<()>, Waker>,
}

impl<T: Send + 'static> GraphStage for AsStream<T> {
    type Shape = SinkShape<T>;
    type Mat = StreamOut<T>;

    fn name(&self) -> &'static str {
        "as_stream"
    }

    fn create_logic(&self, cx: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, StreamOut<T>) {
        let capacity = cx.attributes().input_buffer_or(BUFFER).max(1);
        let (producer, consumer) = handover::channel(capacity, Order::Pop);
        let wake = cx.async_callback(|this: &mut Logic<T>, (), ctx| this.hand_over(ctx));
        producer.set_notify(wake);
        let logic = Logic {
            shape: SinkShape::new(),
            producer,
        };
        (
            Box::new(logic),
            StreamOut {
                inner: Inner::Island(Reader { consumer }),
            },
        )
    }
}

impl<T: Send + 'static> Logic<T> {
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
            ctx.complete_stage();
            return Ok(());
        }
        self.pull_if_credit(ctx)
    }
}

impl<T: Send + 'static> GraphStageLogic for Logic<T> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        self.pull_if_credit(ctx)
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
        self.hand_over(ctx)
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
        self.producer
            .finish(Err(StreamError::from_kind(ErrorKind::AbruptTermination)));
    }
}
