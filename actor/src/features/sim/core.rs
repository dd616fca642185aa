//! The simulation's engine: the runnable set, the seeded choice, the
//! clock's jumps and the trace (see the module docs).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::time::Duration;

use super::trace::{Trace, TraceEntry, mix};
use crate::core::dispatcher::simulated::{self, RunQueue, in_step};
use crate::core::dispatcher::{Runnable, Task};
use crate::core::scheduler::TestClock;
use crate::error::SimError;
use crate::sync::{Arc, Weak};

pub(super) struct Core {
    seed: u64,
    queue: Arc<RunQueue>,
    clock: TestClock,
    threads: Arc<crate::threads::Threads>,
    step_limit: u64,
    late: (f64, Duration),
    early: (f64, Duration),
    panics: (f64, Option<u64>),
    /// Chances of the stream faults: a stage's supervised user code
    /// panics (per step), a hand-over moves one element at a time (per
    /// hand-over built).
    stage_panics: f64,
    small_batches: f64,
    /// The clock's elapsed time beyond which no step moves it (set while
    /// `run_for` or a wait with a time-out runs).
    horizon: Cell<Option<Duration>>,
    driver: RefCell<State>,
}

struct State {
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

/// What a simulation is built with.
pub(super) struct Settings {
    pub(super) seed: u64,
    pub(super) step_limit: u64,
    pub(super) late: (f64, Duration),
    pub(super) early: (f64, Duration),
    /// Injected panics: the chance per step, and one chosen step.
    pub(super) panics: (f64, Option<u64>),
    pub(super) stage_panics: f64,
    pub(super) small_batches: f64,
    /// Keep every step in the trace.
    pub(super) record: bool,
}

impl State {
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
    pub(super) fn new(
        settings: Settings,
        queue: Arc<RunQueue>,
        clock: TestClock,
        threads: Arc<crate::threads::Threads>,
    ) -> Self {
        Self {
            seed: settings.seed,
            queue,
            clock,
            threads,
            step_limit: settings.step_limit,
            late: settings.late,
            early: settings.early,
            panics: settings.panics,
            stage_panics: settings.stage_panics,
            small_batches: settings.small_batches,
            horizon: Cell::new(None),
            driver: RefCell::new(State {
                rng: mix(settings.seed) | 1,
                runnable: Vec::new(),
                scratch: Vec::new(),
                keys: HashMap::default(),
                next_key: 0,
                prune_at: 1024,
                trace: Trace {
                    entries: settings.record.then(Vec::new),
                    ..Trace::default()
                },
            }),
        }
    }

    pub(super) fn seed(&self) -> u64 {
        self.seed
    }

    pub(super) fn clock(&self) -> &TestClock {
        &self.clock
    }

    /// Record a test's value in the trace.
    pub(super) fn record(&self, value: u64) {
        let mut driver = self.driver.borrow_mut();
        let step = driver.trace.steps;
        driver.trace.push(TraceEntry::Event { step, value });
    }

    pub(super) fn trace(&self) -> Trace {
        self.driver.borrow().trace.clone()
    }

    /// Move what was submitted into the runnable set, ordered by key (not
    /// by the order it was submitted in); how many, and their digest.
    fn flush(&self, driver: &mut State) -> (u32, u64) {
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
    pub(super) fn step(&self) -> bool {
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

    fn run_one(&self, mut driver: std::cell::RefMut<'_, State>) -> bool {
        let len = driver.runnable.len();
        let i = driver.below(len);
        let (unit, task) = driver.runnable.swap_remove(i);
        let panic = driver.chance(self.panics.0) || self.panics.1 == Some(driver.trace.steps);
        let stage_panic = driver.chance(self.stage_panics);
        drop(driver);
        simulated::arm_panic(panic);
        simulated::arm_stage_panic(stage_panic);
        self.inside(|| task.run());
        simulated::arm_panic(false);
        simulated::arm_stage_panic(false);
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
    pub(super) fn horizon(&self, until: Duration) -> impl Drop + '_ {
        struct Restore<'a>(&'a Cell<Option<Duration>>, Option<Duration>);
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

    pub(super) fn steps(&self) -> u64 {
        self.driver.borrow().trace.steps
    }

    /// Step until `cond` holds; the error says why not.
    pub(super) fn run_until(&self, mut cond: impl FnMut() -> bool) -> Result<u64, SimError> {
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

impl simulated::Driver for Core {
    fn small_batches(&self) -> bool {
        self.driver.borrow_mut().chance(self.small_batches)
    }

    /// # Panics
    ///
    /// Inside a step, and when the step limit passes first (the work
    /// never runs out without the clock moving: a busy loop).
    fn settle(&self) -> u64 {
        assert!(
            !in_step(),
            "settling a simulation inside one of its steps (seed {})",
            self.seed
        );
        let _horizon = self.horizon(self.clock.elapsed());
        let start = self.steps();
        match self.run_until(|| false) {
            Err(SimError::Quiet { steps, .. }) => steps - start,
            Err(e) => panic!("the simulation did not settle: {e}"),
            Ok(_) => unreachable!("the condition never holds"),
        }
    }

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
