//! Async handlers: an actor handles a message with a future
//! ([`Context::run_async`], [`Context::run_async_then`]), or runs one while
//! it takes other messages ([`Context::run_async_reentrant`],
//! [`Context::run_async_reentrant_then`]).
//!
//! The semantics are Akka.NET's `ReceiveAsync`: while the future runs, the
//! actor takes no other user message. Its mailbox is suspended for user
//! messages, which wait in order; system messages still act:
//!
//! * a **stop** (`ctx.stop`, `stop_self`, a parent's or the system's stop)
//!   drops the running future at once, then stops the actor as usual
//!   (`post_stop` runs with no future alive); a `PoisonPill` is a user
//!   message and waits for the future, as in Akka;
//! * a **panic** in the future or in its continuation, or a
//!   [`ctx.fail`](Context::fail) in the continuation, is a failure of the
//!   actor like a sync handler's: the parent's strategy restarts, resumes
//!   or stops it (restart and stop drop nothing more: the future is gone);
//!   any other failure of the actor while it awaits (an escalated child's)
//!   drops the future too;
//! * **timers** fire into the mailbox and their messages wait there; the
//!   **receive timeout** does not fire during a running handler (the actor
//!   is busy): its idle period starts when the future completes.
//!
//! The future is polled on the actor's own dispatcher (the shared pool by
//! default), by the thread that holds the actor, first right after the
//! handler returns (a future that is ready at once costs no suspension),
//! then each time its waker is woken. No task and no extra thread: a wake
//! is a system message to the actor, and a wake during the poll (a future
//! that yields, or one woken meanwhile) not even that: the run that polled
//! polls again, counting it as one message of its throughput. A handler
//! that never calls `run_async` pays nothing for it.
//!
//! # What can cross an await
//!
//! The future is `Send + 'static`: it borrows nothing from the actor or its
//! context, so `&mut self` and `ctx` cannot be held across an `.await` (the
//! compiler refuses). It owns what it needs: the message, clones of refs
//! ([`ctx.myself()`](Context::myself), a reply-to ref), `Arc`s of shared
//! state, an [`ask`](crate::ask) future. The continuation of
//! [`run_async_then`](Context::run_async_then) gets `&mut self` and `ctx`
//! back, with the future's output, before any other user message: it runs
//! on the thread holding the actor, exactly where `receive` runs.
//!
//! Why this is sound where lending `&mut self` to the future would not be:
//! while the future waits, the actor is not running, but its cell is not
//! idle: system messages run (a stop calls `post_stop(&mut self)`, a
//! child's failure asks `supervisor_strategy(&self)`, a restart replaces
//! the instance). A borrow held by the future would alias those. Frameworks
//! that lend `&mut self` across awaits (kameo, ractor) run the actor as one
//! task whose loop awaits the handler, and hold everything else meanwhile.
//!
//! # Reentrant futures
//!
//! [`run_async_reentrant`](Context::run_async_reentrant) and
//! [`run_async_reentrant_then`](Context::run_async_reentrant_then) are the
//! opt-in (Akka.NET's reentrancy): the actor goes on taking messages while
//! the future runs, so messages interleave at its await points. Each
//! reentrant future is a call of its own, not a mode of the actor: sync
//! handlers and `run_async` are unchanged and pay nothing for it.
//!
//! * Several may run at once (one handler may start several). Each
//!   continuation runs on the actor's thread, between two messages, in the
//!   order the futures completed (woke ready); a ready future's
//!   continuation runs right after its handler.
//! * A non-reentrant future (`run_async`, from a handler or a
//!   continuation) still holds everything: the reentrant continuations
//!   that become ready meanwhile wait for it, in order.
//! * A **stop** drops every running future before `post_stop`; a
//!   **restart** drops them before `pre_restart` (their continuations were
//!   written for the old instance); a **resume** keeps them, and their
//!   continuations run on the resumed instance. While the actor is
//!   suspended (its failure awaits a directive) no continuation runs.
//! * A **panic** in a reentrant future or its continuation, or a
//!   [`ctx.fail`](Context::fail) in the continuation, is a failure of the
//!   actor like a handler's.
//! * The **receive timeout** sees the actor as idle between messages,
//!   whatever is running: a reentrant future does not hold it off, and its
//!   continuation (not a message) does not restart it.
//!
//! The same rules on what can cross an await hold: the future owns what it
//! needs, the continuation gets `&mut self` and `ctx`.
//!
//! # Examples
//!
//! ```
//! use weir_actor::{Actor, ActorRef, ActorSystem, Context, Props, ask};
//! use std::time::Duration;
//!
//! enum Msg {
//!     /// Look a key up in the store, then answer.
//!     Get(String, ActorRef<Option<u64>>),
//! }
//!
//! struct Cache {
//!     store: ActorRef<(String, ActorRef<Option<u64>>)>,
//!     hits: u64,
//! }
//!
//! impl Actor for Cache {
//!     type Msg = Msg;
//!     fn receive(&mut self, ctx: &mut Context<Self>, msg: Msg) {
//!         let Msg::Get(key, reply_to) = msg;
//!         let store = self.store.clone();
//!         let lookup = async move {
//!             ask(&store, |me| (key, me), Duration::from_secs(5)).await.ok().flatten()
//!         };
//!         // No other message is handled until `lookup` is done.
//!         ctx.run_async_then(lookup, move |cache: &mut Cache, _ctx, found| {
//!             cache.hits += u64::from(found.is_some());
//!             reply_to.tell(found);
//!         });
//!     }
//! }
//!
//! struct Store;
//! impl Actor for Store {
//!     type Msg = (String, ActorRef<Option<u64>>);
//!     fn receive(&mut self, _: &mut Context<Self>, (key, reply_to): Self::Msg) {
//!         reply_to.tell((key == "answer").then_some(42));
//!     }
//! }
//!
//! let system = ActorSystem::new("async").unwrap();
//! let store = system.spawn(Props::new(|| Store), "store").unwrap();
//! let cache = system
//!     .spawn(Props::new(move || Cache { store: store.clone(), hits: 0 }), "cache")
//!     .unwrap();
//! let found = ask(&cache, |me| Msg::Get("answer".into(), me), Duration::from_secs(5));
//! assert_eq!(found.wait(), Ok(Some(42)));
//! system.terminate().wait().unwrap();
//! ```

use std::future::Future;

use crate::core::actor::Actor;
use crate::core::cell::awaited::AwaitedFuture;
use crate::core::context::{Context, Deferred};

impl<A: Actor> Context<A> {
    /// Handle the current message with `future`: once the handler returns,
    /// the actor takes no other user message until `future` is done (see
    /// the [module docs](crate::async_handler) for stops, failures, timers
    /// and what the future may hold).
    ///
    /// One future per handler: a second call in the same handler replaces
    /// the first (which is dropped unpolled), as does a later
    /// [`fail`](Self::fail); a panic in the handler after it wins.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_actor::{Actor, ActorRef, ActorSystem, Context, Props};
    ///
    /// struct Relay(ActorRef<u32>);
    /// impl Actor for Relay {
    ///     type Msg = u32;
    ///     fn receive(&mut self, ctx: &mut Context<Self>, n: u32) {
    ///         let out = self.0.clone();
    ///         ctx.run_async(async move {
    ///             // .await anything Send here: an ask, a channel, a timer.
    ///             out.tell(n * 2);
    ///         });
    ///     }
    /// }
    ///
    /// struct Sink(std::sync::mpsc::Sender<u32>);
    /// impl Actor for Sink {
    ///     type Msg = u32;
    ///     fn receive(&mut self, _: &mut Context<Self>, n: u32) {
    ///         self.0.send(n).unwrap();
    ///     }
    /// }
    ///
    /// let system = ActorSystem::new("run-async").unwrap();
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// let sink = system.spawn(Props::new(move || Sink(tx.clone())), "sink").unwrap();
    /// let relay = system.spawn(Props::new(move || Relay(sink.clone())), "relay").unwrap();
    /// relay.tell(21);
    /// assert_eq!(rx.recv_timeout(std::time::Duration::from_secs(5)), Ok(42));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn run_async<F>(&mut self, future: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        self.deferred = Some(Deferred::Await(AwaitedFuture::new(future, |_, _, ()| {})));
    }

    /// Like [`run_async`](Self::run_async), then run `then` with the actor,
    /// its context and the future's output, before any other user message.
    /// `then` may call [`fail`](Self::fail) (the actor fails as from a
    /// handler: the way to supervise an error the future returns) or
    /// `run_async` again (the actor keeps waiting, for the new future).
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_actor::{Actor, ActorSystem, Context, Props};
    ///
    /// #[derive(Debug)]
    /// struct Refused;
    /// impl std::fmt::Display for Refused {
    ///     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
    ///         f.write_str("refused")
    ///     }
    /// }
    /// impl std::error::Error for Refused {}
    ///
    /// struct Counter(u64);
    /// impl Actor for Counter {
    ///     type Msg = u64;
    ///     fn receive(&mut self, ctx: &mut Context<Self>, n: u64) {
    ///         let work = async move { if n == 0 { Err(Refused) } else { Ok(n) } };
    ///         ctx.run_async_then(work, |counter: &mut Counter, ctx, result| match result {
    ///             Ok(n) => counter.0 += n,
    ///             Err(error) => ctx.fail(error), // restarted by the default strategy
    ///         });
    ///     }
    /// }
    ///
    /// let system = ActorSystem::new("run-async-then").unwrap();
    /// let counter = system.spawn(Props::new(|| Counter(0)), "counter").unwrap();
    /// counter.tell(1);
    /// counter.tell(0);
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn run_async_then<F, T>(&mut self, future: F, then: T)
    where
        F: Future + Send + 'static,
        T: FnOnce(&mut A, &mut Context<A>, F::Output) + Send + 'static,
    {
        self.deferred = Some(Deferred::Await(AwaitedFuture::new(future, then)));
    }

    /// Run `future` while the actor goes on taking messages: the reentrant
    /// opt-in (see the [module docs](crate::async_handler#reentrant-futures)
    /// for ordering, stops, restarts and the receive timeout).
    ///
    /// Several calls in one handler start several futures; a later
    /// [`fail`](Self::fail) or [`run_async`](Self::run_async) in the same
    /// handler replaces them (they are dropped unpolled), as does a panic.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_actor::{Actor, ActorRef, ActorSystem, Context, Props, ask};
    /// use std::time::Duration;
    ///
    /// enum Msg {
    ///     /// Fetch from a slow backend; other messages go on meanwhile.
    ///     Fetch(ActorRef<(u32, ActorRef<u32>)>, ActorRef<u32>),
    ///     Count(ActorRef<u64>),
    /// }
    ///
    /// struct Front(u64);
    /// impl Actor for Front {
    ///     type Msg = Msg;
    ///     fn receive(&mut self, ctx: &mut Context<Self>, msg: Msg) {
    ///         self.0 += 1;
    ///         match msg {
    ///             Msg::Fetch(backend, reply_to) => ctx.run_async_reentrant(async move {
    ///                 let answer = ask(&backend, |me| (7, me), Duration::from_secs(5)).await;
    ///                 reply_to.tell(answer.unwrap_or(0));
    ///             }),
    ///             Msg::Count(reply_to) => reply_to.tell(self.0),
    ///         }
    ///     }
    /// }
    ///
    /// struct Backend;
    /// impl Actor for Backend {
    ///     type Msg = (u32, ActorRef<u32>);
    ///     fn receive(&mut self, _: &mut Context<Self>, (n, reply_to): Self::Msg) {
    ///         reply_to.tell(n * 6);
    ///     }
    /// }
    ///
    /// let system = ActorSystem::new("reentrant").unwrap();
    /// let backend = system.spawn(Props::new(|| Backend), "backend").unwrap();
    /// let front = system.spawn(Props::new(|| Front(0)), "front").unwrap();
    /// let answer = ask(&front, |me| Msg::Fetch(backend.clone(), me), Duration::from_secs(5));
    /// assert_eq!(answer.wait(), Ok(42));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn run_async_reentrant<F>(&mut self, future: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        self.run_async_reentrant_then(future, |_, _, ()| {});
    }

    /// Like [`run_async_reentrant`](Self::run_async_reentrant), then run
    /// `then` with the actor, its context and the future's output, on the
    /// actor's thread between two messages, in the order the reentrant
    /// futures complete. `then` may call [`fail`](Self::fail), `run_async`
    /// (which holds everything until its future is done) or start more
    /// reentrant futures.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_actor::{Actor, ActorRef, ActorSystem, Context, Props, ask};
    /// use std::time::Duration;
    ///
    /// enum Msg {
    ///     /// Wait `ms` on the system's clock, then add `n`.
    ///     AddLater(u64, u64),
    ///     Get(ActorRef<u64>),
    /// }
    ///
    /// struct Sum(u64);
    /// impl Actor for Sum {
    ///     type Msg = Msg;
    ///     fn receive(&mut self, ctx: &mut Context<Self>, msg: Msg) {
    ///         match msg {
    ///             Msg::AddLater(n, ms) => {
    ///                 let later = ctx.system().sleep(Duration::from_millis(ms));
    ///                 ctx.run_async_reentrant_then(later, move |sum: &mut Sum, _, _| sum.0 += n);
    ///             }
    ///             Msg::Get(reply_to) => reply_to.tell(self.0),
    ///         }
    ///     }
    /// }
    ///
    /// let system = ActorSystem::new("reentrant-then").unwrap();
    /// let sum = system.spawn(Props::new(|| Sum(0)), "sum").unwrap();
    /// sum.tell(Msg::AddLater(5, 10_000));
    /// // Answered at once: the sleeping future does not hold the actor.
    /// let now = ask(&sum, Msg::Get, Duration::from_secs(5)).wait();
    /// assert_eq!(now, Ok(0));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn run_async_reentrant_then<F, T>(&mut self, future: F, then: T)
    where
        F: Future + Send + 'static,
        T: FnOnce(&mut A, &mut Context<A>, F::Output) + Send + 'static,
    {
        let future = AwaitedFuture::new(future, then);
        match &mut self.deferred {
            Some(Deferred::Reentrant(futures)) => futures.push(future),
            other => *other = Some(Deferred::Reentrant(vec![future])),
        }
    }
}
