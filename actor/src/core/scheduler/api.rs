//! `system.scheduler()`: one-shot and periodic closures (sends to actors
//! are added on top, in `crate::core::scheduled`).

use std::fmt;
use std::time::Duration;

use std::time::Instant;

use super::clock::TestClock;
use super::deadline;
use super::wheel::{CancelFlag, Job, TimerThread};
use crate::error::ScheduleError;
use crate::sync::Arc;

/// Cancels a scheduled send or closure.
///
/// Cancelling stops what has not run yet; a message already sent stays sent.
/// Clones cancel the same task. A cancelled task leaves the scheduler's
/// memory soon after (it does not wait there until its deadline).
#[derive(Clone)]
pub struct Cancellable {
    flag: Arc<CancelFlag>,
}

impl Cancellable {
    pub(crate) fn new() -> Self {
        Self {
            flag: Arc::new(CancelFlag::default()),
        }
    }

    pub(crate) fn flag(&self) -> Arc<CancelFlag> {
        self.flag.clone()
    }

    /// Cancel; `true` if this call did it (it was not cancelled before).
    pub fn cancel(&self) -> bool {
        self.flag.cancel()
    }

    /// Whether it has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.flag.is_cancelled()
    }
}

impl fmt::Debug for Cancellable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cancellable")
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

/// The system's scheduler: sends messages and runs closures later, once or
/// periodically, from one timer thread that sleeps until the next deadline.
///
/// Closures run on the timer thread: keep them short (a `tell`). Periodic
/// sends stop by themselves once their target has stopped. After the system
/// has terminated nothing more is scheduled: a message to send goes to dead
/// letters at once, a closure is dropped, and the returned [`Cancellable`] is
/// already cancelled.
///
/// A delay or interval too long for the clock (`Duration::MAX`) means
/// "never": the task waits until cancelled or until the system terminates,
/// and nothing panics.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use weir_actor::{Actor, ActorSystem, Context, Props};
///
/// struct Ticks(std::sync::mpsc::Sender<()>);
/// impl Actor for Ticks {
///     type Msg = ();
///     fn receive(&mut self, _: &mut Context<Self>, _: ()) {
///         let _ = self.0.send(());
///     }
/// }
///
/// let system = ActorSystem::new("sched").unwrap();
/// let (tx, rx) = std::sync::mpsc::channel();
/// let ticks = system.spawn(Props::new(move || Ticks(tx.clone())), "ticks").unwrap();
/// let ms = Duration::from_millis;
/// let every = system.scheduler().schedule_at_fixed_rate(ms(0), ms(5), &ticks, ()).unwrap();
/// for _ in 0..3 {
///     rx.recv_timeout(Duration::from_secs(5)).unwrap();
/// }
/// every.cancel();
/// system.scheduler().schedule_once(ms(1), &ticks, ());
/// system.terminate().wait().unwrap();
/// ```
#[derive(Clone)]
pub struct Scheduler {
    timer: Arc<TimerThread>,
    /// Under a test clock: the real timer thread the pools' watchdogs keep
    /// using, shut down with this one.
    real: Option<Arc<TimerThread>>,
}

impl Scheduler {
    pub(crate) fn new(timer: Arc<TimerThread>) -> Self {
        Self { timer, real: None }
    }

    /// This scheduler, or with `clock` one that reads the test clock
    /// instead (this real one lives on for the pools' watchdogs and is shut
    /// down with it).
    pub(crate) fn with_clock(self, clock: Option<&TestClock>) -> Self {
        match clock {
            None => self,
            Some(clock) => Self {
                timer: TimerThread::manual(clock),
                real: Some(self.timer),
            },
        }
    }

    pub(crate) fn shutdown(&self) {
        self.timer.shutdown();
        if let Some(real) = &self.real {
            real.shutdown();
        }
    }

    /// The time on the system's clock: the real time, or the test clock's
    /// (`testkit::TestClock`, feature `testkit`) when the system was built
    /// with one. Time-based code that wants to be testable reads this
    /// instead of `Instant::now()`.
    ///
    /// # Examples
    ///
    /// ```
    /// let system = weir_actor::ActorSystem::new("now").unwrap();
    /// let before = std::time::Instant::now();
    /// assert!(system.scheduler().now() >= before);
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn now(&self) -> Instant {
        self.timer.now()
    }

    /// Whether the calling thread is the timer thread, where blocking on a
    /// time-out would wait for ever.
    pub(crate) fn is_timer_thread(&self) -> bool {
        self.timer.is_timer_thread()
    }

    #[cfg(test)]
    pub(crate) fn timer(&self) -> &TimerThread {
        &self.timer
    }

    /// Run `job` after `delay`; gives it back when the timer thread has
    /// shut down.
    pub(crate) fn run_once(
        &self,
        delay: Duration,
        cancellable: &Cancellable,
        job: Box<dyn FnOnce() + Send>,
    ) -> Result<(), Box<dyn FnOnce() + Send>> {
        self.run_once_at(deadline::add(self.now(), delay), cancellable, job)
    }

    /// Run `job` at `at` (at once when it has passed); gives it back when
    /// the timer thread has shut down.
    fn run_once_at(
        &self,
        at: Instant,
        cancellable: &Cancellable,
        job: Box<dyn FnOnce() + Send>,
    ) -> Result<(), Box<dyn FnOnce() + Send>> {
        match self.timer.schedule(at, Job::Once(job), cancellable.flag()) {
            Ok(()) => Ok(()),
            Err(Job::Once(job)) => Err(job),
            Err(Job::Repeat { .. }) => unreachable!("schedule gives back the job it was given"),
        }
    }

    pub(crate) fn run_repeatedly(
        &self,
        initial_delay: Duration,
        interval: Duration,
        fixed_rate: bool,
        cancellable: &Cancellable,
        run: Box<dyn FnMut() -> bool + Send>,
    ) -> Result<bool, ScheduleError> {
        if interval.is_zero() {
            return Err(ScheduleError::ZeroInterval);
        }
        let job = Job::Repeat {
            run,
            interval,
            fixed_rate,
        };
        Ok(self
            .timer
            .schedule(
                deadline::add(self.now(), initial_delay),
                job,
                cancellable.flag(),
            )
            .is_ok())
    }

    /// Run `f` on the timer thread after `delay`.
    pub fn schedule_once_fn(
        &self,
        delay: Duration,
        f: impl FnOnce() + Send + 'static,
    ) -> Cancellable {
        let cancellable = Cancellable::new();
        if self.run_once(delay, &cancellable, Box::new(f)).is_err() {
            cancellable.cancel();
        }
        cancellable
    }

    /// Run `f` on the timer thread at `at` on this scheduler's clock
    /// ([`now`](Self::now)), or at once when `at` has passed (on a test
    /// clock: on the calling thread, as `advance` would have).
    ///
    /// For a deadline computed from an earlier reading of the clock: a
    /// delay counts from the moment it is scheduled, so a clock that moved
    /// in between (a test clock advanced by another thread, a busy caller)
    /// would push the run past the deadline; `at` does not move.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let system = weir_actor::ActorSystem::new("fn-at").unwrap();
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// let at = system.scheduler().now() + Duration::from_millis(5);
    /// system.scheduler().schedule_once_fn_at(at, move || tx.send(()).unwrap());
    /// rx.recv().unwrap();
    /// assert!(system.scheduler().now() >= at);
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn schedule_once_fn_at(
        &self,
        at: Instant,
        f: impl FnOnce() + Send + 'static,
    ) -> Cancellable {
        let cancellable = Cancellable::new();
        if self.run_once_at(at, &cancellable, Box::new(f)).is_err() {
            cancellable.cancel();
        }
        cancellable
    }

    /// Run `f` on the timer thread after `initial_delay`, then again `delay`
    /// after each run, until it returns `false` or is cancelled.
    ///
    /// # Errors
    ///
    /// [`ScheduleError::ZeroInterval`] when `delay` is zero.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let system = weir_actor::ActorSystem::new("fn-delay").unwrap();
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// let mut left = 3;
    /// let ms = Duration::from_millis;
    /// system.scheduler().schedule_fn_with_fixed_delay(ms(0), ms(1), move || {
    ///     left -= 1;
    ///     tx.send(left).unwrap();
    ///     left > 0
    /// }).unwrap();
    /// let runs: Vec<u32> = rx.iter().collect(); // ends when the job is dropped
    /// assert_eq!(runs, [2, 1, 0]);
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn schedule_fn_with_fixed_delay(
        &self,
        initial_delay: Duration,
        delay: Duration,
        f: impl FnMut() -> bool + Send + 'static,
    ) -> Result<Cancellable, ScheduleError> {
        let cancellable = Cancellable::new();
        if !self.run_repeatedly(initial_delay, delay, false, &cancellable, Box::new(f))? {
            cancellable.cancel();
        }
        Ok(cancellable)
    }
}

impl fmt::Debug for Scheduler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scheduler").finish_non_exhaustive()
    }
}
