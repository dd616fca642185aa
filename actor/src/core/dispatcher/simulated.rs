//! The simulated dispatcher's half in the core: the run queue every
//! dispatcher of a simulated system submits to, and the hook through which
//! a blocking wait on the simulation's thread drives the simulation. The
//! driver itself (the seeded choice, the clock, the trace) is `crate::sim`,
//! a layer above the system.

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak as RcWeak};
use std::time::Duration;

use super::Task;
use crate::sync::Mutex;

/// What the simulated system's dispatchers submit to: taken in submission
/// order by the driver, which picks among them with its seed. Submitting
/// is safe from any thread (work that leaves the simulation comes back
/// through it), but only submissions from the driving thread are ordered
/// by the seed.
#[derive(Default)]
pub(crate) struct RunQueue {
    submitted: Mutex<Vec<Task>>,
}

impl RunQueue {
    /// Queue `task` for the driver.
    pub(crate) fn submit(&self, task: Task) {
        self.submitted.lock().push(task);
    }

    /// Move what was submitted since the last call into `into`.
    pub(crate) fn take(&self, into: &mut Vec<Task>) {
        into.append(&mut self.submitted.lock());
    }
}

/// A simulation, as a blocking wait on its thread sees it.
pub(crate) trait Driver {
    /// Drive the simulation until `ready` holds (`true`) or its clock has
    /// moved `timeout` (`false`). Panics where the wait would never end.
    fn block_on(&self, ready: &dyn Fn() -> bool, timeout: Option<Duration>) -> bool;

    /// Run what is runnable, and what that makes runnable, without moving
    /// the clock (timers due by now fire); the steps taken.
    fn settle(&self) -> u64;

    /// A seeded draw: whether a hand-over being built now moves its
    /// batches one element at a time (the small-batches fault).
    fn small_batches(&self) -> bool;
}

thread_local! {
    /// The simulation this thread drives.
    static DRIVER: RefCell<Option<RcWeak<dyn Driver>>> = const { RefCell::new(None) };
    /// Whether this thread is inside a simulation's step.
    static IN_STEP: Cell<bool> = const { Cell::new(false) };
    /// Set by the driver for a step in which the next user message a
    /// user actor handles panics (fault injection).
    static PANIC: Cell<bool> = const { Cell::new(false) };
    /// The same for the next user code a stream stage runs under a
    /// supervision strategy.
    static STAGE_PANIC: Cell<bool> = const { Cell::new(false) };
}

/// Arm (or disarm) the injected stage panic for the step about to run.
pub(crate) fn arm_stage_panic(armed: bool) {
    STAGE_PANIC.with(|p| p.set(armed));
}

/// Whether the stage's user code about to run must panic instead
/// (disarms it: one panic per armed step).
pub(crate) fn take_stage_panic() -> bool {
    STAGE_PANIC.with(|p| p.replace(false))
}

/// Arm (or disarm) the injected panic for the step about to run.
pub(crate) fn arm_panic(armed: bool) {
    PANIC.with(|p| p.set(armed));
}

/// Whether a user actor about to handle a message on this thread must
/// panic instead (disarms it: one panic per armed step). Only a
/// simulation's driver arms it.
#[inline]
pub(crate) fn take_panic() -> bool {
    PANIC.with(|p| p.replace(false))
}

/// Make `driver` this thread's simulation (`None`: no more).
pub(crate) fn install(driver: Option<RcWeak<dyn Driver>>) {
    DRIVER.with(|d| *d.borrow_mut() = driver);
}

/// This thread's simulation, if it drives one.
pub(crate) fn driver() -> Option<Rc<dyn Driver>> {
    DRIVER.with(|d| d.borrow().as_ref().and_then(RcWeak::upgrade))
}

/// Whether this thread is inside a simulation's step.
pub(crate) fn in_step() -> bool {
    IN_STEP.with(Cell::get)
}

/// Mark this thread inside a step or not; returns what it was.
pub(crate) fn set_in_step(inside: bool) -> bool {
    IN_STEP.with(|s| s.replace(inside))
}

/// A blocking wait for `ready` on this thread: when it drives a
/// simulation, drive that until `ready` holds (`Some(true)`) or its clock
/// has moved `timeout` (`Some(false)`); `None` outside a simulation (block
/// for real).
pub(crate) fn block_on(ready: &dyn Fn() -> bool, timeout: Option<Duration>) -> Option<bool> {
    Some(driver()?.block_on(ready, timeout))
}

/// When this thread drives a simulation, settle it (see
/// [`Driver::settle`]): `Some(steps)`; `None` outside a simulation.
pub(crate) fn settle() -> Option<u64> {
    Some(driver()?.settle())
}

/// When this thread drives a simulation, its draw for a hand-over being
/// built (see [`Driver::small_batches`]); `false` elsewhere.
pub(crate) fn small_batches() -> bool {
    driver().is_some_and(|d| d.small_batches())
}
