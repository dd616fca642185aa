//! What a cell needs from the system it lives in, as a trait: the core
//! (mailbox, cell, context, refs) reaches the system only through
//! [`Runtime`], so it knows nothing of the system's type, its guardians, its
//! registry of temporary actors or path resolution. The system implements
//! it (see `crate::system::actor_system`) and hands it to the root cell; every child
//! shares its parent's.
//!
//! None of it is on the per-message path: a tell, a mailbox run and a
//! `receive` use the cell's own fields (its dispatcher, its copy of the
//! hooks). The runtime is called when an actor is spawned, stops, touches
//! its timers or receive timeout, or has a dead letter to publish.

use std::any::Any;

use crate::core::dead_letters::DeadLetters;
use crate::core::dispatcher::{Dispatcher, DispatcherKind};
use crate::core::instrument::Hooks;
use crate::core::scheduler::Scheduler;
use crate::error::SpawnError;

/// The services of a system, as the cells of that system see them.
pub(crate) trait Runtime: Send + Sync + 'static {
    /// The system's own handle, type-erased (a handle that does not own the
    /// system): `ActorSystem::of` gives it back to the layers above.
    fn system(&self) -> &(dyn Any + Send + Sync);

    /// A fresh uid for a new actor's path.
    fn next_uid(&self) -> u64;

    /// Messages per run for actors whose props do not say.
    fn default_throughput(&self) -> usize;

    /// The system's instrumentation, which each cell copies.
    fn hooks(&self) -> Option<&Hooks>;

    /// The dispatcher for an actor whose props ask for `kind`.
    fn dispatcher(&self, kind: DispatcherKind) -> Result<Dispatcher, SpawnError>;

    /// Timers, `schedule_once` and receive timeouts.
    fn scheduler(&self) -> &Scheduler;

    /// Where undeliverable messages go.
    fn dead_letters(&self) -> &DeadLetters;

    /// The root cell has stopped: every actor is gone.
    fn root_stopped(&self);
}
