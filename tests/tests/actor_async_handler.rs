//! Async handlers (`ctx.run_async`): ordering, stop, supervision, timers and receive timeout on the test clock, ask, many actors on the pool.

use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::Sender;
use std::task::{Context as TaskContext, Poll};
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
    /// The handler of message `n` ran (logged last in it).
    Began(u32),
    /// The future of message `n` completed (its continuation ran).
    Done(u32),
    /// A sync message was handled.
    Sync(u32),
    /// A future was dropped (its drop guard).
    Dropped,
    PostStop,
    PostRestart,
    Timer(Instant),
    Timeout(Instant),
}

#[derive(Clone)]
enum Msg {
    /// Handled with a future that waits for the gate.
    Await(u32, Gate),
    /// Handled with a future that waits for the system's clock.
    Sleep(u32, Duration),
    /// Handled at once.
    Sync(u32),
    /// Handled with a future that waits for the gate, then panics.
    PanicAfter(Gate),
    /// Handled with a future that waits for the gate, whose continuation
    /// fails the actor with an error.
    FailAfter(Gate),
    /// Handled with a future whose continuation logs `Done(n)` and hands
    /// over another future (waiting for the gate) that logs `Done(n + 1)`.
    Chain(u32, Gate),
    /// Add one to the state (sync).
    Inc,
    /// Reply with the state.
    Get(ActorRef<u64>),
    /// Reply with the state from a future that first asks `Echo`.
    AskEcho(ActorRef<u64>, ActorRef<(u64, ActorRef<u64>)>),
    /// Start a single timer of `delay` that sends `Timer`.
    StartTimer(Duration),
    Timer,
    Timeout,
}

/// Sends `Seen::Dropped` when the future holding it is dropped.
struct DropGuard(Sender<Seen>);

impl Drop for DropGuard {
    fn drop(&mut self) {
        let _ = self.0.send(Seen::Dropped);
    }
}

struct Worker {
    log: Sender<Seen>,
    state: u64,
    receive_timeout: Option<Duration>,
}

fn now<A: Actor>(ctx: &Context<A>) -> Instant {
    ctx.system().scheduler().now()
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
            Msg::Await(n, gate) => {
                self.log.send(Seen::Began(n)).unwrap();
                let guard = DropGuard(self.log.clone());
                let wait = opened(&gate);
                ctx.run_async_then(
                    async move {
                        let _guard = guard;
                        wait.await;
                    },
                    move |me: &mut Worker, _, ()| me.log.send(Seen::Done(n)).unwrap(),
                );
            }
            Msg::Sleep(n, d) => {
                let sleep = ctx.system().sleep(d);
                ctx.run_async_then(sleep, move |me: &mut Worker, _, slept| {
                    slept.unwrap();
                    me.log.send(Seen::Done(n)).unwrap();
                });
                // Last: once the test sees it, the deadline is set.
                self.log.send(Seen::Began(n)).unwrap();
            }
            Msg::Sync(n) => self.log.send(Seen::Sync(n)).unwrap(),
            Msg::PanicAfter(gate) => {
                let wait = opened(&gate);
                ctx.run_async(async move {
                    wait.await;
                    panic!("failed inside the future");
                });
            }
            Msg::FailAfter(gate) => {
                ctx.run_async_then(opened(&gate), |_: &mut Worker, ctx, ()| {
                    ctx.fail(std::io::Error::other("failed after the future"));
                });
            }
            Msg::Chain(n, gate) => {
                ctx.run_async_then(async {}, move |me: &mut Worker, ctx, ()| {
                    me.log.send(Seen::Done(n)).unwrap();
                    ctx.run_async_then(opened(&gate), move |me: &mut Worker, _, ()| {
                        me.log.send(Seen::Done(n + 1)).unwrap();
                    });
                });
            }
            Msg::Inc => self.state += 1,
            Msg::Get(reply_to) => reply_to.tell(self.state),
            Msg::AskEcho(reply_to, echo) => {
                let state = self.state;
                ctx.run_async(async move {
                    let echoed = ask(&echo, |me| (state, me), PATIENCE).await.unwrap();
                    reply_to.tell(echoed + 1);
                });
            }
            Msg::StartTimer(delay) => ctx.timers().start_single_timer("t", Msg::Timer, delay),
            Msg::Timer => self.log.send(Seen::Timer(now(ctx))).unwrap(),
            Msg::Timeout => self.log.send(Seen::Timeout(now(ctx))).unwrap(),
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

fn worker(system: &ActorSystem, probe: &Probe<Seen>, name: &str) -> ActorRef<Msg> {
    worker_with_timeout(system, probe, name, None)
}

fn worker_with_timeout(
    system: &ActorSystem,
    probe: &Probe<Seen>,
    name: &str,
    receive_timeout: Option<Duration>,
) -> ActorRef<Msg> {
    let log = probe.sender();
    system
        .spawn(
            Props::new(move || Worker {
                log: log.clone(),
                state: 0,
                receive_timeout,
            }),
            name,
        )
        .unwrap()
}

fn state(actor: &ActorRef<Msg>) -> u64 {
    ask(actor, Msg::Get, PATIENCE).wait().unwrap()
}

#[test]
fn a_second_message_waits_for_the_first_future() {
    let system = ActorSystem::new("async-order").unwrap();
    let probe = Probe::new();
    let a = worker(&system, &probe, "a");
    let (first, second) = (gate(), gate());
    a.tell(Msg::Await(1, first.clone()));
    a.tell(Msg::Sync(2));
    a.tell(Msg::Await(3, second.clone()));
    a.tell(Msg::Sync(4));
    assert_eq!(probe.expect(), Seen::Began(1));
    probe.expect_nothing(); // `Sync(2)` waits for the future
    open(&first);
    assert_eq!(
        probe.expect_n(4),
        [Seen::Dropped, Seen::Done(1), Seen::Sync(2), Seen::Began(3)]
    );
    probe.expect_nothing();
    open(&second);
    assert_eq!(
        probe.expect_n(3),
        [Seen::Dropped, Seen::Done(3), Seen::Sync(4)]
    );
    shutdown(&system);
}

#[test]
fn a_ready_future_completes_within_its_handler() {
    let system = ActorSystem::new("async-ready").unwrap();
    let probe = Probe::new();
    let a = worker(&system, &probe, "a");
    let ready = gate();
    open(&ready);
    a.tell(Msg::Await(1, ready));
    a.tell(Msg::Sync(2));
    assert_eq!(
        probe.expect_n(4),
        [Seen::Began(1), Seen::Dropped, Seen::Done(1), Seen::Sync(2)]
    );
    shutdown(&system);
}

#[test]
fn a_stop_drops_the_running_future() {
    let system = ActorSystem::new("async-stop").unwrap();
    let probe = Probe::new();
    let a = worker(&system, &probe, "a");
    let never = gate();
    a.tell(Msg::Await(1, never.clone()));
    a.tell(Msg::Sync(2));
    assert_eq!(probe.expect(), Seen::Began(1));
    a.stop();
    // Dropped before `post_stop`; the queued message is never handled.
    assert_eq!(probe.expect_n(2), [Seen::Dropped, Seen::PostStop]);
    probe.expect_nothing();
    assert!(weir_tests::eventually(PATIENCE, || a.is_terminated()));
    // A wake after the stop finds nothing to poll.
    open(&never);
    probe.expect_nothing();
    shutdown(&system);
}

#[test]
fn a_panic_in_the_future_restarts_the_actor() {
    let system = ActorSystem::new("async-panic").unwrap();
    let probe = Probe::new();
    let a = worker(&system, &probe, "a");
    a.tell(Msg::Inc);
    a.tell(Msg::Inc);
    assert_eq!(state(&a), 2);
    let fuse = gate();
    a.tell(Msg::PanicAfter(fuse.clone()));
    a.tell(Msg::Inc); // waits for the future, then runs on the new instance
    open(&fuse);
    // The default `pre_restart` calls `post_stop`.
    assert_eq!(probe.expect_n(2), [Seen::PostStop, Seen::PostRestart]);
    assert_eq!(
        state(&a),
        1,
        "state reset by the restart, next message handled"
    );
    shutdown(&system);
}

#[test]
fn a_failure_from_the_continuation_restarts_the_actor() {
    let system = ActorSystem::new("async-fail").unwrap();
    let probe = Probe::new();
    let a = worker(&system, &probe, "a");
    a.tell(Msg::Inc);
    let fuse = gate();
    a.tell(Msg::FailAfter(fuse.clone()));
    a.tell(Msg::Inc);
    open(&fuse);
    assert_eq!(probe.expect_n(2), [Seen::PostStop, Seen::PostRestart]);
    assert_eq!(state(&a), 1);
    shutdown(&system);
}

#[test]
fn a_continuation_can_hand_over_another_future() {
    let system = ActorSystem::new("async-chain").unwrap();
    let probe = Probe::new();
    let a = worker(&system, &probe, "a");
    let next = gate();
    a.tell(Msg::Chain(1, next.clone()));
    a.tell(Msg::Sync(3));
    assert_eq!(probe.expect(), Seen::Done(1));
    probe.expect_nothing(); // still awaiting, now the second future
    open(&next);
    assert_eq!(probe.expect_n(2), [Seen::Done(2), Seen::Sync(3)]);
    shutdown(&system);
}

/// A parent that resumes or stops its failed child, as its decider says.
struct Parent {
    directive: Directive,
    child: Option<ActorRef<Msg>>,
    log: Sender<Seen>,
    made: Sender<ActorRef<Msg>>,
}

impl Actor for Parent {
    type Msg = ();
    fn pre_start(&mut self, ctx: &mut Context<Self>) {
        let log = self.log.clone();
        let child = ctx
            .spawn(
                Props::new(move || Worker {
                    log: log.clone(),
                    state: 0,
                    receive_timeout: None,
                }),
                "child",
            )
            .unwrap();
        self.made.send(child.clone()).unwrap();
        self.child = Some(child);
    }
    fn receive(&mut self, _: &mut Context<Self>, (): ()) {}
    fn supervisor_strategy(&self) -> SupervisorStrategy {
        let directive = self.directive;
        SupervisorStrategy::one_for_one().with_decider(move |_| directive)
    }
}

fn supervised_child(
    system: &ActorSystem,
    probe: &Probe<Seen>,
    directive: Directive,
) -> ActorRef<Msg> {
    let (log, made) = (probe.sender(), Probe::new());
    let made_tx = made.sender();
    system
        .spawn(
            Props::new(move || Parent {
                directive,
                child: None,
                log: log.clone(),
                made: made_tx.clone(),
            }),
            "parent",
        )
        .unwrap();
    made.expect()
}

#[test]
fn a_panic_in_the_future_resumes_the_actor_with_its_state() {
    let system = ActorSystem::new("async-resume").unwrap();
    let probe = Probe::new();
    let a = supervised_child(&system, &probe, Directive::Resume);
    a.tell(Msg::Inc);
    let fuse = gate();
    a.tell(Msg::PanicAfter(fuse.clone()));
    a.tell(Msg::Inc);
    open(&fuse);
    assert_eq!(state(&a), 2, "state kept, the next message handled");
    probe.expect_nothing(); // no restart
    shutdown(&system);
}

#[test]
fn a_panic_in_the_future_stops_the_actor_when_told() {
    let system = ActorSystem::new("async-stop-directive").unwrap();
    let probe = Probe::new();
    let a = supervised_child(&system, &probe, Directive::Stop);
    let fuse = gate();
    a.tell(Msg::PanicAfter(fuse.clone()));
    open(&fuse);
    assert_eq!(probe.expect(), Seen::PostStop);
    assert!(weir_tests::eventually(PATIENCE, || a.is_terminated()));
    shutdown(&system);
}

#[test]
fn a_timer_message_waits_for_the_running_future() {
    let (system, clock) = clocked_system("async-timer");
    let probe = Probe::new();
    let a = worker(&system, &probe, "a");
    let start = clock.now();
    a.tell(Msg::StartTimer(ms(50)));
    a.tell(Msg::Sleep(1, ms(100)));
    assert_eq!(probe.expect(), Seen::Began(1));
    clock.advance(ms(50)); // the timer fires into the mailbox
    probe.expect_nothing();
    clock.advance(ms(50)); // the future completes; then the timer's message
    assert_eq!(
        probe.expect_n(2),
        [Seen::Done(1), Seen::Timer(start + ms(100))]
    );
    shutdown(&system);
}

#[test]
fn the_receive_timeout_does_not_fire_during_a_running_future() {
    let (system, clock) = clocked_system("async-receive-timeout");
    let probe = Probe::new();
    let a = worker_with_timeout(&system, &probe, "a", Some(ms(30)));
    let start = clock.now();
    a.tell(Msg::Sleep(1, ms(100)));
    assert_eq!(probe.expect(), Seen::Began(1));
    clock.advance(ms(40)); // past the idle time, but the actor is busy
    probe.expect_nothing();
    clock.advance(ms(60));
    assert_eq!(probe.expect(), Seen::Done(1));
    // The run that completed the future has ended (a `Get` does not touch
    // the timeout): the idle period started at completion.
    assert_eq!(state(&a), 0);
    probe.expect_nothing();
    clock.advance(ms(29));
    assert_eq!(state(&a), 0);
    probe.expect_nothing();
    clock.advance(ms(1));
    assert_eq!(probe.expect(), Seen::Timeout(start + ms(130)));
    shutdown(&system);
}

/// Answers `(n, reply_to)` with `n * 10`.
struct Echo;

impl Actor for Echo {
    type Msg = (u64, ActorRef<u64>);
    fn receive(&mut self, _: &mut Context<Self>, (n, reply_to): Self::Msg) {
        reply_to.tell(n * 10);
    }
}

#[test]
fn an_ask_is_answered_from_an_async_handler() {
    let system = ActorSystem::new("async-ask").unwrap();
    let probe = Probe::new();
    let a = worker(&system, &probe, "a");
    let echo = system.spawn(Props::new(|| Echo), "echo").unwrap();
    a.tell(Msg::Inc);
    a.tell(Msg::Inc);
    let answer = ask(&a, |me| Msg::AskEcho(me, echo.clone()), PATIENCE).wait();
    assert_eq!(answer, Ok(21));
    shutdown(&system);
}

/// A future that wakes itself and yields `times` times before it is ready.
struct YieldTimes(u32);

impl Future for YieldTimes {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<()> {
        if self.0 == 0 {
            return Poll::Ready(());
        }
        self.0 -= 1;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// Handles each number with a future that yields, asks `Echo` and
/// checks that no other message of this actor runs meanwhile.
struct Busy {
    echo: ActorRef<(u64, ActorRef<u64>)>,
    in_flight: Arc<AtomicUsize>,
    next: u64,
    done: Sender<(usize, u64)>,
    id: usize,
}

impl Actor for Busy {
    type Msg = u64;
    fn receive(&mut self, ctx: &mut Context<Self>, n: u64) {
        assert_eq!(self.next, n, "messages in order");
        assert_eq!(
            self.in_flight.fetch_add(1, Ordering::SeqCst),
            0,
            "one at a time"
        );
        let (echo, in_flight) = (self.echo.clone(), Arc::clone(&self.in_flight));
        ctx.run_async_then(
            async move {
                YieldTimes(2).await;
                let echoed = ask(&echo, |me| (n, me), PATIENCE).await.unwrap();
                YieldTimes(1).await;
                assert_eq!(in_flight.fetch_sub(1, Ordering::SeqCst), 1);
                echoed
            },
            move |busy: &mut Busy, _, echoed| {
                assert_eq!(echoed, n * 10);
                busy.next += 1;
                busy.done.send((busy.id, n)).unwrap();
            },
        );
    }
}

#[test]
fn many_actors_run_async_handlers_in_parallel_on_the_pool() {
    const ACTORS: usize = 64;
    const EACH: u64 = 50;
    let system = ActorSystem::new("async-many").unwrap();
    let echo = system.spawn(Props::new(|| Echo), "echo").unwrap();
    let done = Probe::new();
    let actors: Vec<ActorRef<u64>> = (0..ACTORS)
        .map(|id| {
            let (echo, tx) = (echo.clone(), done.sender());
            system
                .spawn(
                    Props::new(move || Busy {
                        echo: echo.clone(),
                        in_flight: Arc::default(),
                        next: 0,
                        done: tx.clone(),
                        id,
                    }),
                    &format!("busy-{id}"),
                )
                .unwrap()
        })
        .collect();
    for n in 0..EACH {
        for actor in &actors {
            actor.tell(n);
        }
    }
    let mut next = vec![0; ACTORS];
    for (id, n) in done.expect_n(ACTORS * EACH as usize) {
        assert_eq!(next[id], n, "actor {id} completes in order");
        next[id] += 1;
    }
    assert!(next.iter().all(|&n| n == EACH));
    // No actor failed (a failed assertion would have restarted it and
    // broken the sequence above); all still run.
    assert!(actors.iter().all(|a| !a.is_terminated()));
    shutdown(&system);
}

/// Counts the `Wake` system messages user actors handle.
#[derive(Default)]
struct WakeCounter(AtomicUsize);

impl weir_actor::Instrumentation for WakeCounter {
    fn before_message(&self, info: &weir_actor::MessageInfo<'_>) {
        if !info.is_system_actor() && info.message_type() == "weir::Wake" {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// Handles each number with a future that wakes itself five times.
struct SelfWaking(Sender<u32>);

impl Actor for SelfWaking {
    type Msg = u32;
    fn receive(&mut self, ctx: &mut Context<Self>, n: u32) {
        ctx.run_async_then(YieldTimes(5), move |me: &mut SelfWaking, _, ()| {
            me.0.send(n).unwrap();
        });
    }
}

#[test]
fn a_future_that_wakes_itself_is_polled_again_without_a_wake_message() {
    let wakes = Arc::new(WakeCounter::default());
    let system = ActorSystem::builder()
        .name("async-self-wake")
        .throughput(1) // the repolls wait for the run's next turn
        .instrumentation(wakes.clone())
        .build()
        .unwrap();
    let done = Probe::new();
    let tx = done.sender();
    let a = system
        .spawn(Props::new(move || SelfWaking(tx.clone())), "a")
        .unwrap();
    for n in 0..20 {
        a.tell(n);
    }
    assert_eq!(done.expect_n(20), (0..20).collect::<Vec<_>>());
    assert_eq!(wakes.0.load(Ordering::SeqCst), 0, "no Wake was sent");
    shutdown(&system);
}
