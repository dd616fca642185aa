//! Exposed actors: how the serving task hands a remote message to one,
//! and when the sender's credit comes back.

use std::any::type_name;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_nats::Subject;
use bytes::Bytes;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::sync::mpsc;
use tokio::task::AbortHandle;
use weir_actor::ActorRef;

use super::RemoteFailure;
use super::wire::{Envelope, Reply};
use crate::nats::Nats;

/// Where a tell's credit goes back to, and how many tells one credit
/// message covers.
pub(super) struct Credit {
    pub(super) to: String,
    pub(super) every: u32,
}

/// An exposed actor, as the serving task delivers to it.
pub(super) trait Exposed: Send + Sync {
    /// Hand the message over. A tell the actor's mailbox takes at once
    /// leaves its `credit` to the serving task; one that has to wait for
    /// room takes it, and returns it once the mailbox took the message.
    fn deliver(
        &self,
        envelope: &Envelope<'_>,
        reply: Option<Subject>,
        credit: &mut Option<Credit>,
    ) -> Result<(), RemoteFailure>;

    fn actor_type(&self) -> &'static str;
}

fn check_type(envelope: &Envelope<'_>, expected: &'static str) -> Result<(), RemoteFailure> {
    if envelope.type_name == expected {
        Ok(())
    } else {
        Err(RemoteFailure::WrongType {
            expected: expected.to_owned(),
            got: envelope.type_name.to_owned(),
        })
    }
}

fn decode<T: DeserializeOwned>(body: &[u8]) -> Result<T, RemoteFailure> {
    postcard::from_bytes(body).map_err(|error| RemoteFailure::Undecodable(error.to_string()))
}

/// An actor exposed for tells. A tell its mailbox takes at once (it is
/// unbounded, or has room, and no earlier tell waits) is told there and
/// then; otherwise it goes to a task of the actor's own that `send`s it
/// into the mailbox, waiting for room, and only then returns its credit.
/// So an actor with a bounded mailbox that falls behind holds its
/// senders' windows shut (and nothing is dropped), without stalling the
/// other exposed actors of the system.
pub(super) struct Told<M: Send + 'static> {
    actor: ActorRef<M>,
    deliveries: mpsc::UnboundedSender<(M, Option<Credit>)>,
    /// Tells handed to the task and not yet in the mailbox.
    waiting: Arc<AtomicUsize>,
    task: AbortHandle,
}

impl<M: Send + 'static> Told<M> {
    pub(super) fn new(actor: &ActorRef<M>, nats: &Nats) -> Self {
        let (deliveries, queue) = mpsc::unbounded_channel();
        let waiting = Arc::new(AtomicUsize::new(0));
        let task = nats.handle().spawn(deliver_tells(
            actor.clone(),
            nats.client().clone(),
            queue,
            waiting.clone(),
        ));
        Self {
            actor: actor.clone(),
            deliveries,
            waiting,
            task: task.abort_handle(),
        }
    }
}

impl<M: Send + 'static> Drop for Told<M> {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Send each tell into the actor's mailbox (waiting for room), then count
/// its credit, returned every `credit.every` tells per sender. What is
/// owed below that never holds a window shut: every sender (a `RemoteRef`
/// and its clones) has its own credit subject and one destination, so
/// only this task and the serving task owe it credit, each less than a
/// quarter of its window.
async fn deliver_tells<M: Send + 'static>(
    actor: ActorRef<M>,
    client: async_nats::Client,
    mut queue: mpsc::UnboundedReceiver<(M, Option<Credit>)>,
    waiting: Arc<AtomicUsize>,
) {
    let mut owed: HashMap<String, u32> = HashMap::new();
    while let Some((msg, credit)) = queue.recv().await {
        actor.send(msg).await;
        waiting.fetch_sub(1, Ordering::AcqRel);
        if let Some(Credit { to, every }) = credit {
            let count = owed.entry(to.clone()).or_default();
            *count += 1;
            if *count >= every.max(1) {
                let n = *count;
                owed.remove(&to);
                return_credit(&client, to, n).await;
            }
        }
    }
}

pub(super) async fn return_credit(client: &async_nats::Client, to: String, n: u32) {
    let _ = client
        .publish(to, Bytes::copy_from_slice(&n.to_le_bytes()))
        .await;
}

impl<M: DeserializeOwned + Send + 'static> Exposed for Told<M> {
    fn deliver(
        &self,
        envelope: &Envelope<'_>,
        reply: Option<Subject>,
        credit: &mut Option<Credit>,
    ) -> Result<(), RemoteFailure> {
        check_type(envelope, type_name::<M>())?;
        if reply.is_some() {
            return Err(RemoteFailure::WrongKind(format!(
                "the actor is exposed for tells of {}, not asks",
                type_name::<M>()
            )));
        }
        let mut msg = decode::<M>(envelope.body)?;
        // Only the serving task adds to `waiting`: at 0 no earlier tell
        // waits, and telling now keeps the order.
        if self.waiting.load(Ordering::Acquire) == 0 {
            match self.actor.try_tell(msg) {
                Ok(()) => return Ok(()),
                Err(full) => msg = full.into_inner(),
            }
        }
        self.waiting.fetch_add(1, Ordering::AcqRel);
        // Gone only with the entry, which holds this sender.
        let _ = self.deliveries.send((msg, credit.take()));
        Ok(())
    }

    fn actor_type(&self) -> &'static str {
        type_name::<M>()
    }
}

pub(super) struct Asked<Req, Resp, M: Send + 'static, F> {
    pub(super) actor: ActorRef<M>,
    pub(super) make: F,
    pub(super) timeout: Duration,
    pub(super) nats: Nats,
    pub(super) _types: std::marker::PhantomData<fn(Req) -> Resp>,
}

impl<Req, Resp, M, F> Exposed for Asked<Req, Resp, M, F>
where
    Req: DeserializeOwned + Send + 'static,
    Resp: Serialize + Send + 'static,
    M: Send + 'static,
    F: Fn(Req, ActorRef<Resp>) -> M + Clone + Send + Sync + 'static,
{
    fn deliver(
        &self,
        envelope: &Envelope<'_>,
        reply: Option<Subject>,
        _credit: &mut Option<Credit>,
    ) -> Result<(), RemoteFailure> {
        check_type(envelope, type_name::<Req>())?;
        let Some(reply) = reply else {
            return Err(RemoteFailure::WrongKind(format!(
                "the actor is exposed for asks of {}, not tells",
                type_name::<Req>()
            )));
        };
        let question = decode::<Req>(envelope.body)?;
        let make = self.make.clone();
        let answer = weir_actor::ask(&self.actor, move |r| make(question, r), self.timeout);
        let client = self.nats.client().clone();
        self.nats.handle().spawn(async move {
            let reply_body = match answer.await {
                Ok(answer) => match postcard::to_allocvec(&answer) {
                    Ok(bytes) => Reply::Ok(bytes),
                    Err(error) => Reply::Err(RemoteFailure::NoAnswer(format!(
                        "the answer did not encode: {error}"
                    ))),
                },
                Err(error) => Reply::Err(RemoteFailure::NoAnswer(error.to_string())),
            };
            if let Ok(bytes) = postcard::to_allocvec(&reply_body) {
                let _ = client.publish(reply, bytes.into()).await;
            }
        });
        Ok(())
    }

    fn actor_type(&self) -> &'static str {
        type_name::<M>()
    }
}
