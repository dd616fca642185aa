//! The system's side of the core's [`Runtime`]: what the cells of one
//! system reach it through, and the way back from the core's type-erased
//! handle to an [`ActorSystem`] (`Context::system` and the layers that
//! start from a ref: ask, routers, pipes, path lookup).

use std::any::Any;

use crate::core::actor::Actor;
use crate::core::context::Context;
use crate::core::dead_letters::DeadLetters;
use crate::core::dispatcher::pinned::Pinned;
use crate::core::dispatcher::{Dispatcher, DispatcherKind};
use crate::core::instrument::Hooks;
use crate::core::runtime::Runtime;
use crate::core::scheduler::Scheduler;
use crate::error::SpawnError;

use super::ActorSystem;

/// The services of one system, for its cells: a handle that does not own
/// the system (cells must not keep it alive).
pub(super) struct Services(pub(super) ActorSystem);

impl Runtime for Services {
    fn system(&self) -> &(dyn Any + Send + Sync) {
        &self.0
    }

    fn next_uid(&self) -> u64 {
        self.0.next_uid()
    }

    fn default_throughput(&self) -> usize {
        self.0.inner.default_throughput
    }

    fn hooks(&self) -> Option<&Hooks> {
        self.0.inner.hooks.as_ref()
    }

    fn dispatcher(&self, kind: DispatcherKind) -> Result<Dispatcher, SpawnError> {
        self.0.dispatcher_of(kind)
    }

    fn scheduler(&self) -> &Scheduler {
        self.0.scheduler()
    }

    fn dead_letters(&self) -> &DeadLetters {
        self.0.event_stream().dead_letters()
    }

    fn root_stopped(&self) {
        self.0.root_stopped();
    }
}

impl ActorSystem {
    /// The dispatcher that runs what asks for `kind` (an actor's props, a
    /// task spawned with [`spawn_task_on`](ActorSystem::spawn_task_on)).
    pub(crate) fn dispatcher_of(&self, kind: DispatcherKind) -> Result<Dispatcher, SpawnError> {
        let inner = &self.inner;
        Ok(match kind {
            DispatcherKind::Shared => inner.pool.clone(),
            // Simulated, every actor goes to the one run queue.
            #[cfg(feature = "testkit")]
            DispatcherKind::CallingThread | DispatcherKind::Pinned
                if matches!(inner.pool, Dispatcher::Simulated(_)) =>
            {
                inner.pool.clone()
            }
            DispatcherKind::CallingThread => Dispatcher::CallingThread,
            DispatcherKind::Named(name) => inner
                .named_pools
                .get(name)
                .ok_or_else(|| SpawnError::UnknownDispatcher(name.to_owned()))?
                .clone(),
            DispatcherKind::Pinned => Dispatcher::Pinned(
                Pinned::start(format!("{}-pinned", inner.name), &inner.threads)
                    .map_err(|e| SpawnError::DispatcherUnavailable(e.to_string()))?,
            ),
        })
    }

    /// The system behind the core's type-erased handle
    /// ([`Runtime::system`], `AnyActor::system`).
    ///
    /// # Panics
    ///
    /// If `erased` is not an `ActorSystem`: only [`Services`] and the
    /// temporary actors of this crate hand one out, and each gives its own
    /// system, so this does not happen.
    pub(crate) fn of(erased: &(dyn Any + Send + Sync)) -> &ActorSystem {
        erased
            .downcast_ref()
            .expect("the core's system handle is an ActorSystem")
    }
}

impl<A: Actor> Context<A> {
    /// The system this actor belongs to.
    pub fn system(&self) -> &ActorSystem {
        ActorSystem::of(self.runtime().system())
    }
}
