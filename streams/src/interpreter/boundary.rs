//! The async boundary: two stages in two islands joined by one bounded
//! queue, moving elements in batches.
//!
//! Credit bounds the queue: the upstream half starts with `capacity`
//! credits, spends one per element it takes in, and the downstream half
//! returns them in batches of `capacity / 2` as it passes elements on
//! (so at most `capacity` elements are between the two islands). The
//! upstream half collects elements locally and hands them over under one
//! lock per batch (when the batch is full, and whenever its island has
//! run out of events); the downstream half takes the whole queue under
//! one lock when its local batch is empty. A half that finds nothing to
//! do marks itself waiting; the other half wakes it with an async
//! callback (one message per wake-up, not per element).
//!
//! Fusion reaches across the boundary: an iterator source right before it
//! runs inside the upstream half (a loop into the batch, no ports), and a
//! folding sink right after it runs inside the downstream half (a loop
//! over the batch).

use std::any::Any;
use std::collections::VecDeque;
use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, PoisonError};

use super::materialize::{BoundaryFactory, Half};
use crate::fusion::{BoxChunks, Consumer, ConsumerFactory, Drained, IterFactory};
use crate::stage::{
    AsyncCallback, GraphStageLogic, InPort, Inlet, OutPort, Outlet, SlotKind, StageContext,
    StageResult,
};
use crate::{ErrorKind, StreamError};

/// Elements a fused half moves per actor message before it yields.
const FUSED_BUDGET: usize = 4096;

struct State<T> {
    queue: VecDeque<T>,
    /// Credits the downstream half has returned that upstream has not taken.
    credit: usize,
    /// Upstream finished: `Some(None)` completed, `Some(Some(e))` failed.
    done: Option<Option<StreamError>>,
    cancelled: bool,
    up_waiting: bool,
    down_waiting: bool,
    wake_up: Option<AsyncCallback<()>>,
    wake_down: Option<AsyncCallback<()>>,
}

struct Shared<T> {
    state: Mutex<State<T>>,
}

impl<T> Shared<T> {
    fn lock(&self) -> std::sync::MutexGuard<'_, State<T>> {
        // Neither half panics while holding the lock; recover the state anyway.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The boundary for elements of type `T`, with what is fused into it.
pub(crate) struct Boundary<T> {
    /// An iterator source fused into the upstream half, and its name.
    source: Option<(IterFactory<T>, Arc<str>)>,
    /// A folding sink fused into the downstream half, and its name.
    sink: Option<(ConsumerFactory<T>, Arc<str>)>,
    /// The fused sink's input buffer, which sizes this boundary.
    buffer: Option<usize>,
    _elements: PhantomData<fn(T)>,
}

impl<T> Boundary<T> {
    pub(crate) fn new() -> Self {
        Self {
            source: None,
            sink: None,
            buffer: None,
            _elements: PhantomData,
        }
    }

    pub(crate) fn with_source(source: IterFactory<T>, name: &str) -> Self {
        Self {
            source: Some((source, name.into())),
            ..Self::new()
        }
    }

    /// This boundary with `sink` fused into its downstream half (`None`
    /// if it already has one).
    pub(crate) fn with_sink(
        &self,
        sink: ConsumerFactory<T>,
        name: &str,
        buffer: usize,
    ) -> Option<Self> {
        if self.sink.is_some() {
            return None;
        }
        Some(Self {
            source: self.source.clone(),
            sink: Some((sink, name.into())),
            buffer: Some(buffer),
            _elements: PhantomData,
        })
    }
}

impl<T: Send + 'static> BoundaryFactory for Boundary<T> {
    fn create(&self, capacity: usize) -> (Half, Half) {
        let capacity = capacity.max(1);
        let shared: Arc<Shared<T>> = Arc::new(Shared {
            state: Mutex::new(State {
                queue: VecDeque::with_capacity(capacity),
                credit: 0,
                done: None,
                cancelled: false,
                up_waiting: false,
                down_waiting: false,
                wake_up: None,
                wake_down: None,
            }),
        });
        let batch = (capacity / 2).max(1);
        let (upstream, up_name, up_ports, up_mats) = match &self.source {
            Some((factory, name)) => {
                let mats: Vec<Box<dyn Any + Send>> = vec![Box::new(())];
                (Upstream::Iter(factory()), Arc::clone(name), (0, 0), mats)
            }
            None => (
                Upstream::Port,
                Arc::from("async-boundary-out"),
                (1, 0),
                Vec::new(),
            ),
        };
        let (downstream, down_name, down_ports, down_mats, slot) = match &self.sink {
            Some((factory, name)) => {
                let (consumer, mat) = factory();
                (
                    Downstream::Consumer(consumer),
                    Arc::clone(name),
                    (0, 0),
                    vec![mat],
                    None,
                )
            }
            None => (
                Downstream::Port,
                Arc::from("async-boundary-in"),
                (0, 1),
                Vec::new(),
                Some(SlotKind::of::<T>()),
            ),
        };
        let up = BoundaryOut {
            shared: Arc::clone(&shared),
            local: VecDeque::with_capacity(capacity),
            credit: capacity,
            batch,
            upstream,
            scratch: Vec::new(),
            resume: None,
        };
        let down = BoundaryIn {
            shared,
            local: VecDeque::with_capacity(capacity),
            consumed: 0,
            batch,
            finished: false,
            downstream,
            resume: None,
        };
        (
            Half {
                logic: Box::new(up),
                name: up_name,
                ports: up_ports,
                slot: None,
                mats: up_mats,
            },
            Half {
                logic: Box::new(down),
                name: down_name,
                ports: down_ports,
                slot,
                mats: down_mats,
            },
        )
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn buffer(&self) -> Option<usize> {
        self.buffer
    }
}

enum Upstream<T> {
    /// Elements arrive on inlet 0.
    Port,
    /// Elements come from a fused iterator source.
    Iter(BoxChunks<T>),
}

/// The upstream half: a sink in the upstream island.
pub(crate) struct BoundaryOut<T> {
    shared: Arc<Shared<T>>,
    local: VecDeque<T>,
    credit: usize,
    batch: usize,
    upstream: Upstream<T>,
    /// A fused source fills this batch first.
    scratch: Vec<T>,
    /// For a fused iterator: run again after yielding the thread.
    resume: Option<AsyncCallback<()>>,
}

impl<T: Send + 'static> BoundaryOut<T> {
    fn inlet() -> Inlet<T> {
        Inlet::new(0)
    }

    /// Hand the local batch over; learn about cancellation; take credit.
    /// Returns whether downstream cancelled.
    fn hand_over(&mut self) -> bool {
        let mut wake = None;
        let cancelled;
        {
            let mut state = self.shared.lock();
            cancelled = state.cancelled;
            if !self.local.is_empty() && !cancelled {
                if state.queue.is_empty() {
                    std::mem::swap(&mut state.queue, &mut self.local);
                } else {
                    state.queue.extend(self.local.drain(..));
                }
                if state.down_waiting {
                    state.down_waiting = false;
                    wake = state.wake_down.clone();
                }
            }
            self.credit += std::mem::take(&mut state.credit);
            if self.credit == 0 {
                state.up_waiting = true;
            }
        }
        if let Some(wake) = wake {
            wake.invoke(());
        }
        if cancelled {
            self.local.clear();
        }
        cancelled
    }

    /// Hand over, then take in more: pull the inlet, or run the iterator.
    fn flush(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        if self.hand_over() {
            ctx.complete_stage();
            return Ok(());
        }
        match self.upstream {
            Upstream::Port => self.pull_if_credit(ctx),
            Upstream::Iter(_) => self.pump(ctx),
        }
    }

    fn pull_if_credit(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let inlet = Self::inlet();
        if self.credit > 0 && !ctx.has_been_pulled(inlet) && !ctx.is_closed(inlet) {
            ctx.pull(inlet)?;
        }
        Ok(())
    }

    /// The fused iterator: fill the batch while there is credit, a
    /// budget of elements per call.
    fn pump(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let mut budget = FUSED_BUDGET;
        loop {
            let take = self.credit.min(budget);
            let Upstream::Iter(source) = &mut self.upstream else {
                return Ok(());
            };
            let scratch = &mut self.scratch;
            let outcome = if take == 0 {
                Ok(true)
            } else {
                catch_unwind(AssertUnwindSafe(|| !source.fill(scratch, take)))
            };
            self.credit -= self.scratch.len();
            self.local.extend(self.scratch.drain(..));
            budget -= take.min(budget);
            match outcome {
                Ok(true) => {}
                Ok(false) => {
                    self.finish(None);
                    ctx.complete_stage();
                    return Ok(());
                }
                Err(payload) => {
                    let name: Arc<str> = ctx.stage_name().into();
                    self.finish(Some(StreamError::panicked(&*payload).in_stage(&name)));
                    ctx.complete_stage();
                    return Ok(());
                }
            }
            if self.local.len() >= self.batch || self.credit == 0 {
                if self.hand_over() {
                    ctx.complete_stage();
                    return Ok(());
                }
                if self.credit == 0 {
                    return Ok(()); // woken when credit comes back
                }
            }
            if budget == 0 {
                self.hand_over();
                if let Some(resume) = &self.resume {
                    resume.invoke(());
                }
                return Ok(());
            }
        }
    }

    fn finish(&mut self, outcome: Option<StreamError>) {
        let wake = {
            let mut state = self.shared.lock();
            state.queue.extend(self.local.drain(..));
            state.done = Some(outcome);
            state.up_waiting = false;
            state.down_waiting = false;
            if state.cancelled {
                None
            } else {
                state.wake_down.clone()
            }
        };
        if let Some(wake) = wake {
            wake.invoke(());
        }
    }
}

impl<T: Send + 'static> GraphStageLogic for BoundaryOut<T> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let wake = ctx.async_callback(|this: &mut Self, (), ctx| this.flush(ctx));
        self.shared.lock().wake_up = Some(wake.clone());
        ctx.register_flush(|logic, ctx| {
            let logic: &mut dyn Any = logic;
            match logic.downcast_mut::<Self>() {
                Some(this) if !this.local.is_empty() => this.flush(ctx),
                _ => Ok(()),
            }
        });
        match self.upstream {
            Upstream::Port => self.pull_if_credit(ctx),
            Upstream::Iter(_) => {
                ctx.set_keep_going(true);
                self.resume = Some(wake);
                self.pump(ctx)
            }
        }
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(Self::inlet())?;
        self.local.push_back(element);
        self.credit -= 1;
        if self.local.len() >= self.batch || self.credit == 0 {
            self.flush(ctx)
        } else {
            self.pull_if_credit(ctx)
        }
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.finish(None);
        ctx.complete_stage();
        Ok(())
    }

    fn on_upstream_failure(
        &mut self,
        _: InPort,
        error: StreamError,
        ctx: &mut StageContext<'_>,
    ) -> StageResult {
        self.finish(Some(error));
        ctx.complete_stage();
        Ok(())
    }

    fn post_stop(&mut self) {
        // Torn down without a finish (the island aborted): tell downstream.
        let finished = {
            let state = self.shared.lock();
            state.done.is_some() || state.cancelled
        };
        if !finished {
            self.finish(Some(StreamError::from_kind(ErrorKind::AbruptTermination)));
        }
    }
}

enum Downstream<T> {
    /// Elements leave through outlet 0.
    Port,
    /// Elements go into a fused folding sink.
    Consumer(Box<dyn Consumer<T>>),
}

/// The downstream half: a source in the downstream island.
pub(crate) struct BoundaryIn<T> {
    shared: Arc<Shared<T>>,
    local: VecDeque<T>,
    consumed: usize,
    batch: usize,
    finished: bool,
    downstream: Downstream<T>,
    resume: Option<AsyncCallback<()>>,
}

impl<T: Send + 'static> BoundaryIn<T> {
    fn outlet() -> Outlet<T> {
        Outlet::new(0)
    }

    /// Take what upstream handed over when the local batch is empty.
    /// `Some(outcome)` once everything upstream sent is delivered and it
    /// has finished.
    fn refill(&mut self, waiting: bool) -> Option<Option<StreamError>> {
        if !self.local.is_empty() {
            return None;
        }
        let mut state = self.shared.lock();
        std::mem::swap(&mut state.queue, &mut self.local);
        if self.local.is_empty() {
            match state.done.clone() {
                Some(outcome) => return Some(outcome),
                None => state.down_waiting = waiting,
            }
        }
        None
    }

    fn step(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        match self.downstream {
            Downstream::Port => self.deliver(ctx),
            Downstream::Consumer(_) => self.drain(ctx),
        }
    }

    /// Push one element if downstream wants it; once everything upstream
    /// sent is delivered, pass its completion or failure on (no demand
    /// needed for that).
    fn deliver(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let out = Self::outlet();
        let available = ctx.is_available(out);
        if self.finished || (!available && !self.local.is_empty()) {
            return Ok(());
        }
        if let Some(outcome) = self.refill(available) {
            self.finished = true;
            match outcome {
                None => ctx.complete(out),
                Some(error) => ctx.fail(out, error),
            }
            return Ok(());
        }
        if !available {
            return Ok(());
        }
        let Some(element) = self.local.pop_front() else {
            return Ok(());
        };
        ctx.push(out, element)?;
        self.count_consumed(1);
        Ok(())
    }

    /// The fused sink: feed it batches, a budget of elements per call.
    fn drain(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let mut budget = FUSED_BUDGET;
        while budget > 0 && !self.finished {
            if let Some(outcome) = self.refill(true) {
                self.finished = true;
                if let Downstream::Consumer(consumer) = &mut self.downstream {
                    consumer.finish(outcome.map_or(Ok(()), Err));
                }
                ctx.complete_stage();
                return Ok(());
            }
            if self.local.is_empty() {
                return Ok(()); // woken when upstream hands more over
            }
            let n = self.local.len().min(budget);
            let Downstream::Consumer(consumer) = &mut self.downstream else {
                return Ok(());
            };
            let local = &mut self.local;
            let drained = catch_unwind(AssertUnwindSafe(|| {
                consumer.drain(&mut local.drain(..n), n)
            }));
            budget -= n;
            match drained {
                Ok(Drained::Stopped) => {
                    self.finished = true;
                    self.cancel_upstream();
                    ctx.complete_stage();
                    return Ok(());
                }
                Ok(Drained::Budget | Drained::Exhausted) => self.count_consumed(n),
                Err(payload) => {
                    self.finished = true;
                    let name: Arc<str> = ctx.stage_name().into();
                    consumer.finish(Err(StreamError::panicked(&*payload).in_stage(&name)));
                    self.cancel_upstream();
                    ctx.complete_stage();
                    return Ok(());
                }
            }
        }
        if !self.finished
            && let Some(resume) = &self.resume
        {
            resume.invoke(());
        }
        Ok(())
    }

    fn count_consumed(&mut self, n: usize) {
        self.consumed += n;
        if self.consumed >= self.batch {
            self.return_credit();
        }
    }

    fn return_credit(&mut self) {
        let wake = {
            let mut state = self.shared.lock();
            state.credit += std::mem::take(&mut self.consumed);
            if state.up_waiting {
                state.up_waiting = false;
                state.wake_up.clone()
            } else {
                None
            }
        };
        if let Some(wake) = wake {
            wake.invoke(());
        }
    }
}

impl<T: Send + 'static> GraphStageLogic for BoundaryIn<T> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let wake = ctx.async_callback(|this: &mut Self, (), ctx| this.step(ctx));
        self.shared.lock().wake_down = Some(wake.clone());
        if let Downstream::Consumer(consumer) = &mut self.downstream {
            if !consumer.wants_elements() {
                consumer.finish(Ok(()));
                self.cancel_upstream();
                return Ok(());
            }
            ctx.set_keep_going(true);
            self.resume = Some(wake);
            return self.drain(ctx);
        }
        Ok(())
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.deliver(ctx)
    }

    fn on_downstream_finish(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.cancel_upstream();
        ctx.complete_stage();
        Ok(())
    }

    fn post_stop(&mut self) {
        self.cancel_upstream();
    }
}

impl<T> BoundaryIn<T> {
    fn cancel_upstream(&mut self) {
        let wake = {
            let mut state = self.shared.lock();
            if state.cancelled || state.done.is_some() {
                return;
            }
            state.cancelled = true;
            state.queue.clear();
            state.wake_up.clone()
        };
        self.local.clear();
        if let Some(wake) = wake {
            wake.invoke(());
        }
    }
}
