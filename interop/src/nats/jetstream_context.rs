//! JetStream with context propagation: the source emits each message with
//! its ack handle as context ([`SourceWithContext`]), and a sink acks the
//! contexts that reach it, so the operators between them
//! ([`ContextOps`](weir_streams::ContextOps)) carry the handle for the
//! user (Pekko's `Consumer.sourceWithOffsetContext` and
//! `Committer.sinkWithOffsetContext`).

use async_nats::Message;
use async_nats::jetstream::consumer::pull::Config as PullConfig;
use weir_streams::prelude::*;
use weir_streams::{ArgumentError, Completion, SourceWithContext};

use super::Committable;
use super::jetstream::JetStreamSettings;
use super::{NatsSink, NatsSource};

/// A message's ack handle, as the context beside its message.
pub type AckContext = Committable<()>;

/// The value and its ack handle, apart.
fn split<T>(committable: Committable<T>) -> (T, AckContext) {
    let mut value = None;
    let ack = committable.map(|v| value = Some(v));
    (value.expect("`map` calls its function once"), ack)
}

impl NatsSource {
    /// [`jetstream`](Self::jetstream) with each message's ack handle as
    /// its context: operators such as `map`, `filter` and `map_async`
    /// work on the message and carry the handle, and
    /// [`NatsSink::ack_with_context`] acks what reaches it. A message a
    /// `filter` drops is not acked (it is redelivered after AckWait).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use async_nats::jetstream::consumer::pull;
    /// use weir_interop::{JetStreamSettings, Nats, NatsSink, NatsSource};
    /// use weir_streams::ContextOps;
    /// use weir_streams::prelude::*;
    ///
    /// let runtime = tokio::runtime::Runtime::new().unwrap();
    /// let nats = Nats::connect(runtime.handle(), "nats://127.0.0.1:4222").unwrap();
    /// let system = weir_actor::ActorSystem::new("js-context").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let config = pull::Config { durable_name: Some("worker".into()), ..Default::default() };
    /// let acked = NatsSource::jetstream_with_context(&config, &JetStreamSettings::new(&nats, "ORDERS"))
    ///     .map(|message| message.payload.len())
    ///     .as_source()
    ///     .take(10)
    ///     .run_with(NatsSink::ack_with_context(16).unwrap(), &materializer);
    /// assert_eq!(acked.wait().unwrap(), 10);
    /// ```
    pub fn jetstream_with_context(
        consumer_config: &PullConfig,
        settings: &JetStreamSettings,
    ) -> SourceWithContext<Message, AckContext> {
        SourceWithContext::from_tuples(Self::jetstream(consumer_config, settings).map(split))
    }
}

impl NatsSink {
    /// [`ack`](Self::ack) for elements with their ack handle as context
    /// (from [`NatsSource::jetstream_with_context`]): the element is
    /// dropped, its handle acked, as `ack` does; materializes the number
    /// acked.
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` when `max_in_flight` is 0.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_interop::NatsSink;
    ///
    /// assert!(NatsSink::ack_with_context::<String>(0).is_err());
    /// let _sink = NatsSink::ack_with_context::<String>(32).unwrap();
    /// ```
    pub fn ack_with_context<T: Send + 'static>(
        max_in_flight: usize,
    ) -> Result<Sink<(T, AckContext), Completion<u64>>, ArgumentError> {
        let ack = Self::ack::<()>(max_in_flight)?;
        Ok(Flow::<(T, AckContext)>::new()
            .map(|(_, ack): (T, AckContext)| ack)
            .to_mat(ack, Keep::right))
    }
}
