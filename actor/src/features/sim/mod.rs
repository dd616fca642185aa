//! Deterministic simulation (feature `testkit`): a whole actor system, and
//! the streams it runs, driven from one seed on the test's own thread.
//!
//! # How it works
//!
//! A [`Simulation`] builds an [`ActorSystem`](crate::ActorSystem) whose
//! every dispatcher (the shared pool, named pools, pinned and
//! calling-thread actors, `spawn_task` and `pipe` tasks, and so stream
//! islands) submits to one run queue, and whose timer reads a
//! [`TestClock`](crate::testkit::TestClock). No thread is started. The
//! test's thread drives it: each [`step`](Simulation::step) lets the seeded
//! generator pick *which* runnable unit goes next (not the oldest), so
//! orders a real pool makes rare become common. When nothing is runnable
//! the clock jumps to the next deadline and runs what is due there.
//!
//! The submissions a step makes are ordered by a key given to each unit
//! when it was first seen (not by the order they were made), so code that
//! wakes several units while walking a hash map (a parent stopping its
//! children, an actor telling its watchers) does not leak the map's
//! random order into the run. Together with the seeded random source of
//! routers and backoff (see `crate::random`), one seed gives one run:
//! the [`Trace`] of two runs of a seed is the same.
//!
//! # Blocking waits
//!
//! A blocking wait on the simulation's thread (`Termination::wait`, an
//! ask's `wait`, a stream completion's `wait`, dropping the last owning
//! system handle) drives the simulation until what it waits for is there;
//! when the simulation falls quiet first it panics, naming the seed,
//! instead of hanging. Inside a step the wait would wait for itself: an
//! ask's `wait` then fails with `AskError::WouldDeadlock`, a termination's
//! with `WaitError::OnDispatcherThread`, any other wait panics. A test
//! helper of one's own waits the same way through [`wait_until`] (as
//! weir-streams' `TestSource` and `TestSink` probes do), and brings every
//! unit to rest without moving the clock with [`settle`].
//!
//! # What leaves the simulation
//!
//! Work on threads the simulation does not own: real IO (files, sockets),
//! tokio and NATS (weir-interop), a future woken from another thread, a
//! user's own threads, a `std::thread::sleep`, `Instant::now()` read
//! directly instead of `system.scheduler().now()`. Such work still runs
//! (the run queue accepts submissions from any thread), but its timing is
//! not the seed's, so a run that uses it may not replay.

mod core;
mod faults;
mod simulation;
mod sweep;
mod trace;
mod wait;

pub use crate::error::SimError;
pub use faults::{small_batches, take_stage_panic};
pub use simulation::{DEFAULT_STEP_LIMIT, Simulation, SimulationBuilder};
pub use sweep::{SEED_VAR, SEEDS_VAR, seeds};
pub use trace::{Trace, TraceEntry};
pub use wait::{settle, wait_until};
