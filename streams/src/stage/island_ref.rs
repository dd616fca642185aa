//! [`IslandRef`]: where the messages for one island go.
//!
//! A stage's async callbacks and timers reach its island through this
//! address, whatever runs the island: a task of the pool with its own
//! inbox (`crate::interpreter::task`), or, for a graph hosted inside a
//! stage (a flattened inner source, a substream), the hosting stage, which
//! forwards the message to the island it runs.

use std::any::Any;

use weir_actor::{ActorPath, ActorSystem, DeadLetterReason};

use super::IslandMsg;
use crate::sync::{Arc, AtomicBool, Ordering};

/// What receives an island's messages.
pub(crate) trait Inbox: Send + Sync {
    /// Queue `msg` for the island; give it back once the island has
    /// finished (it then becomes a dead letter).
    fn deliver(&self, msg: IslandMsg) -> Result<(), IslandMsg>;

    /// Whether the island has finished: nothing sent now is handled.
    fn is_closed(&self) -> bool;

    /// The name dead letters are addressed to (`stream-<n>-<island>-<stage>`).
    fn name(&self) -> &str;
}

/// The address of one island: cheap to clone, `Send` and `Sync`.
#[derive(Clone)]
pub(crate) struct IslandRef {
    inbox: Arc<dyn Inbox>,
    system: ActorSystem,
}

impl IslandRef {
    pub(crate) fn new(inbox: Arc<dyn Inbox>, system: ActorSystem) -> Self {
        Self { inbox, system }
    }

    /// Send `msg` to the island; once it has finished, an async callback's
    /// value becomes a dead letter (timers have nothing left to do).
    pub(crate) fn tell(&self, msg: IslandMsg) {
        if let Err(msg) = self.inbox.deliver(msg) {
            refuse(&self.system, self.inbox.name(), msg);
        }
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.inbox.is_closed()
    }

    pub(crate) fn name(&self) -> &str {
        self.inbox.name()
    }

    /// Publish `payload`, an async callback's value its stage can no
    /// longer take, as a dead letter addressed to this island.
    pub(crate) fn dead_letter(&self, payload: Box<dyn Any + Send>) {
        dead_letter(&self.system, self.inbox.name(), payload);
    }
}

/// A message an island will never handle: an async callback's value
/// becomes a dead letter; timers and resumes have nothing left to do.
pub(crate) fn refuse(system: &ActorSystem, name: &str, msg: IslandMsg) {
    if let IslandMsg::Async { payload, .. } = msg {
        dead_letter(system, name, payload);
    }
}

fn dead_letter(system: &ActorSystem, name: &str, payload: Box<dyn Any + Send>) {
    system.event_stream().publish_dead_letter(
        &island_path(system, name),
        payload,
        DeadLetterReason::StageStopped,
    );
}

/// `weir://<system>/system/<name>`: an island has no actor, but its dead
/// letters and the instrumentation hook name it where its actor used to
/// be. Made only for those, never on the running path.
pub(crate) fn island_path(system: &ActorSystem, name: &str) -> ActorPath {
    ActorPath::parse(&format!("weir://{}/system/{name}", system.name()))
        .or_else(|_| ActorPath::parse(&format!("weir://{}/system/stream", system.name())))
        .expect("a system's name and `stream` make a valid path")
}

impl std::fmt::Debug for IslandRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("IslandRef").field(&self.name()).finish()
    }
}

/// The inbox of an island hosted inside a stage (a flattened inner
/// source, a substream): each message goes to `forward`, which hands it to
/// the hosting stage, until the host [closes](Self::close) it.
pub(crate) struct Forward {
    forward: Box<dyn Fn(IslandMsg) + Send + Sync>,
    closed: AtomicBool,
}

impl Forward {
    /// The hosted island's address, and the handle that closes it.
    pub(crate) fn open(
        system: &ActorSystem,
        forward: impl Fn(IslandMsg) + Send + Sync + 'static,
    ) -> (IslandRef, Arc<Self>) {
        let inbox = Arc::new(Self {
            forward: Box::new(forward),
            closed: AtomicBool::new(false),
        });
        let address = IslandRef::new(inbox.clone(), system.clone());
        (address, inbox)
    }

    /// The hosted island has finished: what is sent from now on becomes a
    /// dead letter.
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::Release);
    }
}

impl Inbox for Forward {
    fn deliver(&self, msg: IslandMsg) -> Result<(), IslandMsg> {
        if self.is_closed() {
            return Err(msg);
        }
        (self.forward)(msg);
        Ok(())
    }

    fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    fn name(&self) -> &str {
        "substream"
    }
}

/// An inbox that is closed from the start, for islands built only to be
/// torn down (and for tests).
#[cfg(test)]
pub(crate) struct Closed;

#[cfg(test)]
impl Inbox for Closed {
    fn deliver(&self, msg: IslandMsg) -> Result<(), IslandMsg> {
        Err(msg)
    }

    fn is_closed(&self) -> bool {
        true
    }

    fn name(&self) -> &str {
        "closed"
    }
}
