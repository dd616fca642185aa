//! `throttle` and `throttle_with_cost`: a token bucket on the stream.
//!
//! The bucket holds up to `maximum_burst` tokens and starts full; tokens
//! come back at `cost` per `per`, exactly (no period rounded to whole
//! nanoseconds), on a fixed grid from the start (Akka's `TokenBucket`,
//! measured on the system's clock). An element costs `cost_fn(&element)` tokens. When the
//! bucket holds enough, the element passes at once. Otherwise, in
//! [`ThrottleMode::Shaping`], the stage holds the element on a timer until
//! the tokens it lacks have come back (taking them in advance, so the rate
//! holds over any window); in [`ThrottleMode::Enforcing`] it fails the
//! stream with [`ErrorKind::RateExceeded`](crate::ErrorKind::RateExceeded).
//! The stage pulls only when downstream pulls, so a slow consumer is never
//! buffered for.
//!
//! `cost_fn` honours a supervision strategy: a panic in it drops the
//! element (no tokens taken); `Restart` also takes a fresh clone of
//! `cost_fn`. The bucket is kept either way, so a failure never lets a
//! burst through.

use std::time::{Duration, Instant};

use super::util::{logic_flow_with, ports};
use crate::blueprint::Flow;
use crate::error::{ArgumentError, ErrorKind, StreamError};
use crate::stage::{
    Directive, FlowShape, GraphStageLogic, InPort, OutPort, StageContext, StageResult,
    SupervisionStrategy, TimerKey, supervised,
};

/// What `throttle` does with an element that comes too early.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use weir_streams::prelude::*;
/// use weir_streams::ThrottleMode;
///
/// let system = weir_actor::ActorSystem::new("throttle").unwrap();
/// let materializer = Materializer::new(&system);
/// // At most 1000 elements per second, in bursts of up to 10.
/// let done = Source::range(0u32..20)
///     .throttle(1000, Duration::from_secs(1), 10, ThrottleMode::Shaping)
///     .unwrap()
///     .run_with(Sink::collect(), &materializer);
/// assert_eq!(done.wait().unwrap().len(), 20);
/// system.terminate().wait().unwrap();
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThrottleMode {
    /// Delay it until the rate allows it (back-pressure upstream meanwhile).
    Shaping,
    /// Fail the stream with `ErrorKind::RateExceeded`.
    Enforcing,
}

/// Tokens refilled at `cost` per `per`, up to `capacity`; may go into debt
/// by one offer (the one that is then delayed).
///
/// Counted exactly, with no period rounded to whole nanoseconds: the
/// bucket keeps *units*, where a token is `per` (in nanoseconds) units and
/// a nanosecond brings `cost` units. Whole tokens are capped at `capacity`
/// and the progress towards the next one is kept, so tokens come on a
/// fixed grid from the start, as with Akka's `TokenBucket` (which rounds
/// the period down to whole nanoseconds, and so runs fast, or not at all
/// when more than one token comes per nanosecond).
#[derive(Debug, Clone)]
pub(crate) struct TokenBucket {
    capacity: u128,
    /// Units a nanosecond brings (the `cost` per `per`).
    rate: u128,
    /// Units a token is worth (`per` in nanoseconds).
    token: u128,
    /// Units in the bucket at `last`.
    units: u128,
    /// Units are counted up to here (in the future while in debt).
    last: Instant,
}

impl TokenBucket {
    pub(crate) fn new(capacity: u64, cost: u32, per: Duration, now: Instant) -> Self {
        let token = per.as_nanos().max(1);
        let capacity = u128::from(capacity);
        Self {
            capacity,
            rate: u128::from(cost.max(1)),
            token,
            units: capacity.saturating_mul(token),
            last: now,
        }
    }

    fn refill(&mut self, now: Instant) {
        if now <= self.last {
            return;
        }
        let arrived = (now - self.last).as_nanos().saturating_mul(self.rate);
        let units = self.units.saturating_add(arrived);
        // Whole tokens up to the capacity; the progress to the next is kept.
        let whole = (units / self.token).min(self.capacity);
        self.units = whole * self.token + units % self.token;
        self.last = now;
    }

    /// Take `cost` tokens at `now`: the wait before the element may pass
    /// (zero when the bucket held enough).
    pub(crate) fn offer(&mut self, cost: u64, now: Instant) -> Duration {
        self.refill(now);
        let need = u128::from(cost).saturating_mul(self.token);
        // Nothing owed and enough in the bucket (a free element always is).
        if need == 0 || (self.last <= now && need <= self.units) {
            self.units -= need;
            return Duration::ZERO;
        }
        // Wait for the units lacking, counted from `last` (now, or the
        // end of the debt of earlier offers): whole nanoseconds, rounded up.
        let lacking = need.saturating_sub(self.units);
        let nanos = lacking.div_ceil(self.rate);
        let ready = u64::try_from(nanos)
            .ok()
            .and_then(|n| self.last.checked_add(Duration::from_nanos(n)));
        let Some(ready) = ready else {
            // Beyond what the clock can count: never (the caller's timer
            // saturates the same way).
            return Duration::MAX;
        };
        // The lacking units are spent in advance: count from when they come.
        self.units = self
            .units
            .saturating_add(nanos.saturating_mul(self.rate))
            .saturating_sub(need);
        self.last = ready;
        ready - now
    }
}

const HELD: TimerKey = TimerKey(0);

struct Throttle<T, C> {
    shape: FlowShape<T, T>,
    cost_fn: C,
    /// The strategy and a clone of `cost_fn` to restart with.
    restart: Option<(SupervisionStrategy, C)>,
    cost: u32,
    per: Duration,
    burst: u64,
    mode: ThrottleMode,
    bucket: Option<TokenBucket>,
    held: Option<T>,
    finishing: bool,
}

impl<T: Send + 'static, C: FnMut(&T) -> u32 + Clone + Send + 'static> GraphStageLogic
    for Throttle<T, C>
{
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        self.bucket = Some(TokenBucket::new(self.burst, self.cost, self.per, ctx.now()));
        Ok(())
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.pull(self.shape.inlet)
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        let cost_fn = &mut self.cost_fn;
        let cost = match supervised(self.restart.as_ref().map(|(s, _)| s), || cost_fn(&element)) {
            Ok(cost) => u64::from(cost),
            Err(directive) => {
                if let (Directive::Restart, Some((_, fresh))) = (directive, &self.restart) {
                    self.cost_fn = fresh.clone();
                }
                return ctx.pull(self.shape.inlet); // dropped; downstream still asks
            }
        };
        let now = ctx.now();
        let wait = self
            .bucket
            .as_mut()
            .map_or(Duration::ZERO, |b| b.offer(cost, now));
        if wait.is_zero() {
            return ctx.push(self.shape.out, element);
        }
        match self.mode {
            ThrottleMode::Enforcing => Err(StreamError::from_kind(ErrorKind::RateExceeded {
                cost: self.cost,
                per: self.per,
            })),
            ThrottleMode::Shaping => {
                self.held = Some(element);
                // For the instant the bucket names, not a delay from a
                // later clock reading.
                ctx.schedule_once_at(HELD, super::delay::deadline_after(now, wait));
                Ok(())
            }
        }
    }

    fn on_timer(&mut self, _: TimerKey, ctx: &mut StageContext<'_>) -> StageResult {
        if let Some(element) = self.held.take() {
            ctx.push(self.shape.out, element)?;
        }
        if self.finishing {
            ctx.complete_stage();
        }
        Ok(())
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        if self.held.is_some() {
            self.finishing = true; // complete once the held element is out
        } else {
            ctx.complete_stage();
        }
        Ok(())
    }
}

/// The `throttle_with_cost` flow (checked arguments).
pub(crate) fn throttle<T, C>(
    cost: u32,
    per: Duration,
    maximum_burst: u32,
    cost_fn: C,
    mode: ThrottleMode,
) -> Result<Flow<T, T>, ArgumentError>
where
    T: Send + 'static,
    C: FnMut(&T) -> u32 + Clone + Send + Sync + 'static,
{
    if cost == 0 {
        return Err(ArgumentError::Zero {
            argument: "elements",
        });
    }
    if per.is_zero() {
        return Err(ArgumentError::Zero { argument: "per" });
    }
    if mode == ThrottleMode::Enforcing && maximum_burst == 0 {
        return Err(ArgumentError::Invalid {
            argument: "maximum_burst",
            reason: "must be at least 1 in enforcing mode, or every element fails the stream",
        });
    }
    Ok(logic_flow_with("throttle", move |attributes| Throttle {
        shape: ports(),
        cost_fn: cost_fn.clone(),
        restart: attributes
            .supervision_strategy()
            .map(|strategy| (strategy.clone(), cost_fn.clone())),
        cost,
        per,
        burst: u64::from(maximum_burst),
        mode,
        bucket: None,
        held: None,
        finishing: false,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn a_full_bucket_lets_a_burst_through_then_spaces_by_the_period() {
        let t0 = Instant::now();
        let mut b = TokenBucket::new(3, 1, 10 * MS, t0);
        assert_eq!(
            [b.offer(1, t0), b.offer(1, t0), b.offer(1, t0)],
            [Duration::ZERO; 3]
        );
        assert_eq!(b.offer(1, t0), 10 * MS);
        // The fourth took the token due at 10 ms; the next is due at 20 ms.
        assert_eq!(b.offer(1, t0 + 10 * MS), 10 * MS);
        assert_eq!(b.offer(1, t0 + 35 * MS), Duration::ZERO);
        // Asking early pays what is still owed too.
        assert_eq!(b.offer(1, t0 + 35 * MS), 5 * MS);
        assert_eq!(b.offer(1, t0 + 36 * MS), 14 * MS);
    }

    #[test]
    fn refills_up_to_capacity_only() {
        let t0 = Instant::now();
        let mut b = TokenBucket::new(2, 1, MS, t0);
        assert_eq!(b.offer(2, t0), Duration::ZERO);
        let later = t0 + 1000 * MS;
        assert_eq!(b.offer(2, later), Duration::ZERO);
        assert_eq!(b.offer(1, later), MS);
    }

    /// Releases as the stage makes them: element `i` is offered when it
    /// has arrived and the one before it has gone out.
    fn releases(burst: u64, period: Duration, arrivals: &[Duration]) -> Vec<Duration> {
        let t0 = Instant::now();
        let mut bucket = TokenBucket::new(burst, 1, period, t0);
        let mut out: Vec<Duration> = Vec::new();
        for &arrival in arrivals {
            let offered = out.last().map_or(arrival, |&last| arrival.max(last));
            out.push(offered + bucket.offer(1, t0 + offered));
        }
        out
    }

    proptest::proptest! {
        /// Never faster than the bucket allows. Tokens come on a fixed grid
        /// of periods from the start (as Akka's), so between any two
        /// releases `i <= j` at most `burst + ceil((r_j - r_i) / period)`
        /// elements go.
        #[test]
        fn never_faster_than_the_rate_and_burst(
            burst in 1u64..5,
            period_ms in 1u64..50,
            gaps in proptest::collection::vec(0u64..100, 1..60),
        ) {
            let period = Duration::from_millis(period_ms);
            let arrivals: Vec<Duration> = gaps
                .iter()
                .scan(Duration::ZERO, |t, &g| { *t += Duration::from_millis(g); Some(*t) })
                .collect();
            let out = releases(burst, period, &arrivals);
            for i in 0..out.len() {
                proptest::prop_assert!(out[i] >= arrivals[i], "released before it arrived");
                for j in i..out.len() {
                    let allowed = burst + (out[j] - out[i]).as_nanos().div_ceil(period.as_nanos()) as u64;
                    proptest::prop_assert!((j - i + 1) as u64 <= allowed, "{} released in {:?}", j - i + 1, out[j] - out[i]);
                }
            }
        }

        /// Never slower than needed: everything offered at once goes at
        /// the full rate after the burst.
        #[test]
        fn a_backlog_drains_at_exactly_the_rate(burst in 1u64..5, period_ms in 1u64..50, n in 1usize..40) {
            let period = Duration::from_millis(period_ms);
            let out = releases(burst, period, &vec![Duration::ZERO; n]);
            let after_burst = (n as u64).saturating_sub(burst) as u32;
            proptest::prop_assert_eq!(*out.last().unwrap(), period * after_burst);
        }
    }

    #[test]
    fn fractions_of_a_nanosecond_per_token_add_up_exactly() {
        let t0 = Instant::now();
        let ns = Duration::from_nanos;
        // 3 per 5 ns, burst 1: tokens at 5/3, 10/3, 5, ... ns.
        let mut b = TokenBucket::new(1, 3, ns(5), t0);
        let waits: Vec<_> = (0..4).map(|_| b.offer(1, t0)).collect();
        assert_eq!(waits, [ns(0), ns(2), ns(4), ns(5)]);
        // A billion per 1 ns: a thousand at once is a microsecond's worth.
        let mut b = TokenBucket::new(1, 1_000_000_000, ns(1), t0);
        assert_eq!(b.offer(1, t0), ns(0));
        assert_eq!(b.offer(1_000_000_000, t0), ns(1));
        // A free element passes even while the bucket is in debt.
        assert_eq!(b.offer(0, t0), ns(0));
    }

    #[test]
    fn extreme_settings_saturate_instead_of_overflowing() {
        let t0 = Instant::now();
        let mut b = TokenBucket::new(u64::from(u32::MAX), u32::MAX, Duration::MAX, t0);
        assert_eq!(b.offer(u64::from(u32::MAX), t0), Duration::ZERO);
        assert_eq!(b.offer(u64::MAX, t0), Duration::MAX);
        let mut b = TokenBucket::new(0, 1, Duration::MAX, t0);
        assert_eq!(b.offer(1, t0), Duration::MAX);
        assert_eq!(b.offer(1, t0 + Duration::from_secs(1)), Duration::MAX);
    }

    #[test]
    fn a_cost_above_the_burst_waits_for_the_tokens_it_lacks() {
        let t0 = Instant::now();
        let mut b = TokenBucket::new(1, 1, MS, t0);
        assert_eq!(b.offer(5, t0), 4 * MS);
        assert_eq!(b.offer(0, t0 + 4 * MS), Duration::ZERO);
    }
}
