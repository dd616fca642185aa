//! [`Simulation`]: the driver of a simulated system (see the module docs).

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::rc::Rc;
use std::time::Duration;

use super::trace::{Trace, TraceEntry, mix};
use crate::dispatcher::simulated::{self, RunQueue, in_step};
use crate::dispatcher::{Runnable, Task};
use crate::error::BuildError;
use crate::scheduler::TestClock;
use crate::sync::{Arc, Weak};
use crate::system::{ActorSystem, ActorSystemBuilder};
use crate::termination::TerminationReport;

/// How many steps a simulation takes at most in one `run_until*` (or one
/// blocking wait) unless told otherwise: far more than a test scenario
/// needs (a 10,000-element stream takes some 100,000), few enough that a
/// run that never falls quiet (a periodic timer) fails in seconds.
pub const DEFAULT_STEP_LIMIT: u64 = 50_000_000;

/// Why a simulation could not be built or did not reach what it was run
/// for.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SimError {
    /// The system could not be built.
    Build(BuildError),
    /// This thread already drives a simulation: one at a time per thread.
    AlreadyRunning,
    /// Nothing was runnable and no timer was pending before the condition
    /// held.
    Quiet {
        /// The simulation's seed.
        seed: u64,
        /// The steps taken so far.
        steps: u64,
    },
    /// The step limit passed before the condition held (or before the
    /// simulation fell quiet).
    StepLimit {
        /// The simulation's seed.
        seed: u64,
        /// The steps taken so far.
        steps: u64,
    },
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Build(e) => write!(f, "the simulated system could not be built: {e}"),
            Self::AlreadyRunning => f.write_str("this thread already drives a simulation"),
            Self::Quiet { seed, steps } => write!(
                f,
                "the simulation (seed {seed}) fell quiet after {steps} steps before the condition held"
            ),
            Self::StepLimit { seed, steps } => write!(
                f,
                "the simulation (seed {seed}) passed its step limit ({steps} steps)"
            ),
        }
    }
}

impl std::error::Error for SimError {}

/// Builds a [`Simulation`]: its seed, the system's settings, the trace and
/// the faults to inject.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use weir_actor::sim::Simulation;
///
/// let sim = Simulation::builder(42)
///     .system(|system| system.name("bank").throughput(1))
///     .record_trace(true)
///     .late_timers(0.2, Duration::from_millis(5))
///     .early_timers(0.01, Duration::from_millis(5))
///     .build()
///     .unwrap();
/// assert_eq!(sim.system().name(), "bank");
/// ```
#[derive(Debug)]
#[must_use = "a builder does nothing until built"]
pub struct SimulationBuilder {
    seed: u64,
    system: ActorSystemBuilder,
    record: bool,
    step_limit: u64,
    late: (f64, Duration),
    early: (f64, Duration),
}

impl SimulationBuilder {
    /// Settings of the simulated system (name, throughput, named pools,
    /// instrumentation). Its thread count and clock are the simulation's.
    /// A throughput of 1 makes every message a step of its own: the most
    /// interleavings.
    pub fn system(mut self, f: impl FnOnce(ActorSystemBuilder) -> ActorSystemBuilder) -> Self {
        self.system = f(self.system);
        self
    }

    /// Keep every step in the [`Trace`] (the digest is always kept).
    pub fn record_trace(mut self, record: bool) -> Self {
        self.record = record;
        self
    }

    /// At most this many steps in one `run_until*` or blocking wait.
    /// Default [`DEFAULT_STEP_LIMIT`].
    pub fn step_limit(mut self, steps: u64) -> Self {
        self.step_limit = steps;
        self
    }

    /// Fault: with probability `chance`, a timer fires late, by up to
    /// `up_to` (a uniform draw) after its deadline. Within every timer's
    /// contract: a timer fires at or after its deadline, never before.
    pub fn late_timers(mut self, chance: f64, up_to: Duration) -> Self {
        self.late = (chance.clamp(0.0, 1.0), up_to);
        self
    }

    /// Fault: with probability `chance` per step, when the next deadline
    /// is at most `within` away, the clock jumps to it even though work is
    /// runnable, as if that work had stalled that long. Races a timer (a
    /// restart's backoff, a time-out, a tick) against the work it was
    /// meant to wait for. Keep `within` short: a stall of seconds makes
    /// every bounded wait (a shutdown phase's time-out) give up, which is
    /// the contract, not a defect.
    pub fn early_timers(mut self, chance: f64, within: Duration) -> Self {
        self.early = (chance.clamp(0.0, 1.0), within);
        self
    }

    /// Build the simulated system. The calling thread drives it.
    ///
    /// # Errors
    ///
    /// [`SimError::AlreadyRunning`] when this thread drives another
    /// simulation; [`SimError::Build`] as
    /// [`ActorSystemBuilder::build`].
    pub fn build(self) -> Result<Simulation, SimError> {
        if simulated::driver().is_some() {
            return Err(SimError::AlreadyRunning);
        }
        let queue = Arc::new(RunQueue::default());
        let clock = TestClock::new();
        crate::random::reseed(mix(self.seed ^ 0x5EED));
        let system = self
            .system
            .simulate(queue.clone(), clock.clone())
            .build()
            .map_err(SimError::Build)?;
        let core = Rc::new(Core {
            seed: self.seed,
            queue,
            clock,
            threads: system.inner.threads.clone(),
            step_limit: self.step_limit,
            late: self.late,
            early: self.early,
            horizon: std::cell::Cell::new(None),
            driver: RefCell::new(Driver {
                rng: mix(self.seed) | 1,
                runnable: Vec::new(),
                scratch: Vec::new(),
                keys: HashMap::default(),
                next_key: 0,
                prune_at: 1024,
                trace: Trace {
                    entries: self.record.then(Vec::new),
                    ..Trace::default()
                },
            }),
        });
        let driver: Rc<dyn simulated::Driver> = core.clone();
        simulated::install(Some(Rc::downgrade(&driver)));
        Ok(Simulation {
            core,
            system: Some(system),
        })
    }
}

/// A deterministic simulation of an actor system (and of the streams it
/// runs): one seed, one run (see the [module docs](crate::sim)).
///
/// The thread that builds it drives it, with [`step`](Self::step),
/// [`run_until`](Self::run_until), [`run_until_quiet`](Self::run_until_quiet)
/// and [`run_for`](Self::run_for), or by a blocking wait (a completion's
/// `wait`), which drives it until the value is there. Dropping it
/// terminates the system (driving it until it has) and prints the seed if
/// the thread is panicking, so a failed test says how to replay it (see
/// [`seeds`](super::seeds)).
///
/// # Examples
///
/// ```
/// use weir_actor::sim::Simulation;
/// use weir_actor::{Actor, Context, Props, ask};
///
/// struct Counter(u64);
/// impl Actor for Counter {
///     type Msg = weir_actor::ActorRef<u64>;
///     fn receive(&mut self, _: &mut Context<Self>, reply_to: Self::Msg) {
///         self.0 += 1;
///         reply_to.tell(self.0);
///     }
/// }
///
/// let sim = Simulation::new(1).unwrap();
/// let counter = sim.system().spawn(Props::new(|| Counter(0)), "counter").unwrap();
/// let answer = ask(&counter, |r| r, std::time::Duration::from_secs(1));
/// assert_eq!(answer.wait(), Ok(1)); // drives the simulation until answered
/// sim.shutdown().unwrap();
/// ```
pub struct Simulation {
    core: Rc<Core>,
    /// `None` only while dropping.
    system: Option<ActorSystem>,
}

struct Core {
    seed: u64,
    queue: Arc<RunQueue>,
    clock: TestClock,
    threads: Arc<crate::threads::Threads>,
    step_limit: u64,
    late: (f64, Duration),
    early: (f64, Duration),
    /// The clock's elapsed time beyond which no step moves it (set while
    /// `run_for` or a wait with a time-out runs).
    horizon: std::cell::Cell<Option<Duration>>,
    driver: RefCell<Driver>,
}

struct Driver {
    /// Seeded xorshift64* state: which unit goes next, and the faults.
    rng: u64,
    /// Units ready to run, each with its key.
    runnable: Vec<(u64, Task)>,
    /// Reused for what the queue hands over.
    scratch: Vec<Task>,
    /// The key of every unit seen, by address. The weak reference keeps
    /// the allocation (not the unit) alive, so an address is never reused
    /// for another unit while it is here.
    keys: HashMap<usize, (Weak<dyn Runnable>, u64), foldhash::fast::RandomState>,
    next_key: u64,
    /// Drop the entries of dead units when `keys` grows past this.
    prune_at: usize,
    trace: Trace,
}

impl Driver {
    fn next(&mut self) -> u64 {
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, len: usize) -> usize {
        ((u128::from(self.next()) * len as u128) >> 64) as usize
    }

    fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && ((self.next() >> 11) as f64 / (1u64 << 53) as f64) < p
    }

    fn key_of(&mut self, task: &Task) -> u64 {
        let address = Arc::as_ptr(task).cast::<()>() as usize;
        if let Some(&(_, key)) = self.keys.get(&address) {
            return key;
        }
        if self.keys.len() >= self.prune_at {
            self.keys.retain(|_, (unit, _)| unit.strong_count() > 0);
            self.prune_at = (self.keys.len() * 2).max(1024);
        }
        let key = self.next_key;
        self.next_key += 1;
        self.keys.insert(address, (Arc::downgrade(task), key));
        key
    }
}

impl Core {
    /// Move what was submitted into the runnable set, ordered by key (not
    /// by the order it was submitted in); how many, and their digest.
    fn flush(&self, driver: &mut Driver) -> (u32, u64) {
        let mut scratch = std::mem::take(&mut driver.scratch);
        self.queue.take(&mut scratch);
        let start = driver.runnable.len();
        for task in scratch.drain(..) {
            let key = driver.key_of(&task);
            driver.runnable.push((key, task));
        }
        driver.scratch = scratch;
        let added = &mut driver.runnable[start..];
        added.sort_by_key(|&(key, _)| key);
        let digest = added.iter().fold(0, |d, &(key, _)| mix(d ^ key));
        (added.len() as u32, digest)
    }

    /// Take one step; `false` when quiet (nothing runnable, and no timer
    /// due before the horizon, where the clock then stands).
    fn step(&self) -> bool {
        let mut driver = self.driver.borrow_mut();
        self.flush(&mut driver);
        let early = driver.chance(self.early.0);
        if driver.runnable.is_empty() || early {
            let now = self.clock.now();
            // How far the clock may still move (`run_for`, a wait's time-out).
            let left = self
                .horizon
                .get()
                .map(|h| h.saturating_sub(self.clock.elapsed()));
            let next = self.clock.next_deadline().filter(|&at| {
                let wait = at.saturating_duration_since(now);
                (driver.runnable.is_empty() || wait <= self.early.1)
                    && left.is_none_or(|left| wait <= left)
            });
            let by = match next {
                Some(at) => {
                    let mut by = at.saturating_duration_since(now);
                    if driver.chance(self.late.0) {
                        let late = self.late.1.as_nanos() as f64 * (driver.next() >> 11) as f64
                            / (1u64 << 53) as f64;
                        by += Duration::from_nanos(late as u64);
                    }
                    left.map_or(by, |left| by.min(left))
                }
                None if !driver.runnable.is_empty() => return self.run_one(driver),
                // Nothing due before the horizon: stand at it.
                None => match left {
                    Some(left) if !left.is_zero() => left,
                    _ => return false,
                },
            };
            drop(driver);
            self.inside(|| self.clock.advance(by));
            let mut driver = self.driver.borrow_mut();
            let (submitted, digest) = self.flush(&mut driver);
            let step = driver.trace.steps;
            let at = self.clock.elapsed();
            driver.trace.push(TraceEntry::Timer {
                step,
                at,
                submitted,
                digest,
            });
            return true;
        }
        self.run_one(driver)
    }

    fn run_one(&self, mut driver: std::cell::RefMut<'_, Driver>) -> bool {
        let len = driver.runnable.len();
        let i = driver.below(len);
        let (unit, task) = driver.runnable.swap_remove(i);
        drop(driver);
        self.inside(|| task.run());
        let mut driver = self.driver.borrow_mut();
        let (submitted, digest) = self.flush(&mut driver);
        let step = driver.trace.steps;
        driver.trace.push(TraceEntry::Ran {
            step,
            unit,
            submitted,
            digest,
        });
        true
    }

    /// Run `f` as a step: on the system's behalf (its refusals of
    /// blocking waits apply).
    fn inside<R>(&self, f: impl FnOnce() -> R) -> R {
        struct Leave(usize, bool);
        impl Drop for Leave {
            fn drop(&mut self) {
                crate::threads::Threads::leave(self.0);
                simulated::set_in_step(self.1);
            }
        }
        let _leave = Leave(self.threads.enter(), simulated::set_in_step(true));
        f()
    }

    /// Keep the clock at or before `until` (elapsed) until the guard goes.
    fn horizon(&self, until: Duration) -> impl Drop + '_ {
        struct Restore<'a>(&'a std::cell::Cell<Option<Duration>>, Option<Duration>);
        impl Drop for Restore<'_> {
            fn drop(&mut self) {
                self.0.set(self.1);
            }
        }
        let previous = self.horizon.get();
        self.horizon
            .set(Some(previous.map_or(until, |p| p.min(until))));
        Restore(&self.horizon, previous)
    }

    fn steps(&self) -> u64 {
        self.driver.borrow().trace.steps
    }

    /// Step until `cond` holds; the error says why not.
    fn run_until(&self, mut cond: impl FnMut() -> bool) -> Result<u64, SimError> {
        let start = self.steps();
        loop {
            if cond() {
                return Ok(self.steps() - start);
            }
            if self.steps() - start >= self.step_limit {
                return Err(SimError::StepLimit {
                    seed: self.seed,
                    steps: self.steps(),
                });
            }
            if !self.step() {
                return Err(SimError::Quiet {
                    seed: self.seed,
                    steps: self.steps(),
                });
            }
        }
    }
}

impl Simulation {
    /// A simulation with default settings, driven by the calling thread.
    ///
    /// # Errors
    ///
    /// As [`SimulationBuilder::build`].
    pub fn new(seed: u64) -> Result<Self, SimError> {
        Self::builder(seed).build()
    }

    /// A builder with default settings: a system named `sim`, no trace
    /// kept beyond its digest, no faults.
    pub fn builder(seed: u64) -> SimulationBuilder {
        SimulationBuilder {
            seed,
            system: ActorSystem::builder().name("sim"),
            record: false,
            step_limit: DEFAULT_STEP_LIMIT,
            late: (0.0, Duration::ZERO),
            early: (0.0, Duration::ZERO),
        }
    }

    /// The seed.
    pub fn seed(&self) -> u64 {
        self.core.seed
    }

    /// The simulated system (an owning handle: clones keep it alive).
    /// A weir-streams `Materializer` made from it runs in the simulation.
    pub fn system(&self) -> &ActorSystem {
        self.system.as_ref().expect("the system lives until the drop")
    }

    /// The simulation's clock (also the system's).
    pub fn clock(&self) -> &TestClock {
        &self.core.clock
    }

    /// Take one step: run one runnable unit chosen by the seed, or, when
    /// nothing is runnable, move the clock to the next deadline and run
    /// what is due there. `false` when there was nothing to do at all.
    ///
    /// # Panics
    ///
    /// When called from inside a step (from an actor or a task).
    pub fn step(&self) -> bool {
        assert!(!in_step(), "Simulation::step called from inside a step");
        self.core.step()
    }

    /// Step until `cond` holds; the number of steps taken.
    ///
    /// # Errors
    ///
    /// [`SimError::Quiet`] when nothing is left to do first,
    /// [`SimError::StepLimit`] when the step limit passes first.
    pub fn run_until(&self, cond: impl FnMut() -> bool) -> Result<u64, SimError> {
        assert!(!in_step(), "Simulation::run_until called from inside a step");
        self.core.run_until(cond)
    }

    /// Step until nothing is runnable and no timer is pending; the number
    /// of steps taken.
    ///
    /// # Errors
    ///
    /// [`SimError::StepLimit`] when it never falls quiet (a periodic timer
    /// keeps it busy): use [`run_for`](Self::run_for) or
    /// [`run_until`](Self::run_until) then.
    pub fn run_until_quiet(&self) -> Result<u64, SimError> {
        match self.run_until(|| false) {
            Err(SimError::Quiet { steps, .. }) => Ok(steps),
            Err(e) => Err(e),
            Ok(_) => unreachable!("the condition never holds"),
        }
    }

    /// Step until the clock has moved `by`: every timer due by then fires,
    /// none due later, and the clock stands at the target even when
    /// nothing was left to do. Work runnable at the end is left for later
    /// steps.
    ///
    /// # Errors
    ///
    /// [`SimError::StepLimit`] when the step limit passes first.
    pub fn run_for(&self, by: Duration) -> Result<u64, SimError> {
        let until = self.core.clock.elapsed().saturating_add(by);
        let _horizon = self.core.horizon(until);
        match self.run_until(|| self.core.clock.elapsed() >= until) {
            Err(SimError::Quiet { steps, .. }) => Ok(steps),
            other => other,
        }
    }

    /// Record `value` in the trace (an element a sink saw, an invariant's
    /// state), so two runs of a seed are compared on it too.
    pub fn record(&self, value: u64) {
        let mut driver = self.core.driver.borrow_mut();
        let step = driver.trace.steps;
        driver.trace.push(TraceEntry::Event { step, value });
    }

    /// The trace so far.
    pub fn trace(&self) -> Trace {
        self.core.driver.borrow().trace.clone()
    }

    /// Terminate the system and drive it until it has terminated.
    ///
    /// # Errors
    ///
    /// As [`run_until`](Self::run_until), if it does not terminate.
    pub fn shutdown(self) -> Result<TerminationReport, SimError> {
        let termination = self.system().terminate();
        self.run_until(|| termination.is_completed())?;
        Ok(termination.wait().unwrap_or_default())
    }
}

impl Drop for Simulation {
    fn drop(&mut self) {
        struct Unregister;
        impl Drop for Unregister {
            fn drop(&mut self) {
                simulated::install(None);
            }
        }
        let _unregister = Unregister;
        if std::thread::panicking() {
            eprintln!(
                "simulation failed with seed {seed}: replay it with {var}={seed}",
                seed = self.core.seed,
                var = super::SEED_VAR,
            );
            return;
        }
        // Terminating drives the simulation until done (the last owner's
        // drop waits, and the wait drives it).
        drop(self.system.take());
    }
}

impl fmt::Debug for Simulation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Simulation")
            .field("seed", &self.core.seed)
            .field("steps", &self.core.steps())
            .field("elapsed", &self.core.clock.elapsed())
            .finish_non_exhaustive()
    }
}

impl simulated::Driver for Core {
    /// A blocking wait on the simulation's thread (see the module docs).
    ///
    /// # Panics
    ///
    /// Inside a step (the wait would wait for itself), and when the
    /// simulation falls quiet, or passes its step limit, without a
    /// `timeout` before `ready` holds: it would block for ever.
    fn block_on(&self, ready: &dyn Fn() -> bool, timeout: Option<Duration>) -> bool {
        if ready() {
            return true;
        }
        assert!(
            !in_step(),
            "a blocking wait inside a simulated step (seed {}) would wait for itself: \
             await the value, or have it sent as a message",
            self.seed
        );
        let until = timeout.map(|t| self.clock.elapsed().saturating_add(t));
        let _horizon = until.map(|until| self.horizon(until));
        let outcome =
            self.run_until(|| ready() || until.is_some_and(|u| self.clock.elapsed() >= u));
        match outcome {
            Ok(_) => ready(),
            Err(_) if until.is_some() => ready(),
            Err(e) => panic!("a blocking wait would block for ever: {e}"),
        }
    }
}
