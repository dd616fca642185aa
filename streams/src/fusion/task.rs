//! A graph that is one iterator source fused with a consumer (`single ->
//! map -> head`, `range -> filter -> fold`) runs as a task of the system's
//! pool instead of in an island. It has no ports, no events and nothing to
//! receive, so an island's actor (a path, a mailbox, a supervised stop)
//! would cost more than the stream: the task is the fused loop, polled a
//! budget of elements at a time, queued again behind other work after each
//! budget and woken by its source when that has nothing ready.
//!
//! It keeps what the island gives such a stream: a panic fails the sink's
//! completion naming the fused stage; the registry of running streams
//! (`crate::running`) stops it at shutdown (it aborts at its next poll
//! with `AbruptTermination`); if the pool drops it unfinished, the
//! consumer's completion reports `AbruptTermination` as it would for a
//! dropped island.

use std::any::Any;
use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Poll, Waker};

use weir_actor::{ActorSystem, SpawnError};

use super::consumer::{Drain, IterConsumerStage, Turn};
use crate::running::{Abort, Registration};
use crate::sync::{Arc, AtomicBool, Ordering};
use crate::{ErrorKind, StreamError};

/// A stage that can run alone in its graph as a pool task.
pub(crate) trait TaskStage: Send + Sync {
    /// Start it on `system`'s pool with its `task` parts; its materialized
    /// values go onto `mats` (also when the spawn fails: the task is then
    /// dropped, and its sink reports `AbruptTermination`).
    fn spawn(
        &self,
        task: TaskParts,
        system: &ActorSystem,
        mats: &mut Vec<Box<dyn Any + Send>>,
    ) -> Result<(), SpawnError>;
}

/// What every task-hosted stage carries besides its own loop.
pub(crate) struct TaskParts {
    /// Its name in errors.
    pub(crate) name: Cow<'static, str>,
    /// How the registry of running streams stops it.
    pub(crate) signal: Arc<TaskSignal>,
    /// Kept for its drop: the task leaves the registry when it ends.
    pub(crate) _registration: Registration,
}

impl<In: Send + 'static> TaskStage for IterConsumerStage<In> {
    fn spawn(
        &self,
        task: TaskParts,
        system: &ActorSystem,
        mats: &mut Vec<Box<dyn Any + Send>>,
    ) -> Result<(), SpawnError> {
        system.spawn_task(FusedTask {
            drain: self.drain(mats),
            parts: task,
            started: false,
        })
    }
}

/// How the registry of running streams stops a task.
#[derive(Default)]
pub(crate) struct TaskSignal {
    aborted: AtomicBool,
    /// The task's waker, from its first poll: an abort wakes it.
    waker: Mutex<Option<Waker>>,
}

impl Abort for TaskSignal {
    fn abort(&self) {
        self.aborted.store(true, Ordering::SeqCst);
        let waker = self
            .waker
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

/// The fused loop as a future.
struct FusedTask<In> {
    drain: Drain<In>,
    parts: TaskParts,
    started: bool,
}

// Nothing in it is pinned structurally: the task moves its parts freely.
impl<In> Unpin for FusedTask<In> {}

impl<In: Send + 'static> Future for FusedTask<In> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        if !this.started {
            this.started = true;
            // Before the flag is read: an abort either finds this waker or
            // set the flag before the read below (both sides lock).
            *this
                .parts
                .signal
                .waker
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(cx.waker().clone());
            if !this.drain.wants_elements() {
                return Poll::Ready(());
            }
        }
        if this.parts.signal.aborted.load(Ordering::SeqCst) {
            this.drain
                .fail(StreamError::from_kind(ErrorKind::AbruptTermination));
            return Poll::Ready(());
        }
        let name = &this.parts.name;
        match this.drain.turn(cx, || Arc::from(&**name)) {
            Turn::Budget => {
                // Queued again behind what waits (see `ActorSystem::spawn_task`).
                cx.waker().wake_by_ref();
                Poll::Pending
            }
            Turn::Pending => Poll::Pending,
            Turn::Done => Poll::Ready(()),
        }
    }
}
