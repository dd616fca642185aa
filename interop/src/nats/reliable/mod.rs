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

/// Spawn a reliable pair's controller as `reliable-<role>-<path>` and
/// expose it at `/user/<path>` of `remote`: the controller and its URI. A
/// path that cannot be exposed stops the controller again.
fn spawn_exposed<A: weir_actor::Actor>(
    remote: &crate::nats::RemoteActorSystem,
    role: &str,
    path: &str,
    props: weir_actor::Props<A>,
) -> Result<(weir_actor::ActorRef<A::Msg>, String), ReliableError>
where
    A::Msg: serde::de::DeserializeOwned,
{
    let name = format!("reliable-{role}-{}", path.replace('/', "-"));
    let controller = remote
        .system()
        .spawn(props, &name)
        .map_err(|error| ReliableError::System(error.to_string()))?;
    match remote.expose(&controller, path) {
        Ok(uri) => Ok((controller, uri)),
        Err(error) => {
            controller.stop();
            Err(error.into())
        }
    }
}
