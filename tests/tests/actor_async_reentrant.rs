//! Reentrant async handlers (`ctx.run_async_reentrant`): messages interleave, continuations in completion order, stop and restart drop the futures, resume keeps them, the receive timeout on the test clock.

use std::future::{Future, poll_fn};
use std::sync::Arc;
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

use weir_actor::{
    Actor, ActorRef, ActorSystem, Context, Directive, Promise, Props, SupervisorStrategy, ask,
};
use weir_tests::{PATIENCE, Probe, clocked_system, shutdown};

const fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A future the test completes by hand.
type Gate = Arc<Promise<()>>;

fn gate() -> Gate {
    Arc::new(Promise::new())
}

fn opened(gate: &Gate) -> impl Future<Output = ()> + Send + 'static {
    let gate = Arc::clone(gate);
    poll_fn(move |cx| gate.poll_completed(cx))
}

fn open(gate: &Gate) {
    gate.complete(()).unwrap();
}

#[derive(Debug, PartialEq)]
enum Seen {
    /// The handler of message `n` ran.
    Began(u32),
    /// The continuation of future `n` ran.
    Done(u32),
    /// A sync message was handled.
    Sync(u32),
    /// A future was dropped (its drop guard).
    Dropped(u32),
    PostStop,
    PostRestart,
    Timeout(Instant),
}

#[derive(Clone)]
enum Msg {
    /// A reentrant future that waits for the gate.
    Reentrant(u32, Gate),
    /// A non-reentrant future (`run_async`) that waits for the gate.
    Exclusive(u32, Gate),
    /// A reentrant future that waits for the gate, then panics.
    PanicAfter(Gate),
    /// A reentrant future whose continuation hands over a non-reentrant
    /// one (waiting for the gate) that logs `Done(n + 1)`.
    ThenExclusive(u32, Gate),
    Sync(u32),
    Inc,
    Get(ActorRef<u64>),
    Timeout,
}

/// Logs `Dropped(n)` when the future holding it is dropped unfinished.
struct DropGuard(Sender<Seen>, u32, bool);

impl Drop for DropGuard {
    fn drop(&mut self) {
        if !self.2 {
            let _ = self.0.send(Seen::Dropped(self.1));
        }
    }
}

struct Worker {
    log: Sender<Seen>,
    state: u64,
    receive_timeout: Option<Duration>,
}

impl Actor for Worker {
    type Msg = Msg;

    fn pre_start(&mut self, ctx: &mut Context<Self>) {
        if let Some(d) = self.receive_timeout {
            ctx.set_receive_timeout(d, Msg::Timeout).unwrap();
        }
    }

    fn receive(&mut self, ctx: &mut Context<Self>, msg: Msg) {
        match msg {
            Msg::Reentrant(n, gate) => {
                self.log.send(Seen::Began(n)).unwrap();
                let guard = DropGuard(self.log.clone(), n, false);
                let wait = opened(&gate);
                ctx.run_async_reentrant_then(
                    async move {
                        let mut guard = guard; // the whole guard, not its field
                        wait.await;
                        guard.2 = true;
                    },
                    move |me: &mut Worker, _, ()| me.log.send(Seen::Done(n)).unwrap(),
                );
            }
            Msg::Exclusive(n, gate) => {
                self.log.send(Seen::Began(n)).unwrap();
                ctx.run_async_then(opened(&gate), move |me: &mut Worker, _, ()| {
                    me.log.send(Seen::Done(n)).unwrap();
                });
            }
            Msg::PanicAfter(gate) => {
                let wait = opened(&gate);
                ctx.run_async_reentrant(async move {
                    wait.await;
                    panic!("failed inside a reentrant future");
                });
            }
            Msg::ThenExclusive(n, gate) => {
                ctx.run_async_reentrant_then(async {}, move |me: &mut Worker, ctx, ()| {
                    me.log.send(Seen::Done(n)).unwrap();
                    ctx.run_async_then(opened(&gate), move |me: &mut Worker, _, ()| {
                        me.log.send(Seen::Done(n + 1)).unwrap();
                    });
                });
            }
            Msg::Sync(n) => self.log.send(Seen::Sync(n)).unwrap(),
            Msg::Inc => self.state += 1,
            Msg::Get(reply_to) => reply_to.tell(self.state),
            Msg::Timeout => {
                let now = ctx.system().scheduler().now();
                self.log.send(Seen::Timeout(now)).unwrap();
            }
        }
    }

    fn post_stop(&mut self, _: &mut Context<Self>) {
        let _ = self.log.send(Seen::PostStop);
    }

    fn post_restart(&mut self, _: &mut Context<Self>, _: &weir_actor::Failure) {
        self.log.send(Seen::PostRestart).unwrap();
    }

    fn influences_receive_timeout(&self, msg: &Msg) -> bool {
        !matches!(msg, Msg::Get(_) | Msg::Timeout)
    }
}

fn props(probe: &Probe<Seen>, receive_timeout: Option<Duration>) -> Props<Worker> {
    let log = probe.sender();
    Props::new(move || Worker {
        log: log.clone(),
        state: 0,
        receive_timeout,
    })
}

fn worker(system: &ActorSystem, probe: &Probe<Seen>) -> ActorRef<Msg> {
    system.spawn(props(probe, None), "a").unwrap()
}

fn state(actor: &ActorRef<Msg>) -> u64 {
    ask(actor, Msg::Get, PATIENCE).wait().unwrap()
}

#[test]
fn messages_interleave_while_a_reentrant_future_runs() {
    let system = ActorSystem::new("reentrant-interleave").unwrap();
    let probe = Probe::new();
    let a = worker(&system, &probe);
    let (first, second) = (gate(), gate());
    a.tell(Msg::Reentrant(1, first.clone()));
    a.tell(Msg::Sync(2));
    a.tell(Msg::Reentrant(3, second.clone()));
    a.tell(Msg::Sync(4));
    // Nothing waits for the futures.
    assert_eq!(
        probe.expect_n(4),
        [Seen::Began(1), Seen::Sync(2), Seen::Began(3), Seen::Sync(4)]
    );
    probe.expect_nothing();
    open(&second);
    assert_eq!(probe.expect(), Seen::Done(3));
    a.tell(Msg::Sync(5));
    assert_eq!(probe.expect(), Seen::Sync(5));
    open(&first);
    assert_eq!(probe.expect(), Seen::Done(1));
    probe.expect_nothing();
    shutdown(&system);
}

#[test]
fn continuations_run_in_the_order_the_futures_complete() {
    let system = ActorSystem::new("reentrant-order").unwrap();
    let probe = Probe::new();
    let a = worker(&system, &probe);
    let gates: Vec<Gate> = (0..5).map(|_| gate()).collect();
    for (n, g) in gates.iter().enumerate() {
        a.tell(Msg::Reentrant(n as u32, g.clone()));
    }
    assert_eq!(
        probe.expect_n(5),
        (0..5).map(Seen::Began).collect::<Vec<_>>()
    );
    // Completed back to back, not in the order they started.
    for n in [3, 0, 4, 1, 2] {
        open(&gates[n]);
    }
    assert_eq!(probe.expect_n(5), [3, 0, 4, 1, 2].map(Seen::Done));
    shutdown(&system);
}

#[test]
fn a_ready_reentrant_future_completes_within_its_handler() {
    let system = ActorSystem::new("reentrant-ready").unwrap();
    let probe = Probe::new();
    let a = worker(&system, &probe);
    let ready = gate();
    open(&ready);
    a.tell(Msg::Reentrant(1, ready));
    a.tell(Msg::Sync(2));
    assert_eq!(
        probe.expect_n(3),
        [Seen::Began(1), Seen::Done(1), Seen::Sync(2)]
    );
    shutdown(&system);
}

#[test]
fn a_stop_drops_every_running_reentrant_future() {
    let system = ActorSystem::new("reentrant-stop").unwrap();
    let probe = Probe::new();
    let a = worker(&system, &probe);
    let (first, second) = (gate(), gate());
    a.tell(Msg::Reentrant(1, first.clone()));
    a.tell(Msg::Reentrant(2, second.clone()));
    assert_eq!(probe.expect_n(2), [Seen::Began(1), Seen::Began(2)]);
    a.stop();
    // Both dropped before `post_stop`.
    let mut seen = probe.expect_n(3);
    assert_eq!(seen.pop(), Some(Seen::PostStop));
    seen.sort_by_key(|s| format!("{s:?}"));
    assert_eq!(seen, [Seen::Dropped(1), Seen::Dropped(2)]);
    assert!(weir_tests::eventually(PATIENCE, || a.is_terminated()));
    // A wake after the stop finds nothing to poll.
    open(&first);
    open(&second);
    probe.expect_nothing();
    shutdown(&system);
}

#[test]
fn a_panic_in_a_reentrant_future_restarts_the_actor_and_drops_the_others() {
    let system = ActorSystem::new("reentrant-panic").unwrap();
    let probe = Probe::new();
    let a = worker(&system, &probe);
    a.tell(Msg::Inc);
    a.tell(Msg::Inc);
    let (fuse, other) = (gate(), gate());
    a.tell(Msg::Reentrant(1, other.clone()));
    a.tell(Msg::PanicAfter(fuse.clone()));
    assert_eq!(state(&a), 2);
    assert_eq!(probe.expect(), Seen::Began(1));
    open(&fuse);
    // The restart drops the other future before `pre_restart` (whose
    // default calls `post_stop`).
    assert_eq!(
        probe.expect_n(3),
        [Seen::Dropped(1), Seen::PostStop, Seen::PostRestart]
    );
    assert_eq!(state(&a), 0, "a fresh instance");
    open(&other);
    probe.expect_nothing();
    shutdown(&system);
}

/// A parent whose decider answers `directive` for its child's failures.
struct Parent {
    directive: Directive,
    child: Props<Worker>,
    made: Sender<ActorRef<Msg>>,
}

impl Actor for Parent {
    type Msg = ();
    fn pre_start(&mut self, ctx: &mut Context<Self>) {
        let child = ctx.spawn(self.child.clone(), "child").unwrap();
        self.made.send(child).unwrap();
    }
    fn receive(&mut self, _: &mut Context<Self>, (): ()) {}
    fn supervisor_strategy(&self) -> SupervisorStrategy {
        let directive = self.directive;
        SupervisorStrategy::one_for_one().with_decider(move |_| directive)
    }
}

#[test]
fn a_resumed_actor_keeps_its_reentrant_futures() {
    let system = ActorSystem::new("reentrant-resume").unwrap();
    let probe = Probe::new();
    let made = Probe::new();
    let (child, made_tx) = (props(&probe, None), made.sender());
    system
        .spawn(
            Props::new(move || Parent {
                directive: Directive::Resume,
                child: child.clone(),
                made: made_tx.clone(),
            }),
            "parent",
        )
        .unwrap();
    let a = made.expect();
    a.tell(Msg::Inc);
    let (fuse, other) = (gate(), gate());
    a.tell(Msg::Reentrant(1, other.clone()));
    a.tell(Msg::PanicAfter(fuse.clone()));
    assert_eq!(probe.expect(), Seen::Began(1));
    open(&fuse);
    assert_eq!(state(&a), 1, "resumed with its state");
    open(&other);
    assert_eq!(probe.expect(), Seen::Done(1));
    shutdown(&system);
}

#[test]
fn a_non_reentrant_future_holds_reentrant_continuations() {
    let system = ActorSystem::new("reentrant-exclusive").unwrap();
    let probe = Probe::new();
    let a = worker(&system, &probe);
    let (reentrant, exclusive) = (gate(), gate());
    a.tell(Msg::Reentrant(1, reentrant.clone()));
    a.tell(Msg::Exclusive(2, exclusive.clone()));
    a.tell(Msg::Sync(3));
    assert_eq!(probe.expect_n(2), [Seen::Began(1), Seen::Began(2)]);
    open(&reentrant); // ready, but `Exclusive(2)` holds the actor
    probe.expect_nothing();
    open(&exclusive);
    assert_eq!(
        probe.expect_n(3),
        [Seen::Done(2), Seen::Done(1), Seen::Sync(3)]
    );
    shutdown(&system);
}

#[test]
fn a_reentrant_continuation_can_hand_over_a_non_reentrant_future() {
    let system = ActorSystem::new("reentrant-then-exclusive").unwrap();
    let probe = Probe::new();
    let a = worker(&system, &probe);
    let next = gate();
    a.tell(Msg::ThenExclusive(1, next.clone()));
    a.tell(Msg::Sync(3));
    assert_eq!(probe.expect(), Seen::Done(1));
    probe.expect_nothing(); // awaiting the non-reentrant future
    open(&next);
    assert_eq!(probe.expect_n(2), [Seen::Done(2), Seen::Sync(3)]);
    shutdown(&system);
}

#[test]
fn the_receive_timeout_fires_while_a_reentrant_future_runs() {
    let (system, clock) = clocked_system("reentrant-receive-timeout");
    let probe = Probe::new();
    let a = system.spawn(props(&probe, Some(ms(30))), "a").unwrap();
    let start = clock.now();
    let never = gate();
    a.tell(Msg::Reentrant(1, never.clone()));
    assert_eq!(probe.expect(), Seen::Began(1));
    assert_eq!(state(&a), 0); // the handler's run is over
    clock.advance(ms(30));
    assert_eq!(probe.expect(), Seen::Timeout(start + ms(30)));
    open(&never);
    assert_eq!(probe.expect(), Seen::Done(1));
    shutdown(&system);
}
