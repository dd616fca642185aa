//! What the reliable producer and consumer tell each other (through remote
//! actor tells, postcard-encoded), and what their controllers take.

use std::marker::PhantomData;

use serde::{Deserialize, Serialize};

/// The consumer's demand and confirmations, told to the producer's
/// controller every `window / 4` confirmations and every resend interval.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Demand {
    /// The consumer's incarnation: a new one makes the producer resend
    /// everything unconfirmed.
    pub(crate) consumer: u64,
    /// The producer incarnation `confirmed` counts in (0: none heard yet).
    pub(crate) producer: u64,
    /// Every message up to this sequence number is confirmed.
    pub(crate) confirmed: u64,
    /// The producer may send up to `confirmed + window`.
    pub(crate) window: u32,
    /// The consumer misses this message and what follows: send again
    /// from here.
    pub(crate) resend_from: Option<u64>,
}

/// One message of the producer, with its sequence number.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Sequenced<M> {
    /// The producer's incarnation: the sequence numbers count in it.
    pub(crate) producer: u64,
    pub(crate) seq: u64,
    /// Every message up to here was confirmed when this one was sent: a
    /// consumer that starts afresh starts after it.
    pub(crate) confirmed: u64,
    /// The message, postcard-encoded once by the producer (resends reuse it).
    pub(crate) body: Vec<u8>,
    #[serde(skip)]
    pub(crate) _message: PhantomData<fn() -> M>,
}

/// What the producer's controller takes: the consumer's demand (the only
/// remote message), and local messages.
#[derive(Serialize, Deserialize)]
pub(crate) enum ProducerMsg<M> {
    Demand(Demand),
    /// The next message of the producing actor.
    #[serde(skip)]
    Next(M),
    /// The durable queue stored the message with this sequence number.
    #[serde(skip)]
    Stored(u64),
    /// The durable queue failed.
    #[serde(skip)]
    StoreFailed(String),
    #[serde(skip)]
    Tick,
}

/// What the consumer's controller takes: the producer's messages (the only
/// remote message), confirmations and its timer.
#[derive(Serialize, Deserialize)]
pub(crate) enum ConsumerMsg<M> {
    Sequenced(Sequenced<M>),
    #[serde(skip)]
    Confirmed(Confirmed),
    #[serde(skip)]
    Tick,
}

/// The consuming actor confirmed `seq` of producer incarnation `producer`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Confirmed {
    pub(crate) producer: u64,
    pub(crate) seq: u64,
}

/// A random incarnation number, never 0 (0 means "none").
pub(crate) fn incarnation() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    hasher.write_u32(std::process::id());
    hasher.finish() | 1
}
