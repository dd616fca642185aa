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
//! Its probe holds the task's waker from the first poll on, as an island's
//! inbox does: a source that has nothing and dropped the waker it was given
//! (a future that never completes) leaves the task waiting, as it leaves an
//! island, until the stream is stopped; the pool would otherwise drop the
//! task, failing the sink with `AbruptTermination` where an island waits.
//! The task's end drops the waker, which breaks that cycle.
//!
//! A snapshot (`crate::snapshot`) lists it as an island of one stage, the
//! fused loop, with no ports. It has no inbox to be asked through, and
//! needs none: each poll writes when it began into its [`TaskProbe`] (one
//! clock read and one store per poll, as an island reads the clock once
//! per turn), and the probe answers from that on the asking thread, even
//! while the loop runs.
//!
//! [`ActorSystem::spawn_task`]: weir_actor::ActorSystem::spawn_task

use std::any::Any;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use weir_actor::{ActorSystem, SpawnError, TaskHandle};

use super::consumer::{Consumer, Drain, IterConsumerStage, Turn};
use super::iter::IterFactory;
use crate::error::StreamError;
use crate::materializer::Materializer;
use crate::running::Registration;
use crate::snapshot::{Answer, Inspect, IslandSnapshot, SnapshotReply, StageSnapshot};
use crate::stage::{Name, name_chars};
use crate::sync::{Arc, AtomicBool, Mutex, Ordering};

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
        let system = materializer.system();
        let probe = Arc::new(TaskProbe {
            stream: materializer.next_stream_id(),
            name,
            system: system.clone(),
            waits_since: Mutex::new(None),
            ended: AtomicBool::new(false),
            keep_alive: Mutex::new(None),
        });
        let spawned = system.spawn_task_with(|handle: &TaskHandle| {
            registration.attach(handle, Arc::clone(&probe) as Arc<dyn Inspect>);
            FusedTask {
                state: TaskPhase::Start(source, consumer),
                probe,
                _registration: registration,
            }
        });
        (mat, spawned.map(drop))
    }
}

/// The fused loop as a future.
struct FusedTask<In> {
    state: TaskPhase<In>,
    /// Its name and what a snapshot reads.
    probe: Arc<TaskProbe>,
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
                let name: Arc<str> = Arc::from(self.probe.name.as_str());
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
            let TaskPhase::Start(make, consumer) =
                std::mem::replace(&mut this.state, TaskPhase::Done)
            else {
                unreachable!("matched above")
            };
            *this.probe.keep_alive.lock() = Some(cx.waker().clone());
            match this.start(&make, consumer) {
                Some(drain) => this.state = TaskPhase::Running(drain),
                None => return Poll::Ready(()),
            }
        }
        let TaskPhase::Running(drain) = &mut this.state else {
            return Poll::Ready(());
        };
        let name = &this.probe.name;
        // A snapshot's idle time runs from the end of the last turn that
        // left the task waiting (a turn that ends it is seen by no one, and
        // reads no clock).
        match drain.turn(cx, || Arc::from(name.as_str())) {
            Turn::Budget => {
                this.probe.progressed();
                // Queued again behind what waits (see `ActorSystem::spawn_task`).
                cx.waker().wake_by_ref();
                Poll::Pending
            }
            Turn::Pending => {
                this.probe.progressed();
                Poll::Pending
            }
            Turn::Done => {
                this.state = TaskPhase::Done;
                Poll::Ready(())
            }
        }
    }
}

impl<In> Drop for FusedTask<In> {
    /// Finished, aborted or dropped by the pool: a snapshot leaves it out
    /// from now on (the registry forgets it just after, with the
    /// registration).
    fn drop(&mut self) {
        self.probe.ended.store(true, Ordering::Release);
        let waker = self.probe.keep_alive.lock().take();
        drop(waker);
    }
}

/// What a snapshot of a graph run as one fused task reads (module docs).
struct TaskProbe {
    /// The stream's number, as an island's.
    stream: u64,
    /// The fused stage's name.
    name: Name,
    system: ActorSystem,
    /// When the last poll that left the task waiting ended, on the
    /// system's clock (`None` before one did: the task is running, or about
    /// to). Only a task that waits reads the clock.
    waits_since: Mutex<Option<Instant>>,
    /// The task has ended.
    ended: AtomicBool,
    /// The task's waker, from its first poll to its end: it keeps a
    /// waiting task alive (module docs). Never woken.
    keep_alive: Mutex<Option<Waker>>,
}

impl TaskProbe {
    /// A poll ends with the task waiting (for its source, or for its
    /// next turn): it is idle from now.
    fn progressed(&self) {
        *self.waits_since.lock() = Some(self.system.scheduler().now());
    }
}

impl Inspect for TaskProbe {
    fn name(&self) -> String {
        let mut name = format!("stream-{}-0-", self.stream);
        name.extend(name_chars(self.name.as_str()).take(40));
        name
    }

    /// Answered at once, on the asking thread: a busy loop shows at most
    /// one poll idle, as an island at most one turn.
    fn inspect(&self, reply: SnapshotReply) {
        if self.ended.load(Ordering::Acquire) {
            return; // the reply, dropped, leaves the task out
        }
        let waits_since = *self.waits_since.lock();
        let idle_for = waits_since.map_or(Duration::ZERO, |since| {
            self.system
                .scheduler()
                .now()
                .saturating_duration_since(since)
        });
        reply.answer(Answer {
            stream: self.stream,
            island: IslandSnapshot {
                index: 0,
                name: Inspect::name(self),
                stages: vec![StageSnapshot {
                    name: self.name.as_str().to_owned(),
                    inlets: 0,
                    outlets: 0,
                    finished: false,
                    buffer: None,
                    counters: None,
                }],
                connections: Vec::new(),
                idle_for,
            },
        });
    }
}
