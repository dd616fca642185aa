//! Actor-backed stages: [`Source::actor_ref`](crate::Source::actor_ref).

mod actor_ref_source;

pub use actor_ref_source::ActorRefSource;
