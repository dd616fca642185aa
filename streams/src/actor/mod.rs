//! Actor-backed stages: [`Source::actor_ref`](crate::Source::actor_ref) and
//! [`Sink::actor_ref`](crate::Sink::actor_ref), and their ack protocols
//! ([`Source::actor_ref_with_backpressure`](crate::Source::actor_ref_with_backpressure),
//! [`Source::actor_ref_with_sender_ack`](crate::Source::actor_ref_with_sender_ack),
//! [`Sink::actor_ref_with_backpressure`](crate::Sink::actor_ref_with_backpressure)).

mod actor_ref_backpressure;
mod actor_ref_fold;
mod actor_ref_sender_ack;
mod actor_ref_sink;
mod actor_ref_source;
pub(crate) mod buffered;
mod dead_letters;
pub(crate) mod inbox;

pub use actor_ref_sender_ack::WithAck;
pub use actor_ref_source::ActorRefSource;
