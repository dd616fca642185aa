//! The durable producer queue: unconfirmed messages in a JetStream stream
//! of their own, numbered by the stream's sequence numbers. A message is
//! sent to the consumer once JetStream has stored it; confirmed messages
//! are purged; a producer that starts on the stream resends what is left
//! and continues the numbering.

use std::collections::VecDeque;
use std::time::Duration;

use async_nats::HeaderMap;
use async_nats::jetstream::{self, stream};
use tokio::sync::mpsc;
use weir_actor::ActorRef;

use super::ReliableError;
use super::producer::Unconfirmed;
use crate::nats::{BoxError, Nats, NatsError};

/// How long a failed store is retried before the producer gives up.
const RETRY_FOR: Duration = Duration::from_secs(30);
/// The pause between retries of a failed store.
const RETRY_PAUSE: Duration = Duration::from_millis(100);

/// What a producer starts with: its incarnation, what is confirmed, and
/// the unconfirmed messages (`confirmed + 1` onwards).
pub(super) struct Loaded {
    pub(super) incarnation: u64,
    pub(super) confirmed: u64,
    pub(super) unconfirmed: VecDeque<Unconfirmed>,
}

impl Loaded {
    /// A producer with nothing behind it: a new incarnation, nothing sent.
    pub(super) fn fresh() -> Self {
        Self {
            incarnation: super::wire::incarnation(),
            confirmed: 0,
            unconfirmed: VecDeque::new(),
        }
    }
}

/// The stored sequence number, or why the queue failed.
pub(super) type StoreEvent = Result<u64, String>;

enum Op {
    /// Where the store's events go (first, once).
    Attach(ActorRef<StoreEvent>),
    Store(u64, Vec<u8>),
    PurgeBelow(u64),
}

/// The handle of the store task.
pub(super) struct Store {
    ops: mpsc::UnboundedSender<Op>,
}

impl Store {
    /// Create or open `stream`, read what it holds, and start the task
    /// that stores and purges.
    pub(super) fn open(nats: &Nats, name: &str) -> Result<(Self, Loaded), ReliableError> {
        let subject = format!("weir-reliable.{name}");
        let js = nats.jetstream();
        let config = stream::Config {
            name: name.to_owned(),
            subjects: vec![subject.clone()],
            storage: stream::StorageType::File,
            ..Default::default()
        };
        let failed = |source: BoxError| {
            ReliableError::Store(NatsError::Consumer {
                stream: name.to_owned(),
                source,
            })
        };
        let (stream, loaded) = nats
            .handle()
            .block_on(async {
                let mut stream = js.get_or_create_stream(config).await?;
                let info = stream.info().await?.clone();
                let state = &info.state;
                // The stream's creation time tells this stream from one
                // of the same name deleted and made again.
                let incarnation = (info.created.unix_timestamp_nanos() as u64) | 1;
                let mut unconfirmed = VecDeque::new();
                let confirmed = if state.messages == 0 {
                    state.last_sequence
                } else {
                    for seq in state.first_sequence..=state.last_sequence {
                        let message = stream.get_raw_message(seq).await?;
                        unconfirmed.push_back(Unconfirmed {
                            body: message.payload.to_vec(),
                            stored: true,
                        });
                    }
                    state.first_sequence - 1
                };
                Ok::<_, BoxError>((
                    stream,
                    Loaded {
                        incarnation,
                        confirmed,
                        unconfirmed,
                    },
                ))
            })
            .map_err(failed)?;
        let (ops, queue) = mpsc::unbounded_channel();
        nats.handle()
            .spawn(run(js, stream, subject, name.to_owned(), queue));
        Ok((Self { ops }, loaded))
    }

    pub(super) fn attach(&self, events: ActorRef<StoreEvent>) {
        let _ = self.ops.send(Op::Attach(events));
    }

    pub(super) fn store(&self, seq: u64, body: Vec<u8>) {
        let _ = self.ops.send(Op::Store(seq, body));
    }

    pub(super) fn purge_below(&self, seq: u64) {
        let _ = self.ops.send(Op::PurgeBelow(seq));
    }
}

/// Store in order, pipelined: publish what is queued, then wait for the
/// acks in order. A message is published with its sequence number as
/// `Nats-Msg-Id`, so a retry after a lost ack is not stored twice.
async fn run(
    js: jetstream::Context,
    stream: stream::Stream,
    subject: String,
    name: String,
    mut queue: mpsc::UnboundedReceiver<Op>,
) {
    let Some(Op::Attach(events)) = queue.recv().await else {
        return;
    };
    let mut batch: Vec<(u64, Vec<u8>)> = Vec::new();
    while let Some(op) = queue.recv().await {
        let mut next = Some(op);
        let mut purge = None;
        while let Some(op) = next.take() {
            match op {
                Op::Attach(_) => {}
                Op::Store(seq, body) => batch.push((seq, body)),
                Op::PurgeBelow(seq) => purge = Some(seq),
            }
            next = queue.try_recv().ok();
        }
        let started = tokio::time::Instant::now();
        while !batch.is_empty() {
            match publish(&js, &subject, &name, &batch).await {
                Ok(()) => {
                    for (seq, _) in batch.drain(..) {
                        events.tell(Ok(seq));
                    }
                }
                Err(Failure::Permanent(why)) => {
                    events.tell(Err(why));
                    return;
                }
                Err(Failure::Transient(why)) if started.elapsed() >= RETRY_FOR => {
                    events.tell(Err(format!("storing failed for {RETRY_FOR:?}: {why}")));
                    return;
                }
                Err(Failure::Transient(_)) => tokio::time::sleep(RETRY_PAUSE).await,
            }
        }
        if let Some(below) = purge {
            // A purge that fails is done by the next one, or leaves
            // duplicates for the consumer to drop after a restart.
            let _ = stream.purge().sequence(below).await;
        }
    }
}

/// Why a batch was not stored: worth a retry (the server is away, a
/// time-out), or not.
enum Failure {
    Transient(String),
    Permanent(String),
}

async fn publish(
    js: &jetstream::Context,
    subject: &str,
    name: &str,
    batch: &[(u64, Vec<u8>)],
) -> Result<(), Failure> {
    let mut acks = Vec::with_capacity(batch.len());
    for (seq, body) in batch {
        let mut headers = HeaderMap::new();
        headers.insert("Nats-Msg-Id", format!("{name}-{seq}").as_str());
        let ack = js
            .publish_with_headers(subject.to_owned(), headers, body.clone().into())
            .await
            .map_err(|error| Failure::Transient(error.to_string()))?;
        acks.push((*seq, ack));
    }
    for (seq, ack) in acks {
        let ack = ack
            .await
            .map_err(|error| Failure::Transient(error.to_string()))?;
        if ack.sequence != seq {
            return Err(Failure::Permanent(format!(
                "stream {name} stored message {seq} as {}: something else publishes to it",
                ack.sequence
            )));
        }
    }
    Ok(())
}
