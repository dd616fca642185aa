//! `map_async` / `map_async_unordered` / `map_async_partitioned`: at most
//! `parallelism` elements in the stage; results in input order (or as they
//! finish); a failed future fails the stream.
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
//! Partitioned (see [`Partitioner`]): an element whose partition already
//! has one in the stage (running, or finished but not yet emitted, as
//! Pekko's `mapAsyncPartitioned`) waits in its slot, unstarted, and starts
//! when that one leaves; waiting elements count towards `parallelism`.
//!
//! A future that needs a tokio reactor (tokio timers, sockets) needs the
//! island's thread in a tokio context (`ActorSystemBuilder::thread_context`,
//! weir-interop's `TokioContext`): see `AsyncOps::map_async`.
//!
//! Under a supervision strategy, a panic in `f`, a panic while polling a
//! future and a future's `Err` go to the decider; unless it says `Stop`
//! the element is dropped (its slot freed) and the others go on;
//! `Restart` also takes a fresh clone of `f`.

use std::collections::{HashSet, VecDeque};
use std::future::Future;
use std::hash::Hash;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use super::util::{at_least_one, logic_flow_with};
use crate::blueprint::Flow;
use crate::error::{ArgumentError, StreamError};
use crate::overflow::upfront_capacity;
use crate::stage::{
    AsyncCallback, Attributes, Directive, FlowShape, GraphStageLogic, InPort, OutPort,
    StageContext, StageResult, SupervisionStrategy, supervised,
};
use crate::tuning::MAX_PARALLELISM;

/// Which elements may be in flight together: any (`map_async`), or one
/// per partition (`map_async_partitioned`).
pub(crate) trait Partitioner<T>: Clone + Send + 'static {
    /// An element's partition, handed to `f` with the element.
    type Key: Clone + Eq + Hash + Send + 'static;
    /// Whether a partition has at most one element in flight (else
    /// nothing is tracked).
    const EXCLUSIVE: bool;
    /// The partition of `element`.
    fn key(&mut self, element: &T) -> Self::Key;
}

/// `map_async`: no partitions.
#[derive(Clone, Copy)]
pub(crate) struct Unpartitioned;

impl<T> Partitioner<T> for Unpartitioned {
    type Key = ();
    const EXCLUSIVE: bool = false;
    fn key(&mut self, _: &T) {}
}

/// The flow of `map_async` (`ordered`) or `map_async_unordered`, named
/// `name`; `ArgumentError::Zero` for a zero `parallelism`.
pub(crate) fn unpartitioned_flow<T, U, F, Fut>(
    name: &'static str,
    parallelism: usize,
    f: F,
    ordered: bool,
) -> Result<Flow<T, U>, ArgumentError>
where
    T: Send + 'static,
    U: Send + 'static,
    F: FnMut(T) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Result<U, StreamError>> + Send + 'static,
{
    at_least_one(parallelism, "parallelism")?;
    Ok(logic_flow_with(name, move |attributes: &Attributes| {
        unpartitioned(parallelism, &f, ordered, attributes.supervision_strategy())
    }))
}

/// The logic of `map_async` (`ordered`) or `map_async_unordered`.
fn unpartitioned<T, U, F, Fut>(
    parallelism: usize,
    f: &F,
    ordered: bool,
    strategy: Option<&SupervisionStrategy>,
) -> impl GraphStageLogic + use<T, U, F, Fut>
where
    T: Send + 'static,
    U: Send + 'static,
    F: FnMut(T) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = Result<U, StreamError>> + Send + 'static,
{
    let mut f = f.clone();
    let keyless = move |element, ()| f(element);
    MapAsync::new(parallelism, &keyless, &Unpartitioned, ordered, strategy)
}

enum Slot<T, K, U> {
    Free,
    /// Its partition has an element in flight: not started yet.
    Waiting(T, K),
    /// Its future is in the slot's box.
    Running(K),
    Done(U, K),
}

pub(crate) struct MapAsync<T, U, P: Partitioner<T>, F, Fut> {
    shape: FlowShape<T, U>,
    f: F,
    partitioner: P,
    ordered: bool,
    /// The most elements in the stage at once (waiting, running or done).
    parallelism: usize,
    /// Made as needed, never more than `parallelism`.
    slots: Vec<Slot<T, P::Key, U>>,
    /// One per slot: the running future, in a box made with the slot and
    /// reused by every element the slot runs (no allocation per element).
    futures: Vec<Pin<Box<Option<Fut>>>>,
    /// One per slot: wakes the stage to poll that slot.
    wakers: Vec<Waker>,
    /// Slots that are `Free`, to reuse before making a new one.
    free: Vec<usize>,
    /// Wakes the stage with a slot number (made in `pre_start`).
    wake: Option<AsyncCallback<usize>>,
    /// Occupied slots in input order (ordered) or finished slots in finish order (unordered).
    queue: VecDeque<usize>,
    /// `Waiting` slots in input order.
    waiting: VecDeque<usize>,
    /// The partitions with an element running or done (when `P::EXCLUSIVE`).
    /// Partitions with an element in flight (foldhash: the default
    /// SipHash cost about 410 instructions per element in `weir-bench
    /// async-ops`; the set is only probed, never iterated).
    busy: HashSet<P::Key, foldhash::fast::RandomState>,
    /// Slots whose future was made and is yet to be polled a first time.
    to_poll: Vec<usize>,
    /// Occupied slots.
    in_flight: usize,
    upstream_done: bool,
    /// Downstream has pulled at least once: upstream may be pulled.
    demanded: bool,
    /// The strategy, and `f` and the partitioner as the blueprint holds them (for a restart).
    restart: Option<(SupervisionStrategy, F, P)>,
}

impl<T, U, P: Partitioner<T>, F: Clone, Fut> MapAsync<T, U, P, F, Fut> {
    pub(crate) fn new(
        parallelism: usize,
        f: &F,
        partitioner: &P,
        ordered: bool,
        strategy: Option<&SupervisionStrategy>,
    ) -> Self {
        Self {
            shape: FlowShape::new(),
            f: f.clone(),
            partitioner: partitioner.clone(),
            restart: strategy.map(|s| (s.clone(), f.clone(), partitioner.clone())),
            ordered,
            parallelism: parallelism.min(MAX_PARALLELISM),
            slots: Vec::with_capacity(upfront_capacity(parallelism)),
            wakers: Vec::with_capacity(upfront_capacity(parallelism)),
            futures: Vec::with_capacity(upfront_capacity(parallelism)),
            free: Vec::new(),
            wake: None,
            queue: VecDeque::with_capacity(upfront_capacity(parallelism)),
            waiting: VecDeque::new(),
            busy: HashSet::default(),
            to_poll: Vec::new(),
            in_flight: 0,
            upstream_done: false,
            demanded: false,
        }
    }
}

impl<T, U, P, F, Fut> MapAsync<T, U, P, F, Fut>
where
    T: Send + 'static,
    U: Send + 'static,
    P: Partitioner<T>,
    F: FnMut(T, P::Key) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = Result<U, StreamError>> + Send + 'static,
{
    fn strategy(&self) -> Option<&SupervisionStrategy> {
        self.restart.as_ref().map(|r| &r.0)
    }

    /// An element the strategy dropped: a restart takes a fresh `f` and partitioner.
    fn dropped(&mut self, directive: Directive) {
        if let (Directive::Restart, Some((_, f, partitioner))) = (directive, &self.restart) {
            self.f = f.clone();
            self.partitioner = partitioner.clone();
        }
    }

    /// Free `slot`, whose element the strategy dropped; its partition's
    /// next element may start.
    fn discard(&mut self, slot: usize, directive: Directive) {
        let was = std::mem::replace(&mut self.slots[slot], Slot::Free);
        self.free.push(slot);
        self.in_flight -= 1;
        if self.ordered {
            self.queue.retain(|&s| s != slot);
        }
        self.dropped(directive);
        match was {
            Slot::Running(key) => {
                self.futures[slot].set(None);
                self.release(&key);
            }
            Slot::Done(_, key) => self.release(&key),
            Slot::Free | Slot::Waiting(..) => {}
        }
    }

    /// `key`'s element has left the stage: start its next waiting one.
    fn release(&mut self, key: &P::Key) {
        if !P::EXCLUSIVE || !self.busy.remove(key) {
            return;
        }
        while let Some(at) = self
            .waiting
            .iter()
            .position(|&s| matches!(&self.slots[s], Slot::Waiting(_, k) if k == key))
        {
            let slot = self.waiting.remove(at).expect("found above");
            let Slot::Waiting(element, key) = std::mem::replace(&mut self.slots[slot], Slot::Free)
            else {
                unreachable!("found above")
            };
            match self.launch(slot, element, key) {
                Ok(()) => return,
                // Dropped before it started: the partition is free still.
                Err(directive) => self.discard(slot, directive),
            }
        }
    }

    /// Make `element`'s future in `slot` (to be polled by `poll_started`),
    /// marking its partition busy; the directive if `f` failed.
    fn launch(&mut self, slot: usize, element: T, key: P::Key) -> Result<(), Directive> {
        let f = &mut self.f;
        let given = key.clone();
        let future = supervised(self.restart.as_ref().map(|r| &r.0), || f(element, given))?;
        if P::EXCLUSIVE {
            self.busy.insert(key.clone());
        }
        self.futures[slot].set(Some(future));
        self.slots[slot] = Slot::Running(key);
        self.to_poll.push(slot);
        Ok(())
    }

    /// A free slot: a reused one, or a new one (with its waker). Called
    /// only with fewer than `parallelism` elements in the stage.
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
        self.futures.push(Box::pin(None));
        self.slots.push(Slot::Free);
        slot
    }

    /// Poll every future made since the last call (a poll may free a
    /// partition and so start another).
    fn poll_started(&mut self) -> StageResult {
        while let Some(slot) = self.to_poll.pop() {
            self.poll_slot(slot)?;
        }
        Ok(())
    }

    /// Poll the future in `slot`; a finished one becomes `Done`.
    fn poll_slot(&mut self, slot: usize) -> StageResult {
        let Some(mut future) = self.futures[slot].as_mut().as_pin_mut() else {
            return Ok(());
        };
        let mut cx = Context::from_waker(&self.wakers[slot]);
        let strategy = self.restart.as_ref().map(|r| &r.0);
        let polled = match supervised(strategy, || future.as_mut().poll(&mut cx)) {
            Ok(polled) => polled,
            Err(directive) => {
                self.discard(slot, directive);
                return Ok(());
            }
        };
        match polled {
            Poll::Pending => {}
            Poll::Ready(Ok(output)) => {
                self.futures[slot].set(None);
                let Slot::Running(key) = std::mem::replace(&mut self.slots[slot], Slot::Free)
                else {
                    unreachable!("matched above")
                };
                self.slots[slot] = Slot::Done(output, key);
                if !self.ordered {
                    self.queue.push_back(slot);
                }
            }
            Poll::Ready(Err(error)) => match self.strategy().map(|s| s.decide(&error)) {
                None | Some(Directive::Stop) => return Err(error),
                Some(directive) => self.discard(slot, directive),
            },
        }
        Ok(())
    }

    /// Push finished results downstream while it wants them; pull, complete.
    fn drain(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        self.poll_started()?;
        if ctx.is_available(self.shape.out)
            && let Some(&slot) = self.queue.front()
            && matches!(self.slots[slot], Slot::Done(..))
        {
            self.queue.pop_front();
            let Slot::Done(result, key) = std::mem::replace(&mut self.slots[slot], Slot::Free)
            else {
                unreachable!("checked above")
            };
            self.free.push(slot);
            self.in_flight -= 1;
            ctx.push(self.shape.out, result)?;
            self.release(&key);
            self.poll_started()?;
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

impl<T, U, P, F, Fut> GraphStageLogic for MapAsync<T, U, P, F, Fut>
where
    T: Send + 'static,
    U: Send + 'static,
    P: Partitioner<T>,
    F: FnMut(T, P::Key) -> Fut + Clone + Send + 'static,
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
        let partitioner = &mut self.partitioner;
        let strategy = self.restart.as_ref().map(|r| &r.0);
        let key = match supervised(strategy, || partitioner.key(&element)) {
            Ok(key) => key,
            Err(directive) => {
                self.dropped(directive);
                return self.drain(ctx);
            }
        };
        let slot = self.free_slot();
        self.in_flight += 1;
        if self.ordered {
            self.queue.push_back(slot);
        }
        if P::EXCLUSIVE && self.busy.contains(&key) {
            self.slots[slot] = Slot::Waiting(element, key);
            self.waiting.push_back(slot);
        } else if let Err(directive) = self.launch(slot, element, key) {
            self.discard(slot, directive);
        }
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
