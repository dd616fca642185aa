//! `map_async` / `map_async_unordered`: at most `parallelism` futures in
//! flight; results in input order (or as they finish); a failed future
//! fails the stream.
//!
//! Demand (as Pekko's `mapAsync`): no element is taken and no future made
//! before downstream's first pull; from then on the stage keeps up to
//! `parallelism` futures in flight (capped at [`MAX_PARALLELISM`]),
//! whether or not downstream has pulled again, so results are ready when
//! it does.
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
//!
//! Under a supervision strategy, a panic in `f`, a panic while polling a
//! future and a future's `Err` go to the decider; unless it says `Stop`
//! the element is dropped (its slot freed) and the others go on;
//! `Restart` also takes a fresh clone of `f`.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use crate::StreamError;
use crate::overflow::upfront_capacity;
use crate::stage::{
    AsyncCallback, Directive, FlowShape, GraphStageLogic, InPort, OutPort, StageContext,
    StageResult, SupervisionStrategy, supervised,
};

/// The most futures one `map_async` stage keeps in flight, whatever
/// `parallelism` says. A stage cannot see how much downstream wants beyond
/// its one pull, so `parallelism` futures are started ahead of demand:
/// without a cap, `map_async(usize::MAX, ..)` over an endless upstream
/// made futures without end (half a million in 500 ms) before the first
/// result was taken. 65 536 is far beyond any concurrency a single stage
/// profits from (and a few MiB of slots), yet bounded.
pub(crate) const MAX_PARALLELISM: usize = 1 << 16;

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
    /// Downstream has pulled at least once: upstream may be pulled.
    demanded: bool,
    /// The strategy, and `f` as the blueprint holds it (for a restart).
    restart: Option<(SupervisionStrategy, F)>,
}

impl<T, U, F: Clone, Fut> MapAsync<T, U, F, Fut> {
    pub(crate) fn new(
        parallelism: usize,
        f: &F,
        ordered: bool,
        strategy: Option<&SupervisionStrategy>,
    ) -> Self {
        Self {
            shape: FlowShape::new(),
            f: f.clone(),
            restart: strategy.map(|s| (s.clone(), f.clone())),
            ordered,
            parallelism: parallelism.min(MAX_PARALLELISM),
            slots: Vec::with_capacity(upfront_capacity(parallelism)),
            wakers: Vec::with_capacity(upfront_capacity(parallelism)),
            free: Vec::new(),
            wake: None,
            queue: VecDeque::with_capacity(upfront_capacity(parallelism)),
            in_flight: 0,
            upstream_done: false,
            demanded: false,
        }
    }
}

impl<T, U, F, Fut> MapAsync<T, U, F, Fut>
where
    T: Send + 'static,
    U: Send + 'static,
    F: FnMut(T) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = Result<U, StreamError>> + Send + 'static,
{
    fn strategy(&self) -> Option<&SupervisionStrategy> {
        self.restart.as_ref().map(|r| &r.0)
    }

    /// An element the strategy dropped: a restart takes a fresh `f`.
    fn dropped(&mut self, directive: Directive) {
        if let (Directive::Restart, Some((_, f))) = (directive, &self.restart) {
            self.f = f.clone();
        }
    }

    /// Free `slot`, whose element was dropped.
    fn free_dropped(&mut self, slot: usize, directive: Directive) {
        self.slots[slot] = Slot::Free;
        self.free.push(slot);
        self.in_flight -= 1;
        if self.ordered {
            self.queue.retain(|&s| s != slot);
        }
        self.dropped(directive);
    }

    /// A free slot: a reused one, or a new one (with its waker). Called
    /// only with fewer than `parallelism` futures in flight.
    fn free_slot(&mut self) -> usize {
        if let Some(slot) = self.free.pop() {
            return slot;
        }
        debug_assert!(
            self.slots.len() < self.parallelism,
            "a pull happens only with room"
        );
        let slot = self.slots.len();
        let wake = self
            .wake
            .as_ref()
            .expect("pre_start made the callback before the first pull");
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
        let strategy = self.restart.as_ref().map(|r| &r.0);
        let polled = match supervised(strategy, || future.as_mut().poll(&mut cx)) {
            Ok(polled) => polled,
            Err(directive) => {
                self.free_dropped(slot, directive);
                return Ok(());
            }
        };
        match polled {
            Poll::Pending => {}
            Poll::Ready(Ok(output)) => {
                self.slots[slot] = Slot::Done(output);
                if !self.ordered {
                    self.queue.push_back(slot);
                }
            }
            Poll::Ready(Err(error)) => match self.strategy().map(|s| s.decide(&error)) {
                None | Some(Directive::Stop) => return Err(error),
                Some(directive) => self.free_dropped(slot, directive),
            },
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
        } else if self.demanded
            && !self.upstream_done
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
    F: FnMut(T) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = Result<U, StreamError>> + Send + 'static,
{
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let callback = ctx.async_callback(|this: &mut Self, slot: usize, ctx| {
            this.poll_slot(slot)?;
            this.drain(ctx)
        });
        self.wake = Some(callback);
        // No pull yet: the first one waits for downstream's (module docs).
        Ok(())
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        let f = &mut self.f;
        let future = match supervised(self.restart.as_ref().map(|r| &r.0), || f(element)) {
            Ok(future) => future,
            Err(directive) => {
                self.dropped(directive);
                return self.drain(ctx);
            }
        };
        let slot = self.free_slot();
        self.slots[slot] = Slot::Running(Box::pin(future));
        self.in_flight += 1;
        if self.ordered {
            self.queue.push_back(slot);
        }
        self.poll_slot(slot)?;
        self.drain(ctx)
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.demanded = true;
        self.drain(ctx)
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.upstream_done = true;
        self.drain(ctx)
    }
}
