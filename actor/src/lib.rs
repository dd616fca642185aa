//! # weir-actor
//!
//! Typed actors for Rust in the model of Akka / Apache Pekko: a hierarchy with
//! supervision, death watch, ask, and one shared work-stealing dispatcher.
//!
//! ## A short tour
//!
//! * [`Actor`]: your state plus `receive` for one message type (usually an enum).
//! * [`Props`]: how to make instances (again on every restart) and per-actor
//!   settings: throughput, [`DispatcherKind`].
//! * [`ActorSystem`]: the threads, the `/user` and `/system` guardians, the
//!   [`EventStream`] of dead letters, and [`terminate`](ActorSystem::terminate).
//! * [`ActorRef<M>`]: a typed, cloneable address; [`tell`](ActorRef::tell)
//!   never blocks on the recipient and never panics. [`ActorHandle`] is the
//!   untyped form (path, stop, downcast).
//! * [`Context`]: spawn children, watch, stop, reach yourself and the system;
//!   [`message_adapter`](Context::message_adapter) takes replies and events
//!   of other types into the actor's own mailbox.
//! * [`async_handler`]: handle a message with a future
//!   ([`run_async`](Context::run_async)); the actor takes no other message
//!   until it is done (Akka.NET's `ReceiveAsync`).
//! * [`SupervisorStrategy`]: what a parent does when a child panics.
//! * [`ask`]: a question whose answer is a future (or a blocking `wait`);
//!   [`ActorSystem::sleep`] and [`ActorSystem::after`]: timer futures on the
//!   system's clock.
//! * `testkit` (feature `testkit`): a `TestClock` that drives every timer by
//!   hand and a `TestProbe` whose messages a test expects; `sim`: a whole
//!   system (and its streams) run deterministically from a seed on the
//!   test's thread, swept over seeds and replayed.
//! * [`routing`]: pool and group routers that route on the sender's thread;
//!   [`backoff`]: restart a failing child after growing delays.
//!
//! ```
//! use std::time::Duration;
//! use weir_actor::{Actor, ActorRef, ActorSystem, Context, Props, ask};
//!
//! enum Msg {
//!     Deposit(u64),
//!     Balance(ActorRef<u64>),
//! }
//!
//! #[derive(Default)]
//! struct Account {
//!     balance: u64,
//! }
//!
//! impl Actor for Account {
//!     type Msg = Msg;
//!     fn receive(&mut self, _ctx: &mut Context<Self>, msg: Msg) {
//!         match msg {
//!             Msg::Deposit(n) => self.balance += n,
//!             Msg::Balance(reply_to) => reply_to.tell(self.balance),
//!         }
//!     }
//! }
//!
//! let system = ActorSystem::new("bank").unwrap();
//! let account = system.spawn(Props::new(Account::default), "account").unwrap();
//! for _ in 0..10 {
//!     account.tell(Msg::Deposit(5));
//! }
//! let balance = ask(&account, Msg::Balance, Duration::from_secs(5)).wait();
//! assert_eq!(balance, Ok(50));
//! system.terminate().wait().unwrap();
//! ```
//!
//! ## Guarantees
//!
//! * Messages from one sender to one actor are processed in the order sent.
//! * An actor processes one message at a time; a run processes at most
//!   `throughput` messages, then yields its thread. System messages (stop,
//!   watch, supervision) go before user messages.
//! * A panic in user code is caught at the actor boundary and handled by the
//!   parent's [`SupervisorStrategy`]; it never takes down a thread.
//! * A message that cannot be delivered is published as a [`DeadLetter`] and
//!   counted, never silently dropped.

#![warn(missing_docs)]
// Under loom only the mailbox, the dispatcher's idle protocol and their
// models are built, and the library itself uses none of it.
#![cfg_attr(loom, allow(dead_code))]

macro_rules! runtime_modules {
    ($($item:item)*) => { $( #[cfg(not(loom))] $item )* };
}

// The floors, bottom first (held by `actor/tests/layers`): the leaves
// below import only each other; `core` imports itself and the leaves;
// `system` adds the core; `features` may use all of them. A file imports a
// name from the module that defines it; the re-exports below are for users.
mod sync;
mod task_state;
pub use sync::{Mutex, MutexGuard};
runtime_modules! {
    mod error;
    mod name;
    mod path;
    mod random;
    mod supervision;
    mod threads;
}

// Under `--cfg loom` only the mailbox state machine, the dispatcher's idle
// protocol and global queue (and their models) are built; the runtime around
// them uses threads and blocking that loom does not model.
mod core;
runtime_modules! {
    mod features;
    mod system;

    pub use crate::core::actor::{Actor, Props, Terminated};
    pub use crate::core::actor_ref::{ActorHandle, ActorRef, WeakActorHandle};
    pub use crate::core::bounded::SendFuture;
    pub use crate::core::cell::{TimerKey, Timers};
    pub use crate::core::context::Context;
    pub use crate::core::dead_letters::{DeadLetter, DeadLetterReason, Event, LogLevel, Subscription, UserEvent};
    pub use crate::core::dispatcher::DispatcherKind;
    pub use crate::core::instrument;
    pub use crate::core::instrument::{Instrumentation, LifecycleEvent, MessageInfo, MessageKind, Outcome, Processed, Timing};
    pub use crate::core::mailbox::MailboxOverflow;
    pub use crate::core::scheduler::{Cancellable, Scheduler};
    pub use crate::core::task::TaskHandle;
    pub use error::{
        AskError, BuildError, PathError, ResolveError, ScheduleError, SchedulerStopped, SpawnError, StashError, TellError, WaitError,
        WrongMessageType,
    };
    pub use features::ask::{AskHandle, ask};
    pub use features::function_ref::FunctionRef;
    pub use features::sleep::{After, Sleep};
    pub use features::stash::DEFAULT_STASH_CAPACITY;
    pub use features::{async_handler, backoff, pipe, routing, stash};
    #[cfg(feature = "testkit")]
    pub use features::sim;
    pub use name::{NAME_PUNCTUATION, NameError, validate_name};
    pub use path::ActorPath;
    pub use random::random_u64;
    pub use supervision::{Directive, Failure, FailurePhase, Scope, SupervisorStrategy};
    pub use system::actor_system::{ActorSystem, ActorSystemBuilder, DEFAULT_THROUGHPUT};
    pub use system::events::EventStream;
    pub use system::promise::Promise;
    pub use system::selection::ActorSelection;
    pub use system::actor_system::shutdown;
    pub use system::actor_system::termination::{Termination, TerminationReport};

    /// Test support (feature `testkit`): a [`TestClock`](testkit::TestClock)
    /// to drive every timer of a system by hand, and a
    /// [`TestProbe`](testkit::TestProbe) whose messages a test expects.
    #[cfg(feature = "testkit")]
    pub mod testkit {
        pub use crate::core::scheduler::TestClock;
        pub use crate::features::test_probe::{DEFAULT_PROBE_TIMEOUT, TestProbe};
    }
}
