//! Death watch across systems: every system publishes heartbeats on its
//! actor system's scheduler and a notice when an exposed actor stops; a
//! watch turns them into one [`RemoteTerminated`]. Time-outs are measured
//! on the watching actor system's clock, so a `TestClock` drives them.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use async_nats::Subscriber;
use bytes::Bytes;
use weir_actor::{ActorRef, ActorSystem, Cancellable, ScheduleError};

use super::{Shared, next, wire};

/// The notice that a watched remote actor is gone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteTerminated {
    /// The actor's URI.
    pub uri: String,
    /// How it was found gone.
    pub reason: TerminationReason,
}

/// How a watched remote actor was found gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TerminationReason {
    /// Its system said it stopped, or that nothing is exposed at its path.
    Stopped,
    /// Its system sent no heartbeat for the configured time-out, or no
    /// system of that name is running.
    Unreachable,
}

/// Publish `shared`'s heartbeats every `heartbeat_interval` of its actor
/// system's clock, the first one interval from now, until cancelled.
pub(super) fn start_heartbeats(shared: &Shared) -> Result<Cancellable, ScheduleError> {
    let (client, handle) = (shared.nats.client().clone(), shared.nats.handle().clone());
    let subject = wire::heartbeat_subject(&shared.name);
    let interval = shared.settings.heartbeat_interval;
    shared
        .system
        .scheduler()
        .schedule_fn_with_fixed_delay(interval, interval, move || {
            let (client, subject) = (client.clone(), subject.clone());
            handle.spawn(async move {
                let _ = client.publish(subject, Bytes::new()).await;
            });
            true
        })
}

/// What this system has heard of other systems' heartbeats (it hears all
/// of them from its start).
#[derive(Default)]
pub(super) struct Peers(Mutex<HashMap<String, Arc<Peer>>>);

pub(super) struct Peer {
    /// When the last heartbeat came, on this actor system's clock.
    last_beat: Mutex<Option<Instant>>,
    beats: AtomicU64,
}

impl Peers {
    /// Heartbeats heard from `system` so far.
    pub(super) fn beats(&self, system: &str) -> u64 {
        self.0
            .lock()
            .expect("not poisoned")
            .get(system)
            .map_or(0, |peer| peer.beats.load(Ordering::Acquire))
    }
}

/// `system`'s heartbeats as `shared` hears them.
fn peer(shared: &Shared, system: &str) -> Arc<Peer> {
    shared
        .peers
        .0
        .lock()
        .expect("not poisoned")
        .entry(system.to_owned())
        .or_insert_with(|| {
            Arc::new(Peer {
                last_beat: Mutex::new(None),
                beats: AtomicU64::new(0),
            })
        })
        .clone()
}

/// Record every system's heartbeats (`beats` is subscribed to all of
/// them) at the time of this actor system's clock.
pub(super) async fn hear_heartbeats(shared: Arc<Shared>, mut beats: Subscriber) {
    while let Some(beat) = next(&mut beats).await {
        let Some(system) = wire::heartbeat_system(&beat.subject) else {
            continue;
        };
        let peer = peer(&shared, system);
        *peer.last_beat.lock().expect("not poisoned") = Some(shared.system.scheduler().now());
        peer.beats.fetch_add(1, Ordering::AcqRel);
    }
}

/// Tells the watcher once.
struct Notice {
    told: AtomicBool,
    watcher: ActorRef<RemoteTerminated>,
    uri: String,
}

impl Notice {
    fn tell(&self, reason: TerminationReason) {
        if !self.told.swap(true, Ordering::AcqRel) {
            self.watcher.tell(RemoteTerminated {
                uri: self.uri.clone(),
                reason,
            });
        }
    }

    fn is_told(&self) -> bool {
        self.told.load(Ordering::Acquire)
    }
}

/// Watch the actor at `path` of `system` for `watcher` (see
/// [`RemoteRef::watch`](super::RemoteRef::watch)).
pub(super) fn watch(
    shared: &Arc<Shared>,
    system: &str,
    path: &str,
    uri: &str,
    watcher: &ActorRef<RemoteTerminated>,
) {
    let notice = Arc::new(Notice {
        told: AtomicBool::new(false),
        watcher: watcher.clone(),
        uri: uri.to_owned(),
    });
    watch_heartbeats(shared, &peer(shared, system), &notice);

    // Stop notices, after asking whether the actor is there at all.
    let client = shared.nats.client().clone();
    let (system, path) = (system.to_owned(), path.to_owned());
    let task = shared.nats.handle().spawn(async move {
        let Ok(mut down) = client.subscribe(wire::down_subject(&system)).await else {
            notice.tell(TerminationReason::Unreachable);
            return;
        };
        // Once the server has the subscription, a stop is either noticed
        // there or already answered by the probe.
        let _ = client.flush().await;
        let probe = client
            .request(wire::probe_subject(&system), Bytes::from(path.clone()))
            .await;
        match probe {
            Ok(answer) if answer.payload.as_ref() == wire::GONE => {
                notice.tell(TerminationReason::Stopped);
                return;
            }
            Err(error) if error.kind() == async_nats::RequestErrorKind::NoResponders => {
                notice.tell(TerminationReason::Unreachable);
                return;
            }
            // There, or no answer in time: the notices and the heartbeats
            // decide.
            _ => {}
        }
        stopped(&mut down, &path, &notice).await;
    });
    shared
        .tasks
        .lock()
        .expect("not poisoned")
        .push(task.abort_handle());
}

async fn stopped(down: &mut Subscriber, path: &str, notice: &Notice) {
    while let Some(stopped) = next(down).await {
        if notice.is_told() {
            return;
        }
        if stopped.payload == path.as_bytes() {
            notice.tell(TerminationReason::Stopped);
            return;
        }
    }
}

/// Every heartbeat interval of the actor system's clock, tell the watcher
/// `Unreachable` if no heartbeat came for the time-out (counted from the
/// watch's start at the earliest).
fn watch_heartbeats(shared: &Shared, peer: &Arc<Peer>, notice: &Arc<Notice>) {
    let system: ActorSystem = shared.system.clone();
    let started = system.scheduler().now();
    let timeout = shared.settings.heartbeat_timeout;
    let (peer, notice) = (peer.clone(), notice.clone());
    let check = move || {
        if notice.is_told() {
            return false;
        }
        let last = peer
            .last_beat
            .lock()
            .expect("not poisoned")
            .map_or(started, |beat| beat.max(started));
        if system.scheduler().now().saturating_duration_since(last) >= timeout {
            notice.tell(TerminationReason::Unreachable);
            return false;
        }
        true
    };
    let interval = shared.settings.heartbeat_interval;
    // Fails only when the system is terminating (or a zero interval, which
    // `start` refused): then nobody is left to tell.
    let _ = shared
        .system
        .scheduler()
        .schedule_fn_with_fixed_delay(interval, interval, check);
}
