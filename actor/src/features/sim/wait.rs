//! [`wait_until`] and [`settle`]: what a test helper that does not hold
//! the [`Simulation`](super::Simulation) uses to drive it.

use std::time::Duration;

use crate::core::dispatcher::simulated;

/// Wait until `ready` holds, the way every blocking wait of a simulated
/// system waits: on a thread that drives a [`Simulation`](super::Simulation),
/// drive it until `ready` holds (`Some(true)`) or its clock has moved
/// `timeout` (`Some(false)`); on any other thread, `None` at once, and the
/// caller waits for real (on its channel, its condvar).
///
/// This is what makes a test helper of one's own (a probe, a collector)
/// usable in simulation as it is outside: `ready` is checked between
/// steps, so it should read shared state (a channel's `try_recv`, an
/// atomic), not block.
///
/// # Panics
///
/// When called from inside a simulated step (from an actor or a stage):
/// the wait would wait for itself.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicBool, Ordering};
/// use std::time::Duration;
/// use weir_actor::sim::{Simulation, wait_until};
///
/// let done = Arc::new(AtomicBool::new(false));
/// // Not in a simulation: the caller waits for real.
/// assert_eq!(wait_until(|| done.load(Ordering::Acquire), Duration::from_secs(1)), None);
///
/// let sim = Simulation::new(7).unwrap();
/// let flag = done.clone();
/// sim.system()
///     .scheduler()
///     .schedule_once_fn(Duration::from_secs(5), move || flag.store(true, Ordering::Release));
/// // Five simulated seconds pass in no time.
/// let ready = wait_until(|| done.load(Ordering::Acquire), Duration::from_secs(60));
/// assert_eq!(ready, Some(true));
/// sim.shutdown().unwrap();
/// ```
pub fn wait_until(ready: impl Fn() -> bool, timeout: Duration) -> Option<bool> {
    simulated::block_on(&ready, Some(timeout))
}

/// Settle this thread's simulation: run every unit runnable now, and
/// every unit that makes runnable, in the seed's order, until nothing is
/// runnable, *without* moving the clock (timers already due fire, later
/// ones wait). `Some(steps taken)`, or `None` when this thread drives no
/// simulation.
///
/// A test that checks state "after everything in flight has happened"
/// (every island idle, every message handled) settles first: outside a
/// simulation there is no such point to wait for, in one there is.
///
/// # Panics
///
/// From inside a simulated step, and when the simulation's step limit
/// passes before it settles (work that never runs out, such as an endless
/// source with unbounded demand).
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use std::time::Duration;
/// use weir_actor::sim::{Simulation, settle};
/// use weir_actor::{Actor, Context, Props};
///
/// struct Count(Arc<AtomicU32>);
/// impl Actor for Count {
///     type Msg = ();
///     fn receive(&mut self, _: &mut Context<Self>, (): ()) {
///         self.0.fetch_add(1, Ordering::Relaxed);
///     }
/// }
///
/// assert_eq!(settle(), None); // no simulation on this thread
/// let sim = Simulation::new(3).unwrap();
/// let seen = Arc::new(AtomicU32::new(0));
/// let counter = {
///     let seen = seen.clone();
///     sim.system().spawn(Props::new(move || Count(seen.clone())), "count").unwrap()
/// };
/// for _ in 0..10 {
///     counter.tell(());
/// }
/// assert!(settle().is_some());
/// assert_eq!(seen.load(Ordering::Relaxed), 10);
/// assert_eq!(sim.clock().elapsed(), Duration::ZERO); // the clock stood still
/// sim.shutdown().unwrap();
/// ```
pub fn settle() -> Option<u64> {
    simulated::settle()
}
