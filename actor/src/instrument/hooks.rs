//! The machinery behind [`Instrumentation`]: the installed hooks, the stamp
//! a send records, and what a message tells them.
//!
//! The per-message path is short on purpose (a no-op hook adds about 39
//! instructions per message; `benches/examples/profile_instrument.rs`
//! measures it): a system always has exactly one [`Slot`] (several hooks are
//! one [`Fanout`] in it), so the message loop tests one flag and makes one
//! dynamic call before and one after a message; the hook is called through a
//! `Box` rather than the `Arc` it was installed in; and a user message's
//! [`MessageInfo`] is three words, the types and kind being one constant per
//! actor type.

use std::any::type_name;
use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;
use std::time::Instant;

use super::{Instrumentation, LifecycleEvent, MessageInfo, MessageKind, Outcome, Processed, Timing};
use crate::events::DeadLetter;
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

/// The time, for hooks that want processing times: out of the message
/// loop's way.
#[cold]
#[inline(never)]
fn now() -> Option<Instant> {
    Some(Instant::now())
}

/// Processing that started at `started` ends now.
#[cold]
#[inline(never)]
fn timing(started: Instant) -> Timing {
    Timing {
        started,
        ended: Instant::now(),
    }
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
            Self { enqueued: 0, ..self }
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
            self.enqueued.checked_sub(1).map(|n| epoch + std::time::Duration::from_nanos(n))
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

/// Calls `H` statically through the `Arc` it was installed in.
struct Forward<H: ?Sized>(Arc<H>);

impl<H: Instrumentation + ?Sized> Instrumentation for Forward<H> {
    #[inline]
    fn before_message(&self, info: &MessageInfo<'_>) {
        self.0.before_message(info);
    }
    #[inline]
    fn after_message(&self, info: &MessageInfo<'_>, processed: &Processed) {
        self.0.after_message(info, processed);
    }
    fn capture_context(&self, target: &ActorPath) -> u64 {
        self.0.capture_context(target)
    }
    fn captures_context(&self) -> bool {
        self.0.captures_context()
    }
    fn wants_enqueue_time(&self) -> bool {
        self.0.wants_enqueue_time()
    }
    fn wants_timing(&self) -> bool {
        self.0.wants_timing()
    }
    fn on_lifecycle(&self, event: &LifecycleEvent<'_>) {
        self.0.on_lifecycle(event);
    }
    fn on_dead_letter(&self, letter: &DeadLetter) {
        self.0.on_dead_letter(letter);
    }
}

/// A hook as the builder keeps it: behind a [`Forward`], and cloneable with
/// the builder.
pub(crate) trait Installed: Instrumentation {
    fn clone_box(&self) -> Box<dyn Installed>;
}

impl<H: Instrumentation + ?Sized> Installed for Forward<H> {
    fn clone_box(&self) -> Box<dyn Installed> {
        Box::new(Forward(self.0.clone()))
    }
}

impl Clone for Box<dyn Installed> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// `hook` as the builder keeps it.
pub(crate) fn installed<H: Instrumentation + ?Sized>(hook: Arc<H>) -> Box<dyn Installed> {
    Box::new(Forward(hook))
}

/// One hook, and whether it panicked. Every call to it is caught here.
struct Slot {
    /// A `Box`, which points at the hook's data directly (an `Arc<dyn _>`
    /// needs its data offset computed on every call).
    hook: Box<dyn Instrumentation>,
    disabled: AtomicBool,
}

impl Slot {
    fn new(hook: Box<dyn Instrumentation>) -> Self {
        Self {
            hook,
            disabled: AtomicBool::new(false),
        }
    }

    #[inline(always)]
    fn enabled(&self) -> bool {
        !self.disabled.load(Ordering::Relaxed)
    }

    /// Call the hook unless it is disabled; disable it if it panics.
    #[inline(always)]
    fn call<R>(&self, f: impl FnOnce(&dyn Instrumentation) -> R) -> Option<R> {
        if !self.enabled() {
            return None;
        }
        match catch_unwind(AssertUnwindSafe(|| f(&*self.hook))) {
            Ok(r) => Some(r),
            Err(p) => {
                self.report_and_disable(&*p);
                None
            }
        }
    }

    #[cold]
    #[inline(never)]
    fn report_and_disable(&self, payload: &(dyn std::any::Any + Send)) {
        if !self.disabled.swap(true, Ordering::AcqRel) {
            let message = crate::supervision::panic_message(payload);
            eprintln!("weir: an instrumentation hook panicked and is now disabled: {message}");
        }
    }

    /// The context word this hook captures for a send to `target` (0: none).
    fn capture(&self, target: &ActorPath) -> u64 {
        self.call(|h| if h.captures_context() { h.capture_context(target) } else { 0 })
            .unwrap_or(0)
    }
}

/// Several hooks as one: each in its own [`Slot`], so each is disabled on
/// its own; `before_message` in installation order, `after_message` in
/// reverse. It never panics itself.
struct Fanout {
    slots: Box<[Slot]>,
    captures_context: bool,
    wants_enqueue_time: bool,
    wants_timing: bool,
}

impl Instrumentation for Fanout {
    fn before_message(&self, info: &MessageInfo<'_>) {
        for slot in &self.slots {
            slot.call(|h| h.before_message(info));
        }
    }
    fn after_message(&self, info: &MessageInfo<'_>, processed: &Processed) {
        for slot in self.slots.iter().rev() {
            slot.call(|h| h.after_message(info, processed));
        }
    }
    /// The first non-zero word, in installation order.
    fn capture_context(&self, target: &ActorPath) -> u64 {
        self.slots.iter().map(|s| s.capture(target)).find(|&w| w != 0).unwrap_or(0)
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
    fn on_lifecycle(&self, event: &LifecycleEvent<'_>) {
        for slot in &self.slots {
            slot.call(|h| h.on_lifecycle(event));
        }
    }
    fn on_dead_letter(&self, letter: &DeadLetter) {
        for slot in &self.slots {
            slot.call(|h| h.on_dead_letter(letter));
        }
    }
}

/// The installed hooks of a system (`None` in the system when nothing is
/// installed), copied into every cell.
#[derive(Clone)]
pub(crate) struct Hooks {
    /// The one hook, or a [`Fanout`] of several.
    slot: Arc<Slot>,
    wants_timing: bool,
    wants_enqueue_time: bool,
    captures_context: bool,
    /// Whether a send records anything (`captures_context ||
    /// wants_enqueue_time`): the one test on the sender's side.
    stamps: bool,
}

impl Hooks {
    pub(crate) fn new(hooks: Vec<Box<dyn Installed>>) -> Option<Self> {
        let mut hooks: Vec<Box<dyn Instrumentation>> = hooks.into_iter().map(|h| h as Box<dyn Instrumentation>).collect();
        let hook = match hooks.len() {
            0 => return None,
            1 => hooks.pop().expect("one hook"),
            _ => Box::new(Fanout {
                captures_context: hooks.iter().any(|h| h.captures_context()),
                wants_enqueue_time: hooks.iter().any(|h| h.wants_enqueue_time()),
                wants_timing: hooks.iter().any(|h| h.wants_timing()),
                slots: hooks.into_iter().map(Slot::new).collect(),
            }),
        };
        let (captures_context, wants_enqueue_time) = (hook.captures_context(), hook.wants_enqueue_time());
        let _ = epoch(); // start the clock before the first stamp
        Some(Self {
            wants_timing: hook.wants_timing(),
            wants_enqueue_time,
            captures_context,
            stamps: captures_context || wants_enqueue_time,
            slot: Arc::new(Slot::new(hook)),
        })
    }

    /// On the sender's thread: the stamp for a user message to `target`.
    #[inline]
    pub(crate) fn stamp(&self, target: &ActorPath) -> Stamp {
        if self.stamps { self.stamp_slow(target) } else { Stamp::default() }
    }

    #[inline(never)]
    fn stamp_slow(&self, target: &ActorPath) -> Stamp {
        let context = if self.captures_context { self.slot.capture(target) } else { 0 };
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

    /// Call the hook's `before_message`; then the processing starts (at
    /// `started`, if timed). Inlined into the message loop: a flag test
    /// and a dynamic call.
    #[inline(always)]
    pub(crate) fn before(&self, info: &MessageInfo<'_>) -> Option<Instant> {
        self.slot.call(|h| h.before_message(info));
        if self.wants_timing { now() } else { None }
    }

    /// The processing [`before`](Self::before) started ended with
    /// `outcome`: call the hook's `after_message` if it is still enabled
    /// (so its `before_message` returned normally).
    #[inline(always)]
    pub(crate) fn after(&self, info: &MessageInfo<'_>, outcome: Outcome, started: Option<Instant>) {
        let mut processed = Processed { outcome, timing: None };
        if let Some(started) = started {
            processed.timing = Some(timing(started));
        }
        self.slot.call(|h| h.after_message(info, &processed));
    }

    pub(crate) fn lifecycle(&self, event: &LifecycleEvent<'_>) {
        self.slot.call(|h| h.on_lifecycle(event));
    }

    pub(crate) fn dead_letter(&self, letter: &DeadLetter) {
        self.slot.call(|h| h.on_dead_letter(letter));
    }
}
