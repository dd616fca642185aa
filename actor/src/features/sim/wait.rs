//! [`wait_until`]: the blocking wait of a test helper, simulation-aware.

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
