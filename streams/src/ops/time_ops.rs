//! [`TimeOps`]: operators that read time (throttle.rs, grouped_within.rs,
//! delay.rs, timeout.rs). Each reads the system's clock, so a test clock
//! (`weir_actor::testkit::TestClock`) drives it.

use std::time::Duration;

use super::{DelayOverflowStrategy, FlowOps, ThrottleMode, delay, grouped_within, throttle, timeout};
use super::util::at_least_one;
use crate::{ArgumentError, TimeoutKind};

/// Operators that read time: rate limits, groups closed by time, delays,
/// timeouts and keep-alives. Every [`FlowOps`] type has them (they are in
/// the prelude).
pub trait TimeOps: FlowOps {
    /// At most `elements` per `per`, in bursts of up to `maximum_burst`:
    /// a token bucket that starts full (see [`ThrottleMode`]).
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` for a zero `elements` or `per`;
    /// `ArgumentError::Invalid` for a zero burst in enforcing mode.
    fn throttle(self, elements: u32, per: Duration, maximum_burst: u32, mode: ThrottleMode) -> Result<Self::Repr<Self::Out>, ArgumentError> {
        self.throttle_with_cost(elements, per, maximum_burst, |_| 1, mode)
    }

    /// [`throttle`](Self::throttle) where each element costs `cost_fn(&element)`
    /// of the `cost` allowed per `per`.
    ///
    /// # Errors
    ///
    /// As [`throttle`](Self::throttle).
    fn throttle_with_cost<C>(self, cost: u32, per: Duration, maximum_burst: u32, cost_fn: C, mode: ThrottleMode) -> Result<Self::Repr<Self::Out>, ArgumentError>
    where
        C: FnMut(&Self::Out) -> u32 + Clone + Send + Sync + 'static,
    {
        Ok(self.via_flow(throttle::throttle(cost, per, maximum_burst, cost_fn, mode)?))
    }

    /// Groups of up to `n` elements, each emitted when full or when `within`
    /// has passed since the last group, whichever comes first; never empty.
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` for a zero `n` or `within`.
    fn grouped_within(self, n: usize, within: Duration) -> Result<Self::Repr<Vec<Self::Out>>, ArgumentError> {
        at_least_one(n, "n")?;
        self.grouped_weighted_within(n as u64, within, |_| 1)
    }

    /// [`grouped_within`](Self::grouped_within) by weight: a group closes when
    /// the next element would take it past `max_weight` (an element heavier
    /// than that travels alone).
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` for a zero `max_weight` or `within`.
    fn grouped_weighted_within<W>(self, max_weight: u64, within: Duration, weight_fn: W) -> Result<Self::Repr<Vec<Self::Out>>, ArgumentError>
    where
        W: FnMut(&Self::Out) -> u64 + Clone + Send + Sync + 'static,
    {
        Ok(self.via_flow(grouped_within::grouped_weighted_within(max_weight, within, weight_fn)?))
    }

    /// Each element `by` after it arrived, buffering up to the
    /// `input_buffer` attribute (see [`DelayOverflowStrategy`]).
    fn delay(self, by: Duration, strategy: DelayOverflowStrategy) -> Self::Repr<Self::Out> {
        self.delay_with(move |_| by, strategy)
    }

    /// [`delay`](Self::delay) by `delay_of(&element)` (cloned per run, so
    /// it may keep state), in order: an element never overtakes another.
    fn delay_with<D>(self, delay_of: D, strategy: DelayOverflowStrategy) -> Self::Repr<Self::Out>
    where
        D: FnMut(&Self::Out) -> Duration + Clone + Send + Sync + 'static,
    {
        self.via_flow(delay::delay_with(delay_of, strategy))
    }

    /// Ask upstream for nothing until `by` has passed since the start.
    fn initial_delay(self, by: Duration) -> Self::Repr<Self::Out> {
        self.via_flow(delay::windowed(by, delay::Window::InitialDelay))
    }

    /// Pass elements for `d` from the start, then complete.
    fn take_within(self, d: Duration) -> Self::Repr<Self::Out> {
        self.via_flow(delay::windowed(d, delay::Window::TakeWithin))
    }

    /// Drop the elements that arrive within `d` from the start.
    fn drop_within(self, d: Duration) -> Self::Repr<Self::Out> {
        self.via_flow(delay::windowed(d, delay::Window::DropWithin))
    }

    /// Fail with `TimeoutKind::Initial` unless the first element passes within `d`.
    fn initial_timeout(self, d: Duration) -> Self::Repr<Self::Out> {
        self.via_flow(timeout::timeout(TimeoutKind::Initial, d))
    }

    /// Fail with `TimeoutKind::Completion` unless the stream completes within `d`.
    fn completion_timeout(self, d: Duration) -> Self::Repr<Self::Out> {
        self.via_flow(timeout::timeout(TimeoutKind::Completion, d))
    }

    /// Fail with `TimeoutKind::Idle` when no element passes for `d`.
    fn idle_timeout(self, d: Duration) -> Self::Repr<Self::Out> {
        self.via_flow(timeout::timeout(TimeoutKind::Idle, d))
    }

    /// Fail with `TimeoutKind::Backpressure` when downstream does not ask
    /// for the next element within `d` of the last one.
    fn backpressure_timeout(self, d: Duration) -> Self::Repr<Self::Out> {
        self.via_flow(timeout::timeout(TimeoutKind::Backpressure, d))
    }

    /// When downstream asks and nothing has gone to it for `after`, send
    /// `inject()`.
    fn keep_alive<F>(self, after: Duration, inject: F) -> Self::Repr<Self::Out>
    where
        F: FnMut() -> Self::Out + Clone + Send + Sync + 'static,
    {
        self.via_flow(timeout::keep_alive(after, inject))
    }
}

impl<T: FlowOps> TimeOps for T {}
