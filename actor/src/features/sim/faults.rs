//! The stream faults' hooks: how a library on weir-actor (weir-streams)
//! takes part in a simulation's fault plan.

use crate::core::dispatcher::simulated;

/// Whether the user code a stream stage is about to run under a
/// supervision strategy must panic instead, as the simulation's
/// [`stage_panics`](super::SimulationBuilder::stage_panics) fault
/// decided for the running step. Disarms it: one panic per armed step.
/// `false` outside a simulated step.
///
/// # Examples
///
/// ```
/// assert!(!weir_actor::sim::take_stage_panic()); // no simulation here
/// ```
pub fn take_stage_panic() -> bool {
    simulated::take_stage_panic()
}

/// Whether a hand-over being built now must move its elements one at a
/// time: the simulation's seeded draw for its
/// [`small_batches`](super::SimulationBuilder::small_batches) fault.
/// `false` on a thread that drives no simulation.
///
/// # Examples
///
/// ```
/// use weir_actor::sim::{Simulation, small_batches};
///
/// assert!(!small_batches()); // no simulation here
/// let sim = Simulation::builder(1).small_batches(1.0).build().unwrap();
/// assert!(small_batches());
/// sim.shutdown().unwrap();
/// ```
pub fn small_batches() -> bool {
    simulated::small_batches()
}
