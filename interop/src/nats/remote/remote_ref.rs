//! [`RemoteRef`]: tells through a credit window and a bounded outbox, asks
//! by NATS request/reply, and death watch (in [`watch`](super::watch)).

use std::any::type_name;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::sync::mpsc;
use weir_actor::{ActorPath, ActorRef, DeadLetterReason};

use super::wire::{self, Envelope, Reply};
use super::{RemoteAskError, RemoteError, RemoteTerminated, Shared, next, watch};
use crate::nats::InRuntime;

/// A reference to an actor of another system, taking `M` (see
/// [`RemoteActorSystem::resolve`](super::RemoteActorSystem::resolve)).
/// Clones share one window and outbox.
pub struct RemoteRef<M> {
    target: Arc<Target>,
    _messages: PhantomData<fn(M)>,
}

impl<M> Clone for RemoteRef<M> {
    fn clone(&self) -> Self {
        Self {
            target: self.target.clone(),
            _messages: PhantomData,
        }
    }
}

impl<M> fmt::Debug for RemoteRef<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteRef")
            .field("uri", &self.target.uri)
            .finish_non_exhaustive()
    }
}

struct Target {
    shared: Arc<Shared>,
    uri: String,
    system: String,
    path: String,
    subject: String,
    credit_to: String,
    /// Tells handed to the sender task and not yet published.
    queued: Arc<AtomicUsize>,
    outbox: mpsc::UnboundedSender<Bytes>,
    dropped: AtomicU64,
    dead_letter_path: Option<ActorPath>,
}

impl Target {
    /// Count `msg` as dropped and publish it as a dead letter here.
    fn drop_letter<M: Send + 'static>(&self, msg: M) {
        self.dropped.fetch_add(1, Ordering::Relaxed);
        if let Some(path) = &self.dead_letter_path {
            self.shared.system.event_stream().publish_dead_letter(
                path,
                msg,
                DeadLetterReason::Dropped,
            );
        }
    }
}

impl<M: Serialize + Send + 'static> RemoteRef<M> {
    pub(super) fn new(shared: Arc<Shared>, uri: &str, system: &str, path: &str) -> Self {
        let (outbox, receiver) = mpsc::unbounded_channel();
        let queued = Arc::new(AtomicUsize::new(0));
        let credit_to = shared.nats.client().new_inbox();
        let subject = wire::actor_subject(system, path);
        let task = shared.nats.handle().spawn(send_loop(
            shared.nats.client().clone(),
            subject.clone(),
            credit_to.clone(),
            receiver,
            queued.clone(),
            shared.settings.window,
            shared.settings.heartbeat_timeout,
        ));
        shared
            .tasks
            .lock()
            .expect("not poisoned")
            .push(task.abort_handle());
        let dead_letter_path = format!("weir://{system}/user/{path}").parse().ok();
        Self {
            target: Arc::new(Target {
                shared,
                uri: uri.to_owned(),
                system: system.to_owned(),
                path: path.to_owned(),
                subject,
                credit_to,
                queued,
                outbox,
                dropped: AtomicU64::new(0),
                dead_letter_path,
            }),
            _messages: PhantomData,
        }
    }

    /// The actor's URI.
    pub fn uri(&self) -> &str {
        &self.target.uri
    }

    /// Tells that found the outbox full and became dead letters here.
    pub fn dropped(&self) -> u64 {
        self.target.dropped.load(Ordering::Relaxed)
    }

    /// Tells waiting for credit (or to be published).
    pub fn queued(&self) -> usize {
        self.target.queued.load(Ordering::Relaxed)
    }

    /// Send `msg`: published at once while the destination's window has
    /// room, else queued in the outbox; when the outbox is full it becomes
    /// a dead letter of this system (`DeadLetterReason::Dropped`) and is
    /// counted in [`dropped`](Self::dropped).
    ///
    /// # Errors
    ///
    /// [`RemoteError::Encode`] when `msg` does not encode.
    pub fn tell(&self, msg: M) -> Result<(), RemoteError> {
        let target = &*self.target;
        let settings = &target.shared.settings;
        let cap = settings.outbox.max(1);
        let room = target
            .queued
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |queued| {
                (queued < cap).then_some(queued + 1)
            });
        if room.is_err() {
            target.drop_letter(msg);
            return Ok(());
        }
        let encoded = postcard::to_allocvec(&msg).and_then(|body| {
            postcard::to_allocvec(&Envelope {
                type_name: type_name::<M>(),
                credit_to: Some(&target.credit_to),
                credit_every: settings.credit_batch(),
                body: &body,
            })
        });
        let bytes = match encoded {
            Ok(bytes) => bytes,
            Err(error) => {
                target.queued.fetch_sub(1, Ordering::Relaxed);
                return Err(RemoteError::Encode(error.to_string()));
            }
        };
        if target.outbox.send(Bytes::from(bytes)).is_err() {
            // The sender task is gone with its system: a dead letter.
            target.queued.fetch_sub(1, Ordering::Relaxed);
            target.drop_letter(msg);
        }
        Ok(())
    }

    /// Ask the actor (exposed with
    /// [`expose_ask`](super::RemoteActorSystem::expose_ask)) and wait for
    /// its answer of type `R`, at most `timeout`. Asks use NATS
    /// request/reply and are not counted against the tell window. The
    /// future runs on any executor.
    pub fn ask<R: DeserializeOwned + Send + 'static>(
        &self,
        msg: M,
        timeout: Duration,
    ) -> impl Future<Output = Result<R, RemoteAskError>> + Send + 'static {
        let encoded = postcard::to_allocvec(&msg).and_then(|body| {
            postcard::to_allocvec(&Envelope {
                type_name: type_name::<M>(),
                credit_to: None,
                credit_every: 0,
                body: &body,
            })
        });
        let client = self.target.shared.nats.client().clone();
        let subject = self.target.subject.clone();
        InRuntime::new(self.target.shared.nats.handle(), async move {
            let bytes = encoded.map_err(|e| RemoteAskError::Encode(e.to_string()))?;
            let request = client.request(subject, bytes.into());
            let answer = match tokio::time::timeout(timeout, request).await {
                Err(_) => return Err(RemoteAskError::Timeout(timeout)),
                Ok(Err(error)) => {
                    return Err(match error.kind() {
                        async_nats::RequestErrorKind::NoResponders => RemoteAskError::NoResponders,
                        async_nats::RequestErrorKind::TimedOut => RemoteAskError::Timeout(timeout),
                        _ => RemoteAskError::Nats(Box::new(error)),
                    });
                }
                Ok(Ok(answer)) => answer,
            };
            match postcard::from_bytes::<Reply>(&answer.payload) {
                Ok(Reply::Ok(body)) => postcard::from_bytes::<R>(&body)
                    .map_err(|e| RemoteAskError::Decode(e.to_string())),
                Ok(Reply::Err(failure)) => Err(RemoteAskError::Remote(failure)),
                Err(error) => Err(RemoteAskError::Decode(error.to_string())),
            }
        })
    }

    /// Tell `watcher` a [`RemoteTerminated`] once: when the actor stops
    /// (its system says so); at once when it is already gone (nothing is
    /// exposed at its path) or its system is not running; or when its
    /// system sends no heartbeat for the configured time-out, measured on
    /// this actor system's clock (so a `TestClock` drives it).
    pub fn watch(&self, watcher: &ActorRef<RemoteTerminated>) {
        let target = &*self.target;
        watch::watch(
            &target.shared,
            &target.system,
            &target.path,
            &target.uri,
            watcher,
        );
    }
}

/// Publish queued tells while the window has room; credit returned by the
/// receiver reopens it. Credit can be lost with the tells it was for (core
/// NATS drops what no one is subscribed to, for example while the other
/// system restarts): a full window that gets no credit for `credit_lost`
/// is taken as lost and reopened.
async fn send_loop(
    client: async_nats::Client,
    subject: String,
    credit_to: String,
    mut outbox: mpsc::UnboundedReceiver<Bytes>,
    queued: Arc<AtomicUsize>,
    window: u32,
    credit_lost: Duration,
) {
    let Ok(mut credits) = client.subscribe(credit_to).await else {
        return;
    };
    let mut in_flight = 0u32;
    let stalled = tokio::time::sleep(credit_lost);
    tokio::pin!(stalled);
    loop {
        tokio::select! {
            biased;
            () = &mut stalled, if in_flight >= window => in_flight = 0,
            credit = next(&mut credits) => match credit {
                Some(credit) => {
                    let n = credit
                        .payload
                        .get(..4)
                        .and_then(|b| b.try_into().ok())
                        .map_or(0, u32::from_le_bytes);
                    in_flight = in_flight.saturating_sub(n);
                    stalled.as_mut().reset(tokio::time::Instant::now() + credit_lost);
                }
                None => return,
            },
            tell = outbox.recv(), if in_flight < window => match tell {
                Some(bytes) => {
                    queued.fetch_sub(1, Ordering::Relaxed);
                    in_flight += 1;
                    if in_flight == window {
                        stalled.as_mut().reset(tokio::time::Instant::now() + credit_lost);
                    }
                    if client.publish(subject.clone(), bytes).await.is_err() {
                        return;
                    }
                }
                None => return,
            },
        }
    }
}
