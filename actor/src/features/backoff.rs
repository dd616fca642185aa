//! Backoff supervision (Akka's `BackoffSupervisor` with
//! `BackoffOpts.onFailure`): restart a failing child after exponentially
//! growing delays, with jitter, a reset after a stable period and a limit.
//!
//! A [`BackoffSupervisor`] is an ordinary actor between you and the child:
//! it spawns the child, forwards every message sent to it, and when the
//! child fails it stops it and starts a fresh one after
//! [`Backoff::delay`]. While the child is down, messages wait in the
//! supervisor's stash (its [`Props::with_stash_capacity`], default
//! [`DEFAULT_STASH_CAPACITY`](crate::DEFAULT_STASH_CAPACITY); beyond it
//! they are dead letters with reason
//! [`Dropped`](crate::DeadLetterReason::Dropped)) and go to the new child
//! first, in order. When the child stops without failing, or fails once
//! more after [`Backoff::with_max_restarts`] restarts, the supervisor stops.
//!
//! [`Backoff::on_stop`] switches to Akka's `BackoffOpts.onStop`: a child
//! that stops without failing is restarted with the same delays too (for a
//! child that stops itself when its connection drops, say).
//!
//! All delays run on the system's scheduler, so a
//! `TestClock` (`weir_actor::testkit`, feature `testkit`) drives them in
//! tests.
//!
//! # Examples
//!
//! ```
//! use std::time::Duration;
//! use weir_actor::backoff::{Backoff, BackoffMsg, BackoffSupervisor};
//! use weir_actor::{Actor, ActorSystem, Context, Props};
//!
//! struct Connection;
//! impl Actor for Connection {
//!     type Msg = String;
//!     fn receive(&mut self, _: &mut Context<Self>, line: String) {
//!         assert!(!line.is_empty(), "empty line"); // a failure restarts it, later
//!     }
//! }
//!
//! let system = ActorSystem::new("backoff").unwrap();
//! let backoff = Backoff::new(Duration::from_millis(100), Duration::from_secs(10))
//!     .with_random_factor(0.2)
//!     .with_reset_after(Duration::from_secs(30))
//!     .with_max_restarts(5);
//! let props = BackoffSupervisor::props(Props::new(|| Connection), "connection", backoff);
//! let connection = system.spawn(props, "connection-supervisor").unwrap();
//! connection.tell(BackoffMsg::from("hello".to_owned()));
//! connection.tell_into("again".to_owned());
//! system.terminate().wait().unwrap();
//! ```

use std::fmt;
use std::time::Duration;

use crate::core::actor::{Actor, Props, Terminated};
use crate::core::actor_ref::ActorRef;
use crate::core::context::Context;
use crate::core::dead_letters::DeadLetterReason;
use crate::error::SpawnError;
use crate::supervision::{Directive, Failure, SupervisorStrategy};

/// How long to wait before each restart: `min * 2^restarts`, capped at
/// `max`, times a random factor in `[1, 1 + random_factor)` (as Akka, the
/// jitter may take a delay past `max`).
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use weir_actor::backoff::Backoff;
///
/// let backoff = Backoff::new(Duration::from_secs(1), Duration::from_secs(8)).with_random_factor(0.0);
/// let delays: Vec<_> = (0..5).map(|n| backoff.delay(n).as_secs()).collect();
/// assert_eq!(delays, [1, 2, 4, 8, 8]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backoff {
    min: Duration,
    max: Duration,
    random_factor: f64,
    reset_after: Option<Duration>,
    max_restarts: Option<u32>,
    on_stop: bool,
}

impl Backoff {
    /// Delays from `min` doubling up to `max`, with a random factor of 0.2,
    /// the count reset after the child ran for `min` without failing, and
    /// no limit on restarts.
    pub fn new(min: Duration, max: Duration) -> Self {
        Self {
            min,
            max: max.max(min),
            random_factor: 0.2,
            reset_after: Some(min),
            max_restarts: None,
            on_stop: false,
        }
    }

    /// Stretch each delay by a random factor in `[1, 1 + factor)`, so that
    /// many children failing together do not restart together. Negative or
    /// non-finite values mean 0.
    pub fn with_random_factor(mut self, factor: f64) -> Self {
        self.random_factor = if factor.is_finite() {
            factor.max(0.0)
        } else {
            0.0
        };
        self
    }

    /// Forget the restarts once a child has run for `stable` without
    /// failing: the next failure waits `min` again.
    pub fn with_reset_after(mut self, stable: Duration) -> Self {
        self.reset_after = Some(stable);
        self
    }

    /// Never forget restarts by time (only [`BackoffMsg::reset`] does).
    pub fn without_reset(mut self) -> Self {
        self.reset_after = None;
        self
    }

    /// Restart at most `n` times (since the last reset); the failure after
    /// that stops the supervisor.
    pub fn with_max_restarts(mut self, n: u32) -> Self {
        self.max_restarts = Some(n);
        self
    }

    /// Restart the child also when it stops without failing (Akka's
    /// `BackoffOpts.onStop`), after the same delays and within the same
    /// limit; the supervisor then ends only at the limit or when it is
    /// stopped itself. By default a child that stops ends the supervisor.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use weir_actor::backoff::Backoff;
    ///
    /// let backoff = Backoff::new(Duration::from_millis(200), Duration::from_secs(5)).on_stop();
    /// # let _ = backoff;
    /// ```
    pub fn on_stop(mut self) -> Self {
        self.on_stop = true;
        self
    }

    /// The delay before restart number `restarts + 1` (a random draw when
    /// the random factor is not 0).
    pub fn delay(&self, restarts: u32) -> Duration {
        let base = match 1u32
            .checked_shl(restarts)
            .and_then(|k| self.min.checked_mul(k))
        {
            Some(d) => d.min(self.max),
            None => self.max,
        };
        if self.random_factor == 0.0 {
            return base;
        }
        base.mul_f64(1.0 + crate::random::unit() * self.random_factor)
    }
}

/// A message for a [`BackoffSupervisor`]: one for the child (`From<M>`, so
/// [`ActorRef::tell_into`] takes the child's message), or a question or
/// command for the supervisor.
pub struct BackoffMsg<M>(Op<M>);

enum Op<M> {
    Msg(M),
    Failed,
    Start,
    ResetIfStable(u64),
    Reset,
    GetChild(ActorRef<Option<ActorRef<M>>>),
    GetRestarts(ActorRef<u32>),
}

impl<M> From<M> for BackoffMsg<M> {
    fn from(msg: M) -> Self {
        Self(Op::Msg(msg))
    }
}

impl<M> BackoffMsg<M> {
    /// Forget the restarts so far (Akka's `BackoffSupervisor.Reset`).
    pub fn reset() -> Self {
        Self(Op::Reset)
    }

    /// Reply with the running child, `None` while it is down.
    pub fn get_current_child(reply_to: ActorRef<Option<ActorRef<M>>>) -> Self {
        Self(Op::GetChild(reply_to))
    }

    /// Reply with the restarts since the last reset.
    pub fn get_restart_count(reply_to: ActorRef<u32>) -> Self {
        Self(Op::GetRestarts(reply_to))
    }
}

impl<M> fmt::Debug for BackoffMsg<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match &self.0 {
            Op::Msg(_) => "BackoffMsg::Msg",
            Op::Failed => "BackoffMsg::Failed",
            Op::Start => "BackoffMsg::Start",
            Op::ResetIfStable(_) => "BackoffMsg::ResetIfStable",
            Op::Reset => "BackoffMsg::Reset",
            Op::GetChild(_) => "BackoffMsg::GetCurrentChild",
            Op::GetRestarts(_) => "BackoffMsg::GetRestartCount",
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum TimerKind {
    Start,
    Reset,
}

/// The supervisor actor; see the [module docs](self).
pub struct BackoffSupervisor<A: Actor> {
    props: Props<A>,
    name: String,
    backoff: Backoff,
    me: Option<ActorRef<BackoffMsg<A::Msg>>>,
    /// The running child; `None` from its failure on.
    child: Option<ActorRef<A::Msg>>,
    /// A failed child that has not terminated yet.
    stopping: Option<ActorRef<A::Msg>>,
    restarts: u32,
    /// Counts the children started, to match reset timers to them.
    generation: u64,
    /// A restart is due once the failed child has terminated.
    start_when_gone: bool,
    /// Out of restarts: stop when the failed child has terminated.
    giving_up: bool,
}

impl<A: Actor> fmt::Debug for BackoffSupervisor<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BackoffSupervisor")
            .field("child_name", &self.name)
            .field("backoff", &self.backoff)
            .field("restarts", &self.restarts)
            .finish_non_exhaustive()
    }
}

impl<A: Actor> BackoffSupervisor<A> {
    /// Props for a supervisor of a child made from `child` and called
    /// `child_name`, restarted per `backoff`.
    pub fn props(child: Props<A>, child_name: &str, backoff: Backoff) -> Props<Self> {
        let name = child_name.to_owned();
        Props::new(move || BackoffSupervisor {
            props: child.clone(),
            name: name.clone(),
            backoff,
            me: None,
            child: None,
            stopping: None,
            restarts: 0,
            generation: 0,
            start_when_gone: false,
            giving_up: false,
        })
    }

    fn start_child(&mut self, ctx: &mut Context<Self>) {
        match ctx.spawn(self.props.clone(), &self.name) {
            Ok(child) => {
                ctx.watch(&child);
                self.child = Some(child);
                self.generation += 1;
                if let Some(stable) = self.backoff.reset_after {
                    ctx.timers().start_single_timer(
                        TimerKind::Reset,
                        BackoffMsg(Op::ResetIfStable(self.generation)),
                        stable,
                    );
                }
                ctx.unstash_all();
            }
            // The old child's termination is on its way to this actor as a
            // system message, which is handled before the next user message.
            Err(SpawnError::DuplicateName(_)) => ctx.myself().tell(BackoffMsg(Op::Start)),
            // An invalid name or a stopping supervisor: nothing to restart.
            Err(_) => ctx.stop_self(),
        }
    }

    fn failed(&mut self, ctx: &mut Context<Self>) {
        self.stopping = self.child.take();
        if !self.arm_restart(ctx) {
            self.giving_up = true;
        }
    }

    /// Start the timer of the next restart; `false` when the limit is
    /// reached.
    fn arm_restart(&mut self, ctx: &mut Context<Self>) -> bool {
        ctx.timers().cancel(&TimerKind::Reset);
        if self
            .backoff
            .max_restarts
            .is_some_and(|max| self.restarts >= max)
        {
            return false;
        }
        let delay = self.backoff.delay(self.restarts);
        self.restarts += 1;
        ctx.timers()
            .start_single_timer(TimerKind::Start, BackoffMsg(Op::Start), delay);
        true
    }
}

impl<A: Actor> Actor for BackoffSupervisor<A> {
    type Msg = BackoffMsg<A::Msg>;

    fn pre_start(&mut self, ctx: &mut Context<Self>) {
        self.me = Some(ctx.myself());
        self.start_child(ctx);
    }

    fn receive(&mut self, ctx: &mut Context<Self>, msg: BackoffMsg<A::Msg>) {
        match msg.0 {
            Op::Msg(m) => match &self.child {
                Some(child) => child.tell(m),
                None => {
                    if let Err(full) = ctx.stash(BackoffMsg(Op::Msg(m)))
                        && let BackoffMsg(Op::Msg(m)) = full.into_inner()
                    {
                        ctx.system().event_stream().publish_dead_letter(
                            ctx.path(),
                            m,
                            DeadLetterReason::Dropped,
                        );
                    }
                }
            },
            Op::Failed => self.failed(ctx),
            Op::Start if self.stopping.is_some() => self.start_when_gone = true,
            Op::Start if self.child.is_none() => self.start_child(ctx),
            Op::Start => {}
            Op::ResetIfStable(generation) => {
                if generation == self.generation && self.child.is_some() {
                    self.restarts = 0;
                }
            }
            Op::Reset => self.restarts = 0,
            Op::GetChild(reply_to) => reply_to.tell(self.child.clone()),
            Op::GetRestarts(reply_to) => reply_to.tell(self.restarts),
        }
    }

    fn on_terminated(&mut self, ctx: &mut Context<Self>, terminated: Terminated) {
        let gone = terminated.actor();
        if self.stopping.as_ref().is_some_and(|s| s.handle() == *gone) {
            self.stopping = None;
            if self.giving_up {
                ctx.stop_self();
            } else if std::mem::take(&mut self.start_when_gone) {
                self.start_child(ctx);
            }
        } else if self.child.as_ref().is_some_and(|c| c.handle() == *gone) {
            // Stopped without failing: restarted later in on-stop mode,
            // else the supervisor's work is done.
            self.child = None;
            if !(self.backoff.on_stop && self.arm_restart(ctx)) {
                ctx.stop_self();
            }
        }
    }

    /// Every failure of the child: stop it, and restart it later.
    fn supervisor_strategy(&self) -> SupervisorStrategy {
        let me = self.me.clone();
        SupervisorStrategy::one_for_one().with_decider(move |_: &Failure| {
            if let Some(me) = &me {
                // Ahead of the child's termination notice in our mailbox.
                me.tell(BackoffMsg(Op::Failed));
            }
            Directive::Stop
        })
    }
}
