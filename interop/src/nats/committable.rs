//! [`Committable`]: a JetStream message with the handle that acks it, and
//! the batched, confirmed acks of [`NatsSink::ack`](super::NatsSink::ack).

use std::fmt;
use std::time::Duration;

use async_nats::Subject;
use async_nats::jetstream::AckKind;

use super::{Nats, NatsError};

/// A message with the handle that acks it.
///
/// Dropping it without [`ack`](Self::ack) leaves the message to be
/// redelivered after the consumer's AckWait.
pub struct Committable<T> {
    pub(super) value: T,
    pub(super) ack: AckHandle,
}

/// What acking a message takes: the connection, the message's ack subject,
/// and what the consumer's AckPolicy allows.
pub(super) struct AckHandle {
    pub(super) nats: Nats,
    pub(super) reply: Option<Subject>,
    pub(super) stream_sequence: u64,
    pub(super) consumer_sequence: u64,
    pub(super) delivered: i64,
    /// AckPolicy::All: acking a message acks every earlier one.
    pub(super) ack_all: bool,
}

impl<T: fmt::Debug> fmt::Debug for Committable<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Committable")
            .field("value", &self.value)
            .field("stream_sequence", &self.ack.stream_sequence)
            .field("delivered", &self.ack.delivered)
            .finish_non_exhaustive()
    }
}

impl<T> Committable<T> {
    /// The message (or what it was mapped to).
    pub fn value(&self) -> &T {
        &self.value
    }

    /// The message, giving up the ack handle (it will be redelivered).
    pub fn into_value(self) -> T {
        self.value
    }

    /// The same ack handle with `f` applied to the value.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Committable<U> {
        Committable {
            value: f(self.value),
            ack: self.ack,
        }
    }

    /// The message's sequence number in its stream.
    pub fn stream_sequence(&self) -> u64 {
        self.ack.stream_sequence
    }

    /// The message's sequence number in its consumer's deliveries.
    pub fn consumer_sequence(&self) -> u64 {
        self.ack.consumer_sequence
    }

    /// How many times the message has been delivered (1 the first time).
    pub fn delivered(&self) -> i64 {
        self.ack.delivered
    }

    /// Ack the message. The ack is handed to the client's connection
    /// (it is not confirmed by the server; [`NatsSink::ack`](super::NatsSink::ack) confirms).
    ///
    /// # Errors
    ///
    /// [`NatsError::Ack`] when the client is closed.
    pub async fn ack(&self) -> Result<(), NatsError> {
        self.ack.send(AckKind::Ack).await
    }

    /// Negative-ack the message: the server redelivers it now (or after
    /// `delay`) instead of waiting for AckWait.
    ///
    /// # Errors
    ///
    /// [`NatsError::Ack`] when the client is closed.
    pub async fn nak(&self, delay: Option<Duration>) -> Result<(), NatsError> {
        self.ack.send(AckKind::Nak(delay)).await
    }
}

impl AckHandle {
    pub(super) async fn send(&self, kind: AckKind) -> Result<(), NatsError> {
        let Some(reply) = self.reply.clone() else {
            return Err(not_jetstream());
        };
        self.nats
            .client()
            .publish(reply, kind.into())
            .await
            .map_err(|error| NatsError::Ack {
                source: Box::new(error),
            })
    }
}

fn not_jetstream() -> NatsError {
    NatsError::Ack {
        source: "not a JetStream message: no ack subject".into(),
    }
}

/// The acks of one batch for [`NatsSink::ack`].
pub(super) struct AckBatch {
    /// The messages to ack, the last confirmed: under AckPolicy::All only
    /// the highest of each run of consecutive consumer sequences.
    pub(super) acks: Vec<AckHandle>,
    /// Messages the batch covers.
    count: u64,
}

/// How often a confirmed ack is retried when its answer does not come
/// (the server restarting: acks are idempotent).
const CONFIRM_ATTEMPTS: u32 = 3;

impl AckBatch {
    pub(super) fn new(ack: AckHandle) -> Self {
        Self {
            acks: vec![ack],
            count: 1,
        }
    }

    pub(super) fn add(&mut self, ack: AckHandle) {
        self.count += 1;
        match self.acks.last_mut() {
            Some(last)
                if ack.ack_all
                    && last.ack_all
                    && ack.consumer_sequence == last.consumer_sequence + 1 =>
            {
                *last = ack;
            }
            _ => self.acks.push(ack),
        }
    }

    /// Send every ack, the last one confirmed; the number of messages acked.
    pub(super) async fn send(mut self) -> Result<u64, NatsError> {
        let Some(last) = self.acks.pop() else {
            return Ok(0);
        };
        for ack in &self.acks {
            ack.send(AckKind::Ack).await?;
        }
        let Some(reply) = last.reply else {
            return Err(not_jetstream());
        };
        let mut attempt = 1;
        loop {
            let payload = bytes::Bytes::from(AckKind::Ack);
            match last.nats.client().request(reply.clone(), payload).await {
                Ok(_) => return Ok(self.count),
                Err(error)
                    if attempt < CONFIRM_ATTEMPTS
                        && matches!(
                            error.kind(),
                            async_nats::RequestErrorKind::TimedOut
                                | async_nats::RequestErrorKind::NoResponders
                        ) =>
                {
                    attempt += 1;
                    // No responders: JetStream is not back yet after a
                    // restart; give it a moment.
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(error) => {
                    return Err(NatsError::Ack {
                        source: Box::new(error),
                    });
                }
            }
        }
    }
}
