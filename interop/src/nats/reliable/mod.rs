//! Reliable delivery between actors of two processes over NATS:
//! [`ReliableProducer`] and [`ReliableConsumer`]. The overview (the
//! protocol, its guarantees, the durable variant) is in the public `nats`
//! module's docs, under "Reliable delivery".
//!
//! Files: `settings` and `error` (the public types), `wire` (what the two
//! controllers tell each other), `producer` and `consumer` (the
//! controllers and their handles), `store` (the JetStream-backed durable
//! producer queue).

mod consumer;
mod error;
mod producer;
mod settings;
mod store;
mod wire;

pub use consumer::{ConfirmTo, Delivery, ReliableConsumer};
pub use error::ReliableError;
pub use producer::{ReliableProducer, RequestNext};
pub use settings::ReliableSettings;
