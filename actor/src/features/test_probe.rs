//! [`TestProbe`]: an actor reference whose messages a test thread expects
//! (Akka TestKit's `TestProbe`).

use std::fmt;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::{Duration, Instant};

use crate::core::actor_ref::{ActorHandle, ActorRef};
use crate::core::scheduler::deadline;
use crate::features::function_ref::FunctionRef;
use crate::system::actor_system::ActorSystem;

/// How long an `expect_*` call waits unless the probe was given another
/// time-out with [`TestProbe::with_timeout`] (Akka's
/// `single-expect-default`; the same as weir-streams' stream probes).
pub const DEFAULT_PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// What reached the probe, in arrival order.
enum Received<M> {
    Msg(M),
    Terminated(ActorHandle),
}

/// An [`ActorRef`] for tests: whatever is sent to
/// [`actor_ref`](Self::actor_ref) is queued for the test thread, which
/// states what it expects to have arrived (Akka TestKit's `TestProbe`).
///
/// The reference is a [`FunctionRef`]: a `tell` hands the message to the
/// test thread's channel on the sender's own thread, so nothing polls and
/// nothing sleeps. It can [`watch`](Self::watch) actors; their
/// `Terminated` notices arrive in the same queue, in order with the
/// messages, and [`expect_terminated`](Self::expect_terminated) takes one.
/// Dropping the probe stops the reference: later messages to it become
/// dead letters.
///
/// # Replies
///
/// A Weir ask carries its reply-to as an `ActorRef<R>` inside the message
/// (see [`ask`](crate::ask)). To stand in for an actor that is asked, make
/// the probe of the request type, take the request out with
/// [`expect_msg_pf`](Self::expect_msg_pf) and `tell` the answer to its
/// reply-to; to receive an actor's replies, put a probe's
/// [`actor_ref`](Self::actor_ref) in the request.
///
/// # Time
///
/// Every wait is in **real time**, like Akka's TestKit, also on a system
/// built with a [`TestClock`](crate::testkit::TestClock): advancing the
/// test clock puts the due messages into mailboxes, but the actors process
/// them on their threads afterwards, so the probe still has to wait for
/// them. An `expect_*` returns as soon as what it waits for arrives and
/// fails only after the probe's time-out ([`DEFAULT_PROBE_TIMEOUT`] unless
/// set with [`with_timeout`](Self::with_timeout)); on a test clock the
/// time-out is only a bound on how long the test may hang.
/// [`expect_no_msg`](Self::expect_no_msg) is the one call that always
/// waits its full duration: it proves only that nothing arrived *within*
/// that window. On a test clock, advance the clock first and then check
/// with a short window; what a timer would send later cannot arrive while
/// the test holds the clock.
///
/// On the thread that drives a [`Simulation`](crate::features::sim::Simulation),
/// every wait drives the simulation instead, and its time-out (and
/// `expect_no_msg`'s window) is **simulated** time: an `expect_*` fails
/// as soon as the simulation falls quiet without the message, and
/// `expect_no_msg` lets that much simulated time pass.
///
/// # Panics
///
/// The `expect_*` and `receive_*` calls are assertions: they panic (failing
/// the test) with a description of what arrived instead, or of the time-out.
///
/// # Examples
///
/// ```
/// use weir_actor::testkit::TestProbe;
/// use weir_actor::{Actor, ActorRef, ActorSystem, Context, Props};
///
/// enum Msg {
///     Greet(String, ActorRef<String>),
/// }
/// struct Greeter;
/// impl Actor for Greeter {
///     type Msg = Msg;
///     fn receive(&mut self, ctx: &mut Context<Self>, Msg::Greet(name, reply_to): Msg) {
///         reply_to.tell(format!("hello, {name}"));
///         ctx.stop_self();
///     }
/// }
///
/// let system = ActorSystem::new("probe").unwrap();
/// let greeter = system.spawn(Props::new(|| Greeter), "greeter").unwrap();
/// let mut probe = TestProbe::<String>::new(&system);
/// probe.watch(&greeter);
/// greeter.tell(Msg::Greet("Ada".into(), probe.actor_ref()));
/// probe.expect_msg("hello, Ada".to_owned());
/// probe.expect_terminated(&greeter);
/// system.terminate().wait().unwrap();
/// ```
#[must_use = "a probe receives nothing once dropped"]
pub struct TestProbe<M: Send + 'static> {
    function: FunctionRef<M>,
    received: Receiver<Received<M>>,
    timeout: Duration,
}

impl<M: Send + 'static> TestProbe<M> {
    /// A probe on `system`, named `/system/test-probe-<n>`.
    pub fn new(system: &ActorSystem) -> Self {
        let (tx, received) = channel();
        let notices: Sender<Received<M>> = tx.clone();
        let name = format!("test-probe-{}", system.next_uid());
        let function = FunctionRef::with_death_watch(
            system,
            &name,
            move |msg: M| {
                tx.send(Received::Msg(msg)).map_err(|back| match back.0 {
                    Received::Msg(msg) => msg,
                    Received::Terminated(_) => unreachable!("the handler sends messages"),
                })
            },
            move |notice| {
                // Only fails once the probe is gone, and then nobody asks.
                let _ = notices.send(Received::Terminated(notice.actor));
            },
        )
        .expect("a generated probe name is valid");
        Self {
            function,
            received,
            timeout: DEFAULT_PROBE_TIMEOUT,
        }
    }

    /// This probe, with `timeout` as the wait of every `expect_*` and
    /// `receive_*` call.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How long an `expect_*` call waits.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The reference to hand to the actors under test.
    pub fn actor_ref(&self) -> ActorRef<M> {
        self.function.actor_ref()
    }

    /// Watch `target`: when it stops, a `Terminated` notice joins the
    /// probe's queue (at once if it has already stopped).
    pub fn watch(&self, target: impl Into<ActorHandle>) {
        self.function.watch(target);
    }

    /// Stop watching `target`.
    pub fn unwatch(&self, target: impl Into<ActorHandle>) {
        self.function.unwatch(target);
    }

    /// The next message, within the time-out (Akka typed's `receiveMessage`).
    ///
    /// # Panics
    ///
    /// When nothing arrives in time or the next thing is a `Terminated`
    /// notice.
    #[track_caller]
    pub fn receive_msg(&mut self) -> M {
        let deadline = deadline::after(self.timeout);
        self.next_msg(deadline, "a message")
    }

    /// The next message, which must equal `expected`; returns it.
    ///
    /// # Panics
    ///
    /// When another message arrives, or nothing within the time-out.
    #[track_caller]
    pub fn expect_msg(&mut self, expected: M) -> M
    where
        M: PartialEq + fmt::Debug,
    {
        let deadline = deadline::after(self.timeout);
        let got = self.next_msg(deadline, &format!("{expected:?}"));
        assert!(
            got == expected,
            "TestProbe: expected {expected:?}, got {got:?}"
        );
        got
    }

    /// The next message, which `f` must take apart: `Some(r)` passes and
    /// gives `r` (Akka's `expectMsgPF`). The message goes to `f` by value,
    /// so it can move out what it carries, such as a reply-to.
    ///
    /// # Panics
    ///
    /// When `f` gives `None`, or nothing arrives within the time-out.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_actor::testkit::TestProbe;
    /// use weir_actor::{ActorRef, ActorSystem, ask};
    /// use std::time::Duration;
    ///
    /// enum Query {
    ///     Count(ActorRef<u64>),
    /// }
    ///
    /// let system = ActorSystem::new("probe-pf").unwrap();
    /// let mut service = TestProbe::<Query>::new(&system);
    /// let answer = ask(&service.actor_ref(), Query::Count, Duration::from_secs(5));
    /// let reply_to = service.expect_msg_pf(|Query::Count(reply_to)| Some(reply_to));
    /// reply_to.tell(42);
    /// assert_eq!(answer.wait(), Ok(42));
    /// system.terminate().wait().unwrap();
    /// ```
    #[track_caller]
    pub fn expect_msg_pf<R>(&mut self, f: impl FnOnce(M) -> Option<R>) -> R {
        let deadline = deadline::after(self.timeout);
        let got = self.next_msg(deadline, "a message the function matches");
        match f(got) {
            Some(r) => r,
            None => panic!(
                "TestProbe: the next message (a {}) did not match",
                std::any::type_name::<M>()
            ),
        }
    }

    /// The next message, for which `predicate` must hold; returns it.
    ///
    /// # Panics
    ///
    /// When it does not hold, or nothing arrives within the time-out.
    #[track_caller]
    pub fn expect_msg_that(&mut self, predicate: impl FnOnce(&M) -> bool) -> M
    where
        M: fmt::Debug,
    {
        let deadline = deadline::after(self.timeout);
        let got = self.next_msg(deadline, "a message the predicate holds for");
        assert!(
            predicate(&got),
            "TestProbe: the predicate does not hold for {got:?}"
        );
        got
    }

    /// `n` messages, all within one time-out; returns them in order
    /// (Akka's `receiveN`).
    ///
    /// # Panics
    ///
    /// When fewer arrive in time, or a `Terminated` notice comes first.
    #[track_caller]
    pub fn receive_n(&mut self, n: usize) -> Vec<M> {
        let deadline = deadline::after(self.timeout);
        (0..n)
            .map(|i| self.next_msg(deadline, &format!("message {} of {n}", i + 1)))
            .collect()
    }

    /// Skip messages until one for which `hook` gives `true`, and return
    /// it; all within one time-out (Akka's `fishForMessage`).
    ///
    /// # Panics
    ///
    /// When none comes in time, or a `Terminated` notice comes first.
    #[track_caller]
    pub fn fish_for_message(&mut self, mut hook: impl FnMut(&M) -> bool) -> M {
        let deadline = deadline::after(self.timeout);
        loop {
            let got = self.next_msg(deadline, "a message the hook accepts");
            if hook(&got) {
                return got;
            }
        }
    }

    /// Nothing arrives for `duration` of real time: this call always waits
    /// that long (see [Time](Self#time)).
    ///
    /// # Panics
    ///
    /// When a message or a `Terminated` notice arrives within `duration`.
    #[track_caller]
    pub fn expect_no_msg(&mut self, duration: Duration)
    where
        M: fmt::Debug,
    {
        match self.receive(duration) {
            Err(_) => {}
            Ok(Received::Msg(msg)) => {
                panic!("TestProbe: expected no message for {duration:?}, got {msg:?}")
            }
            Ok(Received::Terminated(actor)) => panic!(
                "TestProbe: expected no message for {duration:?}, got Terminated({})",
                actor.path()
            ),
        }
    }

    /// The next thing to arrive is the `Terminated` notice of `target`,
    /// which the probe [watches](Self::watch).
    ///
    /// # Panics
    ///
    /// When a message or another actor's notice comes first, or nothing
    /// within the time-out.
    #[track_caller]
    pub fn expect_terminated(&mut self, target: impl Into<ActorHandle>) {
        let target = target.into();
        let deadline = deadline::after(self.timeout);
        match self.next(deadline, &format!("Terminated({})", target.path())) {
            Received::Terminated(actor) if actor == target => {}
            Received::Terminated(actor) => panic!(
                "TestProbe: expected Terminated({}), got Terminated({})",
                target.path(),
                actor.path()
            ),
            Received::Msg(_) => panic!(
                "TestProbe: expected Terminated({}), got a message (a {})",
                target.path(),
                std::any::type_name::<M>()
            ),
        }
    }

    /// The next arrival within `wait`; on a simulation's thread, within
    /// `wait` of simulated time, driving the simulation meanwhile.
    fn receive(&self, wait: Duration) -> Result<Received<M>, RecvTimeoutError> {
        if crate::core::dispatcher::simulated::driver().is_none() {
            return self.received.recv_timeout(wait);
        }
        let got = std::cell::RefCell::new(None);
        let ready = || {
            let mut got = got.borrow_mut();
            if got.is_none() {
                *got = self.received.try_recv().ok();
            }
            got.is_some()
        };
        crate::core::dispatcher::simulated::block_on(&ready, Some(wait));
        got.into_inner().ok_or(RecvTimeoutError::Timeout)
    }

    #[track_caller]
    fn next_msg(&mut self, deadline: Instant, what: &str) -> M {
        match self.next(deadline, what) {
            Received::Msg(msg) => msg,
            Received::Terminated(actor) => {
                panic!(
                    "TestProbe: expected {what}, got Terminated({})",
                    actor.path()
                )
            }
        }
    }

    #[track_caller]
    fn next(&mut self, deadline: Instant, what: &str) -> Received<M> {
        let wait = deadline.saturating_duration_since(Instant::now());
        match self.receive(wait) {
            Ok(received) => received,
            Err(RecvTimeoutError::Timeout) => {
                panic!(
                    "TestProbe: expected {what} within {:?}, got nothing",
                    self.timeout
                )
            }
            Err(RecvTimeoutError::Disconnected) => {
                unreachable!("the probe's reference holds a sender")
            }
        }
    }
}

impl<M: Send + 'static> fmt::Debug for TestProbe<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TestProbe")
            .field("ref", &self.function.actor_ref())
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}
