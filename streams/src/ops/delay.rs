//! Operators that shift elements in time: `delay`, `initial_delay`,
//! `take_within`, `drop_within`. Each reads the system's clock and its
//! timers, so a test clock drives them.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use super::util::{logic_flow, ports};
use crate::blueprint::Flow;
use crate::error::{ErrorKind, StreamError};
use crate::stage::{
    FlowShape, GraphStageLogic, InPort, OutPort, StageContext, StageResult, TimerKey,
};

const TIMER: TimerKey = TimerKey(0);

/// `now + d`, saturating at a deadline that never comes (as the scheduler's).
pub(crate) fn deadline_after(now: Instant, d: Duration) -> Instant {
    const NEVER: Duration = Duration::from_secs(86_400 * 365 * 30);
    now.checked_add(d)
        .or_else(|| now.checked_add(NEVER))
        .unwrap_or(now)
}

/// What `delay` does when its buffer (the `input_buffer` attribute, 16 by
/// default) is full and upstream has more (Akka's `DelayOverflowStrategy`).
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use weir_streams::prelude::*;
/// use weir_streams::DelayOverflowStrategy;
///
/// let system = weir_actor::ActorSystem::new("delay").unwrap();
/// let materializer = Materializer::new(&system);
/// let done = Source::range(1u32..=3)
///     .delay(Duration::from_millis(1), DelayOverflowStrategy::Backpressure)
///     .run_with(Sink::collect(), &materializer);
/// assert_eq!(done.wait().unwrap(), [1, 2, 3]);
/// system.terminate().wait().unwrap();
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DelayOverflowStrategy {
    /// Push the oldest element at once, before its time, to make room:
    /// as soon as downstream asks (until then, back-pressure).
    EmitEarly,
    /// Drop the oldest buffered element to make room.
    DropHead,
    /// Drop the youngest buffered element to make room.
    DropTail,
    /// Drop every buffered element to make room.
    DropBuffer,
    /// Drop the new element.
    DropNew,
    /// Stop pulling until there is room.
    Backpressure,
    /// Fail the stream with `ErrorKind::BufferOverflow`.
    Fail,
}

struct Delay<T, D> {
    shape: FlowShape<T, T>,
    /// Each element's delay (a constant for `delay`).
    delay_of: D,
    strategy: DelayOverflowStrategy,
    capacity: usize,
    buf: VecDeque<(Instant, T)>,
    finishing: bool,
}

impl<T: Send + 'static, D: FnMut(&T) -> Duration + Send + 'static> Delay<T, D> {
    fn full(&self) -> bool {
        self.buf.len() >= self.capacity
    }

    /// Upstream may be pulled while there is room, always when a full
    /// buffer makes room by dropping or failing, and with `EmitEarly` once
    /// more when full (that element presses the head out early).
    fn pull_if_allowed(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let inlet = self.shape.inlet;
        let allowed = match self.strategy {
            DelayOverflowStrategy::Backpressure => self.buf.len() < self.capacity,
            // Past a full buffer only for a waiting downstream: the
            // element that comes then sends the head out early.
            DelayOverflowStrategy::EmitEarly => {
                self.buf.len() < self.capacity
                    || (self.buf.len() == self.capacity && ctx.is_available(self.shape.out))
            }
            _ => true,
        };
        if allowed && !ctx.has_been_pulled(inlet) && !ctx.is_closed(inlet) {
            ctx.pull(inlet)?;
        }
        Ok(())
    }

    /// Time the timer for the head (or stop it when the buffer is empty).
    fn arm(&self, ctx: &mut StageContext<'_>) {
        match self.buf.front() {
            // For the head's due time itself: a delay computed from a
            // clock reading would land late if the clock moved before the
            // timer was armed.
            Some(&(at, _)) => ctx.schedule_once_at(TIMER, at),
            None => ctx.cancel_timer(TIMER),
        }
    }

    /// Push the head (downstream has pulled), then carry on.
    fn push_head(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        if let Some((_, element)) = self.buf.pop_front() {
            ctx.push(self.shape.out, element)?;
        }
        if self.finishing && self.buf.is_empty() {
            ctx.complete_stage();
            return Ok(());
        }
        self.arm(ctx);
        self.pull_if_allowed(ctx)
    }

    fn head_due(&self, now: Instant) -> bool {
        self.buf.front().is_some_and(|&(at, _)| at <= now)
    }
}

impl<T: Send + 'static, D: FnMut(&T) -> Duration + Send + 'static> GraphStageLogic for Delay<T, D> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        self.capacity = ctx.attributes().input_buffer().max(1);
        ctx.pull(self.shape.inlet)
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        let now = ctx.now();
        // The head the timer is armed for, before a strategy drops it.
        let was_head = self.buf.front().map(|&(at, _)| at);
        if self.full() {
            match self.strategy {
                DelayOverflowStrategy::DropHead => {
                    self.buf.pop_front();
                }
                DelayOverflowStrategy::DropTail => {
                    self.buf.pop_back();
                }
                DelayOverflowStrategy::DropBuffer => self.buf.clear(),
                DelayOverflowStrategy::DropNew => return self.pull_if_allowed(ctx),
                DelayOverflowStrategy::Fail => {
                    return Err(StreamError::from_kind(ErrorKind::BufferOverflow {
                        capacity: self.capacity,
                    }));
                }
                DelayOverflowStrategy::EmitEarly if ctx.is_available(self.shape.out) => {
                    if let Some((_, head)) = self.buf.pop_front() {
                        ctx.push(self.shape.out, head)?;
                    }
                }
                // EmitEarly without demand: one over, until the next pull
                // takes the head. Backpressure is not pulled while full.
                DelayOverflowStrategy::EmitEarly | DelayOverflowStrategy::Backpressure => {}
            }
        }
        let delay = (self.delay_of)(&element);
        self.buf.push_back((deadline_after(now, delay), element));
        if self.buf.front().map(|&(at, _)| at) != was_head {
            self.arm(ctx);
        }
        if ctx.is_available(self.shape.out) && self.head_due(now) {
            return self.push_head(ctx);
        }
        self.pull_if_allowed(ctx)
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        let early =
            self.strategy == DelayOverflowStrategy::EmitEarly && self.buf.len() > self.capacity;
        if early || self.head_due(ctx.now()) {
            return self.push_head(ctx);
        }
        self.pull_if_allowed(ctx)
    }

    fn on_timer(&mut self, _: TimerKey, ctx: &mut StageContext<'_>) -> StageResult {
        if ctx.is_available(self.shape.out) && self.head_due(ctx.now()) {
            return self.push_head(ctx);
        }
        Ok(())
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        if self.buf.is_empty() {
            ctx.complete_stage();
        } else {
            self.finishing = true;
        }
        Ok(())
    }
}

/// The `delay_with` flow: each element waits `delay_of(&element)` after it
/// arrived, in order (a short delay behind a long one waits for it).
pub(crate) fn delay_with<T, D>(delay_of: D, strategy: DelayOverflowStrategy) -> Flow<T, T>
where
    T: Send + 'static,
    D: FnMut(&T) -> Duration + Clone + Send + Sync + 'static,
{
    logic_flow("delay", move || Delay::<T, D> {
        shape: ports(),
        delay_of: delay_of.clone(),
        strategy,
        capacity: 0,
        buf: VecDeque::new(),
        finishing: false,
    })
}

/// Pass elements only after `delay` from the start: until then, do not
/// pull (`initial_delay`), or pull and drop (`drop_within`). `take_within`
/// passes elements and completes when the time is up.
///
/// The window is `[start, start + delay)` on the system's clock, and the
/// clock decides, not the order in which the timer's message and the
/// elements reach the stage: an element that arrives at the end of the
/// window is past it. So a zero window is empty (`drop_within` drops
/// nothing, `take_within` takes nothing, `initial_delay` does not wait),
/// and `Duration::MAX` is a window that never ends.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Window {
    InitialDelay,
    DropWithin,
    TakeWithin,
}

struct Windowed<T> {
    shape: FlowShape<T, T>,
    after: Duration,
    window: Window,
    /// When the window ends (set in `pre_start`).
    ends: Instant,
    /// The window has ended (seen on the clock or by the timer).
    passed: bool,
}

impl<T: Send + 'static> Windowed<T> {
    /// Whether the window has ended, reading the clock until it has.
    fn passed(&mut self, ctx: &StageContext<'_>) -> bool {
        if !self.passed && ctx.now() >= self.ends {
            self.passed = true;
        }
        self.passed
    }
}

impl<T: Send + 'static> GraphStageLogic for Windowed<T> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        // Like Akka's DropWithin, nothing is pulled (or dropped) before
        // downstream asks.
        self.ends = deadline_after(ctx.now(), self.after);
        if !self.passed(ctx) {
            ctx.schedule_once_at(TIMER, self.ends);
        } else if self.window == Window::TakeWithin {
            ctx.complete_stage(); // an empty window takes nothing
        }
        Ok(())
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        let inlet = self.shape.inlet;
        let may_pull = self.window != Window::InitialDelay || self.passed(ctx);
        if may_pull && !ctx.has_been_pulled(inlet) {
            ctx.pull(inlet)?;
        }
        Ok(())
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        let passed = self.window == Window::InitialDelay || self.passed(ctx);
        match self.window {
            Window::DropWithin if !passed => {
                ctx.pull(self.shape.inlet) // still inside the window: drop
            }
            Window::TakeWithin if passed => {
                ctx.complete_stage(); // past the window: not taken
                Ok(())
            }
            _ => ctx.push(self.shape.out, element),
        }
    }

    fn on_timer(&mut self, _: TimerKey, ctx: &mut StageContext<'_>) -> StageResult {
        self.passed = true;
        match self.window {
            Window::TakeWithin => ctx.complete_stage(),
            Window::InitialDelay
                if ctx.is_available(self.shape.out) && !ctx.has_been_pulled(self.shape.inlet) =>
            {
                ctx.pull(self.shape.inlet)?
            }
            Window::InitialDelay | Window::DropWithin => {}
        }
        Ok(())
    }
}

pub(crate) fn windowed<T: Send + 'static>(after: Duration, window: Window) -> Flow<T, T> {
    let name = match window {
        Window::InitialDelay => "initial_delay",
        Window::DropWithin => "drop_within",
        Window::TakeWithin => "take_within",
    };
    logic_flow(name, move || Windowed::<T> {
        shape: ports(),
        after,
        window,
        ends: Instant::now(), // replaced in pre_start by the system's clock
        passed: false,
    })
}
