//! A graph that is one iterator source fused with a consumer (`single ->
//! map -> head`, `range -> filter -> fold`) runs as a task of the system's
//! pool ([`ActorSystem::spawn_task`]) instead of in an island. It has no
//! ports, no events and nothing to receive, so an island (its stages'
//! logics, connections, event queue and inbox) would cost more than the
//! stream: the task
//! is the fused loop, polled a budget of elements at a time, queued again
//! behind other work after each budget, and woken by its source when that
//! has nothing ready.
//!
//! Materializing it makes only the consumer (whose completion is the
//! materialized value); the source and its fused operators are made at the
//! task's first poll, on a worker, as Akka makes an iterator source's
//! iterator when its stage starts.
//!
//! It keeps what the island gives such a stream: a panic fails the sink's
//! completion naming the fused stage, and the registry of running streams
//! (`crate::running`) stops it at shutdown by aborting the task, as it
//! stops the tasks that run islands. An
//! aborted task, or one the pool drops unfinished, drops its consumer,
//! whose completion then reports `AbruptTermination`, as for an island
//! torn down.
//!
//! [`ActorSystem::spawn_task`]: weir_actor::ActorSystem::spawn_task

use std::any::Any;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};

use weir_actor::{SpawnError, TaskHandle};

use super::consumer::{Consumer, Drain, IterConsumerStage, Turn};
use super::iter::IterFactory;
use crate::error::StreamError;
use crate::materializer::Materializer;
use crate::running::Registration;
use crate::stage::Name;
use crate::sync::Arc;

/// A stage that can run alone in its graph as a pool task.
pub(crate) trait TaskStage: Send + Sync {
    /// Start it on `materializer`'s system, holding `registration` (its
    /// reserved place among the running streams), named `name` in errors.
    /// Its one materialized value comes back also when the spawn failed
    /// (the task was then dropped, and its sink reports
    /// `AbruptTermination`).
    fn spawn(
        &self,
        name: Name,
        registration: Registration,
        materializer: &Materializer,
    ) -> (Box<dyn Any + Send>, Result<(), SpawnError>);
}

impl<In: Send + 'static> TaskStage for IterConsumerStage<In> {
    fn spawn(
        &self,
        name: Name,
        registration: Registration,
        materializer: &Materializer,
    ) -> (Box<dyn Any + Send>, Result<(), SpawnError>) {
        let (consumer, mat) = (self.sink)();
        let source = Arc::clone(&self.source);
        let spawned = materializer
            .system()
            .spawn_task_with(|handle: &TaskHandle| {
                registration.attach(handle);
                FusedTask {
                    state: TaskPhase::Start(source, consumer),
                    name,
                    _registration: registration,
                }
            });
        (mat, spawned.map(drop))
    }
}

/// The fused loop as a future.
struct FusedTask<In> {
    state: TaskPhase<In>,
    name: Name,
    /// Its entry among the running streams, left when the task ends.
    _registration: Registration,
}

enum TaskPhase<In> {
    /// Not polled yet: the source is still to be made.
    Start(IterFactory<In>, Box<dyn Consumer<In>>),
    Running(Drain<In>),
    Done,
}

// Nothing in it is pinned structurally: the task moves its parts freely.
impl<In> Unpin for FusedTask<In> {}

impl<In: Send + 'static> FusedTask<In> {
    /// The first poll: the drain, or `None` when the stream already ended
    /// (stopped before it started, a consumer that wants no elements, or a
    /// source that panicked while being made).
    fn start(
        &self,
        make: &IterFactory<In>,
        mut consumer: Box<dyn Consumer<In>>,
    ) -> Option<Drain<In>> {
        if !consumer.starts() {
            return None;
        }
        match catch_unwind(AssertUnwindSafe(|| make())) {
            Ok(source) => Some(Drain::new(source, consumer)),
            Err(payload) => {
                let name: Arc<str> = Arc::from(self.name.as_str());
                consumer.finish(Err(StreamError::panicked(&*payload).in_stage(&name)));
                None
            }
        }
    }
}

impl<In: Send + 'static> Future for FusedTask<In> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        if let TaskPhase::Start(..) = this.state {
            let TaskPhase::Start(make, consumer) = std::mem::replace(&mut this.state, TaskPhase::Done)
            else {
                unreachable!("matched above")
            };
            match this.start(&make, consumer) {
                Some(drain) => this.state = TaskPhase::Running(drain),
                None => return Poll::Ready(()),
            }
        }
        let TaskPhase::Running(drain) = &mut this.state else {
            return Poll::Ready(());
        };
        let name = &this.name;
        match drain.turn(cx, || Arc::from(name.as_str())) {
            Turn::Budget => {
                // Queued again behind what waits (see `ActorSystem::spawn_task`).
                cx.waker().wake_by_ref();
                Poll::Pending
            }
            Turn::Pending => Poll::Pending,
            Turn::Done => {
                this.state = TaskPhase::Done;
                Poll::Ready(())
            }
        }
    }
}
