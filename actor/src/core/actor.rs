//! The `Actor` trait and `Props`, the recipe an actor is made from.

use std::fmt;

use crate::core::actor_ref::ActorHandle;
use crate::core::actor_ref::Envelope;
use crate::core::context::Context;
use crate::core::dispatcher::DispatcherKind;
use crate::core::mailbox::BalanceQueue;
use crate::core::mailbox::MailboxOverflow;
use crate::supervision::{Failure, SupervisorStrategy};
use crate::sync::Arc;

/// A typed actor: state plus a handler for one message type.
///
/// An actor processes one message at a time, so `receive` takes `&mut self`
/// and needs no locks. Use an enum as `Msg` to accept several kinds of message;
/// [`ActorRef::tell`](crate::ActorRef::tell) takes `impl Into<Msg>`.
///
/// A panic in any of these methods is caught at the actor boundary and handed
/// to the parent's [`SupervisorStrategy`].
///
/// # Lifecycle
///
/// `pre_start` runs before the first message. On restart, the old instance's
/// `pre_restart` runs (default: stop all children, then `post_stop`), a fresh
/// instance is made from the [`Props`], and its `post_restart` runs (default:
/// `pre_start`). `post_stop` runs exactly once per incarnation, after all its
/// children have stopped.
///
/// # Examples
///
/// ```
/// use weir_actor::{Actor, ActorSystem, Context, Props, ask};
/// use std::time::Duration;
///
/// enum CounterMsg {
///     Add(u64),
///     Get(weir_actor::ActorRef<u64>),
/// }
///
/// #[derive(Default)]
/// struct Counter(u64);
///
/// impl Actor for Counter {
///     type Msg = CounterMsg;
///     fn receive(&mut self, _ctx: &mut Context<Self>, msg: CounterMsg) {
///         match msg {
///             CounterMsg::Add(n) => self.0 += n,
///             CounterMsg::Get(reply_to) => reply_to.tell(self.0),
///         }
///     }
/// }
///
/// let system = ActorSystem::new("example").unwrap();
/// let counter = system.spawn(Props::new(Counter::default), "counter").unwrap();
/// counter.tell(CounterMsg::Add(2));
/// counter.tell(CounterMsg::Add(3));
/// let total = ask(&counter, CounterMsg::Get, Duration::from_secs(5)).wait().unwrap();
/// assert_eq!(total, 5);
/// system.terminate().wait().unwrap();
/// ```
pub trait Actor: Send + Sized + 'static {
    /// The one message type this actor takes.
    type Msg: Send + 'static;

    /// Handle one message.
    fn receive(&mut self, ctx: &mut Context<Self>, msg: Self::Msg);

    /// Runs before the first message, and (through the default
    /// [`post_restart`](Actor::post_restart)) after a restart.
    fn pre_start(&mut self, ctx: &mut Context<Self>) {
        let _ = ctx;
    }

    /// Runs once when this incarnation stops, after its children have stopped.
    fn post_stop(&mut self, ctx: &mut Context<Self>) {
        let _ = ctx;
    }

    /// Runs on the failed instance before it is replaced. The default stops
    /// every child and calls [`post_stop`](Actor::post_stop); the new instance
    /// is created once those children have stopped. Children it keeps are
    /// restarted with the same failure once the new instance has run
    /// [`post_restart`](Actor::post_restart), as in Akka.
    fn pre_restart(&mut self, ctx: &mut Context<Self>, failure: &Failure) {
        let _ = failure;
        ctx.stop_all_children();
        self.post_stop(ctx);
    }

    /// Runs on the fresh instance after a restart. The default calls
    /// [`pre_start`](Actor::pre_start).
    fn post_restart(&mut self, ctx: &mut Context<Self>, failure: &Failure) {
        let _ = failure;
        self.pre_start(ctx);
    }

    /// A watched actor stopped (see [`Context::watch`]). Delivered exactly
    /// once per watch, in order with the messages that actor sent before it
    /// stopped.
    fn on_terminated(&mut self, ctx: &mut Context<Self>, terminated: Terminated) {
        let _ = (ctx, terminated);
    }

    /// Whether processing `msg` resets the receive timeout (see
    /// [`Context::set_receive_timeout`]). The default says yes for every
    /// message; return `false` for messages such as periodic ticks that
    /// should not count as activity (Akka's `NotInfluenceReceiveTimeout`).
    /// Only called while a receive timeout is set.
    fn influences_receive_timeout(&self, msg: &Self::Msg) -> bool {
        let _ = msg;
        true
    }

    /// How failures of this actor's children are handled. Called when a child
    /// fails; the default restarts the child (see [`SupervisorStrategy`]).
    fn supervisor_strategy(&self) -> SupervisorStrategy {
        SupervisorStrategy::default()
    }
}

/// The notice that a watched actor has stopped.
#[derive(Debug, Clone)]
pub struct Terminated {
    pub(crate) actor: ActorHandle,
}

impl Terminated {
    /// The actor that stopped.
    pub fn actor(&self) -> &ActorHandle {
        &self.actor
    }
}

/// The recipe for an actor: a factory that makes fresh instances (called at
/// start and at every restart) plus per-actor settings.
///
/// # Examples
///
/// ```
/// use weir_actor::{Actor, Context, DispatcherKind, Props};
///
/// struct Blocking;
/// impl Actor for Blocking {
///     type Msg = String;
///     fn receive(&mut self, _: &mut Context<Self>, path: String) {
///         let _ = std::fs::metadata(path); // blocking I/O is fine on a pinned thread
///     }
/// }
///
/// let props = Props::new(|| Blocking)
///     .with_dispatcher(DispatcherKind::Pinned)
///     .with_throughput(1);
/// # let _ = props;
/// ```
pub struct Props<A: Actor> {
    pub(crate) factory: Arc<dyn Fn() -> A + Send + Sync>,
    pub(crate) throughput: Option<usize>,
    pub(crate) dispatcher: DispatcherKind,
    /// Capacity and overflow strategy of a bounded mailbox.
    pub(crate) mailbox: Option<(usize, MailboxOverflow)>,
    /// The key of a priority mailbox.
    pub(crate) priority: Option<PriorityFn<A::Msg>>,
    /// The shared queue of a balancing pool this actor is a routee of.
    pub(crate) balance: Option<Arc<BalanceQueue<Envelope<A::Msg>>>>,
    pub(crate) stash_capacity: usize,
}

/// The key function of a priority mailbox.
pub(crate) type PriorityFn<M> = Arc<dyn Fn(&M) -> i64 + Send + Sync>;

impl<A: Actor> Props<A> {
    /// Props whose instances come from `factory`.
    pub fn new(factory: impl Fn() -> A + Send + Sync + 'static) -> Self {
        Self {
            factory: Arc::new(factory),
            throughput: None,
            dispatcher: DispatcherKind::Shared,
            mailbox: None,
            priority: None,
            balance: None,
            stash_capacity: crate::core::cell::DEFAULT_STASH_CAPACITY,
        }
    }

    /// How many messages one run may process before the actor yields its
    /// thread; the system's default when not set. It must be at least 1:
    /// spawning with 0 fails with [`SpawnError::Zero`](crate::SpawnError::Zero),
    /// as the system builder's `throughput(0)` fails its `build`.
    ///
    /// ```
    /// use weir_actor::{Actor, ActorSystem, Context, Props, SpawnError};
    ///
    /// struct Quiet;
    /// impl Actor for Quiet {
    ///     type Msg = ();
    ///     fn receive(&mut self, _: &mut Context<Self>, _: ()) {}
    /// }
    ///
    /// let system = ActorSystem::new("throughput").unwrap();
    /// let refused = system.spawn(Props::new(|| Quiet).with_throughput(0), "zero");
    /// assert_eq!(refused.unwrap_err(), SpawnError::Zero("throughput"));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn with_throughput(mut self, throughput: usize) -> Self {
        self.throughput = Some(throughput);
        self
    }

    /// Which dispatcher runs this actor.
    pub fn with_dispatcher(mut self, dispatcher: DispatcherKind) -> Self {
        self.dispatcher = dispatcher;
        self
    }

    /// The most messages [`Context::stash`] holds; default
    /// [`DEFAULT_STASH_CAPACITY`](crate::DEFAULT_STASH_CAPACITY). A stash of
    /// 0 refuses every message (with a typed error, see
    /// [`StashError`](crate::StashError)).
    pub fn with_stash_capacity(mut self, capacity: usize) -> Self {
        self.stash_capacity = capacity;
        self
    }

    /// Give the actor a mailbox that holds at most `capacity` messages
    /// (the default is unbounded). When it is full, [`ActorRef::tell`]
    /// applies `overflow`, [`ActorRef::try_tell`] gives the message back as
    /// [`TellError::MailboxFull`](crate::TellError::MailboxFull), and
    /// [`ActorRef::send`] waits for room; see [`MailboxOverflow`]. Every
    /// message dropped for room is published as a dead letter with reason
    /// [`Dropped`](crate::DeadLetterReason::Dropped). Internal signals
    /// (poison pill, timers, death-watch notices) are never refused.
    ///
    /// A capacity of 0 makes the spawn fail with
    /// [`SpawnError::Zero`](crate::SpawnError::Zero)`("mailbox capacity")`.
    ///
    /// [`ActorRef::tell`]: crate::ActorRef::tell
    /// [`ActorRef::try_tell`]: crate::ActorRef::try_tell
    /// [`ActorRef::send`]: crate::ActorRef::send
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_actor::{Actor, ActorSystem, Context, MailboxOverflow, Props, TellError};
    ///
    /// struct Slow;
    /// impl Actor for Slow {
    ///     type Msg = u32;
    ///     fn receive(&mut self, _: &mut Context<Self>, _: u32) {}
    /// }
    ///
    /// let system = ActorSystem::new("bounded").unwrap();
    /// let props = Props::new(|| Slow).with_bounded_mailbox(2, MailboxOverflow::DropNew);
    /// let slow = system.spawn(props, "slow").unwrap();
    /// // Whether a message finds room depends on how fast the actor runs;
    /// // a full mailbox gives it back, never blocks, never panics.
    /// match slow.try_tell(1) {
    ///     Ok(()) => {}
    ///     Err(TellError::MailboxFull(msg)) => assert_eq!(msg, 1),
    ///     Err(_) => unreachable!("the only way a try_tell fails"),
    /// }
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn with_bounded_mailbox(mut self, capacity: usize, overflow: MailboxOverflow) -> Self {
        self.mailbox = Some((capacity, overflow));
        self
    }

    /// Give the actor a priority mailbox (Akka's `StablePriorityMailbox`):
    /// queued messages are handled in the order of `priority`, lower values
    /// first, and in the order they were sent among equal values. A message
    /// sent while others wait goes ahead of every less urgent one.
    ///
    /// `priority` runs on the sender's thread, once per message; a panic in
    /// it is caught and the message ranks last (`i64::MAX`). Internal
    /// signals (poison pill, timers, death-watch notices) rank last too,
    /// after every message already queued. The actor takes its messages
    /// one at a time under the mailbox's lock, so this mailbox costs more
    /// per message than the default one.
    ///
    /// With [`with_bounded_mailbox`](Self::with_bounded_mailbox) it is a
    /// bounded priority mailbox: there, [`MailboxOverflow::DropHead`] drops
    /// the least urgent queued message for a more urgent one, and a message
    /// no more urgent than every queued one is treated as under `DropNew`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::mpsc;
    /// use weir_actor::{Actor, ActorSystem, Context, Props};
    ///
    /// enum Job {
    ///     Urgent(u32),
    ///     Routine(u32),
    /// }
    /// struct Worker(mpsc::Sender<u32>);
    /// impl Actor for Worker {
    ///     type Msg = Job;
    ///     fn receive(&mut self, _: &mut Context<Self>, job: Job) {
    ///         let (Job::Urgent(n) | Job::Routine(n)) = job;
    ///         self.0.send(n).unwrap();
    ///     }
    /// }
    ///
    /// let system = ActorSystem::new("priority").unwrap();
    /// let (tx, rx) = mpsc::channel();
    /// let props = Props::new(move || Worker(tx.clone()))
    ///     .with_priority_mailbox(|job: &Job| match job {
    ///         Job::Urgent(_) => 0,
    ///         Job::Routine(_) => 1,
    ///     });
    /// let worker = system.spawn(props, "worker").unwrap();
    /// worker.tell(Job::Routine(1));
    /// worker.tell(Job::Urgent(2));
    /// // `1` may have been taken before `2` arrived; what waits together
    /// // goes urgent first.
    /// let first_two: Vec<u32> = rx.iter().take(2).collect();
    /// assert!(first_two == [1, 2] || first_two == [2, 1]);
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn with_priority_mailbox(
        mut self,
        priority: impl Fn(&A::Msg) -> i64 + Send + Sync + 'static,
    ) -> Self {
        self.priority = Some(Arc::new(priority));
        self
    }
}

impl<A: Actor> Clone for Props<A> {
    fn clone(&self) -> Self {
        Self {
            factory: self.factory.clone(),
            throughput: self.throughput,
            dispatcher: self.dispatcher,
            mailbox: self.mailbox,
            priority: self.priority.clone(),
            balance: self.balance.clone(),
            stash_capacity: self.stash_capacity,
        }
    }
}

impl<A: Actor> fmt::Debug for Props<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Props")
            .field("actor", &std::any::type_name::<A>())
            .field("throughput", &self.throughput)
            .field("dispatcher", &self.dispatcher)
            .field("mailbox", &self.mailbox)
            .field("priority", &self.priority.is_some())
            .field("stash_capacity", &self.stash_capacity)
            .finish()
    }
}
