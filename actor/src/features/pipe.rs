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

use std::future::Future;

use crate::core::actor::Actor;
use crate::core::actor_ref::ActorRef;
use crate::core::context::Context;
use crate::core::dispatcher::DispatcherKind;
use crate::core::instrument::{COMPILED_IN, MessageInfo, MetaOf, Stamp};
use crate::core::task::{Abortable, PipeTask};
use crate::error::SpawnError;
use crate::path::ActorPath;
use crate::sync::{Arc, Weak};
use crate::system::actor_system::ActorSystem;

pub use crate::core::task::TaskHandle;

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
        let pool = system.inner.pool.clone();
        PipeTask::new(Some(future), Some(self.clone()), pool).schedule();
    }
}

impl ActorSystem {
    /// Run `future` on the system's shared pool as a task of its own, with
    /// no actor around it: cheaper than an actor (no path, no mailbox, no
    /// supervision) for work that reports its result itself. It holds no
    /// worker while it waits: its waker queues it again. A wake-up during
    /// its own poll queues it behind what waits, so a long job that wakes
    /// itself after each slice shares its worker. A panic in it is caught
    /// and drops it (reported by the panic hook, like any other), as is one
    /// in its destructor. The returned handle can abort it; dropping the
    /// handle does not. The system does not stop its tasks when it
    /// terminates: its workers run until the tasks queued on them are done,
    /// so a task that never ends (one that keeps waking itself) keeps
    /// termination waiting. Abort such a task first.
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
    pub fn spawn_task<F>(&self, future: F) -> Result<TaskHandle, SpawnError>
    where
        F: Future<Output = ()> + Send + 'static,
    {
        self.spawn_task_with(|_| future)
    }

    /// [`spawn_task`](Self::spawn_task) for a future that needs its own
    /// handle: `make` gets it before the task first runs (to register the
    /// task where it can be aborted from) and makes the future.
    ///
    /// # Errors
    ///
    /// [`SpawnError::ParentStopped`](crate::SpawnError::ParentStopped) once
    /// the system is terminating; `make` is not called.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use weir_actor::{ActorSystem, TaskHandle};
    ///
    /// let system = ActorSystem::new("abortable").unwrap();
    /// let registry: Arc<Mutex<Vec<TaskHandle>>> = Arc::default();
    /// let mine = Arc::clone(&registry);
    /// system
    ///     .spawn_task_with(|handle| {
    ///         mine.lock().unwrap().push(handle.clone());
    ///         std::future::pending::<()>() // never completes by itself
    ///     })
    ///     .unwrap();
    /// for task in registry.lock().unwrap().iter() {
    ///     task.abort(); // dropped, unpolled from now on
    /// }
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn spawn_task_with<F>(
        &self,
        make: impl FnOnce(&TaskHandle) -> F,
    ) -> Result<TaskHandle, SpawnError>
    where
        F: Future<Output = ()> + Send + 'static,
    {
        self.spawn_task_on(DispatcherKind::Shared, make)
    }

    /// [`spawn_task_with`](Self::spawn_task_with) on the dispatcher
    /// `kind` names: a named pool, or a thread of its own
    /// ([`DispatcherKind::Pinned`](crate::DispatcherKind::Pinned), for a
    /// task that blocks; the thread ends with the task).
    ///
    /// # Errors
    ///
    /// [`SpawnError::ParentStopped`](crate::SpawnError::ParentStopped) once
    /// the system is terminating,
    /// [`SpawnError::UnknownDispatcher`](crate::SpawnError::UnknownDispatcher)
    /// for a pool the builder did not declare, and
    /// [`SpawnError::DispatcherUnavailable`](crate::SpawnError::DispatcherUnavailable)
    /// when a pinned thread cannot start; `make` is not called.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use weir_actor::{ActorSystem, DispatcherKind, Promise};
    ///
    /// let system = ActorSystem::new("blocking-task").unwrap();
    /// let done = Arc::new(Promise::new());
    /// let read = Arc::clone(&done);
    /// system
    ///     .spawn_task_on(DispatcherKind::Pinned, move |_| async move {
    ///         // A blocking read would go here: it holds only this thread.
    ///         let _ = read.complete(7);
    ///     })
    ///     .unwrap();
    /// assert_eq!(done.wait_take(), 7);
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn spawn_task_on<F>(
        &self,
        kind: DispatcherKind,
        make: impl FnOnce(&TaskHandle) -> F,
    ) -> Result<TaskHandle, SpawnError>
    where
        F: Future<Output = ()> + Send + 'static,
    {
        if self.is_terminating() {
            return Err(SpawnError::ParentStopped);
        }
        let dispatcher = self.dispatcher_of(kind)?;
        let task = PipeTask::<F>::new(None, None, dispatcher);
        let handle = TaskHandle {
            task: Arc::downgrade(&task) as Weak<dyn Abortable>,
        };
        // Made once the task exists, so an abort from where `make`
        // registers the handle is not lost: it finds the task not yet
        // queued, and its first run drops the future.
        let future = make(&handle);
        *task.future.lock() = Some(future);
        task.schedule();
        Ok(handle)
    }
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

impl ActorSystem {
    /// Whether an [`Instrumentation`](crate::Instrumentation) hook is installed on this system (so
    /// [`instrument_turn`](Self::instrument_turn) reports anything).
    pub fn is_instrumented(&self) -> bool {
        COMPILED_IN && self.inner.hooks.is_some()
    }

    /// Run `turn`, work a library hosts outside any actor (weir-streams
    /// runs each island of a stream as a task of the pool), as one user
    /// message of type `M` to a subject of type `S` at `path`, between the
    /// hooks' [`before_message`](crate::Instrumentation::before_message) and
    /// [`after_message`](crate::Instrumentation::after_message). Without a hook it
    /// only runs `turn`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// use weir_actor::{ActorPath, ActorSystem, Instrumentation, MessageInfo};
    ///
    /// #[derive(Default)]
    /// struct Count(AtomicU64);
    /// impl Instrumentation for Count {
    ///     fn before_message(&self, info: &MessageInfo<'_>) {
    ///         assert_eq!(info.path().name(), "my-task");
    ///         self.0.fetch_add(1, Ordering::Relaxed);
    ///     }
    /// }
    ///
    /// struct MyTask;
    /// struct Poll;
    /// let count = Arc::new(Count::default());
    /// let system = ActorSystem::builder().name("tasks").instrumentation(count.clone()).build().unwrap();
    /// let path = ActorPath::parse("weir://tasks/system/my-task").unwrap();
    /// assert_eq!(system.instrument_turn::<MyTask, Poll, _>(&path, || 6 * 7), 42);
    /// assert_eq!(count.0.load(Ordering::Relaxed), 1);
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn instrument_turn<S: ?Sized, M: ?Sized, R>(
        &self,
        path: &ActorPath,
        turn: impl FnOnce() -> R,
    ) -> R {
        match &self.inner.hooks {
            Some(hooks) if COMPILED_IN => {
                let info = MessageInfo {
                    path,
                    meta: MetaOf::<S, M>::USER,
                    stamp: Stamp::default(),
                };
                hooks.around_handled(&info, turn)
            }
            _ => turn(),
        }
    }
}
