//! Running a future for an actor without blocking a worker, and delivering
//! its output as a message (Akka's `pipeTo` / `pipeToSelf`).
//!
//! weir-actor has no executor dependency: [`ActorRef::pipe`] wraps the
//! future in a small task that the system's shared pool polls. Its waker
//! resubmits the task to the pool, so a future that waits (for an `ask`, a
//! channel, another thread) holds no thread while it waits. Futures that
//! need a particular runtime's reactor (tokio's timers or sockets) must be
//! driven by that runtime: spawn them there (weir-interop's `tokio` feature
//! provides a runtime handle) and pipe a future that waits for their result.
//!
//! # Task states
//!
//! `IDLE` (waiting for a wake-up), `SCHEDULED` (queued on the pool),
//! `RUNNING` (being polled), `NOTIFIED` (woken while being polled: poll
//! again), `DONE`. A wake-up moves `IDLE` to `SCHEDULED` and submits the
//! task, or `RUNNING` to `NOTIFIED` (the runner then submits it again,
//! behind what waits); any other wake-up has nothing to do. So
//! the task is queued at most once and polled by one thread at a time, and
//! a wake-up during a poll is never lost. The state machine lives in
//! `task_state`, with its rules and a loom model.

use std::fmt;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll, Wake, Waker};

use crate::actor::Actor;
use crate::actor_ref::ActorRef;
use crate::context::Context;
use crate::dispatcher::{Dispatcher, Runnable};
use crate::sync::{Arc, Mutex};
use crate::system::ActorSystem;
use crate::task_state::TaskState;

type BoxFuture<M> = Pin<Box<dyn Future<Output = M> + Send>>;

/// A piped future and where its output goes.
struct PipeTask<M: Send + 'static> {
    state: TaskState,
    /// `None` once it completed or panicked. Only the `RUNNING` thread locks
    /// it, so the lock is never contended.
    future: Mutex<Option<BoxFuture<M>>>,
    /// Where the output goes; `None` for a detached task (its future
    /// delivers its own result).
    target: Option<ActorRef<M>>,
    dispatcher: Dispatcher,
}

impl<M: Send + 'static> PipeTask<M> {
    fn schedule(self: Arc<Self>) {
        let dispatcher = self.dispatcher.clone();
        dispatcher.submit(self);
    }
}

impl<M: Send + 'static> Runnable for PipeTask<M> {
    fn run(self: Arc<Self>) {
        self.state.start();
        let waker = Waker::from(self.clone());
        let mut cx = TaskContext::from_waker(&waker);
        let mut slot = self.future.lock();
        let Some(future) = slot.as_mut() else {
            self.state.done();
            return;
        };
        match catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(&mut cx))) {
            Ok(Poll::Ready(msg)) => {
                *slot = None;
                drop(slot);
                self.state.done();
                if let Some(target) = &self.target {
                    target.tell(msg);
                }
            }
            Ok(Poll::Pending) => {
                drop(slot);
                // Woken while polling: queue again, behind what waits, so a
                // future that wakes itself (a long job in slices) yields its
                // worker instead of keeping it.
                if self.state.pending() {
                    let dispatcher = self.dispatcher.clone();
                    dispatcher.submit_yielded(self);
                }
            }
            Err(_) => {
                // A panicking future is dropped: nothing to deliver.
                *slot = None;
                self.state.done();
            }
        }
    }
}

impl<M: Send + 'static> Wake for PipeTask<M> {
    fn wake(self: std::sync::Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &std::sync::Arc<Self>) {
        if self.state.wake() {
            self.clone().schedule();
        }
    }
}

impl<M: Send + 'static> ActorRef<M> {
    /// Run `future` on the system's shared pool, without blocking a worker
    /// while it waits, and send its output to this actor (Akka's `pipeTo`).
    /// An output for an actor that has stopped goes to dead letters, as with
    /// `tell`. A future that panics is dropped and sends nothing (the panic
    /// is reported by the panic hook, like any other): when the actor must
    /// hear of a failure, pipe a future whose output is a `Result`.
    ///
    /// See the [module docs](crate::pipe) for futures that need another
    /// runtime.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_actor::{Actor, ActorSystem, Context, Props};
    ///
    /// struct Sum(u64);
    /// impl Actor for Sum {
    ///     type Msg = u64;
    ///     fn receive(&mut self, _: &mut Context<Self>, n: u64) {
    ///         self.0 += n;
    ///     }
    /// }
    ///
    /// let system = ActorSystem::new("pipe").unwrap();
    /// let sum = system.spawn(Props::new(|| Sum(0)), "sum").unwrap();
    /// sum.pipe(async { 40 + 2 });
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn pipe<F>(&self, future: F)
    where
        F: Future<Output = M> + Send + 'static,
    {
        let system = ActorSystem::of(self.inner.system());
        let task = Arc::new(PipeTask {
            state: TaskState::scheduled(),
            future: Mutex::new(Some(Box::pin(future))),
            target: Some(self.clone()),
            dispatcher: Dispatcher::Pool(system.inner.pool.clone()),
        });
        task.schedule();
    }
}

impl ActorSystem {
    /// Run `future` on the system's shared pool as a task of its own, with
    /// no actor around it: cheaper than an actor (no path, no mailbox, no
    /// supervision) for work that reports its result itself. It holds no
    /// worker while it waits: its waker queues it again. A wake-up during
    /// its own poll queues it behind what waits, so a long job that wakes
    /// itself after each slice shares its worker. A panic in it is caught
    /// and drops it (reported by the panic hook, like any other).
    ///
    /// Futures that need another runtime's reactor: see the
    /// [`pipe` module docs](crate::pipe).
    ///
    /// # Errors
    ///
    /// [`SpawnError::ParentStopped`](crate::SpawnError::ParentStopped) once
    /// the system is terminating: the future is dropped unpolled.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use weir_actor::{ActorSystem, Promise};
    ///
    /// let system = ActorSystem::new("tasks").unwrap();
    /// let done = Arc::new(Promise::new());
    /// let answer = Arc::clone(&done);
    /// system
    ///     .spawn_task(async move {
    ///         let _ = answer.complete(6 * 7);
    ///     })
    ///     .unwrap();
    /// assert_eq!(done.wait_take(), 42);
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn spawn_task<F>(&self, future: F) -> Result<(), crate::SpawnError>
    where
        F: Future<Output = ()> + Send + 'static,
    {
        if self.is_terminating() {
            return Err(crate::SpawnError::ParentStopped);
        }
        spawn_detached(self, future);
        Ok(())
    }
}

/// Run `future` on `system`'s shared pool as a task of its own: the future
/// reports its result itself (for layers above the core, such as the
/// coordinated shutdown). A panic in it is caught and drops it.
pub(crate) fn spawn_detached<F>(system: &ActorSystem, future: F)
where
    F: Future<Output = ()> + Send + 'static,
{
    let task = Arc::new(PipeTask {
        state: TaskState::scheduled(),
        future: Mutex::new(Some(Box::pin(future))),
        target: None,
        dispatcher: Dispatcher::Pool(system.inner.pool.clone()),
    });
    task.schedule();
}

impl<A: Actor> Context<A> {
    /// Run `future` without blocking this actor or a worker, and send
    /// `map(output)` to this actor when it completes (Akka's
    /// `pipeToSelf`). The actor keeps handling messages meanwhile; state it
    /// needs must travel in the future or the mapped message.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use weir_actor::{Actor, ActorRef, ActorSystem, Context, Props, ask};
    ///
    /// enum Msg {
    ///     Fetch(ActorRef<u32>),
    ///     Fetched(u32, ActorRef<u32>),
    /// }
    ///
    /// struct Doubler;
    /// impl Actor for Doubler {
    ///     type Msg = (u32, ActorRef<u32>);
    ///     fn receive(&mut self, _: &mut Context<Self>, (n, reply): (u32, ActorRef<u32>)) {
    ///         reply.tell(n * 2);
    ///     }
    /// }
    ///
    /// struct Front(ActorRef<(u32, ActorRef<u32>)>);
    /// impl Actor for Front {
    ///     type Msg = Msg;
    ///     fn receive(&mut self, ctx: &mut Context<Self>, msg: Msg) {
    ///         match msg {
    ///             Msg::Fetch(reply) => {
    ///                 let answer = ask(&self.0, |r| (21, r), Duration::from_secs(5));
    ///                 ctx.pipe_to_self(answer, move |n| Msg::Fetched(n.unwrap_or(0), reply));
    ///             }
    ///             Msg::Fetched(n, reply) => reply.tell(n),
    ///         }
    ///     }
    /// }
    ///
    /// let system = ActorSystem::new("pipeToSelf").unwrap();
    /// let doubler = system.spawn(Props::new(|| Doubler), "doubler").unwrap();
    /// let front = system.spawn(Props::new(move || Front(doubler.clone())), "front").unwrap();
    /// assert_eq!(ask(&front, Msg::Fetch, Duration::from_secs(5)).wait(), Ok(42));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn pipe_to_self<F, T>(&self, future: F, map: impl FnOnce(T) -> A::Msg + Send + 'static)
    where
        F: Future<Output = T> + Send + 'static,
    {
        self.myself().pipe(async move { map(future.await) });
    }
}

impl<M: Send + 'static> fmt::Debug for PipeTask<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PipeTask")
            .field("state", &self.state.get())
            .field("target", &self.target.as_ref().map(ActorRef::path))
            .finish()
    }
}
