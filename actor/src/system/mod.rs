//! The system: the [`ActorSystem`](actor_system::ActorSystem) with its
//! builder, guardians and registry and the parts it owns (extensions,
//! coordinated shutdown, termination), the event stream, path resolution
//! and selection, and the promise its waits are built on. It imports the core
//! and the leaves, never a feature; the layers test (`actor/tests/layers`)
//! holds that.

pub(crate) mod actor_system;
pub(crate) mod events;
pub(crate) mod promise;
pub(crate) mod resolve;
pub(crate) mod selection;
