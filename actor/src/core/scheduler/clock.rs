//! The clock every timer reads: the real one, or a [`TestClock`] a test
//! drives by hand.
//!
//! What [`TestClock::advance`] guarantees is on [`TestClock`].

// Without the `testkit` feature nothing outside the crate can make a test
// clock, so its driving half is unused there.
#![cfg_attr(not(feature = "testkit"), allow(dead_code, unreachable_pub))]

use std::fmt;
use std::time::{Duration, Instant};

use super::deadline;
use crate::sync::{Arc, AtomicU64, Mutex, Ordering, Weak};

/// What a [`TestClock`] drives: a timer that reads it (the wheel's
/// `TimerThread::manual`). The clock knows timers only through this, so it
/// sits below the wheel.
pub(crate) trait Driven: Send + Sync {
    /// The earliest deadline the timer holds (cancelled entries included).
    fn next_deadline(&self) -> Option<Instant>;

    /// Run the timer's earliest entry if it is due by `upto` (the clock
    /// stands at its deadline now). Returns whether one ran.
    fn fire_next(&self, upto: Instant) -> bool;
}

/// Where a timer reads the time.
#[derive(Clone)]
pub(crate) enum Clock {
    Real,
    Test(TestClock),
}

impl Clock {
    pub(crate) fn now(&self) -> Instant {
        match self {
            Clock::Real => Instant::now(),
            Clock::Test(clock) => clock.now(),
        }
    }
}

/// A clock that moves only when a test says so (Akka's `ManualTime`,
/// tokio's paused time).
///
/// # What `advance` guarantees
///
/// A system built with [`ActorSystemBuilder::clock`] never fires a timer by
/// itself: its scheduler has no timer thread. [`TestClock::advance`] moves
/// time forward and, on the calling thread, runs every scheduled job whose
/// deadline has been reached, in deadline order (ties in the order they were
/// scheduled), with the clock standing at each job's deadline while it runs.
/// A job scheduled while `advance` runs (a periodic timer re-arming itself,
/// or an actor reacting on the pool) runs in the same call if its deadline is
/// within the target. When `advance` returns, the clock stands at the
/// target and every job due by then has run. A job scheduled for a time the
/// clock has already reached (a zero delay, or an actor re-arming for a
/// deadline that has passed) is due: it runs at once, on the thread that
/// schedules it.
///
/// What a job does is usually a *send*: an actor timer, a receive-timeout
/// check, a stream stage's timer all enqueue a message. So the guarantee is:
/// **every message due by the target is in its recipient's mailbox, in
/// deadline order, before `advance` returns**. Processing it happens on the
/// recipient's dispatcher, afterwards, and sees the clock as it is then
/// (the target, unless the test advanced again). A test therefore waits for
/// the effect it expects (a probe, an element) between two advances; to
/// observe a chain of timers each set by the reaction to the one before
/// (a stream stage re-arming from its handler), advance in steps no longer
/// than one link.
///
/// The pool's own watchdog keeps the real clock (it guards against blocked
/// threads, which is about real time); blocking waits with a time-out
/// (`Termination::wait_timeout`, an ask's blocking wait) are real time too.
/// An ask's *time-out* is a scheduled job, so under a test clock it fires
/// only when the test advances past it.
///
/// Install it with [`ActorSystemBuilder::clock`]; clones share the same time.
/// Every timer of that system (scheduler, actor timers, receive timeouts,
/// stream stage timers and the time-based stream operators) then reads it.
///
/// # Examples
///
/// ```
/// # #[cfg(feature = "testkit")] { // the type exists with the `testkit` feature
/// use std::time::Duration;
/// use weir_actor::testkit::TestClock;
/// use weir_actor::ActorSystem;
///
/// let clock = TestClock::new();
/// let system = ActorSystem::builder().name("manual").clock(clock.clone()).build().unwrap();
/// let (tx, rx) = std::sync::mpsc::channel();
/// system.scheduler().schedule_once_fn(Duration::from_secs(60), move || tx.send(()).unwrap());
///
/// clock.advance(Duration::from_secs(59));
/// assert!(rx.try_recv().is_err()); // not yet due
/// clock.advance(Duration::from_secs(1));
/// assert!(rx.try_recv().is_ok()); // ran before `advance` returned
/// assert_eq!(clock.elapsed(), Duration::from_secs(60));
/// system.terminate().wait().unwrap();
/// # }
/// ```
///
/// [`ActorSystemBuilder::clock`]: crate::ActorSystemBuilder::clock
#[derive(Clone)]
pub struct TestClock {
    inner: Arc<TestTime>,
}

struct TestTime {
    origin: Instant,
    /// Nanoseconds since `origin`; only grows.
    elapsed: AtomicU64,
    /// The timers reading this clock (one per system built with it).
    timers: Mutex<Vec<Weak<dyn Driven>>>,
    /// One `advance` at a time.
    advancing: Mutex<()>,
}

impl Default for TestClock {
    fn default() -> Self {
        Self::new()
    }
}

impl TestClock {
    /// A clock standing at the real time of its creation.
    pub fn new() -> Self {
        Self {
            inner: Arc::new(TestTime {
                origin: Instant::now(),
                elapsed: AtomicU64::new(0),
                timers: Mutex::new(Vec::new()),
                advancing: Mutex::new(()),
            }),
        }
    }

    /// The clock's current time.
    pub fn now(&self) -> Instant {
        self.inner.origin + self.elapsed()
    }

    /// How far the clock has been advanced since it was made.
    pub fn elapsed(&self) -> Duration {
        Duration::from_nanos(self.inner.elapsed.load(Ordering::Acquire))
    }

    /// Move the clock forward by `by`, running every job that comes due on
    /// the way, each at its deadline, on the calling thread, before
    /// returning (see [`TestClock`]). `advance(Duration::ZERO)`
    /// runs what is due now. Concurrent calls take turns; a scheduled job
    /// must not call `advance` itself (it would wait for its own turn).
    pub fn advance(&self, by: Duration) {
        let _turn = self.inner.advancing.lock();
        let target = deadline::add(self.now(), by);
        loop {
            let timers: Vec<Arc<dyn Driven>> = self
                .inner
                .timers
                .lock()
                .iter()
                .filter_map(Weak::upgrade)
                .collect();
            let next = timers
                .iter()
                .filter_map(|t| t.next_deadline().map(|at| (at, t)))
                .min_by_key(|&(at, _)| at);
            match next {
                Some((at, timer)) if at <= target => {
                    self.set(at);
                    timer.fire_next(target);
                }
                _ => break,
            }
        }
        self.set(target);
    }

    /// The earliest deadline of a timer reading this clock, if any
    /// (cancelled entries included).
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        let timers: Vec<Arc<dyn Driven>> = self
            .inner
            .timers
            .lock()
            .iter()
            .filter_map(Weak::upgrade)
            .collect();
        timers.iter().filter_map(|t| t.next_deadline()).min()
    }

    /// Stand at `at`, unless the clock is past it already.
    fn set(&self, at: Instant) {
        let nanos = at.saturating_duration_since(self.inner.origin).as_nanos();
        let nanos = u64::try_from(nanos).unwrap_or(u64::MAX);
        self.inner.elapsed.fetch_max(nanos, Ordering::AcqRel);
    }

    /// `timer` reads this clock from now on.
    pub(crate) fn register<T: Driven + 'static>(&self, timer: &Arc<T>) {
        let timer: Weak<T> = Arc::downgrade(timer);
        let mut timers = self.inner.timers.lock();
        timers.retain(|t| t.strong_count() > 0);
        timers.push(timer);
    }
}

impl fmt::Debug for TestClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TestClock")
            .field("elapsed", &self.elapsed())
            .finish()
    }
}
