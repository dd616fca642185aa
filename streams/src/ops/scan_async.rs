//! `scan_async` and `fold_async`: an accumulator threaded through one
//! future per element, one future at a time.
//!
//! The stage holds the accumulator while no future runs and gives it to
//! `f` by value with the next element; the future's output is the next
//! accumulator. `scan_async` emits the initial value first, then each new
//! accumulator, and pulls the next element only when downstream has taken
//! the last one (as Pekko's `scanAsync`). `fold_async` emits only the last
//! accumulator, when upstream completes, and pulls as soon as the previous
//! future has finished (after downstream's first pull, as `fold`).
//!
//! A future's `Err` fails the stream; a panic in `f` or while polling
//! fails it with `Panicked` naming the stage (caught at the stage).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use crate::error::StreamError;
use crate::stage::{
    AsyncCallback, FlowShape, GraphStageLogic, InPort, OutPort, StageContext, StageResult,
};

/// Emit every accumulator (`scan_async`) or only the last (`fold_async`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Emit {
    Each,
    Last,
}

pub(super) struct ScanAsync<T, A, F, Fut> {
    pub(super) shape: FlowShape<T, A>,
    pub(super) f: F,
    pub(super) emit: Emit,
    /// The accumulator; `None` while a future makes the next one.
    pub(super) acc: Option<A>,
    /// Whether `acc` still waits to be emitted.
    pub(super) unsent: bool,
    pub(super) running: Option<Pin<Box<Fut>>>,
    /// Polls the running future again when its waker is woken.
    pub(super) wake: Option<(AsyncCallback<()>, Waker)>,
    pub(super) upstream_done: bool,
}

impl<T, A, F, Fut> ScanAsync<T, A, F, Fut> {
    pub(super) fn new(zero: A, f: F, emit: Emit) -> Self {
        Self {
            shape: FlowShape::new(),
            f,
            emit,
            acc: Some(zero),
            unsent: emit == Emit::Each,
            running: None,
            wake: None,
            upstream_done: false,
        }
    }
}

impl<T, A, F, Fut> ScanAsync<T, A, F, Fut>
where
    T: Send + 'static,
    A: Clone + Send + 'static,
    F: FnMut(A, T) -> Fut + Send + 'static,
    Fut: Future<Output = Result<A, StreamError>> + Send + 'static,
{
    /// Poll the running future, emit what is due, then pull or complete.
    fn drive(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        if let Some(future) = &mut self.running {
            let (_, waker) = self.wake.as_ref().expect("made in pre_start");
            match future.as_mut().poll(&mut Context::from_waker(waker)) {
                Poll::Pending => return Ok(()),
                Poll::Ready(result) => {
                    self.running = None;
                    self.acc = Some(result?);
                    self.unsent = self.emit == Emit::Each;
                }
            }
        }
        let out = self.shape.out;
        if self.upstream_done && self.emit == Emit::Last {
            self.unsent = true;
        }
        if self.unsent && ctx.is_available(out) {
            if self.upstream_done {
                let last = self.acc.take().expect("no future runs");
                ctx.push(out, last)?;
                ctx.complete_stage();
                return Ok(());
            }
            let acc = self.acc.as_ref().expect("no future runs");
            ctx.push(out, acc.clone())?;
            self.unsent = false;
        }
        if self.upstream_done {
            if !self.unsent {
                ctx.complete_stage();
            }
            return Ok(());
        }
        let inlet = self.shape.inlet;
        if !self.unsent && ctx.is_available(out) && !ctx.has_been_pulled(inlet) {
            ctx.pull(inlet)?;
        }
        Ok(())
    }
}

impl<T, A, F, Fut> GraphStageLogic for ScanAsync<T, A, F, Fut>
where
    T: Send + 'static,
    A: Clone + Send + 'static,
    F: FnMut(A, T) -> Fut + Send + 'static,
    Fut: Future<Output = Result<A, StreamError>> + Send + 'static,
{
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let callback = ctx.async_callback(|this: &mut Self, (), ctx| this.drive(ctx));
        let waker = callback.waker(());
        self.wake = Some((callback, waker));
        Ok(())
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        let acc = self.acc.take().expect("one element at a time");
        self.running = Some(Box::pin((self.f)(acc, element)));
        self.drive(ctx)
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.drive(ctx)
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        // A running future's result is still due: `drive` ends the stage
        // once it is emitted.
        self.upstream_done = true;
        self.drive(ctx)
    }
}
