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

use weir_streams::StreamError;
use weir_streams::handover::{self, Consumer, FeedLogic, Order, Refill, Wait};
use weir_streams::stage::{AsyncCallback, GraphStage, GraphStageLogic, MatContext, SinkShape};

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

impl<T: Send + 'static> GraphStage for AsStream<T> {
    type Shape = SinkShape<T>;
    type Mat = StreamOut<T>;

    fn name(&self) -> &'static str {
        "as_stream"
    }

    fn create_logic(&self, cx: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, StreamOut<T>) {
        let capacity = cx.attributes().input_buffer_or(BUFFER).max(1);
        let (producer, consumer) = handover::channel(capacity, Order::Pop);
        (
            Box::new(FeedLogic::new(producer, cx)),
            StreamOut {
                inner: Inner::Island(Reader { consumer }),
            },
        )
    }
}
