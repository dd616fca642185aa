//! `RestartSource::with_backoff` / `on_failures_with_backoff`: a source
//! that runs a fresh copy of a wrapped source each time it ends, after an
//! exponential backoff (Akka's `RestartSource`).
//!
//! The wrapped source runs as its own stream (see `sub_source`), each
//! run tagged so that a late signal of an old run is ignored. The backoff
//! is a stage timer, so a test clock drives it.
//!
//! The schedule: the n-th restart in a row waits `min_backoff * 2^n`,
//! capped at `max_backoff`, times `1 + r * random_factor` (`r` uniform in
//! `[0, 1)`). The count starts again from 0 when a run ends more than
//! `max_restarts_within` after it started (the first run starts with the
//! stage), as Akka's `RestartWithBackoffLogic`: a run that lasted the window
//! was a success. Once `max_restarts` restarts have been counted, the next
//! end is final: the outer source completes, or fails with the wrapped
//! source's error.

use std::time::{Duration, Instant};

use super::delay::deadline_after;
use super::sub_source::{self, FromInner, ToInner};
use crate::blueprint::Source;
use crate::error::{ArgumentError, StreamError};
use crate::stage::{
    AsyncCallback, GraphStage, GraphStageLogic, MatContext, OutPort, SourceShape, StageContext,
    StageResult, TimerKey,
};
use crate::sync::{Arc, AtomicU64, Ordering};

/// The backoff of [`RestartSource`], [`RestartSink`](crate::RestartSink)
/// and [`RestartFlow`](crate::RestartFlow) (Akka's `RestartSettings`).
///
/// The n-th restart in a row waits `min_backoff * 2^n`, capped at
/// `max_backoff`, times `1 + r * random_factor` (`r` uniform in `[0, 1)`).
/// The count starts again from 0 when a run ends more than
/// `max_restarts_within` after it started: a run that lasted that long
/// counts as a success. Once `max_restarts` restarts in a row have been
/// counted, the next end is final. As in Akka, the window is counted from
/// each run's start, not from its end, so a window no longer than the
/// backoff still limits runs that fail as they start.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use weir_streams::RestartSettings;
///
/// let ms = Duration::from_millis;
/// let settings = RestartSettings::new(ms(100), ms(1000), 0.2)
///     .unwrap()
///     .with_max_restarts(5, Duration::from_secs(60));
/// assert_eq!(settings.backoff(0, 0.0), ms(100));
/// assert_eq!(settings.backoff(3, 0.0), ms(800));
/// assert_eq!(settings.backoff(9, 0.0), ms(1000)); // capped
/// assert_eq!(settings.backoff(0, 0.5), ms(110)); // +10%: half the random factor
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RestartSettings {
    min_backoff: Duration,
    max_backoff: Duration,
    random_factor: f64,
    max_restarts: u64,
    max_restarts_within: Duration,
}

impl RestartSettings {
    /// Restart after `min_backoff`, doubling up to `max_backoff`, with up to
    /// `random_factor` (0.2 = 20%) added at random; restarts without limit,
    /// and the count resets after a run that lasted `min_backoff`.
    ///
    /// # Errors
    ///
    /// `ArgumentError::Invalid` for a `max_backoff` below `min_backoff`, or a
    /// `random_factor` that is negative, infinite or not a number.
    pub fn new(
        min_backoff: Duration,
        max_backoff: Duration,
        random_factor: f64,
    ) -> Result<Self, ArgumentError> {
        if max_backoff < min_backoff {
            return Err(ArgumentError::Invalid {
                argument: "max_backoff",
                reason: "must not be below min_backoff",
            });
        }
        if !(random_factor.is_finite() && random_factor >= 0.0) {
            return Err(ArgumentError::Invalid {
                argument: "random_factor",
                reason: "must be a finite number at least 0",
            });
        }
        Ok(Self {
            min_backoff,
            max_backoff,
            random_factor,
            max_restarts: u64::MAX,
            max_restarts_within: min_backoff,
        })
    }

    /// At most `count` restarts in a row, where a run that lasts longer
    /// than `within` from its start ends the row: its end resets the count
    /// (and the backoff) to 0. `within` defaults to `min_backoff`.
    pub fn with_max_restarts(mut self, count: u64, within: Duration) -> Self {
        self.max_restarts = count;
        self.max_restarts_within = within;
        self
    }

    /// The random part of the backoff (0.2 = up to 20% more).
    pub(crate) fn random_factor(&self) -> f64 {
        self.random_factor
    }

    /// The wait before restart number `n` in a row (from 0), for a random
    /// draw `r` in `[0, 1)`.
    pub fn backoff(&self, n: u32, r: f64) -> Duration {
        // Past what a Duration holds, the doubling is capped (zero stays zero).
        let doubled = 2u32
            .checked_pow(n)
            .and_then(|factor| self.min_backoff.checked_mul(factor))
            .unwrap_or(if self.min_backoff.is_zero() {
                Duration::ZERO
            } else {
                self.max_backoff
            });
        let base = doubled.min(self.max_backoff);
        let jitter = 1.0 + r.clamp(0.0, 1.0) * self.random_factor;
        Duration::try_from_secs_f64(base.as_secs_f64() * jitter).unwrap_or(self.max_backoff)
    }
}

/// Makes sources that restart what they wrap: each time the wrapped source
/// ends, a fresh copy runs after the backoff of [`RestartSettings`].
#[derive(Debug, Clone, Copy)]
pub struct RestartSource;

/// The materialized value of a [`RestartSource`]: how many restarts have
/// begun (counted when the backoff before one starts).
#[derive(Debug, Clone, Default)]
pub struct Restarts(pub(crate) Arc<AtomicU64>);

impl Restarts {
    /// Restarts begun so far.
    pub fn count(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }
}

pub(crate) type Factory<T> = Arc<dyn Fn() -> Source<T> + Send + Sync>;

impl RestartSource {
    /// A source that runs `factory()` and, whenever it completes or fails,
    /// runs a new one after the backoff. It completes (or fails, as the
    /// last run did) only once `max_restarts` is spent; cancelling it
    /// cancels the running copy.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use weir_streams::prelude::*;
    /// use weir_streams::{RestartSettings, RestartSource};
    ///
    /// let system = weir_actor::ActorSystem::new("restart").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let settings = RestartSettings::new(Duration::from_millis(1), Duration::from_millis(5), 0.0)
    ///     .unwrap()
    ///     .with_max_restarts(2, Duration::from_secs(60));
    /// let got = RestartSource::with_backoff(settings, || Source::from_iter(vec![1u8, 2]))
    ///     .run_with(Sink::collect(), &materializer);
    /// assert_eq!(got.wait().unwrap(), [1, 2, 1, 2, 1, 2]); // the first run and two restarts
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn with_backoff<T, M, F>(settings: RestartSettings, factory: F) -> Source<T, Restarts>
    where
        T: Send + 'static,
        M: 'static,
        F: Fn() -> Source<T, M> + Send + Sync + 'static,
    {
        Self::make(settings, factory, false)
    }

    /// As [`with_backoff`](Self::with_backoff), but only a failure restarts:
    /// a completion completes the outer source.
    pub fn on_failures_with_backoff<T, M, F>(
        settings: RestartSettings,
        factory: F,
    ) -> Source<T, Restarts>
    where
        T: Send + 'static,
        M: 'static,
        F: Fn() -> Source<T, M> + Send + Sync + 'static,
    {
        Self::make(settings, factory, true)
    }

    fn make<T, M, F>(
        settings: RestartSettings,
        factory: F,
        only_failures: bool,
    ) -> Source<T, Restarts>
    where
        T: Send + 'static,
        M: 'static,
        F: Fn() -> Source<T, M> + Send + Sync + 'static,
    {
        let factory: Factory<T> = Arc::new(move || factory().map_materialized_value(|_| ()));
        Source::from_graph(RestartStage {
            settings,
            factory,
            only_failures,
        })
    }
}

struct RestartStage<T> {
    settings: RestartSettings,
    factory: Factory<T>,
    only_failures: bool,
}

const BACKOFF: TimerKey = TimerKey(0);

struct RestartLogic<T> {
    shape: SourceShape<T>,
    factory: Factory<T>,
    only_failures: bool,
    backoff: Backoff,
    events: Option<AsyncCallback<FromInner<T>>>,
    /// The current run and its bridge sink's controls.
    run: u64,
    inner: Option<AsyncCallback<ToInner>>,
}

/// The restart schedule of one materialization (see the module docs).
pub(crate) struct Backoff {
    settings: RestartSettings,
    restarts: Restarts,
    /// Restarts in a row (resets when a run outlived its window).
    in_a_row: u64,
    /// `max_restarts_within` after the current run started.
    window_ends: Option<Instant>,
    rng: u64,
}

impl Backoff {
    pub(crate) fn new(settings: RestartSettings, restarts: Restarts) -> Self {
        Self {
            settings,
            restarts,
            in_a_row: 0,
            window_ends: None,
            rng: 0,
        }
    }

    /// A run starts (the first with the stage, the others when the
    /// [`BACKOFF`] timer fires): its window opens.
    pub(crate) fn started(&mut self, ctx: &StageContext<'_>) {
        self.window_ends = Some(deadline_after(ctx.now(), self.settings.max_restarts_within));
    }

    /// A run ended: arm the stage's [`BACKOFF`] timer for the next one and
    /// count the restart (after arming, so whoever sees the count sees the
    /// timer armed), or return `false` when the budget is spent.
    pub(crate) fn schedule(&mut self, ctx: &mut StageContext<'_>) -> bool {
        let now = ctx.now();
        if self.window_ends.is_some_and(|end| now > end) {
            // The run lasted past its window: a success, the row ends.
            self.in_a_row = 0;
        }
        if self.in_a_row >= self.settings.max_restarts {
            return false;
        }
        let n = u32::try_from(self.in_a_row).unwrap_or(u32::MAX);
        let r = self.random();
        self.in_a_row += 1;
        ctx.schedule_once(BACKOFF, self.settings.backoff(n, r));
        self.restarts.0.fetch_add(1, Ordering::AcqRel);
        true
    }

    /// A draw in `[0, 1)` for the jitter.
    fn random(&mut self) -> f64 {
        if self.settings.random_factor == 0.0 {
            return 0.0;
        }
        jitter_draw(&mut self.rng)
    }
}

/// A draw in `[0, 1)` for a backoff's jitter from the xorshift state
/// `rng` (0: not yet seeded; seeded from `weir_actor::random_u64`, the
/// source a simulation seeds, so a jittered restart replays with its
/// seed). Jitter needs no better generator.
pub(crate) fn jitter_draw(rng: &mut u64) -> f64 {
    if *rng == 0 {
        *rng = weir_actor::random_u64() | 1;
    }
    *rng ^= *rng << 13;
    *rng ^= *rng >> 7;
    *rng ^= *rng << 17;
    (*rng >> 11) as f64 / (1u64 << 53) as f64
}

impl<T: Send + 'static> GraphStage for RestartStage<T> {
    type Shape = SourceShape<T>;
    type Mat = Restarts;

    fn name(&self) -> &'static str {
        "restart_source"
    }

    fn create_logic(&self, cx: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, Restarts) {
        let events = cx.async_callback(|this: &mut RestartLogic<T>, event: FromInner<T>, ctx| {
            this.on_inner(event, ctx)
        });
        let restarts = Restarts::default();
        let logic = RestartLogic {
            shape: SourceShape::new(),
            factory: Arc::clone(&self.factory),
            only_failures: self.only_failures,
            backoff: Backoff::new(self.settings, restarts.clone()),
            events: Some(events),
            run: 0,
            inner: None,
        };
        (Box::new(logic), restarts)
    }
}

impl<T: Send + 'static> RestartLogic<T> {
    fn start(&mut self, ctx: &mut StageContext<'_>) {
        self.run += 1;
        self.backoff.started(ctx);
        let Some(events) = self.events.clone() else {
            return;
        };
        let inner = sub_source::run((self.factory)(), self.run, events, ctx);
        if ctx.is_available(self.shape.out) {
            inner.invoke(ToInner::Pull);
        }
        self.inner = Some(inner);
    }

    fn on_inner(&mut self, event: FromInner<T>, ctx: &mut StageContext<'_>) -> StageResult {
        match event {
            FromInner::Element(run, element) if run == self.run => {
                ctx.push(self.shape.out, element)
            }
            FromInner::Ended(run, error) if run == self.run => {
                self.inner = None;
                self.ended(error, ctx)
            }
            _ => Ok(()), // from an earlier run
        }
    }

    /// The current run ended: restart after the backoff, or end here.
    fn ended(&mut self, error: Option<StreamError>, ctx: &mut StageContext<'_>) -> StageResult {
        if error.is_none() && self.only_failures {
            ctx.complete_stage();
            return Ok(());
        }
        if self.backoff.schedule(ctx) {
            return Ok(());
        }
        match error {
            Some(error) => Err(error),
            None => {
                ctx.complete_stage();
                Ok(())
            }
        }
    }

    fn stop_inner(&mut self) {
        if let Some(inner) = self.inner.take() {
            inner.invoke(ToInner::Cancel);
        }
    }
}

impl<T: Send + 'static> GraphStageLogic for RestartLogic<T> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        self.start(ctx);
        Ok(())
    }

    fn on_pull(&mut self, _: OutPort, _: &mut StageContext<'_>) -> StageResult {
        if let Some(inner) = &self.inner {
            inner.invoke(ToInner::Pull);
        }
        Ok(())
    }

    fn on_timer(&mut self, _: TimerKey, ctx: &mut StageContext<'_>) -> StageResult {
        self.start(ctx);
        Ok(())
    }

    fn on_downstream_finish(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.stop_inner();
        ctx.complete_stage();
        Ok(())
    }

    fn post_stop(&mut self) {
        self.stop_inner();
        self.events = None;
    }
}
