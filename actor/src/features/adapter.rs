//! Message adapters (Akka Typed's `messageAdapter`): an `ActorRef<O>` that
//! converts each message into the actor's own type and queues it in the
//! actor's mailbox, so an actor receives replies and events of other types
//! without a wrapper actor.
//!
//! # Where the conversion runs
//!
//! On the sender's thread, inside `tell`: the adapter calls the function and
//! queues the result like any other message. That costs the actor nothing:
//! its mailbox and run loop see ordinary messages, and actors without an
//! adapter run exactly as before. Order is kept: what one sender tells an
//! adapter arrives in the order told, interleaved with its direct messages
//! in the order it sent them.
//!
//! A panic in the function is caught on the sender's thread (it never
//! unwinds into the sender) and queued for the actor as a failure in place
//! of the message, so the actor fails when it reaches that point of its
//! mailbox, as if its handler had panicked on the message, and its parent's
//! supervisor strategy decides ([`Control::Failed`]).

use std::any::Any;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::core::actor::Actor;
use crate::core::actor_ref::{
    ActorHandle, ActorRef, AnyActor, Control, Delivery, Recipient, SystemMsg,
};
use crate::core::cell::CellCore;
use crate::core::context::Context;
use crate::core::dead_letters::DeadLetterReason;
use crate::features::watchers::Watchers;
use crate::path::ActorPath;
use crate::supervision::{Failure, FailurePhase};
use crate::sync::{Arc, AtomicBool, Ordering, Weak};

type Convert<O, M> = Box<dyn Fn(O) -> M + Send + Sync>;

impl<A: Actor> Context<A> {
    /// A reference that takes messages of another type `O`, turns each into
    /// this actor's message with `f`, and queues it in this actor's mailbox
    /// (Akka Typed's `messageAdapter`). Hand it out where a reply or an
    /// event of type `O` is sent: an ask's reply-to, an event-stream
    /// subscription, another actor's protocol.
    ///
    /// * `f` runs on the sender's thread, when the message is told; keep it
    ///   a cheap conversion (wrapping into an enum variant). A panic in it
    ///   does not reach the sender: this actor fails at that point of its
    ///   mailbox, as if its handler had panicked, and its parent's
    ///   [`SupervisorStrategy`](crate::SupervisorStrategy) decides.
    /// * The adapter lives as long as the actor: it survives restarts, and
    ///   once the actor has stopped a message to it is a dead letter (of
    ///   type `O`). Watching the adapter watches the actor.
    /// * Each call makes a new reference with its own function; an earlier
    ///   adapter for the same type keeps working (unlike Akka, where the
    ///   newest registration for a type replaces the older). Make the
    ///   adapter once, in `pre_start`, and keep it.
    /// * It shares the actor's path. `stop` and `poison_pill` on it are
    ///   ignored (published as dead letters with
    ///   [`DeadLetterReason::LifecycleIgnored`]): stop the actor itself.
    ///   `try_tell` on it behaves as `tell`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use weir_actor::{Actor, ActorRef, ActorSystem, Context, Props};
    ///
    /// // Another actor's protocol: it answers with a `Pong`.
    /// struct Pong(u32);
    /// struct Ponger;
    /// impl Actor for Ponger {
    ///     type Msg = (u32, ActorRef<Pong>);
    ///     fn receive(&mut self, _: &mut Context<Self>, (n, reply_to): (u32, ActorRef<Pong>)) {
    ///         reply_to.tell(Pong(n));
    ///     }
    /// }
    ///
    /// enum Msg {
    ///     Start(ActorRef<(u32, ActorRef<Pong>)>, std::sync::mpsc::Sender<u32>),
    ///     GotPong(Pong),
    /// }
    /// #[derive(Default)]
    /// struct Pinger {
    ///     report: Option<std::sync::mpsc::Sender<u32>>,
    /// }
    /// impl Actor for Pinger {
    ///     type Msg = Msg;
    ///     fn receive(&mut self, ctx: &mut Context<Self>, msg: Msg) {
    ///         match msg {
    ///             Msg::Start(ponger, report) => {
    ///                 self.report = Some(report);
    ///                 let replies = ctx.message_adapter(Msg::GotPong);
    ///                 ponger.tell((7, replies));
    ///             }
    ///             Msg::GotPong(Pong(n)) => {
    ///                 self.report.as_ref().unwrap().send(n).unwrap();
    ///             }
    ///         }
    ///     }
    /// }
    ///
    /// let system = ActorSystem::new("adapter").unwrap();
    /// let ponger = system.spawn(Props::new(|| Ponger), "ponger").unwrap();
    /// let pinger = system.spawn(Props::new(Pinger::default), "pinger").unwrap();
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// pinger.tell(Msg::Start(ponger, tx));
    /// assert_eq!(rx.recv_timeout(Duration::from_secs(5)), Ok(7));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn message_adapter<O: Send + 'static>(
        &self,
        f: impl Fn(O) -> A::Msg + Send + Sync + 'static,
    ) -> ActorRef<O> {
        let actor = self.myself();
        let adapter = Arc::new_cyclic(|me| Adapter {
            me: me.clone(),
            actor,
            convert: Box::new(f),
            watchers: Watchers::new(),
            watching_actor: AtomicBool::new(false),
        });
        ActorRef::new(adapter)
    }
}

/// The recipient behind a message adapter.
struct Adapter<O, M> {
    /// Itself, to register as the actor's watcher.
    me: Weak<Self>,
    actor: ActorRef<M>,
    convert: Convert<O, M>,
    /// Who watches this adapter; ended when the actor's `Terminated`
    /// notice reaches the adapter (it watches the actor once watched).
    watchers: Watchers,
    watching_actor: AtomicBool,
}

impl<O: Send + 'static, M: Send + 'static> Adapter<O, M> {
    fn dead_letter<T: Send + 'static>(&self, msg: T, reason: DeadLetterReason) {
        if let Some(core) = self.actor.inner.core() {
            core.runtime
                .dead_letters()
                .publish(self.path(), msg, reason);
        }
    }

    /// Become a watcher of the actor, so the adapter ends with it.
    fn watch_actor(&self) {
        if let Some(me) = self.me.upgrade() {
            let actor = self.actor.handle();
            actor.send_system(SystemMsg::Watch {
                watchee: actor.clone(),
                watcher: ActorHandle { inner: me },
            });
        }
    }
}

impl<O: Send + 'static, M: Send + 'static> AnyActor for Adapter<O, M> {
    fn path(&self) -> &ActorPath {
        self.actor.path()
    }

    fn system(&self) -> &(dyn Any + Send + Sync) {
        self.actor.inner.system()
    }

    fn type_name(&self) -> &'static str {
        std::any::type_name::<Self>()
    }

    fn enqueue_system(&self, msg: SystemMsg) -> Delivery {
        match msg {
            SystemMsg::Watch { .. } => {
                // The adapter ends with the actor: the first watch makes it
                // a watcher of the actor. A `Terminated` notice that arrives
                // before this watch is in the list still reaches it: the
                // list answers a watch after `end` at once.
                let first = !self.watching_actor.swap(true, Ordering::AcqRel);
                let _ = self.watchers.on_system(msg);
                if first {
                    self.watch_actor();
                }
                Delivery::Queued
            }
            SystemMsg::Unwatch(_) => {
                let _ = self.watchers.on_system(msg);
                Delivery::Queued
            }
            SystemMsg::Terminate => {
                self.dead_letter("weir::Stop", DeadLetterReason::LifecycleIgnored);
                Delivery::Queued
            }
            _ => Delivery::DeadLetter,
        }
    }

    fn enqueue_control(&self, msg: Control) -> Delivery {
        match msg {
            Control::Terminated(_) => {
                self.watchers.end();
                Delivery::Queued
            }
            Control::PoisonPill => {
                self.dead_letter("weir::PoisonPill", DeadLetterReason::LifecycleIgnored);
                Delivery::Queued
            }
            _ => Delivery::DeadLetter,
        }
    }

    fn schedule(self: Arc<Self>) {
        // `enqueue` passes on the actor's claim of its run token.
        self.actor.inner.clone().schedule();
    }

    fn is_terminated(&self) -> bool {
        self.actor.is_terminated()
    }

    fn core(&self) -> Option<&CellCore> {
        None
    }

    fn downcast_into(self: Arc<Self>, slot: &mut dyn Any) {
        if let Some(slot) = slot.downcast_mut::<Option<ActorRef<O>>>() {
            *slot = Some(ActorRef::new(self));
        }
    }
}

impl<O: Send + 'static, M: Send + 'static> Recipient<O> for Adapter<O, M> {
    fn enqueue(&self, msg: O) -> Delivery {
        if self.actor.is_terminated() {
            self.dead_letter(msg, DeadLetterReason::RecipientStopped);
            return Delivery::DeadLetter;
        }
        // Runs on the sender's stack: a panic must not unwind into it.
        match catch_unwind(AssertUnwindSafe(|| (self.convert)(msg))) {
            Ok(converted) => self.actor.inner.enqueue(converted),
            Err(payload) => {
                let failure =
                    Failure::from_panic(&*payload, FailurePhase::Receive, self.path().clone());
                self.actor
                    .inner
                    .enqueue_control(Control::Failed(Box::new(failure)))
            }
        }
    }
}

impl<O, M> fmt::Debug for Adapter<O, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Adapter").finish_non_exhaustive()
    }
}
