//! `map_async` / `map_async_unordered`: at most `parallelism` futures in
//! flight; results in input order (or as they finish); a failed future
//! fails the stream.
//!
//! Each in-flight future sits in one of `parallelism` slots. Every slot
//! has a waker made once at start; a wake-up runs an async callback that
//! polls that slot's future inside the stage. Nothing polls in a loop.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use crate::StreamError;
use crate::stage::{
    FlowShape, GraphStageLogic, InPort, OutPort, StageContext, StageResult,
};

enum Slot<Fut, U> {
    Free,
    Running(Pin<Box<Fut>>),
    Done(U),
}

pub(crate) struct MapAsync<T, U, F, Fut> {
    shape: FlowShape<T, U>,
    f: F,
    ordered: bool,
    slots: Vec<Slot<Fut, U>>,
    wakers: Vec<Waker>,
    /// Occupied slots in input order (ordered) or finished slots in finish order (unordered).
    queue: VecDeque<usize>,
    in_flight: usize,
    upstream_done: bool,
}

impl<T, U, F, Fut> MapAsync<T, U, F, Fut> {
    pub(crate) fn new(parallelism: usize, f: F, ordered: bool) -> Self {
        Self {
            shape: FlowShape::new(),
            f,
            ordered,
            slots: (0..parallelism).map(|_| Slot::Free).collect(),
            wakers: Vec::with_capacity(parallelism),
            queue: VecDeque::with_capacity(parallelism),
            in_flight: 0,
            upstream_done: false,
        }
    }
}

impl<T, U, F, Fut> MapAsync<T, U, F, Fut>
where
    T: Send + 'static,
    U: Send + 'static,
    F: FnMut(T) -> Fut + Send + 'static,
    Fut: Future<Output = Result<U, StreamError>> + Send + 'static,
{
    /// Poll the future in `slot`; a finished one becomes `Done`.
    fn poll_slot(&mut self, slot: usize) -> StageResult {
        let Slot::Running(future) = &mut self.slots[slot] else {
            return Ok(());
        };
        let mut cx = Context::from_waker(&self.wakers[slot]);
        if let Poll::Ready(result) = future.as_mut().poll(&mut cx) {
            self.slots[slot] = Slot::Done(result?);
            if !self.ordered {
                self.queue.push_back(slot);
            }
        }
        Ok(())
    }

    /// Push finished results downstream while it wants them; pull, complete.
    fn drain(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        if ctx.is_available(self.shape.out)
            && let Some(&slot) = self.queue.front()
            && matches!(self.slots[slot], Slot::Done(_))
        {
            self.queue.pop_front();
            let Slot::Done(result) = std::mem::replace(&mut self.slots[slot], Slot::Free) else {
                unreachable!("checked above")
            };
            self.in_flight -= 1;
            ctx.push(self.shape.out, result)?;
        }
        if self.upstream_done && self.in_flight == 0 {
            ctx.complete_stage();
        } else if !self.upstream_done
            && self.in_flight < self.slots.len()
            && !ctx.has_been_pulled(self.shape.inlet)
        {
            ctx.pull(self.shape.inlet)?;
        }
        Ok(())
    }
}

impl<T, U, F, Fut> GraphStageLogic for MapAsync<T, U, F, Fut>
where
    T: Send + 'static,
    U: Send + 'static,
    F: FnMut(T) -> Fut + Send + 'static,
    Fut: Future<Output = Result<U, StreamError>> + Send + 'static,
{
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let callback = ctx.async_callback(|this: &mut Self, slot: usize, ctx| {
            this.poll_slot(slot)?;
            this.drain(ctx)
        });
        self.wakers.extend((0..self.slots.len()).map(|slot| callback.waker(slot)));
        ctx.pull(self.shape.inlet)
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        let slot = self
            .slots
            .iter()
            .position(|s| matches!(s, Slot::Free))
            .expect("a pull happens only with a free slot");
        self.slots[slot] = Slot::Running(Box::pin((self.f)(element)));
        self.in_flight += 1;
        if self.ordered {
            self.queue.push_back(slot);
        }
        self.poll_slot(slot)?;
        self.drain(ctx)
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.drain(ctx)
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.upstream_done = true;
        self.drain(ctx)
    }
}
