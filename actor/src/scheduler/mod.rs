//! Time: one timer thread per system, and everything built on it.
//!
//! * [`wheel`]: the timer thread itself, a deadline heap that sleeps until the
//!   earliest deadline (an idle system with timers armed far ahead burns no
//!   CPU).
//! * [`Scheduler`]: the public face, `system.scheduler()`: one-shot and
//!   periodic sends and closures, each with a [`Cancellable`].
//! * [`timers`]: per-actor keyed timers (`ctx.timers()`), whose messages are
//!   checked against a generation when they arrive, so a replaced or
//!   cancelled timer never delivers.
//! * [`clock`]: the one clock all of it reads, real or a test's
//!   [`TestClock`] (whose `advance` runs what came due, in deadline order).
//! * [`deadline`]: the one saturating `Instant + Duration`, so a
//!   `Duration::MAX` anywhere means "never" instead of a panic.
//! * [`receive_timeout`]: the per-actor idle timeout, with no allocation per
//!   message.

mod api;
mod clock;
pub(crate) mod deadline;
pub(crate) mod receive_timeout;
pub(crate) mod timers;
pub(crate) mod wheel;

pub use api::{Cancellable, Scheduler};
#[cfg_attr(not(feature = "testkit"), allow(unreachable_pub, dead_code))]
pub use clock::TestClock;
pub use timers::{TimerKey, Timers};
