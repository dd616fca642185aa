//! Core NATS: subscribe (at-most-once, drops counted) and publish.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use async_nats::Message;
use bytes::Bytes;
use futures_core::Stream;
use tokio::sync::mpsc;
use weir_streams::prelude::*;
use weir_streams::stage::{
    GraphStage, GraphStageLogic, MatContext, OutPort, SourceShape, StageContext, StageResult,
};
use weir_streams::{Completer, Completion, StreamError};

use super::{InRuntime, Nats, NatsError, NatsSink, NatsSource};

/// What [`NatsSource::subscribe`] materializes: when the subscription is
/// in place, and how many messages were dropped.
#[derive(Debug)]
#[non_exhaustive]
pub struct Subscription {
    /// The count of dropped messages.
    pub dropped: DroppedCount,
    /// Completes when the server has the subscription (messages published
    /// after it are received), or fails with [`NatsError::Subscribe`].
    pub subscribed: Completion<()>,
}

/// Messages a [`NatsSource::subscribe`] source dropped: because its
/// buffer was full (downstream slower than the publishers), or because the
/// client's own subscription channel was (the client reported a slow
/// consumer; seen on a [`Nats`] made by [`Nats::connect`] or
/// [`Nats::connect_with`]).
#[derive(Debug, Clone, Default)]
pub struct DroppedCount(Arc<AtomicU64>);

impl DroppedCount {
    /// The count so far. The client's drops are counted from its
    /// slow-consumer events, one per message; async-nats loses events when
    /// its own event queue (128) is full, so under a long burst this is a
    /// lower bound.
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    fn add(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// The subscriptions of one client by id, to count the client's
/// slow-consumer events (they name the subscription id) as drops.
#[derive(Debug, Clone, Default)]
pub(super) struct SlowConsumers(Arc<Mutex<HashMap<u64, DroppedCount>>>);

impl SlowConsumers {
    pub(super) fn dropped(&self, sid: u64) {
        if let Some(count) = self.0.lock().expect("not poisoned").get(&sid) {
            count.add();
        }
    }

    fn register(&self, sid: u64, count: &DroppedCount) -> Registered {
        self.0
            .lock()
            .expect("not poisoned")
            .insert(sid, count.clone());
        Registered {
            registry: self.clone(),
            sid,
        }
    }
}

/// Removes a subscription from [`SlowConsumers`] when dropped.
struct Registered {
    registry: SlowConsumers,
    sid: u64,
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.registry
            .0
            .lock()
            .expect("not poisoned")
            .remove(&self.sid);
    }
}

/// The id async-nats gave `subscriber`: its events name subscriptions by
/// it, and it is only shown by the `Debug` output (`Subscriber { sid: 4, .. }`).
fn subscription_id(subscriber: &async_nats::Subscriber) -> Option<u64> {
    let shown = format!("{subscriber:?}");
    let rest = shown.split_once("sid: ")?.1;
    let digits = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..digits].parse().ok()
}

impl NatsSource {
    /// A source of the messages published on `subject` (wildcards
    /// allowed) from when the stream starts: at-most-once, like core NATS.
    ///
    /// Core NATS cannot slow a publisher down, so messages wait in a
    /// buffer of `buffer` (at least 1); when downstream is too slow and it
    /// is full, new messages are dropped and counted in
    /// [`Subscription::dropped`], never silently. A task on the client's
    /// runtime drains the client's subscription channel into that buffer
    /// as messages arrive; when even that task falls behind (the runtime is
    /// busy) and the client's channel (`subscription_capacity`) fills, the
    /// client drops messages too, and those are counted as well (see
    /// [`DroppedCount`]). Cancelling the stream unsubscribes.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use weir_interop::{Nats, NatsSource, Subscription};
    /// use weir_streams::prelude::*;
    ///
    /// let runtime = tokio::runtime::Runtime::new().unwrap();
    /// let nats = Nats::connect(runtime.handle(), "nats://127.0.0.1:4222").unwrap();
    /// let system = weir_actor::ActorSystem::new("core").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let (subscription, got) = NatsSource::subscribe(&nats, "events.>", 1024)
    ///     .take(1)
    ///     .to_mat(Sink::collect(), Keep::both)
    ///     .run(&materializer);
    /// let Subscription { dropped, subscribed, .. } = subscription;
    /// subscribed.wait().unwrap();
    /// runtime.block_on(nats.client().publish("events.a", "hi".into())).unwrap();
    /// assert_eq!(&got.wait().unwrap()[0].payload[..], b"hi");
    /// assert_eq!(dropped.get(), 0);
    /// ```
    pub fn subscribe(
        nats: &Nats,
        subject: impl Into<String>,
        buffer: usize,
    ) -> Source<Message, Subscription> {
        Source::from_graph(Subscribe {
            nats: nats.clone(),
            subject: subject.into(),
            buffer: buffer.max(1),
        })
    }
}

struct Subscribe {
    nats: Nats,
    subject: String,
    buffer: usize,
}

type Item = Result<Message, NatsError>;

struct SubscribeLogic {
    shape: SourceShape<Message>,
    nats: Nats,
    subject: String,
    dropped: DroppedCount,
    subscribed: Option<Completer<()>>,
    sender: Option<mpsc::Sender<Item>>,
    receiver: mpsc::Receiver<Item>,
    waker: Option<Waker>,
}

impl GraphStage for Subscribe {
    type Shape = SourceShape<Message>;
    type Mat = Subscription;

    fn name(&self) -> &'static str {
        "nats-subscribe"
    }

    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, Subscription) {
        let (sender, receiver) = mpsc::channel(self.buffer);
        let (completer, subscribed) = Completer::new();
        let dropped = DroppedCount::default();
        let logic = SubscribeLogic {
            shape: SourceShape::new(),
            nats: self.nats.clone(),
            subject: self.subject.clone(),
            dropped: dropped.clone(),
            subscribed: Some(completer),
            sender: Some(sender),
            receiver,
            waker: None,
        };
        (
            Box::new(logic),
            Subscription {
                dropped,
                subscribed,
            },
        )
    }
}

impl SubscribeLogic {
    fn deliver(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let out = self.shape.out;
        let Some(waker) = self.waker.as_ref() else {
            return Ok(());
        };
        if !ctx.is_available(out) {
            return Ok(());
        }
        match self.receiver.poll_recv(&mut Context::from_waker(waker)) {
            Poll::Ready(Some(Ok(message))) => ctx.push(out, message),
            Poll::Ready(Some(Err(error))) => Err(ctx.attribute(StreamError::custom(error))),
            Poll::Ready(None) => {
                ctx.complete(out);
                Ok(())
            }
            Poll::Pending => Ok(()),
        }
    }
}

impl GraphStageLogic for SubscribeLogic {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let wake = ctx.async_callback(|this: &mut Self, (), ctx| this.deliver(ctx));
        let ready = ctx.async_callback(|this: &mut Self, outcome: Result<(), String>, _| {
            if let Some(mut completer) = this.subscribed.take() {
                completer.complete(outcome.map_err(StreamError::msg));
            }
            Ok(())
        });
        self.waker = Some(wake.waker(()));
        let sender = self.sender.take().expect("started once");
        let (client, subject) = (self.nats.client().clone(), self.subject.clone());
        let dropped = self.dropped.clone();
        let slow_consumers = self.nats.slow_consumers.clone();
        self.nats.handle().spawn(async move {
            let mut subscriber = match client.subscribe(subject.clone()).await {
                Ok(subscriber) => subscriber,
                Err(error) => {
                    let error = NatsError::Subscribe {
                        subject,
                        source: Box::new(error),
                    };
                    ready.invoke(Err(error.to_string()));
                    let _ = sender.send(Err(error)).await;
                    return;
                }
            };
            // Drops the client reports for this subscription count here.
            let _registered = subscription_id(&subscriber)
                .map(|sid| slow_consumers.register(sid, &dropped));
            // The server has the subscription once a flush round-trips.
            let _ = client.flush().await;
            ready.invoke(Ok(()));
            loop {
                tokio::select! {
                    () = sender.closed() => break,
                    next = std::future::poll_fn(|cx| std::pin::Pin::new(&mut subscriber).poll_next(cx)) => {
                        let Some(message) = next else { break };
                        match sender.try_send(Ok(message)) {
                            Ok(()) => {}
                            Err(mpsc::error::TrySendError::Full(_)) => dropped.add(),
                            Err(mpsc::error::TrySendError::Closed(_)) => break,
                        }
                    }
                }
            }
            // Dropping the subscriber unsubscribes.
        });
        Ok(())
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.deliver(ctx)
    }

    fn on_failure(&mut self, error: &StreamError) {
        if let Some(mut completer) = self.subscribed.take() {
            completer.complete(Err(error.clone()));
        }
    }

    fn post_stop(&mut self) {
        // Closing the channel ends the task, which unsubscribes.
        self.receiver.close();
        if let Some(mut completer) = self.subscribed.take() {
            completer.complete(Err(StreamError::msg(
                "the source stopped before subscribing",
            )));
        }
    }
}

impl NatsSink {
    /// How long [`publish`](Self::publish) waits for room in the client's
    /// buffer, and for the server to confirm its final flush, before it
    /// fails with [`NatsError::TimedOut`]: async-nats' own request time-out.
    pub const DEFAULT_PUBLISH_TIMEOUT: Duration = Duration::from_secs(10);

    /// A sink that publishes every element on core NATS on the subject
    /// `subject_fn` gives it (fire and forget: at-most-once), waiting while
    /// the client's outgoing buffer is full, and flushes when upstream
    /// completes. It materializes the number published; a publish the
    /// client refuses (an invalid subject, a payload over the server's
    /// limit) fails the stream with [`NatsError::Publish`].
    ///
    /// Each wait is bounded by
    /// [`DEFAULT_PUBLISH_TIMEOUT`](Self::DEFAULT_PUBLISH_TIMEOUT): when the server
    /// is unreachable the stream fails with [`NatsError::TimedOut`] instead
    /// of waiting for ever. [`publish_within`](Self::publish_within) sets
    /// another bound.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use weir_interop::{Nats, NatsSink};
    /// use weir_streams::prelude::*;
    ///
    /// let runtime = tokio::runtime::Runtime::new().unwrap();
    /// let nats = Nats::connect(runtime.handle(), "nats://127.0.0.1:4222").unwrap();
    /// let system = weir_actor::ActorSystem::new("core").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let published = Source::from_iter(["a", "b"])
    ///     .run_with(NatsSink::publish(&nats, |_: &&str| "events.x".to_string()), &materializer);
    /// assert_eq!(published.wait().unwrap(), 2);
    /// ```
    pub fn publish<T, F>(nats: &Nats, subject_fn: F) -> Sink<T, Completion<u64>>
    where
        T: Into<Bytes> + Send + 'static,
        F: Fn(&T) -> String + Clone + Send + Sync + 'static,
    {
        Self::publish_within(nats, Self::DEFAULT_PUBLISH_TIMEOUT, subject_fn)
    }

    /// [`publish`](Self::publish), with each wait bounded by `timeout`: a
    /// publish waiting for room in the client's full buffer, and the final
    /// flush waiting for the server to confirm what was sent. When either
    /// takes longer (the server is unreachable or too slow to keep up), the
    /// stream fails with [`NatsError::TimedOut`]. A zero `timeout` allows
    /// no wait at all.
    ///
    /// The time-out runs on the client's tokio runtime (which async-nats
    /// needs with its timers enabled anyway).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use weir_interop::{Nats, NatsSink};
    /// use weir_streams::prelude::*;
    ///
    /// let runtime = tokio::runtime::Runtime::new().unwrap();
    /// let nats = Nats::connect(runtime.handle(), "nats://127.0.0.1:4222").unwrap();
    /// let system = weir_actor::ActorSystem::new("core").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let sink = NatsSink::publish_within(&nats, Duration::from_secs(2), |_: &&str| {
    ///     "events.x".to_string()
    /// });
    /// let published = Source::from_iter(["a", "b"]).run_with(sink, &materializer);
    /// assert_eq!(published.wait().unwrap(), 2);
    /// ```
    pub fn publish_within<T, F>(
        nats: &Nats,
        timeout: Duration,
        subject_fn: F,
    ) -> Sink<T, Completion<u64>>
    where
        T: Into<Bytes> + Send + 'static,
        F: Fn(&T) -> String + Clone + Send + Sync + 'static,
    {
        let (client, handle) = (nats.client().clone(), nats.handle().clone());
        // A last `None` after upstream completes flushes the connection.
        Flow::<T>::new()
            .map(Some)
            .concat(Source::single(()).map(|()| None))
            .map_async(1, move |element: Option<T>| {
                let client = client.clone();
                let subject = element.as_ref().map(&subject_fn);
                // In the runtime's context: the time-out is a tokio timer.
                InRuntime::new(&handle, async move {
                    let (Some(element), Some(subject)) = (element, subject) else {
                        let flushed = tokio::time::timeout(timeout, client.flush()).await;
                        return match flushed {
                            Ok(flushed) => {
                                flushed.map(|()| 0).map_err(|error| NatsError::Publish {
                                    subject: String::new(),
                                    source: Box::new(error),
                                })
                            }
                            Err(_) => Err(NatsError::TimedOut {
                                subject: None,
                                after: timeout,
                            }),
                        }
                        .map_err(StreamError::custom);
                    };
                    let published = tokio::time::timeout(
                        timeout,
                        client.publish(subject.clone(), element.into()),
                    )
                    .await;
                    match published {
                        Ok(published) => {
                            published.map(|()| 1).map_err(|error| NatsError::Publish {
                                subject,
                                source: Box::new(error),
                            })
                        }
                        Err(_) => Err(NatsError::TimedOut {
                            subject: Some(subject),
                            after: timeout,
                        }),
                    }
                    .map_err(StreamError::custom)
                })
            })
            .expect("parallelism 1 is valid")
            .to_mat(Sink::fold(0u64, |count, n: u64| count + n), Keep::right)
    }
}
