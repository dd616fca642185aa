//! `as_stream` for graphs that run on islands: the sink stage hands
//! elements over to the consuming task in batches.
//!
//! Credit bounds what is between them: the stage starts with `capacity`
//! credits and spends one per element it takes in; the consumer gives them
//! back, half the buffer at a time, as it yields elements (and all of them
//! whenever it finds nothing to yield), so at most `capacity` elements are
//! on their way. The stage collects elements locally and hands them over
//! under one lock per batch: when half the buffer is collected, when its
//! credit runs out, and whenever its island runs out of events; the
//! consumer takes the whole hand-over under one lock when its own batch is
//! empty. A side that has to wait says so; the other wakes it (the task's
//! waker, or an async callback into the island) once per batch.

use crate::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use weir_streams::stage::{
    AsyncCallback, GraphStage, GraphStageLogic, InPort, MatContext, SinkShape, StageContext,
    StageResult, upfront_capacity,
};
use weir_streams::{ErrorKind, StreamError};

use super::{BUFFER, Inner, StreamOut};

struct State<T> {
    /// Handed over, oldest first.
    queue: Vec<T>,
    /// Credit the consumer gave back that the stage has not taken yet.
    returned: usize,
    /// The stage is out of credit: giving credit back pulls it again.
    stage_waiting: bool,
    /// How the graph ended, once it has.
    ended: Option<Result<(), StreamError>>,
    /// The consumer waits for a hand-over.
    waker: Option<Waker>,
    /// The consumer has seen the end.
    finished: bool,
}

struct Shared<T> {
    state: Mutex<State<T>>,
}

impl<T> Shared<T> {
    fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock()
    }
}

/// The consuming task's side.
pub(super) struct Reader<T> {
    shared: Arc<Shared<T>>,
    /// The current batch, newest first (yielded from the back).
    batch: Vec<T>,
    /// Elements yielded whose credit is not given back yet.
    consumed: usize,
    /// Give credit back every this many elements.
    every: usize,
    /// Zero-sized signals: invoking them allocates nothing.
    pull: AsyncCallback<()>,
    cancel: AsyncCallback<()>,
}

impl<T> Reader<T> {
    /// The per-element path: small, so it inlines into the consumer.
    #[inline]
    pub(super) fn poll_next(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<T, StreamError>>> {
        match self.batch.pop() {
            Some(element) => {
                self.consumed += 1;
                if self.consumed >= self.every {
                    self.give_back();
                }
                Poll::Ready(Some(Ok(element)))
            }
            None => self.refill(cx),
        }
    }

    /// The batch is empty: take what was handed over, or tell how the graph
    /// ended, or wait; give back all credit either way.
    #[inline(never)]
    fn refill(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<T, StreamError>>> {
        let pull_stage = {
            let mut state = self.shared.lock();
            if state.finished {
                return Poll::Ready(None);
            }
            state.returned += std::mem::take(&mut self.consumed);
            let pull_stage = std::mem::take(&mut state.stage_waiting);
            if !state.queue.is_empty() {
                std::mem::swap(&mut state.queue, &mut self.batch);
                self.batch.reverse();
            } else if let Some(ended) = state.ended.take() {
                state.finished = true;
                return Poll::Ready(ended.err().map(Err));
            } else {
                state.waker = Some(cx.waker().clone());
            }
            pull_stage
        };
        if pull_stage {
            self.pull.invoke(());
        }
        match self.batch.pop() {
            Some(element) => {
                self.consumed += 1;
                Poll::Ready(Some(Ok(element)))
            }
            None => Poll::Pending,
        }
    }

    fn give_back(&mut self) {
        let pull_stage = {
            let mut state = self.shared.lock();
            state.returned += std::mem::take(&mut self.consumed);
            std::mem::take(&mut state.stage_waiting)
        };
        if pull_stage {
            self.pull.invoke(());
        }
    }

    pub(super) fn is_finished(&self) -> bool {
        self.shared.lock().finished
    }
}

impl<T> Drop for Reader<T> {
    fn drop(&mut self) {
        if !self.is_finished() {
            self.cancel.invoke(());
        }
    }
}

/// The sink stage.
pub(super) struct AsStream<T>(pub(super) std::marker::PhantomData<fn(T)>);

struct Logic<T> {
    shape: SinkShape<T>,
    shared: Arc<Shared<T>>,
    /// Taken in, not yet handed over, oldest first.
    local: Vec<T>,
    credit: usize,
    /// Hand over every this many elements.
    every: usize,
}

impl<T: Send + 'static> GraphStage for AsStream<T> {
    type Shape = SinkShape<T>;
    type Mat = StreamOut<T>;

    fn name(&self) -> &'static str {
        "as_stream"
    }

    fn create_logic(&self, cx: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, StreamOut<T>) {
        let capacity = cx.attributes().input_buffer_or(BUFFER).max(1);
        let every = (capacity / 2).max(1);
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                queue: Vec::with_capacity(upfront_capacity(capacity)),
                returned: 0,
                stage_waiting: false,
                ended: None,
                waker: None,
                finished: false,
            }),
        });
        let pull = cx.async_callback(|this: &mut Logic<T>, (), ctx| {
            this.take_credit();
            this.pull_if_credit(ctx)
        });
        let cancel = cx.async_callback(|_: &mut Logic<T>, (), ctx| {
            ctx.complete_stage();
            Ok(())
        });
        let logic = Logic {
            shape: SinkShape::new(),
            shared: Arc::clone(&shared),
            local: Vec::with_capacity(upfront_capacity(every)),
            credit: capacity,
            every,
        };
        let reader = Reader {
            shared,
            batch: Vec::with_capacity(upfront_capacity(capacity)),
            consumed: 0,
            every,
            pull,
            cancel,
        };
        (
            Box::new(logic),
            StreamOut {
                inner: Inner::Island(reader),
            },
        )
    }
}

impl<T: Send + 'static> Logic<T> {
    fn pull_if_credit(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let inlet = self.shape.inlet;
        if self.credit > 0 && !ctx.has_been_pulled(inlet) && !ctx.is_closed(inlet) {
            ctx.pull(inlet)?;
        }
        Ok(())
    }

    /// Take the credit given back; out of it, ask to be pulled again.
    fn take_credit(&mut self) {
        take_credit(&mut self.credit, &mut self.shared.lock());
    }

    /// Hand the local batch over (and the end, if there is one); take
    /// the credit given back; wake a waiting consumer.
    fn hand_over(&mut self, end: Option<Result<(), StreamError>>) {
        let waker = {
            let mut state = self.shared.lock();
            if state.queue.is_empty() {
                std::mem::swap(&mut state.queue, &mut self.local);
            } else {
                state.queue.append(&mut self.local);
            }
            if let Some(end) = end
                && state.ended.is_none()
                && !state.finished
            {
                state.ended = Some(end);
            }
            take_credit(&mut self.credit, &mut state);
            state.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

/// The stage takes the credit given back into `credit`; out of it, it
/// asks to be pulled again.
fn take_credit<T>(credit: &mut usize, state: &mut State<T>) {
    *credit += std::mem::take(&mut state.returned);
    state.stage_waiting = *credit == 0;
}

impl<T: Send + 'static> GraphStageLogic for Logic<T> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        self.pull_if_credit(ctx)
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        self.local.push(element);
        self.credit -= 1;
        if self.local.len() >= self.every || self.credit == 0 {
            self.hand_over(None);
        } else {
            // Hand the partial batch over when the island runs dry.
            ctx.request_idle_callback();
        }
        self.pull_if_credit(ctx)
    }

    fn on_idle(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        if !self.local.is_empty() {
            self.hand_over(None);
        }
        self.pull_if_credit(ctx)
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.hand_over(Some(Ok(())));
        ctx.complete_stage();
        Ok(())
    }

    fn on_upstream_failure(
        &mut self,
        _: InPort,
        error: StreamError,
        ctx: &mut StageContext<'_>,
    ) -> StageResult {
        self.hand_over(Some(Err(error)));
        ctx.complete_stage();
        Ok(())
    }

    fn post_stop(&mut self) {
        // Torn down (the system stopped): the consumer must not wait for
        // ever. A no-op when the stream already ended.
        self.hand_over(Some(Err(StreamError::from_kind(
            ErrorKind::AbruptTermination,
        ))));
    }
}
