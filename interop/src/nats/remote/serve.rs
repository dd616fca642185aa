//! The serving tasks: one subscription for every exposed actor of a
//! system (what cannot be delivered becomes a dead letter with a reason),
//! and one answering watchers' probes.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use async_nats::{Message, Subscriber};
use bytes::Bytes;
use weir_actor::{ActorPath, DeadLetterReason};

use super::exposed::{Credit, return_credit};
use super::wire::{self, Envelope, Reply};
use super::{RemoteFailure, RemoteLetter, Shared, next};

/// The serving loop: hand each message to its exposed actor (a tell's
/// credit goes back once the actor's mailbox took it) and report what
/// cannot be delivered.
pub(super) async fn serve(shared: Arc<Shared>, mut subscriber: Subscriber) {
    let prefix = format!("weir.{}.user.", shared.name);
    let mut owed: HashMap<String, u32> = HashMap::new();
    while let Some(message) = next(&mut subscriber).await {
        let path = message
            .subject
            .strip_prefix(prefix.as_str())
            .unwrap_or_default()
            .replace('.', "/");
        let mut credit = None;
        let outcome = match postcard::from_bytes::<Envelope<'_>>(&message.payload) {
            Err(error) => Err((RemoteFailure::Undecodable(error.to_string()), None)),
            Ok(envelope) => {
                credit = envelope.credit_to.map(|to| Credit {
                    to: to.to_owned(),
                    every: envelope.credit_every,
                });
                let entry = shared
                    .exposed
                    .lock()
                    .expect("not poisoned")
                    .get(&path)
                    .cloned();
                match entry {
                    None => Err((RemoteFailure::UnknownPath(path.clone()), None)),
                    Some(entry) => entry
                        .exposed
                        .deliver(&envelope, message.reply.clone(), &mut credit)
                        .map_err(|failure| (failure, Some(entry.exposed.actor_type()))),
                }
            }
        };
        if let Err((failure, actor_type)) = outcome {
            undeliverable(&shared, &message, &path, failure, actor_type).await;
        }
        // Credit for a tell the mailbox took at once, or that was not
        // delivered, in batches.
        if let Some(Credit { to, every }) = credit {
            let count = owed.entry(to.clone()).or_default();
            *count += 1;
            if *count >= every.max(1) {
                let n = *count;
                owed.remove(&to);
                return_credit(shared.nats.client(), to, n).await;
            }
        }
    }
}

/// Count and report a message that could not be delivered: a dead letter
/// with a reason here, and the failure as the answer to an ask.
async fn undeliverable(
    shared: &Shared,
    message: &Message,
    path: &str,
    failure: RemoteFailure,
    actor_type: Option<&'static str>,
) {
    shared.undelivered.fetch_add(1, Ordering::Relaxed);
    let reason = match (&failure, actor_type) {
        (RemoteFailure::UnknownPath(_), _) => DeadLetterReason::NoMatch,
        (RemoteFailure::WrongType { .. }, Some(actor_type)) => {
            DeadLetterReason::WrongMessageType { actor_type }
        }
        _ => DeadLetterReason::Undeliverable,
    };
    let recipient = format!("weir://{}/user/{path}", shared.name)
        .parse::<ActorPath>()
        .or_else(|_| format!("weir://{}/user", shared.name).parse::<ActorPath>());
    if let Some(reply) = &message.reply
        && let Ok(bytes) = postcard::to_allocvec(&Reply::Err(failure.clone()))
    {
        let _ = shared
            .nats
            .client()
            .publish(reply.clone(), bytes.into())
            .await;
    }
    if let Ok(recipient) = recipient {
        shared.system.event_stream().publish_dead_letter(
            &recipient,
            RemoteLetter {
                subject: message.subject.to_string(),
                failure,
                payload: message.payload.clone(),
            },
            reason,
        );
    }
}

/// Answer watchers asking whether an actor is exposed at a path.
pub(super) async fn answer_probes(shared: Arc<Shared>, mut probes: Subscriber) {
    while let Some(probe) = next(&mut probes).await {
        let Some(reply) = probe.reply else { continue };
        let path = String::from_utf8_lossy(&probe.payload);
        let there = shared
            .exposed
            .lock()
            .expect("not poisoned")
            .contains_key(path.as_ref());
        let answer = if there { wire::THERE } else { wire::GONE };
        let _ = shared
            .nats
            .client()
            .publish(reply, Bytes::from_static(answer))
            .await;
    }
}
