//! [`Simulation`]: the driver of a simulated system (see the module docs).

use std::fmt;
use std::rc::Rc;
use std::time::Duration;

use super::core::{Core, Settings};
use super::trace::{Trace, mix};
use crate::core::dispatcher::simulated::{self, RunQueue, in_step};
use crate::core::scheduler::TestClock;
use crate::error::SimError;
use crate::sync::Arc;
use crate::system::actor_system::termination::TerminationReport;
use crate::system::actor_system::{ActorSystem, ActorSystemBuilder};

/// How many steps a simulation takes at most in one `run_until*` (or one
/// blocking wait) unless told otherwise: far more than a test scenario
/// needs (a 10,000-element stream takes some 100,000), few enough that a
/// run that never falls quiet (a periodic timer) fails in seconds.
pub const DEFAULT_STEP_LIMIT: u64 = 50_000_000;

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
    panics: (f64, Option<u64>),
    stage_panics: f64,
    small_batches: f64,
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

    /// Fault: with probability `chance` per step, the first message a
    /// user actor (one under `/user`) handles in that step panics in its
    /// handler instead, as if its code had: its supervisor decides what
    /// follows. Stream stages run in system actors and are not hit: see
    /// [`stage_panics`](Self::stage_panics).
    pub fn panics(mut self, chance: f64) -> Self {
        self.panics.0 = chance.clamp(0.0, 1.0);
        self
    }

    /// Fault: the first message a user actor handles at step `step` (as
    /// numbered in the [`Trace`]) panics, as with [`panics`](Self::panics).
    pub fn panic_at_step(mut self, step: u64) -> Self {
        self.panics.1 = Some(step);
        self
    }

    /// Fault: with probability `chance` per step, the first user code a
    /// stream stage runs under a supervision strategy in that step (a
    /// supervised `map`'s function, a `scan`'s, a partitioner: what
    /// weir-streams runs through `SupervisionStrategy::catching`) panics
    /// instead: the strategy decides (resume drops the element, restart
    /// resets the stage, stop fails the stream). Stages without a
    /// strategy are not hit. Independent of [`panics`](Self::panics).
    pub fn stage_panics(mut self, chance: f64) -> Self {
        self.stage_panics = chance.clamp(0.0, 1.0);
        self
    }

    /// Fault: with probability `chance`, a hand-over built in the
    /// simulation (an async boundary, a hub's buffer) moves its elements
    /// in the smallest pieces it allows: a batch of one element, credit
    /// given back one element at a time.
    /// Nothing a subscriber sees may change.
    pub fn small_batches(mut self, chance: f64) -> Self {
        self.small_batches = chance.clamp(0.0, 1.0);
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
        let core = Rc::new(Core::new(
            Settings {
                seed: self.seed,
                step_limit: self.step_limit,
                late: self.late,
                early: self.early,
                panics: self.panics,
                stage_panics: self.stage_panics,
                small_batches: self.small_batches,
                record: self.record,
            },
            queue,
            clock,
            system.inner.threads.clone(),
        ));
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
            panics: (0.0, None),
            stage_panics: 0.0,
            small_batches: 0.0,
        }
    }

    /// The seed.
    pub fn seed(&self) -> u64 {
        self.core.seed()
    }

    /// The simulated system (an owning handle: clones keep it alive).
    /// A weir-streams `Materializer` made from it runs in the simulation.
    pub fn system(&self) -> &ActorSystem {
        self.system
            .as_ref()
            .expect("the system lives until the drop")
    }

    /// The simulation's clock (also the system's).
    pub fn clock(&self) -> &TestClock {
        self.core.clock()
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
        assert!(
            !in_step(),
            "Simulation::run_until called from inside a step"
        );
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
        let start = self.core.steps();
        match self.run_until(|| false) {
            Err(SimError::Quiet { steps, .. }) => Ok(steps - start),
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
        let until = self.core.clock().elapsed().saturating_add(by);
        let _horizon = self.core.horizon(until);
        let start = self.core.steps();
        match self.run_until(|| self.core.clock().elapsed() >= until) {
            Err(SimError::Quiet { steps, .. }) => Ok(steps - start),
            other => other,
        }
    }

    /// Record `value` in the trace (an element a sink saw, an invariant's
    /// state), so two runs of a seed are compared on it too.
    pub fn record(&self, value: u64) {
        self.core.record(value);
    }

    /// The trace so far.
    pub fn trace(&self) -> Trace {
        self.core.trace()
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
                seed = self.core.seed(),
                var = super::SEED_VAR,
            );
            return;
        }
        // Terminate here, whoever else holds the system: a clone dropped
        // after the simulation would otherwise wait for a termination no
        // thread drives any more.
        if let Some(system) = self.system.take() {
            let termination = system.terminate();
            if let Err(e) = self.core.run_until(|| termination.is_completed()) {
                panic!("the simulated system did not terminate: {e}");
            }
        }
    }
}

impl fmt::Debug for Simulation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Simulation")
            .field("seed", &self.core.seed())
            .field("steps", &self.core.steps())
            .field("elapsed", &self.core.clock().elapsed())
            .finish_non_exhaustive()
    }
}
