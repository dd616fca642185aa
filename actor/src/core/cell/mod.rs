//! The actor cell: an actor's mailbox, its place in the hierarchy and the
//! state its runs work on.
//!
//! * [`CellCore`] is the untyped, shared part: path, parent, children, the
//!   [`Runtime`] and the dispatcher. Other threads read it (child lookup,
//!   spawn).
//! * [`Cell<A>`] adds the typed mailbox and the run state, which only the
//!   holder of the mailbox's run token touches (see [`crate::core::mailbox`]).
//! * [`run`] is the run loop: system messages first, then at most
//!   `throughput` user messages; supervision, restart and stop live there.
//! * [`stash`] holds what `Context::stash` put aside (the stash API is a
//!   layer on top, `crate::features::stash`).
//! * [`timers`]: per-actor keyed timers (`ctx.timers()`), whose messages are
//!   checked against a generation when they arrive, so a replaced or
//!   cancelled timer never delivers.
//! * [`receive_timeout`]: the per-actor idle timeout, with no allocation per
//!   message.
//! * [`awaited`]: the future of an async handler (`Context::run_async`),
//!   awaited while the actor takes no user messages.
//! * [`reentrant`]: the reentrant futures of async handlers
//!   (`Context::run_async_reentrant`), run while messages go on.

pub(crate) mod awaited;
pub(crate) mod receive_timeout;
mod reentrant;
mod run;
mod stash;
mod supervise;
pub(crate) mod timers;

pub use stash::DEFAULT_STASH_CAPACITY;
pub(crate) use stash::Stash;
pub use timers::{TimerKey, Timers};

use std::any::Any;
use std::collections::HashMap;
use std::time::Instant;

use crate::core::actor::{Actor, Props};
use crate::core::actor_ref::{
    ActorHandle, ActorRef, AnyActor, Control, Delivery, Envelope, Recipient, SystemMsg,
};
use crate::core::context::Context;
use crate::core::dead_letters::DeadLetterReason;
use crate::core::dispatcher::Dispatcher;
use crate::core::instrument::{COMPILED_IN, Hooks, Stamp};
use crate::core::mailbox::MailboxOverflow;
use crate::core::mailbox::{Enqueued, Mailbox, Offered};
use crate::core::runtime::Runtime;
use crate::error::SpawnError;
use crate::name::{generated_name, validate_name};
use crate::path::ActorPath;
use crate::supervision::{Failure, RestartStats};
use crate::sync::{Arc, AtomicBool, Mutex, Ordering, UnsafeCell};

/// The untyped part of a cell, shared with other threads.
pub(crate) struct CellCore {
    pub(crate) path: ActorPath,
    pub(crate) parent: Option<ActorHandle>,
    /// The system's services (see [`Runtime`]), shared by all its cells.
    pub(crate) runtime: Arc<dyn Runtime>,
    pub(crate) children: Mutex<Children>,
    pub(crate) dispatcher: Dispatcher,
    terminated: AtomicBool,
    /// The system's instrumentation, copied here so the hot paths test one
    /// field.
    pub(crate) hooks: Option<Hooks>,
}

/// The live children of one actor, by name.
///
/// Keyed with foldhash, randomly seeded per map: a few times faster than
/// SipHash on short names, which is most of a child lookup, while still not
/// letting chosen names degrade a map built from untrusted ids.
pub(crate) struct Children {
    /// Keyed by the child's name, shared with its path.
    pub(crate) by_name: HashMap<Arc<str>, ChildEntry, foldhash::fast::RandomState>,
    next_anonymous: u64,
    /// `false` once the actor is stopping: no new children.
    accepting: bool,
}

pub(crate) struct ChildEntry {
    pub(crate) handle: ActorHandle,
    /// A stop was requested; the parent waits for its termination.
    pub(crate) stopping: bool,
    pub(crate) restarts: Option<RestartStats>,
}

impl CellCore {
    pub(crate) fn is_terminated(&self) -> bool {
        self.terminated.load(Ordering::Acquire)
    }

    fn mark_terminated(&self) {
        self.terminated.store(true, Ordering::Release);
    }

    /// The live child called `name`. A child that has stopped but whose
    /// termination the parent has not processed yet is not live.
    pub(crate) fn child(&self, name: &str) -> Option<ActorHandle> {
        let children = self.children.lock();
        let child = &children.by_name.get(name)?.handle;
        (!child.is_terminated()).then(|| child.clone())
    }

    /// The child called `name`, live or stopped, as long as this actor has
    /// not processed its termination yet.
    pub(crate) fn child_entry(&self, name: &str) -> Option<ActorHandle> {
        self.children
            .lock()
            .by_name
            .get(name)
            .map(|c| c.handle.clone())
    }

    /// The live children.
    ///
    /// In the order they were spawned (by uid), not the map's: its order
    /// is random per process, and a parent that walks its children (to
    /// stop or restart them, or a user's own loop) must do the same in
    /// every run of a simulation's seed.
    pub(crate) fn children(&self) -> Vec<ActorHandle> {
        let mut live: Vec<ActorHandle> = {
            let children = self.children.lock();
            children
                .by_name
                .values()
                .map(|c| &c.handle)
                .filter(|h| !h.is_terminated())
                .cloned()
                .collect()
        };
        live.sort_unstable_by_key(|h| h.path().uid());
        live
    }
}

/// The run state: only the run-token holder touches it.
pub(crate) struct RunState<A: Actor> {
    actor: Option<A>,
    ctx: Context<A>,
    props: Props<A>,
    phase: Phase<A>,
    watchers: HashMap<usize, ActorHandle>,
    /// An influencing message was processed in this run (receive timeout).
    timeout_touched: bool,
    /// The children whose failures this actor escalated, to be resumed
    /// with it.
    escalated: Vec<ActorHandle>,
    /// The waker of awaited futures, made at the first one (see [`awaited`]).
    waker: Option<(Arc<awaited::AwaitWake>, std::task::Waker)>,
    /// The reentrant futures not done yet (see [`reentrant`]).
    reentrant: reentrant::Reentrant<A>,
    /// The awaited future was woken while this run polled it: poll it
    /// again before the run ends (see [`awaited`]).
    repoll: bool,
}

impl<A: Actor> RunState<A> {
    /// User messages run only while running and no ancestor's failure
    /// holds them.
    fn takes_user_messages(&self) -> bool {
        self.phase.takes_user_messages() && self.ctx.suspended == 0
    }
}

#[derive(Debug)]
enum Phase<A: Actor> {
    /// Spawned; the factory and `pre_start` have not run yet.
    Created,
    Running,
    /// Running, and a handler's future is pending: only system messages run
    /// until it is ready (see [`awaited`]). Leaving this phase any other
    /// way drops the future (`Cell::drop_awaited`).
    Awaiting(awaited::AwaitedFuture<A>),
    /// Failed; waiting for the parent's directive. Only system messages run
    /// (the children are suspended too, see [`supervise`]).
    Suspended,
    /// Restarting; waiting for children stopped by `pre_restart`.
    Recreating(Failure),
    /// Stopping; waiting for the children to stop.
    Terminating,
    /// Gone. The run state is dropped right after.
    Stopped,
}

impl<A: Actor> Phase<A> {
    fn takes_user_messages(&self) -> bool {
        matches!(self, Phase::Running)
    }
}

/// A typed actor cell.
pub(crate) struct Cell<A: Actor> {
    pub(crate) core: CellCore,
    mailbox: Mailbox<Envelope<A::Msg>, SystemMsg>,
    throughput: usize,
    /// `Some` for a bounded mailbox: what `tell` does when it is full.
    overflow: Option<MailboxOverflow>,
    state: UnsafeCell<Option<RunState<A>>>,
}

// SAFETY: `state` is only touched by the thread holding the mailbox's run
// token (mailbox rule 2), so it is never accessed from two threads at once;
// everything else in the cell is `Sync` on its own. `A` and its messages are
// `Send`, so moving the state between threads with the token is sound.
unsafe impl<A: Actor> Sync for Cell<A> {}

/// The key of a priority mailbox for an envelope: the user's priority of
/// a message (the last rank when it panics), the last rank for signals.
fn priority_key<M: Send + 'static>(
    priority: crate::core::actor::PriorityFn<M>,
) -> crate::core::mailbox::PriorityKey<Envelope<M>> {
    Box::new(move |envelope| match envelope {
        Envelope::Msg(msg, _) => {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| priority(msg)))
                .unwrap_or(i64::MAX)
        }
        Envelope::Control(_) => i64::MAX,
    })
}

/// Make a child of `parent` (or the root when `parent` is `None`) and return
/// its cell, whose run token the caller holds: it must submit the cell.
fn new_cell<A: Actor>(
    runtime: &Arc<dyn Runtime>,
    parent: Option<ActorHandle>,
    path: ActorPath,
    props: Props<A>,
    suspended: u32,
) -> Result<Arc<Cell<A>>, SpawnError> {
    if props.throughput == Some(0) {
        return Err(SpawnError::Zero("throughput"));
    }
    if matches!(props.mailbox, Some((0, _))) {
        return Err(SpawnError::Zero("mailbox capacity"));
    }
    let dispatcher = runtime.dispatcher(props.dispatcher)?;
    let throughput = props.throughput.unwrap_or(runtime.default_throughput());
    let cell = Arc::new(Cell {
        core: CellCore {
            path,
            parent,
            runtime: runtime.clone(),
            children: Mutex::new(Children {
                by_name: HashMap::default(),
                next_anonymous: 0,
                accepting: true,
            }),
            dispatcher,
            terminated: AtomicBool::new(false),
            hooks: runtime.hooks().cloned(),
        },
        mailbox: {
            let mailbox = match props.mailbox {
                Some((capacity, overflow)) => {
                    Mailbox::new_claimed_bounded(capacity, overflow == MailboxOverflow::DropHead)
                }
                None => Mailbox::new_claimed(),
            };
            let mailbox = match props.priority.clone() {
                Some(priority) => mailbox.with_priority(priority_key(priority)),
                None => mailbox,
            };
            match props.balance.clone() {
                Some(balance) => mailbox.with_balance(balance),
                None => mailbox,
            }
        },
        throughput,
        overflow: props.mailbox.map(|(_, overflow)| overflow),
        state: UnsafeCell::new(None),
    });
    let mut ctx = Context::new(cell.clone(), props.stash_capacity);
    ctx.suspended = suspended;
    cell.state.with_mut(|state| {
        // SAFETY: the mailbox was created claimed; this thread holds the run
        // token until it submits the cell, so nothing else reads `state`.
        unsafe {
            *state = Some(RunState {
                actor: None,
                ctx,
                props,
                phase: Phase::Created,
                watchers: HashMap::new(),
                timeout_touched: false,
                escalated: Vec::new(),
                waker: None,
                reentrant: reentrant::Reentrant::default(),
                repoll: false,
            });
        }
    });
    Ok(cell)
}

/// Spawn a child of `parent` named `name` (a generated `$` name when `None`),
/// held by `suspended` failures from the start: the suspensions its parent
/// will lift from all its children (see [`supervise`]), as Akka gives a new
/// child its parent's suspend count.
pub(crate) fn spawn_child<C: Actor>(
    parent: &ActorHandle,
    props: Props<C>,
    name: Option<&str>,
    suspended: u32,
) -> Result<ActorRef<C::Msg>, SpawnError> {
    if let Some(name) = name {
        validate_name(name).map_err(|reason| SpawnError::InvalidName {
            name: name.to_owned(),
            reason,
        })?;
    }
    let core = parent.inner.core().ok_or(SpawnError::ParentStopped)?;
    let cell = {
        let mut children = core.children.lock();
        if !children.accepting {
            return Err(SpawnError::ParentStopped);
        }
        let name: Arc<str> = match name {
            Some(name) if children.by_name.contains_key(name) => {
                return Err(SpawnError::DuplicateName(name.to_owned()));
            }
            Some(name) => name.into(),
            None => loop {
                let candidate = generated_name(children.next_anonymous);
                children.next_anonymous += 1;
                if !children.by_name.contains_key(candidate.as_str()) {
                    break candidate.into();
                }
            },
        };
        let path = core.path.child(Arc::clone(&name), core.runtime.next_uid());
        let cell = new_cell(&core.runtime, Some(parent.clone()), path, props, suspended)?;
        children.by_name.insert(
            name,
            ChildEntry {
                handle: ActorHandle {
                    inner: cell.clone(),
                },
                stopping: false,
                restarts: None,
            },
        );
        cell
    };
    let actor_ref = ActorRef::new(cell.clone());
    AnyActor::schedule(cell);
    Ok(actor_ref)
}

/// Make the root guardian of the system `runtime` serves, named `system`.
/// The caller holds its run token and must call `schedule` on the handle
/// once the guardians below it exist.
pub(crate) fn new_root<A: Actor>(
    runtime: Arc<dyn Runtime>,
    system: Arc<str>,
    props: Props<A>,
) -> Result<ActorHandle, SpawnError> {
    let path = ActorPath::root(system, runtime.next_uid());
    let cell = new_cell(&runtime, None, path, props, 0)?;
    Ok(ActorHandle { inner: cell })
}

impl<A: Actor> AnyActor for Cell<A> {
    fn path(&self) -> &ActorPath {
        &self.core.path
    }

    fn system(&self) -> &(dyn Any + Send + Sync) {
        self.core.runtime.system()
    }

    fn type_name(&self) -> &'static str {
        std::any::type_name::<A>()
    }

    fn enqueue_system(&self, msg: SystemMsg) -> Delivery {
        match self.mailbox.enqueue_system(msg) {
            Ok(enqueued) => enqueued.into(),
            Err(msg) => {
                run::system_msg_to_closed(msg);
                Delivery::DeadLetter
            }
        }
    }

    fn enqueue_control(&self, msg: Control) -> Delivery {
        match self.mailbox.enqueue_user(Envelope::Control(msg)) {
            Ok(enqueued) => enqueued.into(),
            // A control signal to a stopped actor has nothing left to do: a
            // late PoisonPill or a death notice to a stopped watcher.
            Err(_) => Delivery::DeadLetter,
        }
    }

    fn schedule(self: Arc<Self>) {
        let dispatcher = self.core.dispatcher.clone();
        dispatcher.submit(self);
    }

    fn is_terminated(&self) -> bool {
        self.core.is_terminated()
    }

    fn core(&self) -> Option<&CellCore> {
        Some(&self.core)
    }

    fn downcast_into(self: Arc<Self>, slot: &mut dyn Any) {
        if let Some(slot) = slot.downcast_mut::<Option<ActorRef<A::Msg>>>() {
            *slot = Some(ActorRef::new(self));
        }
    }

    fn load_hint(&self) -> usize {
        self.mailbox.load_hint()
    }

    fn nudge(self: Arc<Self>) -> bool {
        let claimed = self.mailbox.nudge() == Enqueued::MustSchedule;
        if claimed {
            self.schedule();
        }
        claimed
    }
}

impl<A: Actor> Recipient<A::Msg> for Cell<A> {
    #[inline]
    fn enqueue(&self, msg: A::Msg) -> Delivery {
        let stamp = match &self.core.hooks {
            Some(hooks) if COMPILED_IN => hooks.stamp(&self.core.path),
            _ => Stamp::default(),
        };
        if self.overflow.is_some() {
            return match self.offer_bounded(Envelope::Msg(msg, stamp), None) {
                Ok(delivery) => delivery,
                Err(msg) => {
                    self.dead_letter(msg, DeadLetterReason::Dropped);
                    Delivery::DeadLetter
                }
            };
        }
        match self.mailbox.enqueue_user(Envelope::Msg(msg, stamp)) {
            Ok(enqueued) => enqueued.into(),
            Err(Envelope::Msg(msg, _)) => {
                self.dead_letter(msg, DeadLetterReason::RecipientStopped);
                Delivery::DeadLetter
            }
            Err(Envelope::Control(_)) => unreachable!("enqueue_user gives back what it was given"),
        }
    }

    fn offer(&self, msg: A::Msg, waker: Option<&std::task::Waker>) -> Result<Delivery, A::Msg> {
        if self.overflow.is_none() {
            return Ok(self.enqueue(msg));
        }
        let stamp = match &self.core.hooks {
            Some(hooks) if COMPILED_IN => hooks.stamp(&self.core.path),
            _ => Stamp::default(),
        };
        self.offer_bounded(Envelope::Msg(msg, stamp), waker)
    }

    fn cancel_waiting(&self, waker: &std::task::Waker) {
        self.mailbox.cancel_waiting(waker);
    }
}

impl<A: Actor> Cell<A> {
    /// Offer a typed message to the bounded mailbox: evicting the oldest
    /// typed message under `DropHead` (a dead letter), else giving the
    /// message back when full. A stopped actor's message is a dead letter.
    #[cold]
    #[inline(never)]
    fn offer_bounded(
        &self,
        envelope: Envelope<A::Msg>,
        waker: Option<&std::task::Waker>,
    ) -> Result<Delivery, A::Msg> {
        fn is_message<M>(envelope: &Envelope<M>) -> bool {
            matches!(envelope, Envelope::Msg(..))
        }
        let evictable = (self.overflow == Some(MailboxOverflow::DropHead))
            .then_some(is_message::<A::Msg> as fn(&_) -> bool);
        match self.mailbox.offer_user(envelope, evictable, waker) {
            Offered::Queued(enqueued) => Ok(enqueued.into()),
            Offered::QueuedEvicting(enqueued, evicted) => {
                if let Envelope::Msg(old, _) = evicted {
                    self.dead_letter(old, DeadLetterReason::Dropped);
                }
                Ok(enqueued.into())
            }
            Offered::Full(Envelope::Msg(msg, _)) => Err(msg),
            Offered::Closed(Envelope::Msg(msg, _)) => {
                self.dead_letter(msg, DeadLetterReason::RecipientStopped);
                Ok(Delivery::DeadLetter)
            }
            Offered::Full(Envelope::Control(_)) | Offered::Closed(Envelope::Control(_)) => {
                unreachable!("offer_user gives back what it was given")
            }
        }
    }

    #[cold]
    fn dead_letter(&self, msg: A::Msg, reason: DeadLetterReason) {
        self.core
            .runtime
            .dead_letters()
            .publish(&self.core.path, msg, reason);
    }
}

impl From<Enqueued> for Delivery {
    fn from(e: Enqueued) -> Self {
        match e {
            Enqueued::MustSchedule => Delivery::MustSchedule,
            Enqueued::Queued => Delivery::Queued,
        }
    }
}

/// Restart bookkeeping for one child; `now` is read once per decision.
pub(crate) fn restart_stats(entry: &mut ChildEntry, now: Instant) -> &mut RestartStats {
    entry.restarts.get_or_insert_with(|| RestartStats::new(now))
}
