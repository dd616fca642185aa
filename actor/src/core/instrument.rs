//! Instrumentation: one hook that sees every message of every actor.
//!
//! Install any number of [`Instrumentation`]s on the
//! [`ActorSystemBuilder`](crate::ActorSystemBuilder). Each is called just
//! before and just after the processing of every message of every actor —
//! user actors, the guardians and Weir's own actors, the temporary actors of
//! `ask` — system messages (watch, stop, supervision) included, with no
//! change to actor code. It also sees lifecycle events and dead letters.
//!
//! Several hooks nest: `before_message` is called in the order the hooks
//! were installed, `after_message` in the reverse order, so the first
//! installed is outermost.
//!
//! # Cost
//!
//! With nothing installed the machinery costs one branch per send and per
//! message. With hooks installed it costs two dynamic calls per hook per
//! message (a few dozen instructions with one no-op hook; see
//! `benches/examples/profile_instrument.rs`), plus one per send for
//! [`Instrumentation::capture_context`] and a clock read per send when a
//! hook asks for enqueue times, and allocates nothing per message: the
//! sender's context and the enqueue time travel inline in the mailbox slot.
//!
//! # Panicking hooks
//!
//! A hook that panics never harms the actor it observes: the panic is
//! caught, reported once on standard error, and that hook is **disabled for
//! the rest of the system's life** (a broken monitor should not keep failing
//! on every message). The message is processed either way.

use std::fmt;
use std::time::Instant;

use crate::core::dead_letters::DeadLetter;
use crate::path::ActorPath;

mod hooks;
use hooks::epoch;
pub(crate) use hooks::{COMPILED_IN, Hooks, Installed, Meta, MetaOf, Stamp, installed};

/// A monitor called before and after every message of every actor. All
/// methods have empty defaults; implement what you need.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use weir_actor::{Actor, ActorSystem, Context, Instrumentation, MessageInfo, MessageKind, Props};
///
/// #[derive(Default)]
/// struct CountUserMessages(AtomicU64);
///
/// impl Instrumentation for CountUserMessages {
///     fn before_message(&self, info: &MessageInfo<'_>) {
///         if info.kind() == MessageKind::User && !info.is_system_actor() {
///             self.0.fetch_add(1, Ordering::Relaxed);
///         }
///     }
/// }
///
/// struct Quiet(std::sync::mpsc::Sender<()>);
/// impl Actor for Quiet {
///     type Msg = u32;
///     fn receive(&mut self, _: &mut Context<Self>, n: u32) {
///         if n == 9 {
///             self.0.send(()).unwrap();
///         }
///     }
/// }
///
/// let counter = Arc::new(CountUserMessages::default());
/// let system = ActorSystem::builder().name("counted").instrumentation(counter.clone()).build().unwrap();
/// let (done, finished) = std::sync::mpsc::channel();
/// let quiet = system.spawn(Props::new(move || Quiet(done.clone())), "quiet").unwrap();
/// for i in 0..10u32 {
///     quiet.tell(i);
/// }
/// finished.recv().unwrap();
/// assert_eq!(counter.0.load(Ordering::Relaxed), 10);
/// system.terminate().wait().unwrap();
/// ```
pub trait Instrumentation: Send + Sync + 'static {
    /// Called on the processing thread just before one message is
    /// processed. Whatever it makes current on the thread (a `tracing`
    /// span entered, a trace id) stays current during the processing until
    /// [`after_message`](Self::after_message) undoes it; processing nests
    /// (an `ask` reply may be handled inside another actor's message), so
    /// keep such state as a stack.
    fn before_message(&self, info: &MessageInfo<'_>) {
        let _ = info;
    }

    /// Called on the same thread just after the message was processed, with
    /// how it went, for every message whose
    /// [`before_message`](Self::before_message) returned normally (unless
    /// the hook has been disabled since, by a panic).
    fn after_message(&self, info: &MessageInfo<'_>, processed: &Processed) {
        let _ = (info, processed);
    }

    /// Called on the sender's thread for every user message sent to an
    /// actor, when [`captures_context`](Self::captures_context) says so.
    /// The word returned travels with the message and is given back as
    /// [`MessageInfo::sender_context`], e.g. a trace id. Only the first
    /// installed hook that returns a non-zero word sets it.
    fn capture_context(&self, target: &ActorPath) -> u64 {
        let _ = target;
        0
    }

    /// Whether [`capture_context`](Self::capture_context) should be called
    /// on every send. Opt-in, so hooks that carry no context cost nothing on
    /// the sender's side.
    fn captures_context(&self) -> bool {
        false
    }

    /// Whether to record when each user message was enqueued (one clock
    /// read per send), for [`MessageInfo::enqueued_at`].
    fn wants_enqueue_time(&self) -> bool {
        false
    }

    /// Whether to time processing (two clock reads per message), for
    /// [`Processed::timing`]. Clock reads cost
    /// more than everything else a hook adds, so they are opt-in.
    fn wants_timing(&self) -> bool {
        false
    }

    /// An actor started, restarted or stopped.
    fn on_lifecycle(&self, event: &LifecycleEvent<'_>) {
        let _ = event;
    }

    /// A message could not be delivered.
    fn on_dead_letter(&self, letter: &DeadLetter) {
        let _ = letter;
    }
}

/// What a hook knows about the message being processed: a small `Copy`
/// value, the same for [`Instrumentation::before_message`] and
/// [`Instrumentation::after_message`].
#[derive(Clone, Copy)]
pub struct MessageInfo<'a> {
    pub(crate) path: &'a ActorPath,
    /// The actor and message types and the kind: a constant per actor type
    /// for user messages, so a message stores one pointer for all three.
    pub(crate) meta: &'a Meta,
    /// When it was enqueued and the sender's context, as the send recorded
    /// them; read only if a hook asks.
    pub(crate) stamp: Stamp,
}

impl fmt::Debug for MessageInfo<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MessageInfo")
            .field("path", self.path)
            .field("actor_type", &self.actor_type())
            .field("message_type", &self.message_type())
            .field("kind", &self.kind())
            .field("enqueued_at", &self.enqueued_at())
            .field("sender_context", &self.sender_context())
            .finish()
    }
}

/// Which kind of message is processed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum MessageKind {
    /// A message sent with `tell` (or by a timer or the receive timeout).
    User,
    /// A death-watch notice (`on_terminated`) or a poison pill.
    Control,
    /// A system message: stop, watch, supervision.
    System,
    /// The reply that completes an `ask`.
    AskReply,
}

impl<'a> MessageInfo<'a> {
    /// The actor's path.
    pub fn path(&self) -> &'a ActorPath {
        self.path
    }

    /// The Rust type name of the actor.
    pub fn actor_type(&self) -> &'static str {
        (self.meta.actor_type)()
    }

    /// The Rust type name of the message (for system messages, a `weir::`
    /// name such as `weir::Terminate`).
    pub fn message_type(&self) -> &'static str {
        self.meta.message_type.name()
    }

    /// Which kind of message it is.
    pub fn kind(&self) -> MessageKind {
        self.meta.kind
    }

    /// Whether the actor is one of Weir's (guardians, `/system`, `/temp`)
    /// rather than a user actor under `/user`.
    pub fn is_system_actor(&self) -> bool {
        self.path.is_system()
    }

    /// When the message was enqueued, if a hook asked for enqueue times
    /// ([`Instrumentation::wants_enqueue_time`]) and it is a user message.
    pub fn enqueued_at(&self) -> Option<Instant> {
        self.stamp.enqueued_at(epoch())
    }

    /// The context word captured when the message was sent (0 if none).
    pub fn sender_context(&self) -> u64 {
        self.stamp.context()
    }
}

/// How processing went.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// Processed without a panic.
    Handled,
    /// The handler panicked with this message (or failed with
    /// `ctx.fail(error)`, with the error's text); supervision takes over.
    /// A `Box<str>` rather than a `String` keeps an outcome two words, so
    /// the message loop gets it back in registers.
    Panicked(Box<str>),
}

/// How processing went, for [`Instrumentation::after_message`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Processed {
    /// How it went.
    pub outcome: Outcome,
    /// When processing started and ended, if a hook asked for timing
    /// ([`Instrumentation::wants_timing`]).
    pub timing: Option<Timing>,
}

/// When the processing of a message started and ended.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use weir_actor::{ActorSystem, Instrumentation, MessageInfo, Processed};
///
/// /// The total time spent processing messages, in nanoseconds.
/// #[derive(Default)]
/// struct Busy(AtomicU64);
///
/// impl Instrumentation for Busy {
///     fn after_message(&self, _: &MessageInfo<'_>, processed: &Processed) {
///         if let Some(timing) = processed.timing {
///             self.0.fetch_add(timing.elapsed().as_nanos() as u64, Ordering::Relaxed);
///         }
///     }
///     fn wants_timing(&self) -> bool {
///         true
///     }
/// }
///
/// let busy = Arc::new(Busy::default());
/// let system = ActorSystem::builder().name("busy").instrumentation(busy.clone()).build().unwrap();
/// system.terminate().wait().unwrap();
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// Just before the message was handed to the actor (after every hook's
    /// `before_message`).
    pub started: Instant,
    /// Just after the actor returned (before any hook's `after_message`).
    pub ended: Instant,
}

impl Timing {
    /// How long processing took.
    pub fn elapsed(&self) -> std::time::Duration {
        self.ended.saturating_duration_since(self.started)
    }
}

/// A lifecycle event.
#[derive(Debug)]
#[non_exhaustive]
pub enum LifecycleEvent<'a> {
    /// `pre_start` completed.
    Started {
        /// The actor.
        path: &'a ActorPath,
        /// Its Rust type name.
        actor_type: &'static str,
    },
    /// A fresh instance replaced a failed one (`post_restart` completed).
    Restarted {
        /// The actor.
        path: &'a ActorPath,
        /// Its Rust type name.
        actor_type: &'static str,
    },
    /// The actor stopped for good (`post_stop` ran).
    Stopped {
        /// The actor.
        path: &'a ActorPath,
        /// Its Rust type name.
        actor_type: &'static str,
    },
}

#[cfg(feature = "tracing")]
mod tracing_hook;
#[cfg(feature = "tracing")]
pub use tracing_hook::TracingInstrumentation;
