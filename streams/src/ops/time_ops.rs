//! [`TimeOps`]: operators that read time (throttle.rs, grouped_within.rs,
//! delay.rs, timeout.rs). Each reads the system's clock, so a test clock
//! (`weir_actor::testkit::TestClock`) drives it.

use std::time::Duration;

use super::util::at_least_one;
use super::{
    DelayOverflowStrategy, FlowOps, ThrottleMode, aggregate_with_boundary, delay, grouped_within,
    throttle, timeout,
};
use crate::error::{ArgumentError, TimeoutKind};

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
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use weir_streams::prelude::*;
    /// use weir_streams::ThrottleMode;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// // Within the burst: nothing waits.
    /// let out = Source::range(1u32..=3)
    ///     .throttle(100, Duration::from_secs(1), 10, ThrottleMode::Shaping)
    ///     .unwrap()
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(out.wait(), Ok(vec![1, 2, 3]));
    /// # system.terminate().wait().unwrap();
    /// ```
    fn throttle(
        self,
        elements: u32,
        per: Duration,
        maximum_burst: u32,
        mode: ThrottleMode,
    ) -> Result<Self::Repr<Self::Out>, ArgumentError> {
        self.throttle_with_cost(elements, per, maximum_burst, |_| 1, mode)
    }

    /// [`throttle`](Self::throttle) where each element costs `cost_fn(&element)`
    /// of the `cost` allowed per `per`.
    ///
    /// Supervision: a panic in `cost_fn` asks the stage's [`SupervisionStrategy`](crate::SupervisionStrategy): resume drops the element (taking no tokens), restart drops it and goes on with a fresh clone of `cost_fn` (the token bucket is kept), stop fails the stream.
    ///
    /// # Errors
    ///
    /// As [`throttle`](Self::throttle).
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use weir_streams::prelude::*;
    /// use weir_streams::ThrottleMode;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// let out = Source::from_iter(vec!["a", "bb"])
    ///     .throttle_with_cost(100, Duration::from_secs(1), 100, |s: &&str| s.len() as u32, ThrottleMode::Shaping)
    ///     .unwrap()
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(out.wait(), Ok(vec!["a", "bb"]));
    /// # system.terminate().wait().unwrap();
    /// ```
    fn throttle_with_cost<C>(
        self,
        cost: u32,
        per: Duration,
        maximum_burst: u32,
        cost_fn: C,
        mode: ThrottleMode,
    ) -> Result<Self::Repr<Self::Out>, ArgumentError>
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
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use weir_streams::prelude::*;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// // Groups close when full, and the last when upstream completes.
    /// let out = Source::range(1u32..=5)
    ///     .grouped_within(2, Duration::from_secs(60))
    ///     .unwrap()
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(out.wait(), Ok(vec![vec![1, 2], vec![3, 4], vec![5]]));
    /// # system.terminate().wait().unwrap();
    /// ```
    fn grouped_within(
        self,
        n: usize,
        within: Duration,
    ) -> Result<Self::Repr<Vec<Self::Out>>, ArgumentError> {
        at_least_one(n, "n")?;
        self.grouped_weighted_within(n as u64, within, |_| 1)
    }

    /// [`grouped_within`](Self::grouped_within) by weight: a group closes
    /// when its weight reaches `max_weight` or the next element would take
    /// it past that (the element then opens the next group). Until
    /// downstream asks, a full group still takes elements of weight zero;
    /// an element heavier than `max_weight` goes in a group with nothing of
    /// positive weight. No element is dropped.
    ///
    /// Supervision: a panic in `weight_fn` asks the stage's [`SupervisionStrategy`](crate::SupervisionStrategy): resume drops the element, restart drops it and goes on with a fresh clone of `weight_fn` (the open group is kept), stop fails the stream.
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` for a zero `max_weight` or `within`.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use weir_streams::prelude::*;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// let out = Source::from_iter(vec![3u64, 4, 2, 5])
    ///     .grouped_weighted_within(7, Duration::from_secs(60), |x| *x)
    ///     .unwrap()
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(out.wait(), Ok(vec![vec![3, 4], vec![2, 5]]));
    /// # system.terminate().wait().unwrap();
    /// ```
    fn grouped_weighted_within<W>(
        self,
        max_weight: u64,
        within: Duration,
        weight_fn: W,
    ) -> Result<Self::Repr<Vec<Self::Out>>, ArgumentError>
    where
        W: FnMut(&Self::Out) -> u64 + Clone + Send + Sync + 'static,
    {
        Ok(self.via_flow(grouped_within::grouped_weighted_within(
            max_weight, within, weight_fn,
        )?))
    }

    /// Each element `by` after it arrived, buffering up to the
    /// `input_buffer` attribute (see [`DelayOverflowStrategy`]).
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use weir_streams::prelude::*;
    /// use weir_streams::DelayOverflowStrategy;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// let out = Source::range(1u32..=3)
    ///     .delay(Duration::from_millis(5), DelayOverflowStrategy::Backpressure)
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(out.wait(), Ok(vec![1, 2, 3]));
    /// # system.terminate().wait().unwrap();
    /// ```
    fn delay(self, by: Duration, strategy: DelayOverflowStrategy) -> Self::Repr<Self::Out> {
        self.delay_with(move |_| by, strategy)
    }

    /// [`delay`](Self::delay) by `delay_of(&element)` (cloned per run, so
    /// it may keep state), in order: an element never overtakes another.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use weir_streams::prelude::*;
    /// use weir_streams::DelayOverflowStrategy;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// // The shorter delay does not overtake the longer one before it.
    /// let out = Source::from_iter(vec![4u64, 1])
    ///     .delay_with(|ms| Duration::from_millis(*ms), DelayOverflowStrategy::Backpressure)
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(out.wait(), Ok(vec![4, 1]));
    /// # system.terminate().wait().unwrap();
    /// ```
    fn delay_with<D>(self, delay_of: D, strategy: DelayOverflowStrategy) -> Self::Repr<Self::Out>
    where
        D: FnMut(&Self::Out) -> Duration + Clone + Send + Sync + 'static,
    {
        self.via_flow(delay::delay_with(delay_of, strategy))
    }

    /// Ask upstream for nothing until `by` has passed since the start
    /// (zero: no wait; `Duration::MAX`: never).
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use weir_streams::prelude::*;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// let out = Source::range(1u32..=2).initial_delay(Duration::from_millis(5)).run_with(Sink::collect(), &mat);
    /// assert_eq!(out.wait(), Ok(vec![1, 2]));
    /// # system.terminate().wait().unwrap();
    /// ```
    fn initial_delay(self, by: Duration) -> Self::Repr<Self::Out> {
        self.via_flow(delay::windowed(by, delay::Window::InitialDelay))
    }

    /// Pass the elements that arrive within `d` from the start, then
    /// complete (at `d` on the clock, also when an element arrives then
    /// before the timer fires). Zero takes nothing; `Duration::MAX` never
    /// ends.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use weir_streams::prelude::*;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// let out = Source::range(1u32..=3).take_within(Duration::from_secs(60)).run_with(Sink::collect(), &mat);
    /// assert_eq!(out.wait(), Ok(vec![1, 2, 3]));
    /// # system.terminate().wait().unwrap();
    /// ```
    fn take_within(self, d: Duration) -> Self::Repr<Self::Out> {
        self.via_flow(delay::windowed(d, delay::Window::TakeWithin))
    }

    /// Drop the elements that arrive within `d` from the start (an element
    /// that arrives at `d` passes). Zero drops nothing; `Duration::MAX`
    /// drops everything.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use weir_streams::prelude::*;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// // Everything arrives within the minute: everything is dropped.
    /// let out = Source::range(1u32..=3).drop_within(Duration::from_secs(60)).run_with(Sink::collect(), &mat);
    /// assert_eq!(out.wait(), Ok(vec![]));
    /// # system.terminate().wait().unwrap();
    /// ```
    fn drop_within(self, d: Duration) -> Self::Repr<Self::Out> {
        self.via_flow(delay::windowed(d, delay::Window::DropWithin))
    }

    /// Fail with `TimeoutKind::Initial` unless the first element passes within `d`.
    ///
    /// As for every timeout here, the clock decides: a signal at the
    /// deadline is late, so a zero timeout fails at once, and
    /// `Duration::MAX` never fires.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use weir_streams::prelude::*;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// use weir_streams::{ErrorKind, TimeoutKind};
    ///
    /// let late = Source::repeat(1u32)
    ///     .initial_delay(Duration::from_secs(60))
    ///     .initial_timeout(Duration::from_millis(10))
    ///     .run_with(Sink::ignore(), &mat);
    /// let error = late.wait().unwrap_err();
    /// assert!(matches!(error.kind(), ErrorKind::Timeout(TimeoutKind::Initial, _)));
    /// # system.terminate().wait().unwrap();
    /// ```
    fn initial_timeout(self, d: Duration) -> Self::Repr<Self::Out> {
        self.via_flow(timeout::timeout(TimeoutKind::Initial, d))
    }

    /// Fail with `TimeoutKind::Completion` unless the stream completes within `d`.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use weir_streams::prelude::*;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// use weir_streams::{ErrorKind, TimeoutKind};
    ///
    /// let endless = Source::repeat(1u32).completion_timeout(Duration::from_millis(10)).run_with(Sink::ignore(), &mat);
    /// let error = endless.wait().unwrap_err();
    /// assert!(matches!(error.kind(), ErrorKind::Timeout(TimeoutKind::Completion, _)));
    /// # system.terminate().wait().unwrap();
    /// ```
    fn completion_timeout(self, d: Duration) -> Self::Repr<Self::Out> {
        self.via_flow(timeout::timeout(TimeoutKind::Completion, d))
    }

    /// Fail with `TimeoutKind::Idle` when no element passes for `d`.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use weir_streams::prelude::*;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// let out = Source::range(1u32..=3).idle_timeout(Duration::from_secs(60)).run_with(Sink::collect(), &mat);
    /// assert_eq!(out.wait(), Ok(vec![1, 2, 3]));
    /// # system.terminate().wait().unwrap();
    /// ```
    fn idle_timeout(self, d: Duration) -> Self::Repr<Self::Out> {
        self.via_flow(timeout::timeout(TimeoutKind::Idle, d))
    }

    /// Fail with `TimeoutKind::Backpressure` when downstream does not ask
    /// for the next element within `d` of the last one (for the first
    /// element: within `d` of the start).
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use weir_streams::prelude::*;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// let out = Source::range(1u32..=3).backpressure_timeout(Duration::from_secs(60)).run_with(Sink::collect(), &mat);
    /// assert_eq!(out.wait(), Ok(vec![1, 2, 3]));
    /// # system.terminate().wait().unwrap();
    /// ```
    fn backpressure_timeout(self, d: Duration) -> Self::Repr<Self::Out> {
        self.via_flow(timeout::timeout(TimeoutKind::Backpressure, d))
    }

    /// When downstream asks and nothing has gone to it for `after`, send
    /// `inject()` (an element waiting from upstream goes first). A zero
    /// `after` injects whenever downstream asks and no element waits.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use weir_streams::prelude::*;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// // Upstream is silent: the heartbeat fills in.
    /// let out = Source::repeat(1u32)
    ///     .initial_delay(Duration::from_secs(60))
    ///     .keep_alive(Duration::from_millis(5), || 0)
    ///     .take(2)
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(out.wait(), Ok(vec![0, 0]));
    /// # system.terminate().wait().unwrap();
    /// ```
    fn keep_alive<F>(self, after: Duration, inject: F) -> Self::Repr<Self::Out>
    where
        F: FnMut() -> Self::Out + Clone + Send + Sync + 'static,
    {
        self.via_flow(timeout::keep_alive(after, inject))
    }

    /// Fold elements into aggregates with boundaries of your choosing
    /// (Pekko's `aggregateWithBoundary` without a timer): `allocate()`
    /// opens an aggregate at the first element after the last one went,
    /// `aggregate(&mut agg, element)` adds an element and says whether the
    /// aggregate is now closed, and a closed one goes downstream as
    /// `harvest(agg)`. Upstream is pulled only while downstream asks; at
    /// upstream's completion the open aggregate goes, then the stream
    /// completes. Empty aggregates are never emitted.
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// // Close a batch when its sum reaches 10.
    /// let out = Source::from_iter(vec![4u32, 5, 3, 9, 1])
    ///     .aggregate_with_boundary(Vec::new, |batch, x| { batch.push(x); batch.iter().sum::<u32>() >= 10 }, |b| b)
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(out.wait(), Ok(vec![vec![4, 5, 3], vec![9, 1]]));
    /// # system.terminate().wait().unwrap();
    /// ```
    fn aggregate_with_boundary<A, E, Al, Ag, H>(
        self,
        allocate: Al,
        aggregate: Ag,
        harvest: H,
    ) -> Self::Repr<E>
    where
        A: Send + 'static,
        E: Send + 'static,
        Al: FnMut() -> A + Clone + Send + Sync + 'static,
        Ag: FnMut(&mut A, Self::Out) -> bool + Clone + Send + Sync + 'static,
        H: FnMut(A) -> E + Clone + Send + Sync + 'static,
    {
        let flow = aggregate_with_boundary::aggregate_with_boundary(
            allocate,
            aggregate,
            harvest,
            None::<(fn(&A) -> bool, Duration)>,
        );
        self.via_flow(flow)
    }

    /// [`aggregate_with_boundary`](Self::aggregate_with_boundary) with a
    /// timer as well (Pekko's `emitOnTimer`): every `interval` the open
    /// aggregate, if any, goes when `ready(&agg)` says so.
    ///
    /// # Errors
    ///
    /// `ArgumentError::Invalid` when `interval` is under 1 ms (as Pekko).
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use weir_streams::prelude::*;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// let out = Source::range(1u32..=5)
    ///     .aggregate_with_boundary_timed(Vec::new, |b, x| { b.push(x); b.len() == 2 }, |b| b, |b| !b.is_empty(), Duration::from_millis(50))
    ///     .unwrap()
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(out.wait(), Ok(vec![vec![1, 2], vec![3, 4], vec![5]]));
    /// # system.terminate().wait().unwrap();
    /// ```
    fn aggregate_with_boundary_timed<A, E, Al, Ag, H, R>(
        self,
        allocate: Al,
        aggregate: Ag,
        harvest: H,
        ready: R,
        interval: Duration,
    ) -> Result<Self::Repr<E>, ArgumentError>
    where
        A: Send + 'static,
        E: Send + 'static,
        Al: FnMut() -> A + Clone + Send + Sync + 'static,
        Ag: FnMut(&mut A, Self::Out) -> bool + Clone + Send + Sync + 'static,
        H: FnMut(A) -> E + Clone + Send + Sync + 'static,
        R: FnMut(&A) -> bool + Clone + Send + Sync + 'static,
    {
        aggregate_with_boundary::check_interval(interval)?;
        Ok(
            self.via_flow(aggregate_with_boundary::aggregate_with_boundary(
                allocate,
                aggregate,
                harvest,
                Some((ready, interval)),
            )),
        )
    }
}

impl<T: FlowOps> TimeOps for T {}
