//! The machinery behind [`Instrumentation`]: the installed hooks, the stamp
//! a send records, and what a message tells them.
//!
//! The per-message path is short on purpose (a no-op hook adds about 34
//! instructions per message; `benches/examples/profile_instrument.rs`
//! measures it): a system always has exactly one [`Installed`] hook
//! (several are one [`Fanout`]), so the message loop makes one dynamic call
//! before and one after a message, with the panic guard and the disabled
//! flag inside that call (no landing pad in the loop); the hook's own type
//! is called statically from there; the processing start time is carried
//! only when a hook wants timing; and a user message's [`MessageInfo`] is
//! three words, the types and kind being one constant per actor type.

use std::any::type_name;
use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;
use std::time::Instant;

use super::{
    Instrumentation, LifecycleEvent, MessageInfo, MessageKind, Outcome, Processed, Timing,
};
use crate::core::dead_letters::DeadLetter;
use crate::path::ActorPath;
use crate::sync::{Arc, AtomicBool, Ordering};

/// Whether the machinery is compiled in. `--cfg weir_no_instrument` removes
/// it (the stamp becomes zero-sized and every hook branch is dead code); it
/// exists only to measure what the machinery costs when no hook is set.
pub(crate) const COMPILED_IN: bool = !cfg!(weir_no_instrument);

/// Enqueue times are stored as nanoseconds since this instant (one for the
/// process, so a [`MessageInfo`] needs no pointer to it).
pub(super) fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// What a send records for the hooks, inline in the mailbox slot: 16 bytes,
/// or nothing with `--cfg weir_no_instrument`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Stamp {
    /// Nanoseconds since [`epoch`], plus one (0: not recorded).
    #[cfg(not(weir_no_instrument))]
    enqueued: u64,
    #[cfg(not(weir_no_instrument))]
    context: u64,
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

    /// The same context, without an enqueue time.
    pub(crate) fn context_only(self) -> Self {
        #[cfg(not(weir_no_instrument))]
        {
            Self {
                enqueued: 0,
                ..self
            }
        }
        #[cfg(weir_no_instrument)]
        {
            self
        }
    }

    /// When the message was enqueued, if recorded.
    #[allow(unused_variables)] // `epoch` is unused with --cfg weir_no_instrument
    pub(super) fn enqueued_at(&self, epoch: Instant) -> Option<Instant> {
        #[cfg(not(weir_no_instrument))]
        {
            self.enqueued
                .checked_sub(1)
                .map(|n| epoch + std::time::Duration::from_nanos(n))
        }
        #[cfg(weir_no_instrument)]
        {
            None
        }
    }
}

/// The actor type, message type and kind of a [`MessageInfo`].
#[derive(Debug)]
pub(crate) struct Meta {
    pub(crate) actor_type: fn() -> &'static str,
    pub(crate) message_type: Name,
    pub(crate) kind: MessageKind,
}

/// A message type's name: a Rust type's, or one of Weir's own.
#[derive(Debug)]
pub(crate) enum Name {
    Of(fn() -> &'static str),
    Is(&'static str),
}

impl Name {
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Self::Of(f) => f(),
            Self::Is(name) => name,
        }
    }
}

impl Meta {
    /// A system message to an actor of type `A`.
    pub(crate) fn system<A: ?Sized>(message_type: &'static str) -> Self {
        Self {
            actor_type: type_name::<A>,
            message_type: Name::Is(message_type),
            kind: MessageKind::System,
        }
    }
}

/// The constant [`Meta`]s of actor type `A` with message type `M`.
pub(crate) struct MetaOf<A: ?Sized, M: ?Sized>(PhantomData<fn(&A, &M)>);

impl<A: ?Sized, M: ?Sized> MetaOf<A, M> {
    pub(crate) const USER: &'static Meta = &Meta {
        actor_type: type_name::<A>,
        message_type: Name::Of(type_name::<M>),
        kind: MessageKind::User,
    };
    pub(crate) const ASK_REPLY: &'static Meta = &Meta {
        actor_type: type_name::<A>,
        message_type: Name::Of(type_name::<M>),
        kind: MessageKind::AskReply,
    };
    pub(crate) const TERMINATED: &'static Meta = &Meta {
        actor_type: type_name::<A>,
        message_type: Name::Is("weir::Terminated"),
        kind: MessageKind::Control,
    };
    pub(crate) const POISON_PILL: &'static Meta = &Meta {
        actor_type: type_name::<A>,
        message_type: Name::Is("weir::PoisonPill"),
        kind: MessageKind::Control,
    };
}

/// An installed hook, every call to it guarded: a panic is caught, reported
/// once, and disables the hook. Called through one dynamic call per method,
/// the guard inside it, so the message loop holds no landing pad for it.
pub(crate) trait Installed: Send + Sync + 'static {
    fn before(&self, info: &MessageInfo<'_>);
    fn after(&self, info: &MessageInfo<'_>, processed: &Processed);
    /// The context word for a send to `target` (0: none).
    fn capture(&self, target: &ActorPath) -> u64;
    fn lifecycle(&self, event: &LifecycleEvent<'_>);
    fn dead_letter(&self, letter: &DeadLetter);
    fn captures_context(&self) -> bool;
    fn wants_enqueue_time(&self) -> bool;
    fn wants_timing(&self) -> bool;
    /// The same hook, not disabled (for a cloned builder).
    fn clone_box(&self) -> Box<dyn Installed>;
}

impl Clone for Box<dyn Installed> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// `hook` as the builder keeps it.
pub(crate) fn installed<H: Instrumentation + ?Sized>(hook: Arc<H>) -> Box<dyn Installed> {
    Box::new(Guarded {
        disabled: AtomicBool::new(false),
        hook,
    })
}

/// One hook and whether it panicked. `H` is called statically.
struct Guarded<H: ?Sized> {
    disabled: AtomicBool,
    hook: Arc<H>,
}

impl<H: Instrumentation + ?Sized> Guarded<H> {
    /// Call the hook unless it is disabled; disable it if it panics.
    #[inline(always)]
    fn call<R>(&self, f: impl FnOnce(&H) -> R) -> Option<R> {
        if self.disabled.load(Ordering::Relaxed) {
            return None;
        }
        match catch_unwind(AssertUnwindSafe(|| f(&self.hook))) {
            Ok(r) => Some(r),
            Err(p) => {
                report_and_disable(&self.disabled, &*p);
                None
            }
        }
    }
}

#[cold]
#[inline(never)]
fn report_and_disable(disabled: &AtomicBool, payload: &(dyn std::any::Any + Send)) {
    if !disabled.swap(true, Ordering::AcqRel) {
        let message = crate::supervision::panic_message(payload);
        eprintln!("weir: an instrumentation hook panicked and is now disabled: {message}");
    }
}

impl<H: Instrumentation + ?Sized> Installed for Guarded<H> {
    fn before(&self, info: &MessageInfo<'_>) {
        self.call(|h| h.before_message(info));
    }
    fn after(&self, info: &MessageInfo<'_>, processed: &Processed) {
        self.call(|h| h.after_message(info, processed));
    }
    fn capture(&self, target: &ActorPath) -> u64 {
        self.call(|h| {
            if h.captures_context() {
                h.capture_context(target)
            } else {
                0
            }
        })
        .unwrap_or(0)
    }
    fn lifecycle(&self, event: &LifecycleEvent<'_>) {
        self.call(|h| h.on_lifecycle(event));
    }
    fn dead_letter(&self, letter: &DeadLetter) {
        self.call(|h| h.on_dead_letter(letter));
    }
    fn captures_context(&self) -> bool {
        self.hook.captures_context()
    }
    fn wants_enqueue_time(&self) -> bool {
        self.hook.wants_enqueue_time()
    }
    fn wants_timing(&self) -> bool {
        self.hook.wants_timing()
    }
    fn clone_box(&self) -> Box<dyn Installed> {
        installed(self.hook.clone())
    }
}

/// Several hooks as one, each guarded on its own: `before` in installation
/// order, `after` in reverse.
struct Fanout {
    hooks: Box<[Box<dyn Installed>]>,
    captures_context: bool,
    wants_enqueue_time: bool,
    wants_timing: bool,
}

impl Installed for Fanout {
    fn before(&self, info: &MessageInfo<'_>) {
        self.hooks.iter().for_each(|h| h.before(info));
    }
    fn after(&self, info: &MessageInfo<'_>, processed: &Processed) {
        self.hooks
            .iter()
            .rev()
            .for_each(|h| h.after(info, processed));
    }
    /// The first non-zero word, in installation order.
    fn capture(&self, target: &ActorPath) -> u64 {
        self.hooks
            .iter()
            .map(|h| h.capture(target))
            .find(|&w| w != 0)
            .unwrap_or(0)
    }
    fn lifecycle(&self, event: &LifecycleEvent<'_>) {
        self.hooks.iter().for_each(|h| h.lifecycle(event));
    }
    fn dead_letter(&self, letter: &DeadLetter) {
        self.hooks.iter().for_each(|h| h.dead_letter(letter));
    }
    fn captures_context(&self) -> bool {
        self.captures_context
    }
    fn wants_enqueue_time(&self) -> bool {
        self.wants_enqueue_time
    }
    fn wants_timing(&self) -> bool {
        self.wants_timing
    }
    fn clone_box(&self) -> Box<dyn Installed> {
        Box::new(Fanout {
            hooks: self.hooks.iter().map(|h| h.clone_box()).collect(),
            ..*self
        })
    }
}

/// The installed hooks of a system (`None` in the system when nothing is
/// installed), copied into every cell.
#[derive(Clone)]
pub(crate) struct Hooks {
    /// The one hook, or a [`Fanout`] of several. An `Arc<Box<_>>` rather
    /// than an `Arc<dyn _>`, whose data offset is computed on every call.
    hook: Arc<Box<dyn Installed>>,
    wants_timing: bool,
    wants_enqueue_time: bool,
    captures_context: bool,
    /// Whether a send records anything (`captures_context ||
    /// wants_enqueue_time`): the one test on the sender's side.
    stamps: bool,
}

impl Hooks {
    pub(crate) fn new(mut hooks: Vec<Box<dyn Installed>>) -> Option<Self> {
        let hook = match hooks.len() {
            0 => return None,
            1 => hooks.pop().expect("one hook"),
            _ => Box::new(Fanout {
                captures_context: hooks.iter().any(|h| h.captures_context()),
                wants_enqueue_time: hooks.iter().any(|h| h.wants_enqueue_time()),
                wants_timing: hooks.iter().any(|h| h.wants_timing()),
                hooks: hooks.into(),
            }),
        };
        let (captures_context, wants_enqueue_time) =
            (hook.captures_context(), hook.wants_enqueue_time());
        let _ = epoch(); // start the clock before the first stamp
        Some(Self {
            wants_timing: hook.wants_timing(),
            wants_enqueue_time,
            captures_context,
            stamps: captures_context || wants_enqueue_time,
            hook: Arc::new(hook),
        })
    }

    /// On the sender's thread: the stamp for a user message to `target`.
    #[inline]
    pub(crate) fn stamp(&self, target: &ActorPath) -> Stamp {
        if self.stamps {
            self.stamp_slow(target)
        } else {
            Stamp::default()
        }
    }

    #[inline(never)]
    fn stamp_slow(&self, target: &ActorPath) -> Stamp {
        let context = if self.captures_context {
            self.hook.capture(target)
        } else {
            0
        };
        #[cfg(not(weir_no_instrument))]
        {
            let enqueued = if self.wants_enqueue_time {
                u64::try_from(epoch().elapsed().as_nanos()).unwrap_or(u64::MAX - 1) + 1
            } else {
                0
            };
            Stamp { enqueued, context }
        }
        #[cfg(weir_no_instrument)]
        {
            let _ = (context, self.wants_enqueue_time);
            Stamp {}
        }
    }

    /// Whether a hook wants processing times: then call
    /// [`before_timed`](Self::before_timed) and
    /// [`after_timed`](Self::after_timed), else [`before`](Self::before) and
    /// [`after`](Self::after), which carry no start time through the
    /// processing (four instructions fewer per message).
    #[inline(always)]
    pub(crate) fn timed(&self) -> bool {
        self.wants_timing
    }

    /// Call the hook's `before_message`. Inlined into the message loop: a
    /// flag test and a dynamic call.
    #[inline(always)]
    pub(crate) fn before(&self, info: &MessageInfo<'_>) {
        self.hook.before(info);
    }

    /// The processing ended with `outcome`: call the hook's `after_message`
    /// if it is still enabled (so its `before_message` returned normally).
    #[inline(always)]
    pub(crate) fn after(&self, info: &MessageInfo<'_>, outcome: Outcome) {
        let processed = Processed {
            outcome,
            timing: None,
        };
        self.hook.after(info, &processed);
    }

    /// [`before`](Self::before), then the processing starts (now).
    pub(crate) fn before_timed(&self, info: &MessageInfo<'_>) -> Instant {
        self.before(info);
        Instant::now()
    }

    /// [`after`](Self::after) for processing that started at `started`.
    pub(crate) fn after_timed(&self, info: &MessageInfo<'_>, outcome: Outcome, started: Instant) {
        let processed = Processed {
            outcome,
            timing: Some(Timing {
                started,
                ended: Instant::now(),
            }),
        };
        self.hook.after(info, &processed);
    }

    /// Run `process`, which cannot fail (a system message, an ask reply),
    /// between the hooks.
    pub(crate) fn around_handled<R>(
        &self,
        info: &MessageInfo<'_>,
        process: impl FnOnce() -> R,
    ) -> R {
        if self.timed() {
            let started = self.before_timed(info);
            let r = process();
            self.after_timed(info, Outcome::Handled, started);
            r
        } else {
            self.before(info);
            let r = process();
            self.after(info, Outcome::Handled);
            r
        }
    }

    pub(crate) fn lifecycle(&self, event: &LifecycleEvent<'_>) {
        self.hook.lifecycle(event);
    }

    pub(crate) fn dead_letter(&self, letter: &DeadLetter) {
        self.hook.dead_letter(letter);
    }
}
