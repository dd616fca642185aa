//! Instrumentation: one hook that sees every message of every actor.
//!
//! Install any number of [`Instrumentation`]s on the
//! [`ActorSystemBuilder`](crate::ActorSystemBuilder). Each is called around
//! the processing of every message of every actor — user actors, the
//! guardians and Weir's own actors, the temporary actors of `ask` — system
//! messages (watch, stop, supervision) included, with no change to actor
//! code. It also sees lifecycle events and dead letters.
//!
//! # Cost
//!
//! With nothing installed the machinery costs one branch per send and per
//! message. With hooks installed it costs one dynamic call per hook per
//! message (plus one per send for [`Instrumentation::capture_context`], and
//! a clock read per send when a hook asks for enqueue times), and allocates
//! nothing per message: the sender's context and the enqueue time travel
//! inline in the mailbox slot.
//!
//! # Panicking hooks
//!
//! A hook that panics never harms the actor it observes: the panic is
//! caught, reported once on standard error, and that hook is **disabled for
//! the rest of the system's life** (a broken monitor should not keep failing
//! on every message). If it panicked before calling [`Next::run`], the
//! message is processed anyway, without it.

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Instant;

use crate::events::DeadLetter;
use crate::path::ActorPath;
use crate::sync::{Arc, AtomicBool, Ordering};

/// A monitor called around every message of every actor. All methods have
/// empty defaults; implement what you need.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use weir_actor::{Actor, ActorSystem, Context, Instrumentation, MessageInfo, MessageKind, Next, Props};
///
/// #[derive(Default)]
/// struct CountUserMessages(AtomicU64);
///
/// impl Instrumentation for CountUserMessages {
///     fn around_message(&self, info: &MessageInfo<'_>, next: Next<'_>) {
///         if info.kind() == MessageKind::User && !info.is_system_actor() {
///             self.0.fetch_add(1, Ordering::Relaxed);
///         }
///         next.run();
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
    /// Called around the processing of one message. Call `next.run()`
    /// exactly once (it processes the message and says how it went);
    /// anything you hold across it, such as an entered `tracing` span,
    /// covers the processing. If you do not call it, the message is processed
    /// after you return.
    fn around_message(&self, info: &MessageInfo<'_>, next: Next<'_>) {
        let _ = info;
        next.run();
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
    /// [`Processed::started`] and [`Processed::ended`]. Clock reads cost
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

/// What a hook knows about the message being processed.
#[derive(Debug)]
pub struct MessageInfo<'a> {
    pub(crate) path: &'a ActorPath,
    pub(crate) actor_type: &'static str,
    pub(crate) message_type: &'static str,
    pub(crate) kind: MessageKind,
    pub(crate) enqueued_at: Option<Instant>,
    pub(crate) sender_context: u64,
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
        self.actor_type
    }

    /// The Rust type name of the message (for system messages, a `weir::`
    /// name such as `weir::Terminate`).
    pub fn message_type(&self) -> &'static str {
        self.message_type
    }

    /// Which kind of message it is.
    pub fn kind(&self) -> MessageKind {
        self.kind
    }

    /// Whether the actor is one of Weir's (guardians, `/system`, `/temp`)
    /// rather than a user actor under `/user`.
    pub fn is_system_actor(&self) -> bool {
        self.path.is_system()
    }

    /// When the message was enqueued, if a hook asked for enqueue times
    /// ([`Instrumentation::wants_enqueue_time`]) and it is a user message.
    pub fn enqueued_at(&self) -> Option<Instant> {
        self.enqueued_at
    }

    /// The context word captured when the message was sent (0 if none).
    pub fn sender_context(&self) -> u64 {
        self.sender_context
    }
}

/// How processing went.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// Processed without a panic.
    Handled,
    /// The handler panicked with this message; supervision takes over.
    Panicked(String),
}

/// The result of [`Next::run`]: the outcome and, when a hook asked for
/// timing ([`Instrumentation::wants_timing`]), when processing started and
/// ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Processed {
    /// How it went.
    pub outcome: Outcome,
    /// When processing started (if timed).
    pub started: Option<Instant>,
    /// When processing ended (if timed).
    pub ended: Option<Instant>,
}

/// The rest of the processing of one message: the next hook, or the actor.
pub struct Next<'a> {
    run: &'a mut dyn FnMut() -> Processed,
    ran: &'a mut Option<Processed>,
}

impl<'a> Next<'a> {
    /// Process the message (through the remaining hooks) and say how it went.
    #[inline]
    pub fn run(self) -> &'a Processed {
        self.ran.insert((self.run)())
    }
}

impl fmt::Debug for Next<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Next").finish_non_exhaustive()
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

struct Slot {
    hook: Arc<dyn Instrumentation>,
    disabled: AtomicBool,
}

impl Slot {
    fn enabled(&self) -> bool {
        !self.disabled.load(Ordering::Relaxed)
    }

    fn report_and_disable(&self, payload: &(dyn std::any::Any + Send)) {
        if !self.disabled.swap(true, Ordering::AcqRel) {
            let message = crate::supervision::panic_message(payload);
            eprintln!("weir: an instrumentation hook panicked and is now disabled: {message}");
        }
    }
}

/// Whether the machinery is compiled in. `--cfg weir_no_instrument` removes
/// it (the stamp becomes zero-sized and every hook branch is dead code); it
/// exists only to measure what the machinery costs when no hook is set.
pub(crate) const COMPILED_IN: bool = !cfg!(weir_no_instrument);

/// The installed hooks of a system (never empty; `None` in the system when
/// nothing is installed).
#[derive(Clone)]
pub(crate) struct Hooks {
    slots: Arc<[Slot]>,
    wants_enqueue_time: bool,
    wants_timing: bool,
    captures_context: bool,
    /// Enqueue times are stored as nanoseconds since this instant.
    epoch: Instant,
}

impl Stamp {
    /// The sender's context word.
    pub(crate) fn context(&self) -> u64 {
        #[cfg(not(weir_no_instrument))]
        {
            self.context
        }
        #[cfg(weir_no_instrument)]
        {
            0
        }
    }
}

/// What a send records for the hooks, inline in the mailbox slot: 16 bytes,
/// or nothing with `--cfg weir_no_instrument`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Stamp {
    /// Nanoseconds since the hooks' epoch, plus one (0: not recorded).
    #[cfg(not(weir_no_instrument))]
    enqueued: u64,
    #[cfg(not(weir_no_instrument))]
    context: u64,
}

impl Hooks {
    pub(crate) fn new(hooks: Vec<Arc<dyn Instrumentation>>) -> Option<Self> {
        if hooks.is_empty() {
            return None;
        }
        let wants_enqueue_time = hooks.iter().any(|h| h.wants_enqueue_time());
        let wants_timing = hooks.iter().any(|h| h.wants_timing());
        let captures_context = hooks.iter().any(|h| h.captures_context());
        let slots: Vec<Slot> = hooks
            .into_iter()
            .map(|hook| Slot {
                hook,
                disabled: AtomicBool::new(false),
            })
            .collect();
        Some(Self {
            slots: slots.into(),
            wants_enqueue_time,
            wants_timing,
            captures_context,
            epoch: Instant::now(),
        })
    }

    /// When a stamped message was enqueued, and its sender's context.
    #[allow(unused_variables)] // `stamp` is empty with --cfg weir_no_instrument
    pub(crate) fn unstamp(&self, stamp: Stamp) -> (Option<Instant>, u64) {
        #[cfg(not(weir_no_instrument))]
        {
            let at = stamp.enqueued.checked_sub(1).map(|n| self.epoch + std::time::Duration::from_nanos(n));
            (at, stamp.context)
        }
        #[cfg(weir_no_instrument)]
        {
            (None, 0)
        }
    }

    /// On the sender's thread: the stamp for a user message to `target`.
    #[inline]
    pub(crate) fn stamp(&self, target: &ActorPath) -> Stamp {
        if !self.captures_context && !self.wants_enqueue_time {
            return Stamp::default();
        }
        let mut context = 0;
        for slot in self.slots.iter().filter(|s| self.captures_context && s.enabled() && s.hook.captures_context()) {
            match catch_unwind(AssertUnwindSafe(|| slot.hook.capture_context(target))) {
                Ok(0) => {}
                Ok(word) => {
                    context = word;
                    break;
                }
                Err(p) => slot.report_and_disable(&*p),
            }
        }
        #[cfg(not(weir_no_instrument))]
        {
            let enqueued = if self.wants_enqueue_time {
                u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX - 1) + 1
            } else {
                0
            };
            Stamp { enqueued, context }
        }
        #[cfg(weir_no_instrument)]
        {
            let _ = context;
            Stamp {}
        }
    }

    /// Run `process` inside every enabled hook, first installed outermost.
    #[inline]
    pub(crate) fn around(&self, info: &MessageInfo<'_>, mut process: impl FnMut() -> Outcome) -> Outcome {
        let timing = self.wants_timing;
        let mut timed = move || {
            let started = timing.then(Instant::now);
            let outcome = process();
            Processed {
                outcome,
                started,
                ended: timing.then(Instant::now),
            }
        };
        self.chain(0, info, &mut timed).outcome
    }

    /// Hooks from `index` on, then the message itself.
    fn chain(&self, index: usize, info: &MessageInfo<'_>, process: &mut dyn FnMut() -> Processed) -> Processed {
        match self.slots.get(index) {
            None => process(),
            Some(slot) if !slot.enabled() => self.chain(index + 1, info, process),
            // The innermost hook runs the message itself: no extra level.
            Some(slot) if index + 1 == self.slots.len() => Self::call(slot, info, process),
            Some(slot) => Self::call(slot, info, &mut || self.chain(index + 1, info, process)),
        }
    }

    /// Call one hook with `run` as its `next`; if the hook returns (or
    /// panics) without running it, run it now.
    fn call(slot: &Slot, info: &MessageInfo<'_>, run: &mut dyn FnMut() -> Processed) -> Processed {
        let mut ran = None;
        {
            let next = Next { run: &mut *run, ran: &mut ran };
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| slot.hook.around_message(info, next))) {
                slot.report_and_disable(&*p);
            }
        }
        ran.unwrap_or_else(run)
    }

    pub(crate) fn lifecycle(&self, event: &LifecycleEvent<'_>) {
        for slot in self.slots.iter().filter(|s| s.enabled()) {
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| slot.hook.on_lifecycle(event))) {
                slot.report_and_disable(&*p);
            }
        }
    }

    pub(crate) fn dead_letter(&self, letter: &DeadLetter) {
        for slot in self.slots.iter().filter(|s| s.enabled()) {
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| slot.hook.on_dead_letter(letter))) {
                slot.report_and_disable(&*p);
            }
        }
    }
}

#[cfg(feature = "tracing")]
mod tracing_hook;
#[cfg(feature = "tracing")]
pub use tracing_hook::TracingInstrumentation;
