//! [`StageContext`]: what a handler can do to its ports, timers and callbacks.

use std::sync::Arc;
use std::time::{Duration, Instant};

use weir_actor::ActorSystem;

use super::callback::{AsyncCallback, make_callback};
use super::{Attributes, GraphStageLogic, Inlet, OutPort, Outlet, StageResult};
use crate::error::{Cancellation, StreamError};
use crate::stage::IslandMsg;
use crate::stage::core::{
    AVAILABLE, Core, DEMANDED, DOWN_CLOSED, IN_DONE, OUT_DONE, PUSHED, Ports, TimerEntry, UP_CLOSED,
};

/// The key of a stage timer (see [`StageContext::schedule_once`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TimerKey(pub u64);

impl From<u64> for TimerKey {
    fn from(key: u64) -> Self {
        TimerKey(key)
    }
}

/// What a handler can do: the stage's view of its island.
///
/// Port operations that break the protocol (push without a pull, grab
/// with nothing there, pull twice) return a protocol error; return it
/// from the handler (`?`) and the stage fails, named in the error.
pub struct StageContext<'a> {
    pub(crate) core: &'a mut Core,
    pub(crate) stage: usize,
    /// `core.ports[stage]`, read once per handler call rather than once
    /// per port operation.
    ports: Ports,
}

/// When a stage timer first fires.
#[derive(Clone, Copy)]
enum When {
    /// This long after it is set.
    After(Duration),
    /// At this time on the system's clock.
    At(Instant),
}

/// A port of either direction, for the queries that work on both.
pub trait Port: sealed::Sealed {
    #[doc(hidden)]
    fn key(&self) -> (u16, bool);
}

mod sealed {
    pub trait Sealed {}
}

impl<T> sealed::Sealed for Inlet<T> {}
impl<T> sealed::Sealed for Outlet<T> {}
impl<T> Port for Inlet<T> {
    fn key(&self) -> (u16, bool) {
        (self.port().0, true)
    }
}
impl<T> Port for Outlet<T> {
    fn key(&self) -> (u16, bool) {
        (self.port().0, false)
    }
}

impl<'a> StageContext<'a> {
    pub(crate) fn new(core: &'a mut Core, stage: usize) -> Self {
        let ports = core.ports[stage];
        Self { core, stage, ports }
    }
}

impl StageContext<'_> {
    /// The connection of this stage's inlet `port`.
    #[inline(always)]
    fn conn_in(&self, port: u16) -> Result<u32, StreamError> {
        self.core.link(self.ports, port, true)
    }

    /// The connection of this stage's outlet `port`.
    #[inline(always)]
    fn conn_out(&self, port: u16) -> Result<u32, StreamError> {
        self.core.link(self.ports, port, false)
    }

    fn locate(&self, port: &impl Port) -> Option<(u32, bool)> {
        let (index, inlet) = port.key();
        let conn = if inlet {
            self.conn_in(index)
        } else {
            self.conn_out(index)
        };
        conn.ok().map(|c| (c, inlet))
    }

    /// Push `element` through `out`, which must have been pulled.
    ///
    /// # Errors
    ///
    /// A protocol error when `out` was not pulled or is completed. A push
    /// into a cancelled outlet is absorbed.
    #[inline]
    pub fn push<T: Send + 'static>(&mut self, out: Outlet<T>, element: T) -> StageResult {
        let c = self.conn_out(out.port().0)?;
        self.core.push(c, element)
    }

    /// Ask upstream of `inlet` for one element.
    ///
    /// # Errors
    ///
    /// A protocol error when `inlet` is already pulled or closed.
    #[inline]
    pub fn pull<T>(&mut self, inlet: Inlet<T>) -> StageResult {
        let c = self.conn_in(inlet.port().0)?;
        self.core.pull(c)
    }

    /// Take the element that arrived on `inlet`.
    ///
    /// # Errors
    ///
    /// A protocol error when no element is available.
    #[inline]
    pub fn grab<T: Send + 'static>(&mut self, inlet: Inlet<T>) -> Result<T, StreamError> {
        let c = self.conn_in(inlet.port().0)?;
        self.core.grab(c)
    }

    /// For an inlet: an element waits to be grabbed. For an outlet: it has
    /// been pulled and may be pushed now.
    pub fn is_available(&self, port: impl Port) -> bool {
        let Some((c, inlet)) = self.locate(&port) else {
            return false;
        };
        let s = self.core.conns[c as usize].state;
        if inlet {
            s & AVAILABLE != 0
        } else {
            s & DEMANDED != 0
                && s & (PUSHED | OUT_DONE | DOWN_CLOSED) == 0
                && !self.core.has_emits(c)
        }
    }

    /// Whether `inlet` was pulled and the element has not arrived yet.
    pub fn has_been_pulled<T>(&self, inlet: Inlet<T>) -> bool {
        let Some((c, _)) = self.locate(&inlet) else {
            return false;
        };
        let s = self.core.conns[c as usize].state;
        s & (DEMANDED | PUSHED) != 0 && s & IN_DONE == 0
    }

    /// For an inlet: upstream's completion or failure has reached this
    /// stage (`on_upstream_finish` / `on_upstream_failure` ran), or the
    /// stage cancelled it. An element pushed before the completion is
    /// still on its way until then: the inlet is not closed yet (as
    /// Akka's `isClosed(in)`), so a stage that completes when it finds
    /// its inlet closed cannot drop it. For an outlet: the stage
    /// completed it, or downstream cancelled.
    #[inline]
    pub fn is_closed(&self, port: impl Port) -> bool {
        let Some((c, inlet)) = self.locate(&port) else {
            return true;
        };
        let s = self.core.conns[c as usize].state;
        if inlet {
            s & IN_DONE != 0 || s & (UP_CLOSED | PUSHED) == UP_CLOSED
        } else {
            s & (OUT_DONE | DOWN_CLOSED) != 0
        }
    }

    /// `error` as the stream reports it when this stage fails with it:
    /// attributed to this stage unless it already names one. For a stage
    /// that also reports the failure elsewhere (its own completion).
    pub fn attribute(&self, error: StreamError) -> StreamError {
        error.in_stage(&self.core.stages[self.stage].name)
    }

    /// Complete `out` (after any elements queued with `emit`).
    pub fn complete<T>(&mut self, out: Outlet<T>) {
        if let Ok(c) = self.conn_out(out.port().0) {
            self.core.complete(c);
        }
    }

    /// Fail `out` with `error`.
    pub fn fail<T>(&mut self, out: Outlet<T>, error: StreamError) {
        if let Ok(c) = self.conn_out(out.port().0) {
            let error = error.in_stage(&self.core.stages[self.stage].name);
            self.core.fail(c, error);
        }
    }

    /// Cancel `inlet`: upstream is told to stop; an element waiting in it is dropped.
    /// The cause upstream hears is [`Cancellation::NoMoreElementsNeeded`].
    pub fn cancel<T>(&mut self, inlet: Inlet<T>) {
        self.cancel_with(inlet, Cancellation::NoMoreElementsNeeded);
    }

    /// [`cancel`](Self::cancel) `inlet` with `cause`: upstream reads it
    /// with [`cancellation`](Self::cancellation) in its
    /// `on_downstream_finish`.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::{Cancellation, StreamError};
    /// use weir_streams::stage::{GraphStageLogic, InPort, Inlet, StageContext, StageResult};
    ///
    /// struct Validate {
    ///     inlet: Inlet<u32>,
    /// }
    ///
    /// impl GraphStageLogic for Validate {
    ///     fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
    ///         if ctx.grab(self.inlet)? > 100 {
    ///             // Upstream hears why: a file source's count reports it.
    ///             let cause = Cancellation::Failed(StreamError::msg("too big"));
    ///             ctx.cancel_with(self.inlet, cause);
    ///             return Ok(());
    ///         }
    ///         ctx.pull(self.inlet)
    ///     }
    /// }
    /// ```
    pub fn cancel_with<T>(&mut self, inlet: Inlet<T>, cause: Cancellation) {
        if let Ok(c) = self.conn_in(inlet.port().0) {
            self.core.cancel_with(c, cause.failure().cloned());
        }
    }

    /// Why downstream of outlet `port` cancelled: read it in
    /// [`on_downstream_finish`](GraphStageLogic::on_downstream_finish).
    /// [`Cancellation::NoMoreElementsNeeded`] for a normal cancel (and
    /// for an outlet that was not cancelled).
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::Cancellation;
    /// use weir_streams::stage::{GraphStageLogic, OutPort, StageContext, StageResult};
    ///
    /// struct Ticks;
    ///
    /// impl GraphStageLogic for Ticks {
    ///     fn on_downstream_finish(&mut self, port: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
    ///         let cause = ctx.cancellation(port);
    ///         if let Some(error) = cause.failure() {
    ///             eprintln!("the stream failed downstream: {error}");
    ///         }
    ///         ctx.cancel_stage(cause);
    ///         Ok(())
    ///     }
    /// }
    /// ```
    pub fn cancellation(&self, port: OutPort) -> Cancellation {
        match self.conn_out(port.0) {
            Ok(c) => Cancellation::from_failure(self.core.conns[c as usize].cancel_cause.clone()),
            Err(_) => Cancellation::NoMoreElementsNeeded,
        }
    }

    /// Complete every outlet (after queued emits) and cancel every inlet:
    /// the stage stops once its ports are closed.
    pub fn complete_stage(&mut self) {
        self.cancel_stage(Cancellation::NoMoreElementsNeeded);
    }

    /// Stop because downstream cancelled with `cause`: cancel every inlet
    /// with `cause`, so it travels on upstream, and complete every outlet
    /// (after queued emits). What the default
    /// [`on_downstream_finish`](GraphStageLogic::on_downstream_finish) does.
    ///
    /// Inlets go first, as in Pekko: upstream hears the cancel before
    /// downstream hears the end (a sink that completes a future on it
    /// then sees a stream whose upstream already knows it is done).
    pub fn cancel_stage(&mut self, cause: Cancellation) {
        self.core.stages[self.stage].keep_going = false;
        self.core.recheck = true;
        self.cancel_inlets(cause.failure());
        for i in self.core.outs(self.stage) {
            let c = self.core.links[i];
            self.core.complete(c);
        }
    }

    /// Cancel every inlet of this stage with `cause` (no copy of the port list).
    fn cancel_inlets(&mut self, cause: Option<&StreamError>) {
        for i in self.core.ins(self.stage) {
            let c = self.core.links[i];
            self.core.cancel_with(c, cause.cloned());
        }
    }

    /// Fail every outlet with `error` and cancel every inlet. Returning
    /// `Err(error)` from a handler does the same.
    pub fn fail_stage(&mut self, error: StreamError) {
        let error = self.attribute(error);
        self.core.stages[self.stage].keep_going = false;
        self.core.recheck = true;
        // Inlets first, as `cancel_stage`.
        self.cancel_inlets(Some(&error));
        for i in self.core.outs(self.stage) {
            let c = self.core.links[i];
            self.core.fail(c, error.clone());
        }
    }

    /// Push `element` when `out` is pulled: at once if it is, else queued
    /// (in order) and pushed on the next pulls before `on_pull` runs again.
    ///
    /// # Errors
    ///
    /// A protocol error when `out` is completed.
    pub fn emit<T: Send + 'static>(&mut self, out: Outlet<T>, element: T) -> StageResult {
        let c = self.conn_out(out.port().0)?;
        self.core.emit(c, element)
    }

    /// [`emit`](Self::emit) every element of `elements`, in order.
    ///
    /// # Errors
    ///
    /// A protocol error when `out` is completed.
    pub fn emit_multiple<T: Send + 'static>(
        &mut self,
        out: Outlet<T>,
        elements: impl IntoIterator<Item = T>,
    ) -> StageResult {
        let c = self.conn_out(out.port().0)?;
        for element in elements {
            self.core.emit(c, element)?;
        }
        Ok(())
    }

    /// Keep the stage running after all its ports have closed (for
    /// stages that wait on timers or callbacks), until it calls
    /// `complete_stage` or `fail_stage`.
    pub fn set_keep_going(&mut self, keep_going: bool) {
        self.core.stages[self.stage].keep_going = keep_going;
        self.core.recheck = true;
    }

    /// How a snapshot reads this stage's buffer between islands (an async
    /// boundary's halves).
    pub(crate) fn set_gauge(&mut self, gauge: crate::stage::core::Gauge) {
        self.core.stages[self.stage].gauge = Some(gauge);
    }

    /// A callback that runs `handler` inside this stage later (see [`AsyncCallback`]).
    /// `L` is this stage's logic type.
    pub fn async_callback<L, T, F>(&mut self, handler: F) -> AsyncCallback<T>
    where
        L: GraphStageLogic,
        T: Send + 'static,
        F: FnMut(&mut L, T, &mut StageContext<'_>) -> StageResult + Send + 'static,
    {
        let stage = u32::try_from(self.stage).expect("stage index fits u32");
        let host = self.core.host.clone();
        make_callback(
            &host,
            stage,
            &mut self.core.stages[self.stage].handlers,
            handler,
        )
    }

    /// An actor reference whose messages run `handler` inside this stage,
    /// in order (see [`StageActor`](super::StageActor)). `L` is this
    /// stage's logic type. Each call makes a new reference: keep the one
    /// you need (make it in `create_logic` with
    /// [`MatContext::stage_actor`](crate::stage::MatContext::stage_actor)
    /// to hand it out before the stream starts).
    pub fn stage_actor<L, M, F>(&mut self, handler: F) -> super::StageActor<M>
    where
        L: GraphStageLogic,
        M: Send + 'static,
        F: FnMut(&mut L, super::StageActorMessage<M>, &mut StageContext<'_>) -> StageResult
            + Send
            + 'static,
    {
        let callback = self.async_callback(handler);
        let name = Arc::clone(&self.core.stages[self.stage].name);
        let system = self.core.host.system.clone();
        super::make_stage_actor(
            &system,
            &name,
            callback,
            &mut self.core.stages[self.stage].on_finish,
        )
    }

    /// Call `on_timer(key)` once after `delay`, replacing any timer with the same key.
    pub fn schedule_once(&mut self, key: impl Into<TimerKey>, delay: Duration) {
        self.schedule(key.into(), When::After(delay), None);
    }

    /// Call `on_timer(key)` once at `deadline` on the system's clock
    /// ([`now`](Self::now)), replacing any timer with the same key; at
    /// once (after this handler) when `deadline` has passed.
    ///
    /// For a stage that checks a deadline computed from an earlier reading
    /// of the clock (an idle timeout re-arming for `last + timeout`): a
    /// delay given to [`schedule_once`](Self::schedule_once) counts from
    /// the moment the timer is set, so a clock that moved in between (a
    /// test clock advanced meanwhile, a busy island) would fire it late,
    /// or, on a test clock, not at the advance that reaches the deadline.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// use weir_streams::StreamError;
    /// use weir_streams::stage::{GraphStageLogic, StageContext, StageResult, TimerKey};
    ///
    /// /// Fails once `limit` has passed since the stage started.
    /// struct Deadline {
    ///     limit: Duration,
    ///     end: Option<Instant>,
    /// }
    ///
    /// impl GraphStageLogic for Deadline {
    ///     fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
    ///         let end = ctx.now() + self.limit;
    ///         self.end = Some(end);
    ///         ctx.schedule_once_at(TimerKey(0), end);
    ///         Ok(())
    ///     }
    ///
    ///     fn on_timer(&mut self, _: TimerKey, ctx: &mut StageContext<'_>) -> StageResult {
    ///         match self.end {
    ///             Some(end) if ctx.now() >= end => Err(StreamError::msg("deadline passed")),
    ///             _ => Ok(()),
    ///         }
    ///     }
    /// }
    /// ```
    pub fn schedule_once_at(&mut self, key: impl Into<TimerKey>, deadline: Instant) {
        self.schedule(key.into(), When::At(deadline), None);
    }

    /// Call `on_timer(key)` after `initial`, then every `interval`,
    /// replacing any timer with the same key. A zero `interval` fires once.
    pub fn schedule_periodically(
        &mut self,
        key: impl Into<TimerKey>,
        initial: Duration,
        interval: Duration,
    ) {
        self.schedule(key.into(), When::After(initial), Some(interval));
    }

    fn schedule(&mut self, key: TimerKey, when: When, period: Option<Duration>) {
        self.cancel_timer(key);
        self.core.timer_generation += 1;
        let generation = self.core.timer_generation;
        let stage = self.stage as u32;
        let island = self.core.host.island.clone();
        let scheduler = self.core.host.system.scheduler();
        let msg = move || IslandMsg::Timer {
            stage,
            key,
            generation,
        };
        // A periodic timer re-arms on the scheduler's side (fixed delay), so
        // under a test clock one `advance` fires every period it covers.
        let cancel = match (when, period.filter(|p| !p.is_zero())) {
            (When::After(delay), Some(period)) => scheduler
                .schedule_fn_with_fixed_delay(delay, period, move || {
                    island.tell(msg());
                    !island.is_closed()
                })
                .expect("a non-zero period"),
            (When::After(delay), None) => {
                scheduler.schedule_once_fn(delay, move || island.tell(msg()))
            }
            (When::At(at), _) => scheduler.schedule_once_fn_at(at, move || island.tell(msg())),
        };
        self.core.stages[self.stage].timers.push(TimerEntry {
            key,
            generation,
            period,
            cancel,
        });
    }

    /// Cancel the timer with `key`, if any.
    pub fn cancel_timer(&mut self, key: impl Into<TimerKey>) {
        let key = key.into();
        let timers = &mut self.core.stages[self.stage].timers;
        if let Some(i) = timers.iter().position(|t| t.key == key) {
            timers.swap_remove(i).cancel.cancel();
        }
    }

    /// Whether a timer with `key` is set.
    pub fn is_timer_active(&self, key: impl Into<TimerKey>) -> bool {
        let key = key.into();
        self.core.stages[self.stage]
            .timers
            .iter()
            .any(|t| t.key == key)
    }

    /// The time on the system's clock (the real time, or a test clock's):
    /// what time-based stages measure with, so they follow a test clock the
    /// way their timers do.
    pub fn now(&self) -> Instant {
        self.core.host.system.scheduler().now()
    }

    /// Call this stage's [`on_idle`](GraphStageLogic::on_idle) once, when
    /// the island has run out of events: the moment to hand over what a
    /// stage collected in this run (a batch, a wake-up for a consumer
    /// outside the stream) instead of doing it per element.
    pub fn request_idle_callback(&mut self) {
        let meta = &mut self.core.stages[self.stage];
        if !meta.idle_requested {
            meta.idle_requested = true;
            self.core.idle.push(self.stage);
        }
    }

    /// The stage's attributes.
    pub fn attributes(&self) -> &Attributes {
        &self.core.stages[self.stage].attributes
    }

    /// The stage's name (from its attributes, else its default name).
    pub fn stage_name(&self) -> &str {
        &self.core.stages[self.stage].name
    }

    /// The actor system the stream runs in.
    pub fn system(&self) -> &ActorSystem {
        &self.core.host.system
    }

    /// Whether the materializer fuses stages (a stage that plans a graph
    /// of its own plans it the same way).
    pub(crate) fn fusion(&self) -> bool {
        self.core.host.fusion
    }
}

impl std::fmt::Debug for StageContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StageContext")
            .field("stage", &self.stage_name())
            .finish()
    }
}
