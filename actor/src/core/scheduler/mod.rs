//! Time: one timer thread per system, and the scheduler on it. It knows
//! nothing of actors: sends to an `ActorRef` are a layer on top
//! (`crate::core::scheduled`), an actor's keyed timers and receive timeout live
//! with its cell (`crate::core::cell`).
//!
//! * [`wheel`]: the timer thread itself, a deadline heap that sleeps until the
//!   earliest deadline (an idle system with timers armed far ahead burns no
//!   CPU).
//! * [`Scheduler`]: the public face, `system.scheduler()`: one-shot and
//!   periodic sends and closures, each with a [`Cancellable`].
//! * [`clock`]: the one clock all of it reads, real or a test's
//!   [`TestClock`] (whose `advance` runs what came due, in deadline order).
//! * [`deadline`]: the one saturating `Instant + Duration`, so a
//!   `Duration::MAX` anywhere means "never" instead of a panic.

mod api;
mod clock;
pub(crate) mod deadline;
pub(crate) mod wheel;

pub use api::{Cancellable, Scheduler};
#[cfg_attr(not(feature = "testkit"), allow(unreachable_pub, dead_code))]
pub use clock::TestClock;
