//! A graph that is one iterator source fused with a consumer (`single ->
//! map -> head`, `range -> filter -> fold`) runs as a task of the system's
//! pool ([`ActorSystem::spawn_task`]) instead of in an island. It has no
//! ports, no events and nothing to receive, so an island's actor (a path,
//! a mailbox, a supervised stop) would cost more than the stream: the task
//! is the fused loop, polled a budget of elements at a time, queued again
//! behind other work after each budget, and woken by its source when that
//! has nothing ready.
//!
//! It keeps what the island gives such a stream: a panic fails the sink's
//! completion naming the fused stage, and the registry of running streams
//! (`crate::running`) stops it at shutdown by aborting the task. An
//! aborted task, or one the pool drops unfinished, drops its consumer,
//! whose completion then reports `AbruptTermination`, as for an island
//! torn down.

use std::any::Any;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use weir_actor::{SpawnError, TaskHandle};

use super::consumer::{Drain, IterConsumerStage, Turn};
use crate::running::Registration;
use crate::stage::Name;
use crate::sync::Arc;
use crate::{ErrorKind, Materializer, StreamError};

/// A stage that can run alone in its graph as a pool task.
pub(crate) trait TaskStage: Send + Sync {
    /// Start it on `materializer`'s system, registered among its running
    /// streams, named `name` in errors; its materialized values go onto
    /// `mats` (also when the spawn fails: the task is then dropped, and
    /// its sink reports `AbruptTermination`).
    fn spawn(
        &self,
        name: Name,
        materializer: &Materializer,
        mats: &mut Vec<Box<dyn Any + Send>>,
    ) -> Result<(), SpawnError>;
}

impl<In: Send + 'static> TaskStage for IterConsumerStage<In> {
    fn spawn(
        &self,
        name: Name,
        materializer: &Materializer,
        mats: &mut Vec<Box<dyn Any + Send>>,
    ) -> Result<(), SpawnError> {
        let drain = self.drain(mats);
        let spawned = materializer
            .system()
            .spawn_task_with(|handle: &TaskHandle| FusedTask {
                drain,
                name,
                registration: materializer.register_task(handle.clone()),
                started: false,
            });
        spawned.map(drop)
    }
}

/// The fused loop as a future.
struct FusedTask<In> {
    drain: Drain<In>,
    name: Name,
    /// Its entry among the running streams, left when the task ends;
    /// `None` when the system's streams had been stopped already: the
    /// task then ends at once, as a stopped stream.
    registration: Option<Registration>,
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
            if this.registration.is_none() {
                this.drain
                    .fail(StreamError::from_kind(ErrorKind::AbruptTermination));
                return Poll::Ready(());
            }
            if !this.drain.wants_elements() {
                return Poll::Ready(());
            }
        }
        let name = &this.name;
        match this.drain.turn(cx, || Arc::from(name.as_str())) {
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
