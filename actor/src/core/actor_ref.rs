//! References to actors: the typed [`ActorRef`] and the untyped [`ActorHandle`].

use std::any::Any;
use std::fmt;
use std::hash::{Hash, Hasher};

use crate::core::cell::CellCore;
use crate::core::instrument::Stamp;
use crate::error::{TellError, WrongMessageType};
use crate::path::ActorPath;
use crate::supervision::Failure;
use crate::sync::{Arc, Weak};

/// What a recipient did with a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Delivery {
    /// Queued, and the sender won the run token: it must schedule the actor.
    MustSchedule,
    /// Queued (or handed over); nothing more to do.
    Queued,
    /// The recipient is stopped; the message went to dead letters.
    DeadLetter,
}

impl SystemMsg {
    /// The name instrumentation shows for it.
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            SystemMsg::Terminate => "weir::Terminate",
            SystemMsg::Watch { .. } => "weir::Watch",
            SystemMsg::Unwatch(_) => "weir::Unwatch",
            SystemMsg::ChildFailed(..) => "weir::ChildFailed",
            SystemMsg::ChildTerminated(_) => "weir::ChildTerminated",
            SystemMsg::Resume => "weir::Resume",
            SystemMsg::Recreate(_) => "weir::Recreate",
            SystemMsg::Suspend => "weir::Suspend",
            SystemMsg::Unsuspend => "weir::Unsuspend",
            SystemMsg::Wake => "weir::Wake",
        }
    }
}

/// A system message: handled before user messages, even while suspended.
#[derive(Debug)]
pub(crate) enum SystemMsg {
    /// Stop: children first, then `post_stop`.
    Terminate,
    /// `watcher` wants a `Terminated` notice when `watchee` (the recipient) stops.
    Watch {
        watchee: ActorHandle,
        watcher: ActorHandle,
    },
    Unwatch(ActorHandle),
    /// A child failed and is suspended, waiting for a directive.
    ChildFailed(ActorHandle, Failure),
    /// A child has stopped for good.
    ChildTerminated(ActorHandle),
    /// The directive for the recipient's own failure: resume.
    Resume,
    /// The directive for the recipient's own failure (or its parent's
    /// restart, for a child the parent kept): restart with this cause.
    Recreate(Failure),
    /// An ancestor failed: hold user messages until the matching
    /// [`SystemMsg::Unsuspend`] (see `cell::supervise`).
    Suspend,
    /// An ancestor's failure was decided: lift one `Suspend`.
    Unsuspend,
    /// The future of an async handler was woken: poll it (see
    /// `cell::awaited`). Stale ones (the future is gone) do nothing.
    Wake,
}

/// What sits in a user mailbox slot: the message itself, inline.
#[derive(Debug)]
pub(crate) enum Envelope<M> {
    /// The message and what the instrumentation recorded at send time.
    Msg(M, Stamp),
    Control(Control),
}

/// The untyped face of anything that can be sent to: actor cells and the
/// temporary actors behind `ask`.
pub(crate) trait AnyActor: Send + Sync + 'static {
    fn path(&self) -> &ActorPath;
    /// The system this actor belongs to, type-erased: the core does not know
    /// the system's type (see [`crate::core::runtime`]); `ActorSystem::of` gives
    /// it back to the layers above.
    fn system(&self) -> &(dyn Any + Send + Sync);
    /// The Rust type of the actor (for diagnostics and instrumentation).
    fn type_name(&self) -> &'static str;
    fn enqueue_system(&self, msg: SystemMsg) -> Delivery;
    fn enqueue_control(&self, msg: Control) -> Delivery;
    fn schedule(self: Arc<Self>);
    fn is_terminated(&self) -> bool;
    /// The hierarchy part, for actors that have one (not temporary actors).
    fn core(&self) -> Option<&CellCore>;
    /// If `slot` is an `Option<ActorRef<M>>` for this actor's `M`, fill it.
    fn downcast_into(self: Arc<Self>, slot: &mut dyn Any);
    /// How busy the actor is (see `Mailbox::load_hint`); 0 for recipients
    /// without a mailbox.
    fn load_hint(&self) -> usize {
        0
    }

    /// A routee of a balancing pool: start the actor if it is idle, so it
    /// takes from the pool's shared queue; whether this started it.
    fn nudge(self: Arc<Self>) -> bool {
        false
    }
}

/// A user-queue signal that is not a typed message. It travels in the user
/// queue so it keeps its order with the messages around it.
#[derive(Debug)]
pub(crate) enum Control {
    /// Stop once the messages queued before it are processed.
    PoisonPill,
    /// A watched actor stopped.
    Terminated(ActorHandle),
    /// Timer `id` of `ctx.timers()` fired.
    Timer(u64),
    /// The receive-timeout check armed with this generation fired.
    ReceiveTimeout(u32),
    /// A message adapter's function panicked on the sender's side (see
    /// `crate::features::adapter`): fail here, as if the handler had panicked on the
    /// message. Boxed so the envelope stays two words of signal.
    Failed(Box<Failure>),
}

/// Something that takes messages of type `M`.
pub(crate) trait Recipient<M>: AnyActor {
    fn enqueue(&self, msg: M) -> Delivery;

    /// Queue `msg` if a bounded mailbox has room, else give it back (and
    /// leave `waker`, if any, to be woken when there may be room). Only
    /// actor cells have bounded mailboxes.
    fn offer(&self, msg: M, _waker: Option<&std::task::Waker>) -> Result<Delivery, M> {
        Ok(self.enqueue(msg))
    }

    /// An async sender that left `waker` in `offer` gives up.
    fn cancel_waiting(&self, _waker: &std::task::Waker) {}
}

/// A typed reference to an actor that takes messages of type `M`.
///
/// Cheap to clone (one reference count), `Send` and `Sync`. [`tell`](Self::tell)
/// never blocks on the recipient and never panics: a message to a stopped actor
/// goes to dead letters.
///
/// # Examples
///
/// ```
/// use weir_actor::{Actor, ActorSystem, Context, Props};
///
/// struct Echo;
/// impl Actor for Echo {
///     type Msg = String;
///     fn receive(&mut self, _: &mut Context<Self>, msg: String) {
///         assert!(!msg.is_empty());
///     }
/// }
///
/// let system = ActorSystem::new("refs").unwrap();
/// let echo = system.spawn(Props::new(|| Echo), "echo").unwrap();
/// echo.tell("hello".to_owned());
/// echo.tell_into("hi"); // &str converts into String
/// let again = echo.clone();
/// assert_eq!(again, echo);
/// system.terminate().wait().unwrap();
/// ```
pub struct ActorRef<M> {
    pub(crate) inner: Arc<dyn Recipient<M>>,
}

impl<M: Send + 'static> ActorRef<M> {
    pub(crate) fn new(inner: Arc<dyn Recipient<M>>) -> Self {
        Self { inner }
    }

    /// Send a message. Returns at once; the message is processed later, in
    /// order with the other messages from this sender.
    ///
    /// It takes the message type itself, so literals and arithmetic infer
    /// it (`ActorRef<u32>::tell(7)`); [`tell_into`](Self::tell_into)
    /// converts first.
    #[inline]
    pub fn tell(&self, msg: M) {
        self.deliver(msg);
    }

    /// Send anything that converts into the message type, such as one
    /// variant's payload of a message enum with a `From` impl.
    ///
    /// ```
    /// use weir_actor::{Actor, ActorSystem, Context, Props};
    ///
    /// enum Msg {
    ///     Add(u64),
    /// }
    /// impl From<u64> for Msg {
    ///     fn from(n: u64) -> Self {
    ///         Msg::Add(n)
    ///     }
    /// }
    /// struct Sum(u64);
    /// impl Actor for Sum {
    ///     type Msg = Msg;
    ///     fn receive(&mut self, _: &mut Context<Self>, Msg::Add(n): Msg) {
    ///         self.0 += n;
    ///     }
    /// }
    ///
    /// let system = ActorSystem::new("tell-into").unwrap();
    /// let sum = system.spawn(Props::new(|| Sum(0)), "sum").unwrap();
    /// sum.tell_into(5u64);
    /// sum.tell(Msg::Add(2));
    /// system.terminate().wait().unwrap();
    /// ```
    #[inline]
    pub fn tell_into(&self, msg: impl Into<M>) {
        self.deliver(msg.into());
    }

    /// Send a message unless the recipient's bounded mailbox is full; then
    /// give it back. On an unbounded mailbox this is [`tell`](Self::tell).
    /// A message to a stopped actor goes to dead letters, as with `tell`.
    ///
    /// # Errors
    ///
    /// [`TellError::MailboxFull`] with the message when the recipient has a
    /// full bounded mailbox (see
    /// [`Props::with_bounded_mailbox`](crate::Props::with_bounded_mailbox)).
    pub fn try_tell(&self, msg: M) -> Result<(), TellError<M>> {
        self.offer(msg, None).map_err(TellError::MailboxFull)
    }

    pub(crate) fn offer(&self, msg: M, waker: Option<&std::task::Waker>) -> Result<(), M> {
        self.inner.offer(msg, waker).map(|delivery| {
            schedule_if_claimed(&self.inner, delivery);
        })
    }

    #[inline]
    pub(crate) fn deliver(&self, msg: M) -> Delivery {
        schedule_if_claimed(&self.inner, self.inner.enqueue(msg))
    }

    /// The actor's path.
    pub fn path(&self) -> &ActorPath {
        self.inner.path()
    }

    /// Stop the actor now: messages still queued go to dead letters. Its
    /// children stop first.
    pub fn stop(&self) {
        self.handle().stop();
    }

    /// Stop the actor after the messages already queued are processed
    /// (Akka's `PoisonPill`). Messages sent after this go to dead letters.
    pub fn poison_pill(&self) {
        self.handle().poison_pill();
    }

    /// The untyped handle of this actor.
    pub fn handle(&self) -> ActorHandle {
        ActorHandle {
            inner: self.inner.clone(),
        }
    }

    /// Whether the actor has stopped for good.
    pub fn is_terminated(&self) -> bool {
        self.inner.is_terminated()
    }
}

impl<M> Clone for ActorRef<M> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
        }
    }
}

impl<M> PartialEq for ActorRef<M> {
    fn eq(&self, other: &Self) -> bool {
        addr(&self.inner) == addr(&other.inner)
    }
}

impl<M> Eq for ActorRef<M> {}

impl<M> Hash for ActorRef<M> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        addr(&self.inner).hash(state);
    }
}

impl<M: 'static> fmt::Debug for ActorRef<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ActorRef({})", self.inner.path())
    }
}

impl<M: Send + 'static> From<&ActorRef<M>> for ActorHandle {
    fn from(r: &ActorRef<M>) -> Self {
        r.handle()
    }
}

impl<M: Send + 'static> From<ActorRef<M>> for ActorHandle {
    fn from(r: ActorRef<M>) -> Self {
        ActorHandle { inner: r.inner }
    }
}

/// An untyped handle to an actor: its path, stop, watch, and a checked
/// downcast back to a typed [`ActorRef`].
///
/// Two handles are equal when they point to the same incarnation.
///
/// # Examples
///
/// ```
/// use weir_actor::{Actor, ActorHandle, ActorRef, ActorSystem, Context, Props};
///
/// struct Named;
/// impl Actor for Named {
///     type Msg = u32;
///     fn receive(&mut self, _: &mut Context<Self>, _: u32) {}
/// }
///
/// let system = ActorSystem::new("handles").unwrap();
/// let typed = system.spawn(Props::new(|| Named), "named").unwrap();
/// let handle: ActorHandle = typed.handle();
/// assert_eq!(handle.downcast::<u32>(), Some(typed));
/// assert_eq!(handle.downcast::<String>(), None); // wrong message type
/// system.terminate().wait().unwrap();
/// ```
#[derive(Clone)]
pub struct ActorHandle {
    pub(crate) inner: Arc<dyn AnyActor>,
}

impl ActorHandle {
    /// The actor's path.
    pub fn path(&self) -> &ActorPath {
        self.inner.path()
    }

    /// The Rust type name of the actor behind this handle.
    pub fn actor_type_name(&self) -> &'static str {
        self.inner.type_name()
    }

    /// The typed reference, if this actor takes messages of type `M`.
    pub fn downcast<M: Send + 'static>(&self) -> Option<ActorRef<M>> {
        let mut slot: Option<ActorRef<M>> = None;
        self.inner.clone().downcast_into(&mut slot);
        slot
    }

    /// The parent (`None` for the root and for the temporary actors of `ask`).
    pub fn parent(&self) -> Option<ActorHandle> {
        self.inner.core()?.parent.clone()
    }

    /// Send `msg` if this actor takes messages of type `M`.
    ///
    /// # Errors
    ///
    /// [`WrongMessageType`], with the message given back, when the actor takes
    /// another type.
    pub fn try_tell<M: Send + 'static>(&self, msg: M) -> Result<(), WrongMessageType<M>> {
        match self.downcast::<M>() {
            Some(typed) => {
                typed.tell(msg);
                Ok(())
            }
            None => Err(WrongMessageType {
                message: msg,
                actor_type: self.actor_type_name(),
            }),
        }
    }

    /// Stop the actor now (see [`ActorRef::stop`]).
    pub fn stop(&self) {
        self.send_system(SystemMsg::Terminate);
    }

    /// Stop after the queued messages (see [`ActorRef::poison_pill`]).
    pub fn poison_pill(&self) {
        self.send_control(Control::PoisonPill);
    }

    /// Whether the actor has stopped for good.
    pub fn is_terminated(&self) -> bool {
        self.inner.is_terminated()
    }

    /// A handle that does not keep the actor's cell in memory (for
    /// registries of actors that may go at any time).
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_actor::{Actor, ActorSystem, Context, Props};
    ///
    /// struct Idle;
    /// impl Actor for Idle {
    ///     type Msg = ();
    ///     fn receive(&mut self, _: &mut Context<Self>, _: ()) {}
    /// }
    ///
    /// let system = ActorSystem::new("weak").unwrap();
    /// let actor = system.spawn(Props::new(|| Idle), "idle").unwrap();
    /// let weak = actor.handle().downgrade();
    /// assert_eq!(weak.upgrade(), Some(actor.handle()));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn downgrade(&self) -> WeakActorHandle {
        WeakActorHandle {
            inner: Arc::downgrade(&self.inner),
        }
    }

    pub(crate) fn send_system(&self, msg: SystemMsg) -> Delivery {
        schedule_if_claimed(&self.inner, self.inner.enqueue_system(msg))
    }

    pub(crate) fn send_control(&self, msg: Control) -> Delivery {
        schedule_if_claimed(&self.inner, self.inner.enqueue_control(msg))
    }

    /// Identity of the incarnation, for maps keyed by actor.
    pub(crate) fn key(&self) -> usize {
        addr(&self.inner)
    }
}

/// An [`ActorHandle`] that does not keep the actor's cell in memory, from
/// [`ActorHandle::downgrade`].
#[derive(Clone)]
pub struct WeakActorHandle {
    inner: Weak<dyn AnyActor>,
}

impl WeakActorHandle {
    /// The handle, while the actor's cell is still in memory (it may have
    /// stopped: see [`ActorHandle::is_terminated`]).
    pub fn upgrade(&self) -> Option<ActorHandle> {
        self.inner.upgrade().map(|inner| ActorHandle { inner })
    }
}

impl fmt::Debug for WeakActorHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.upgrade() {
            Some(handle) => f
                .debug_tuple("WeakActorHandle")
                .field(handle.path())
                .finish(),
            None => f.write_str("WeakActorHandle(<gone>)"),
        }
    }
}

impl PartialEq for ActorHandle {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for ActorHandle {}

impl Hash for ActorHandle {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.key().hash(state);
    }
}

impl fmt::Debug for ActorHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ActorHandle({})", self.inner.path())
    }
}

/// The sender that claimed the run token schedules the actor; only then is
/// the reference count touched.
#[inline]
fn schedule_if_claimed<T: AnyActor + ?Sized>(actor: &Arc<T>, delivery: Delivery) -> Delivery {
    if delivery == Delivery::MustSchedule {
        actor.clone().schedule();
    }
    delivery
}

fn addr<T: ?Sized>(arc: &Arc<T>) -> usize {
    Arc::as_ptr(arc).cast::<()>() as usize
}

impl From<&ActorHandle> for ActorHandle {
    fn from(h: &ActorHandle) -> Self {
        h.clone()
    }
}
