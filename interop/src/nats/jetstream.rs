//! JetStream: a demand-driven pull consumer of [`Committable`] messages,
//! acking sinks, and a publisher that waits for JetStream's acks.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use async_nats::Message;
use async_nats::jetstream::AckKind;
use async_nats::jetstream::consumer::pull::{Batch, Config as PullConfig};
use async_nats::jetstream::consumer::{AckPolicy, PullConsumer};
use bytes::Bytes;
use futures_core::Stream;
use weir_streams::prelude::*;
use weir_streams::{ArgumentError, Completion, StreamError};

use super::committable::{AckBatch, AckHandle};
use super::{BoxFuture, Committable, InRuntime, Nats, NatsError, NatsSink, NatsSource};

/// Where and how [`NatsSource::jetstream`] pulls.
///
/// # Examples
///
/// ```no_run
/// use std::time::Duration;
/// use weir_interop::{JetStreamSettings, Nats};
///
/// let runtime = tokio::runtime::Runtime::new().unwrap();
/// let nats = Nats::connect(runtime.handle(), "nats://127.0.0.1:4222").unwrap();
/// let settings = JetStreamSettings::new(&nats, "ORDERS")
///     .batch(64)
///     .expires(Duration::from_secs(2));
/// assert_eq!(settings.batch_size(), 64);
/// ```
#[derive(Clone, Debug)]
pub struct JetStreamSettings {
    nats: Nats,
    stream: String,
    batch: usize,
    expires: Duration,
}

impl JetStreamSettings {
    /// Pull from the JetStream stream `stream` on `nats`, in batches of at
    /// most 100 messages that the server holds open for at most 1 s.
    pub fn new(nats: &Nats, stream: impl Into<String>) -> Self {
        Self {
            nats: nats.clone(),
            stream: stream.into(),
            batch: 100,
            expires: Duration::from_secs(1),
        }
    }

    /// The most messages one pull request asks for (at least 1). The
    /// source holds at most this many that downstream has not taken yet.
    #[must_use]
    pub fn batch(mut self, batch: usize) -> Self {
        self.batch = batch.max(1);
        self
    }

    /// How long the server keeps a pull request open waiting for
    /// messages. After a server restart the lost request is replaced
    /// within this time plus 5 s.
    #[must_use]
    pub fn expires(mut self, expires: Duration) -> Self {
        self.expires = expires;
        self
    }

    /// The batch size.
    pub fn batch_size(&self) -> usize {
        self.batch
    }
}

/// The pull loop: create the consumer, then request a batch whenever
/// downstream pulls and the last batch is used up.
enum Pull {
    Start(InRuntime<Result<PullConsumer, NatsError>>),
    Idle(Box<PullConsumer>),
    Request(
        Box<PullConsumer>,
        BoxFuture<Result<Batch, async_nats::Error>>,
    ),
    Read(Box<PullConsumer>, Box<Batch>),
    Failed,
}

struct PullState {
    settings: JetStreamSettings,
    ack_all: bool,
    pull: Pull,
}

impl PullState {
    fn new(config: &PullConfig, settings: &JetStreamSettings) -> Self {
        let context = settings.nats.jetstream();
        let stream = settings.stream.clone();
        let ack_all = config.ack_policy == AckPolicy::All;
        let config = config.clone();
        let start = InRuntime::new(settings.nats.handle(), async move {
            context
                .create_consumer_on_stream(config, stream.as_str())
                .await
                .map_err(|error| NatsError::Consumer {
                    stream,
                    source: Box::new(error),
                })
        });
        Self {
            settings: settings.clone(),
            ack_all,
            pull: Pull::Start(start),
        }
    }

    fn fail(
        &mut self,
        error: NatsError,
    ) -> Poll<Option<Result<Committable<Message>, StreamError>>> {
        self.pull = Pull::Failed;
        Poll::Ready(Some(Err(StreamError::custom(error))))
    }

    fn fetch_error(&self, source: async_nats::Error) -> NatsError {
        NatsError::Fetch {
            stream: self.settings.stream.clone(),
            source,
        }
    }

    /// Called only when downstream has pulled: so a batch is requested
    /// only for demand, and at most `batch` messages wait here.
    fn poll(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Committable<Message>, StreamError>>> {
        let _runtime = self.settings.nats.handle().enter();
        loop {
            match std::mem::replace(&mut self.pull, Pull::Failed) {
                Pull::Start(mut start) => match Pin::new(&mut start).poll(cx) {
                    Poll::Ready(Ok(consumer)) => self.pull = Pull::Idle(Box::new(consumer)),
                    Poll::Ready(Err(error)) => return self.fail(error),
                    Poll::Pending => {
                        self.pull = Pull::Start(start);
                        return Poll::Pending;
                    }
                },
                Pull::Idle(consumer) => {
                    let request = PullConsumer::clone(&consumer);
                    let (batch, expires) = (self.settings.batch, self.settings.expires);
                    let future: BoxFuture<_> = Box::pin(async move {
                        request
                            .batch()
                            .max_messages(batch)
                            .expires(expires)
                            .messages()
                            .await
                            .map_err(|error| Box::new(error) as async_nats::Error)
                    });
                    self.pull = Pull::Request(consumer, future);
                }
                Pull::Request(consumer, mut future) => match future.as_mut().poll(cx) {
                    Poll::Ready(Ok(batch)) => self.pull = Pull::Read(consumer, Box::new(batch)),
                    Poll::Ready(Err(error)) => return self.fail(self.fetch_error(error)),
                    Poll::Pending => {
                        self.pull = Pull::Request(consumer, future);
                        return Poll::Pending;
                    }
                },
                Pull::Read(consumer, mut batch) => match Pin::new(&mut *batch).poll_next(cx) {
                    Poll::Ready(Some(Ok(message))) => {
                        self.pull = Pull::Read(consumer, batch);
                        let (stream_sequence, consumer_sequence, delivered) =
                            message.info().map_or((0, 0, 0), |info| {
                                (info.stream_sequence, info.consumer_sequence, info.delivered)
                            });
                        let mut value = message.message;
                        return Poll::Ready(Some(Ok(Committable {
                            ack: AckHandle {
                                nats: self.settings.nats.clone(),
                                reply: value.reply.take(),
                                stream_sequence,
                                consumer_sequence,
                                delivered,
                                ack_all: self.ack_all,
                            },
                            value,
                        })));
                    }
                    Poll::Ready(Some(Err(error))) => {
                        // A status the server ends a pull request with
                        // while it restarts or changes leaders: pull again.
                        if is_transient(&*error) {
                            self.pull = Pull::Idle(consumer);
                        } else {
                            return self.fail(self.fetch_error(error));
                        }
                    }
                    // The batch is used up or expired: pull again.
                    Poll::Ready(None) => self.pull = Pull::Idle(consumer),
                    Poll::Pending => {
                        self.pull = Pull::Read(consumer, batch);
                        return Poll::Pending;
                    }
                },
                Pull::Failed => return Poll::Ready(None),
            }
        }
    }
}

/// Statuses that end a pull request without anything being wrong with the
/// consumer: 409 (server shutdown, leadership change, request limits) and
/// 503 (JetStream not ready yet after a restart).
fn is_transient(error: &(dyn std::error::Error + 'static)) -> bool {
    let text = error.to_string();
    text.contains(": 409") || text.contains(": 503") || text.contains("No Responders")
}

impl NatsSource {
    /// A durable (or ephemeral, without a `durable_name`) pull consumer
    /// on `settings`' stream, created or looked up with `consumer_config`
    /// when the stream starts, emitting each message with its ack handle.
    ///
    /// It is driven by demand: a pull request for at most
    /// [`batch`](JetStreamSettings::batch) messages goes out only when
    /// downstream has pulled and the previous batch is used up, so at most
    /// one batch is ever waiting. Ack with [`NatsSink::ack`] for
    /// at-least-once delivery: what is not acked within the consumer's
    /// `ack_wait` is redelivered (to this or another run). When the server
    /// restarts the client reconnects and the source pulls again.
    ///
    /// A failure to create the consumer or a pull request the server
    /// rejects fails the stream with a [`NatsError`].
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use async_nats::jetstream::consumer::pull;
    /// use weir_interop::{JetStreamSettings, Nats, NatsSink, NatsSource};
    /// use weir_streams::prelude::*;
    ///
    /// let runtime = tokio::runtime::Runtime::new().unwrap();
    /// let nats = Nats::connect(runtime.handle(), "nats://127.0.0.1:4222").unwrap();
    /// let system = weir_actor::ActorSystem::new("js").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let config = pull::Config { durable_name: Some("worker".into()), ..Default::default() };
    /// let acked = NatsSource::jetstream(&config, &JetStreamSettings::new(&nats, "ORDERS"))
    ///     .take(10)
    ///     .run_with(NatsSink::ack(16).unwrap(), &materializer);
    /// assert_eq!(acked.wait().unwrap(), 10);
    /// ```
    pub fn jetstream(
        consumer_config: &PullConfig,
        settings: &JetStreamSettings,
    ) -> Source<Committable<Message>, ()> {
        let (config, settings) = (consumer_config.clone(), settings.clone());
        Source::from_poll_fn(move || {
            let mut state = PullState::new(&config, &settings);
            move |cx: &mut Context<'_>| state.poll(cx)
        })
        .named("nats-jetstream")
    }

    /// [`jetstream`](Self::jetstream) with each message acked inside the
    /// source when downstream asks for it, before it is emitted:
    /// at-most-once (a message lost downstream is not redelivered, and
    /// nothing downstream did not ask for is acked).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use async_nats::jetstream::consumer::pull;
    /// use weir_interop::{JetStreamSettings, Nats, NatsSource};
    /// use weir_streams::prelude::*;
    ///
    /// let runtime = tokio::runtime::Runtime::new().unwrap();
    /// let nats = Nats::connect(runtime.handle(), "nats://127.0.0.1:4222").unwrap();
    /// let system = weir_actor::ActorSystem::new("js").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let settings = JetStreamSettings::new(&nats, "ORDERS");
    /// let got = NatsSource::jetstream_auto_ack(&pull::Config::default(), &settings)
    ///     .take(3)
    ///     .run_with(Sink::collect(), &materializer);
    /// assert_eq!(got.wait().unwrap().len(), 3);
    /// ```
    pub fn jetstream_auto_ack(
        consumer_config: &PullConfig,
        settings: &JetStreamSettings,
    ) -> Source<Message, ()> {
        let (config, settings) = (consumer_config.clone(), settings.clone());
        Source::from_poll_fn(move || {
            let mut state = PullState::new(&config, &settings);
            // The message being acked before it is emitted: acked inside
            // the source, so nothing is acked that downstream did not ask for.
            let mut acking: Option<(BoxFuture<Result<(), NatsError>>, Message)> = None;
            move |cx: &mut Context<'_>| loop {
                if let Some((ack, _)) = acking.as_mut() {
                    return match ack.as_mut().poll(cx) {
                        Poll::Pending => Poll::Pending,
                        Poll::Ready(Err(error)) => {
                            acking = None;
                            Poll::Ready(Some(Err(StreamError::custom(error))))
                        }
                        Poll::Ready(Ok(())) => Poll::Ready(acking.take().map(|(_, m)| Ok(m))),
                    };
                }
                match state.poll(cx) {
                    Poll::Ready(Some(Ok(committable))) => {
                        let ack = committable.ack;
                        acking = Some((
                            Box::pin(async move { ack.send(AckKind::Ack).await }),
                            committable.value,
                        ));
                    }
                    Poll::Ready(Some(Err(error))) => return Poll::Ready(Some(Err(error))),
                    Poll::Ready(None) => return Poll::Ready(None),
                    Poll::Pending => return Poll::Pending,
                }
            }
        })
        .named("nats-jetstream-auto-ack")
    }
}

impl NatsSink {
    /// A sink that acks every [`Committable`] it receives and materializes
    /// the number acked; its completion means the server has processed
    /// every one of those acks.
    ///
    /// Acks go out in batches of at most `max_in_flight` messages: while a
    /// batch is on its way the next one gathers (upstream waits when it is
    /// full). The last ack of each batch is a confirmed ack (AckAck: the
    /// server answers once it has processed it, and it processes a
    /// connection's acks in order), so at most `max_in_flight` acks are
    /// ever unconfirmed and the materialized count is only complete once
    /// all of them are confirmed. Under the consumer's `AckPolicy::All`
    /// (an ack covers every earlier message) only the highest message of
    /// each run of consecutive consumer sequence numbers is acked. An ack
    /// that cannot be sent or confirmed (the client closed, no answer after
    /// retries) fails the stream with [`NatsError::Ack`]; what was not
    /// acked is redelivered after AckWait.
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
    /// assert!(NatsSink::ack::<String>(0).is_err());
    /// let _sink = NatsSink::ack::<String>(32).unwrap();
    /// ```
    pub fn ack<T: Send + 'static>(
        max_in_flight: usize,
    ) -> Result<Sink<Committable<T>, Completion<u64>>, ArgumentError> {
        Ok(Flow::<Committable<T>>::new()
            .batch(
                max_in_flight as u64,
                |committable: Committable<T>| AckBatch::new(committable.ack),
                |mut batch: AckBatch, committable: Committable<T>| {
                    batch.add(committable.ack);
                    batch
                },
            )?
            .map_async(1, |batch: AckBatch| {
                let handle = batch.acks[0].nats.handle().clone();
                InRuntime::new(&handle, async move {
                    batch.send().await.map_err(StreamError::custom)
                })
            })?
            .to_mat(Sink::fold(0u64, |count, acked| count + acked), Keep::right))
    }

    /// A sink that publishes every element to JetStream on the subject
    /// `subject_fn` gives it and waits for the stream's ack, with at most
    /// `max_in_flight` publishes un-acked (upstream waits meanwhile). It
    /// materializes the number published (and acked) when upstream
    /// completes; a publish JetStream rejects (no stream for the subject,
    /// a limit, no ack in time) fails the stream with
    /// [`NatsError::Publish`], which carries the subject.
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` when `max_in_flight` is 0.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use weir_interop::{Nats, NatsSink};
    /// use weir_streams::prelude::*;
    ///
    /// let runtime = tokio::runtime::Runtime::new().unwrap();
    /// let nats = Nats::connect(runtime.handle(), "nats://127.0.0.1:4222").unwrap();
    /// let system = weir_actor::ActorSystem::new("js").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let sink = NatsSink::jetstream_publish(&nats, |n: &String| format!("orders.{n}"), 64).unwrap();
    /// let published = Source::from_iter(["a".to_string(), "b".to_string()]).run_with(sink, &materializer);
    /// assert_eq!(published.wait().unwrap(), 2);
    /// ```
    pub fn jetstream_publish<T, F>(
        nats: &Nats,
        subject_fn: F,
        max_in_flight: usize,
    ) -> Result<Sink<T, Completion<u64>>, ArgumentError>
    where
        T: Into<Bytes> + Send + 'static,
        F: Fn(&T) -> String + Clone + Send + Sync + 'static,
    {
        let (handle, context) = (nats.handle().clone(), nats.jetstream());
        Ok(Flow::<T>::new()
            .map_async(max_in_flight, move |element: T| {
                let subject = subject_fn(&element);
                let context = context.clone();
                InRuntime::new(&handle, async move {
                    let rejected = |source: async_nats::Error| {
                        StreamError::custom(NatsError::Publish {
                            subject: subject.clone(),
                            source,
                        })
                    };
                    let ack = context
                        .publish(subject.clone(), element.into())
                        .await
                        .map_err(|error| rejected(Box::new(error)))?;
                    ack.await.map_err(|error| rejected(Box::new(error)))?;
                    Ok(())
                })
            })?
            .to_mat(Sink::fold(0u64, |count, ()| count + 1), Keep::right))
    }
}
