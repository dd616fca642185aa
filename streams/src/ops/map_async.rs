//! `map_async` / `map_async_unordered`: at most `parallelism` futures in
//! flight; results in input order (or as they finish); a failed future
//! fails the stream.
//!
//! Each in-flight future sits in a slot. Slots are made as futures need
//! them, up to `parallelism` (a limit, not a promise: `map_async(usize::MAX, ..)`
//! reserves [`upfront_capacity`] of them, not `usize::MAX`), and reused
//! through a free list. Every slot has a waker made with it; a wake-up
//! runs an async callback that polls that slot's future inside the stage.
//! Nothing polls in a loop.
//!
//! A future that needs a tokio reactor (tokio timers, sockets) must run
//! where one is: see `FlowOps::map_async`.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use crate::StreamError;
use crate::overflow::upfront_capacity;
use crate::stage::{AsyncCallback, FlowShape, GraphStageLogic, InPort, OutPort, StageContext, StageResult};

enum Slot<Fut, U> {
    Free,
    Running(Pin<Box<Fut>>),
    Done(U),
}

pub(crate) struct MapAsync<T, U, F, Fut> {
    shape: FlowShape<T, U>,
    f: F,
    ordered: bool,
    /// The most futures in flight at once.
    parallelism: usize,
    /// Made as needed, never more than `parallelism`.
    slots: Vec<Slot<Fut, U>>,
    /// One per slot: wakes the stage to poll that slot.
    wakers: Vec<Waker>,
    /// Slots that are `Free`, to reuse before making a new one.
    free: Vec<usize>,
    /// Wakes the stage with a slot number (made in `pre_start`).
    wake: Option<AsyncCallback<usize>>,
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
            parallelism,
            slots: Vec::with_capacity(upfront_capacity(parallelism)),
            wakers: Vec::with_capacity(upfront_capacity(parallelism)),
            free: Vec::new(),
            wake: None,
            queue: VecDeque::with_capacity(upfront_capacity(parallelism)),
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
    /// A free slot: a reused one, or a new one (with its waker). Called
    /// only with fewer than `parallelism` futures in flight.
    fn free_slot(&mut self) -> usize {
        if let Some(slot) = self.free.pop() {
            return slot;
        }
        debug_assert!(self.slots.len() < self.parallelism, "a pull happens only with room");
        let slot = self.slots.len();
        let wake = self.wake.as_ref().expect("pre_start made the callback before the first pull");
        self.wakers.push(wake.waker(slot));
        self.slots.push(Slot::Free);
        slot
    }

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
            self.free.push(slot);
            self.in_flight -= 1;
            ctx.push(self.shape.out, result)?;
        }
        if self.upstream_done && self.in_flight == 0 {
            ctx.complete_stage();
        } else if !self.upstream_done
            && self.in_flight < self.parallelism
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
        self.wake = Some(callback);
        ctx.pull(self.shape.inlet)
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        let slot = self.free_slot();
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
