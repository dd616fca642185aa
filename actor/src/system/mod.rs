//! The system: the [`ActorSystem`](actor_system::ActorSystem) with its
//! guardians and registry, and the services it owns (the event stream,
//! extensions, coordinated shutdown, termination), path resolution and
//! selection, and the promise its waits are built on. It imports the core
//! and the leaves, never a feature; the layers test (`actor/tests/layers`)
//! holds that.

pub(crate) mod actor_system;
pub(crate) mod events;
pub(crate) mod extension;
pub(crate) mod promise;
pub(crate) mod resolve;
pub(crate) mod selection;
pub mod shutdown;
pub(crate) mod termination;
