//! The timeouts (`initial_timeout`, `completion_timeout`, `idle_timeout`,
//! `backpressure_timeout`) and `keep_alive`.
//!
//! Each timeout passes elements through unchanged and fails the stream with
//! [`ErrorKind::Timeout`](crate::ErrorKind::Timeout), naming its
//! [`TimeoutKind`] and duration, when its limit passes. A stage keeps one
//! timer, and a signal costs a clock read at most: the idle and
//! back-pressure timeouts record *when* and check lazily, re-arming their
//! one timer for the current deadline when it fires early. So a stream that
//! never times out costs one timer firing per period, not one per element,
//! and nothing at all while the deadline keeps moving.
//!
//! The clock decides, not the turn of the timer's message among the
//! signals: a signal that comes at or after the deadline (the first element
//! for `initial_timeout`, any element or the completion for
//! `completion_timeout`, an element for `idle_timeout`, a pull for
//! `backpressure_timeout`) fails the stream instead of passing. So a zero
//! timeout has passed at the start whether the stage is fused with a source
//! that pushes at once or not, and `Duration::MAX` never passes.

use std::time::{Duration, Instant};

use super::delay::deadline_after;
use super::util::{logic_flow, ports};
use crate::blueprint::Flow;
use crate::error::{ErrorKind, StreamError, TimeoutKind};
use crate::stage::{
    FlowShape, GraphStageLogic, InPort, OutPort, StageContext, StageResult, TimerKey,
};

const TIMER: TimerKey = TimerKey(0);

struct Timeout<T> {
    shape: FlowShape<T, T>,
    kind: TimeoutKind,
    after: Duration,
    /// Initial: the first element passed. Backpressure: downstream has
    /// not asked since the start or the last push (as Akka's, the stage
    /// waits for demand from its start).
    flag: bool,
    /// Idle: the last element; Backpressure: the start or the last push.
    last: Instant,
}

impl<T: Send + 'static> Timeout<T> {
    fn fail(&self) -> StageResult {
        Err(StreamError::from_kind(ErrorKind::Timeout(
            self.kind, self.after,
        )))
    }

    /// `Err` when the deadline counted from `self.last` has come.
    fn check(&self, now: Instant) -> StageResult {
        if now >= deadline_after(self.last, self.after) {
            return self.fail();
        }
        Ok(())
    }
}

impl<T: Send + 'static> GraphStageLogic for Timeout<T> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        self.last = ctx.now();
        self.flag = self.kind == TimeoutKind::Backpressure;
        ctx.schedule_once(TIMER, self.after);
        Ok(())
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        match self.kind {
            TimeoutKind::Initial if !self.flag => {
                self.check(ctx.now())?; // `last` is the start
                self.flag = true;
                ctx.cancel_timer(TIMER);
            }
            TimeoutKind::Initial => {}
            TimeoutKind::Completion => self.check(ctx.now())?,
            TimeoutKind::Idle => {
                let now = ctx.now();
                self.check(now)?;
                self.last = now;
            }
            TimeoutKind::Backpressure => {
                self.last = ctx.now();
                self.flag = true;
            }
        }
        ctx.push(self.shape.out, element)
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        if self.kind == TimeoutKind::Backpressure && self.flag {
            self.check(ctx.now())?; // waiting for this pull since `last`
            self.flag = false;
        }
        ctx.pull(self.shape.inlet)
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        if self.kind == TimeoutKind::Completion {
            self.check(ctx.now())?; // `last` is the start
        }
        ctx.complete_stage();
        Ok(())
    }

    fn on_timer(&mut self, _: TimerKey, ctx: &mut StageContext<'_>) -> StageResult {
        let now = ctx.now();
        match self.kind {
            TimeoutKind::Initial | TimeoutKind::Completion => self.fail(),
            TimeoutKind::Idle | TimeoutKind::Backpressure => {
                let deadline = deadline_after(self.last, self.after);
                let waiting = self.kind == TimeoutKind::Idle || self.flag;
                if waiting && now >= deadline {
                    return self.fail();
                }
                // Not due yet (or not waiting on downstream): check again at
                // the deadline (armed for that moment, not for a delay from
                // `now`, which the clock may have left behind by the time
                // the timer is set), or a full period from now.
                if waiting {
                    ctx.schedule_once_at(TIMER, deadline);
                } else {
                    ctx.schedule_once(TIMER, self.after);
                }
                Ok(())
            }
        }
    }
}

pub(crate) fn timeout<T: Send + 'static>(kind: TimeoutKind, after: Duration) -> Flow<T, T> {
    let name = match kind {
        TimeoutKind::Initial => "initial_timeout",
        TimeoutKind::Completion => "completion_timeout",
        TimeoutKind::Idle => "idle_timeout",
        TimeoutKind::Backpressure => "backpressure_timeout",
    };
    logic_flow(name, move || Timeout::<T> {
        shape: ports(),
        kind,
        after,
        flag: false,
        last: Instant::now(), // replaced in pre_start by the system's clock
    })
}

/// `keep_alive`: when no element has gone downstream for `after` and
/// downstream asks, send `inject()` instead.
struct KeepAlive<T, F> {
    shape: FlowShape<T, T>,
    after: Duration,
    inject: F,
    /// When the next injected element is due.
    next: Instant,
    /// An element that arrived before downstream asked.
    held: Option<T>,
    finishing: bool,
}

impl<T: Send + 'static, F: FnMut() -> T + Send + 'static> KeepAlive<T, F> {
    fn pushed(&mut self, ctx: &mut StageContext<'_>, element: T) -> StageResult {
        self.next = deadline_after(ctx.now(), self.after);
        ctx.cancel_timer(TIMER);
        ctx.push(self.shape.out, element)
    }
}

impl<T: Send + 'static, F: FnMut() -> T + Send + 'static> GraphStageLogic for KeepAlive<T, F> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        self.next = deadline_after(ctx.now(), self.after);
        ctx.pull(self.shape.inlet)
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        if ctx.is_available(self.shape.out) {
            self.pushed(ctx, element)?;
            return ctx.pull(self.shape.inlet);
        }
        self.held = Some(element);
        Ok(())
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        if let Some(element) = self.held.take() {
            self.pushed(ctx, element)?;
            if self.finishing {
                ctx.complete_stage();
                return Ok(());
            }
            return ctx.pull(self.shape.inlet);
        }
        let now = ctx.now();
        if now >= self.next {
            let element = (self.inject)();
            return self.pushed(ctx, element);
        }
        ctx.schedule_once_at(TIMER, self.next);
        Ok(())
    }

    fn on_timer(&mut self, _: TimerKey, ctx: &mut StageContext<'_>) -> StageResult {
        if ctx.is_available(self.shape.out) && ctx.now() >= self.next {
            let element = (self.inject)();
            return self.pushed(ctx, element);
        }
        Ok(())
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        if self.held.is_some() {
            self.finishing = true;
        } else {
            ctx.complete_stage();
        }
        Ok(())
    }
}

pub(crate) fn keep_alive<T, F>(after: Duration, inject: F) -> Flow<T, T>
where
    T: Send + 'static,
    F: FnMut() -> T + Clone + Send + Sync + 'static,
{
    logic_flow("keep_alive", move || KeepAlive {
        shape: ports(),
        after,
        inject: inject.clone(),
        next: Instant::now(), // replaced in pre_start by the system's clock
        held: None,
        finishing: false,
    })
}
