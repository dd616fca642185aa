//! Receive timeouts on a test clock, mirroring Pekko's ReceiveTimeoutSpec (exact deadlines, no sleeps).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

use weir_actor::testkit::TestClock;
use weir_actor::{Actor, ActorRef, ActorSystem, Context, Props, ScheduleError};
use weir_tests::{Probe, clocked_system, shutdown};

const fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[derive(Clone, Debug)]
enum Msg {
    /// An ordinary (influencing) message.
    Tick,
    /// Does not influence the timeout (nor do the others but `Tick`); runs
    /// the actor's `on_transparent`.
    Transparent,
    /// The timeout message.
    Timeout,
    Crash,
}

#[derive(Debug, PartialEq)]
enum Seen {
    /// `pre_start` ran (after setting its timeout).
    Started,
    Tick(Instant),
    Transparent,
    Timeout(Instant, Option<Duration>),
    PostStop,
}

type Hook = fn(&mut Context<Rt>);

/// A configurable actor: what to set at start and what to do on each message.
struct Rt {
    log: Sender<Seen>,
    start: Option<Duration>,
    on_timeout: Hook,
    on_transparent: Hook,
}

fn nothing(_: &mut Context<Rt>) {}

/// The time on the system's (test) clock.
fn now<A: Actor>(ctx: &Context<A>) -> Instant {
    ctx.system().scheduler().now()
}

impl Actor for Rt {
    type Msg = Msg;
    fn pre_start(&mut self, ctx: &mut Context<Self>) {
        if let Some(d) = self.start {
            ctx.set_receive_timeout(d, Msg::Timeout).unwrap();
        }
        self.log.send(Seen::Started).unwrap();
    }
    fn receive(&mut self, ctx: &mut Context<Self>, msg: Msg) {
        match msg {
            Msg::Tick => self.log.send(Seen::Tick(now(ctx))).unwrap(),
            Msg::Transparent => {
                // Logged after the hook: seeing it means the hook has run.
                (self.on_transparent)(ctx);
                self.log.send(Seen::Transparent).unwrap();
            }
            Msg::Timeout => {
                self.log
                    .send(Seen::Timeout(now(ctx), ctx.receive_timeout()))
                    .unwrap();
                (self.on_timeout)(ctx);
            }
            Msg::Crash => panic!("crash"),
        }
    }
    /// Only ticks: a run that processed only other messages leaves the
    /// deadline alone, so a test that advances right after seeing their
    /// effect never races the end of that run (which reads the clock).
    fn influences_receive_timeout(&self, msg: &Msg) -> bool {
        matches!(msg, Msg::Tick)
    }
    fn post_stop(&mut self, _: &mut Context<Self>) {
        let _ = self.log.send(Seen::PostStop);
    }
}

fn rt(
    system: &ActorSystem,
    probe: &Probe<Seen>,
    start: Option<Duration>,
    on_timeout: Hook,
    on_transparent: Hook,
) -> ActorRef<Msg> {
    let log = probe.sender();
    system
        .spawn(
            Props::new(move || Rt {
                log: log.clone(),
                start,
                on_timeout,
                on_transparent,
            }),
            "rt",
        )
        .unwrap()
}

/// Spawns an [`Rt`] and waits until its `pre_start` has run.
fn started(
    system: &ActorSystem,
    probe: &Probe<Seen>,
    start: Option<Duration>,
    on_timeout: Hook,
    on_transparent: Hook,
) -> ActorRef<Msg> {
    let a = rt(system, probe, start, on_timeout, on_transparent);
    assert_eq!(probe.expect(), Seen::Started);
    a
}

/// No timeout has come: a transparent message sent now is answered first
/// (every check the last `advance` sent is queued before it). Only for
/// actors whose transparent hook does nothing.
fn expect_no_timeout(a: &ActorRef<Msg>, probe: &Probe<Seen>) {
    a.tell(Msg::Transparent);
    assert_eq!(probe.expect(), Seen::Transparent);
}

/// The next timeout, skipping ticks and transparent messages.
fn next_timeout(probe: &Probe<Seen>) -> (Instant, Option<Duration>) {
    loop {
        if let Seen::Timeout(at, d) = probe.expect() {
            return (at, d);
        }
    }
}

#[test]
fn gets_the_timeout_at_its_deadline_with_the_configured_duration() {
    let (system, clock) = clocked_system("rt1");
    let probe = Probe::new();
    let start = clock.now();
    let a = started(&system, &probe, Some(ms(50)), nothing, nothing);
    clock.advance(ms(49));
    expect_no_timeout(&a, &probe);
    clock.advance(ms(1));
    assert_eq!(next_timeout(&probe), (start + ms(50), Some(ms(50))));
    shutdown(&system);
}

#[test]
fn a_zero_timeout_is_a_typed_error() {
    struct Z(Sender<Result<(), ScheduleError>>);
    impl Actor for Z {
        type Msg = ();
        fn pre_start(&mut self, ctx: &mut Context<Self>) {
            self.0
                .send(ctx.set_receive_timeout(Duration::ZERO, ()))
                .unwrap();
        }
        fn receive(&mut self, _: &mut Context<Self>, _: ()) {}
    }
    let system = ActorSystem::new("rtZero").unwrap();
    let probe = Probe::new();
    let tx = probe.sender();
    system
        .spawn(Props::new(move || Z(tx.clone())), "z")
        .unwrap();
    assert_eq!(probe.expect(), Err(ScheduleError::ZeroTimeout));
    shutdown(&system);
}

#[test]
fn each_regular_message_reschedules_it_from_the_last_one_processed() {
    let (system, clock) = clocked_system("rt4");
    let probe = Probe::new();
    let a = started(&system, &probe, Some(ms(150)), nothing, nothing);
    // 100 ticks 3 ms apart: twice the timeout, so a timer that was not
    // reset would fire in the middle of the burst.
    let mut last_tick = clock.now();
    for _ in 0..100 {
        a.tell(Msg::Tick);
        match probe.expect() {
            Seen::Tick(at) => last_tick = at,
            other => panic!("no timeout mid-burst, got {other:?}"),
        }
        clock.advance(ms(3));
    }
    // The deadline is measured from the end of the run that processed the
    // last tick, which a busy machine may finish a step or two after the
    // test moved on: step on until the timeout comes, and bound it.
    clock.advance(ms(147));
    let at = loop {
        clock.advance(ms(3));
        a.tell(Msg::Transparent);
        match probe.expect() {
            Seen::Timeout(at, _) => break at,
            Seen::Transparent => assert!(clock.now() < last_tick + ms(200), "no timeout"),
            other => panic!("unexpected {other:?}"),
        }
    };
    assert!(
        at >= last_tick + ms(150) && at <= last_tick + ms(159),
        "{:?} after the last tick",
        at - last_tick
    );
    shutdown(&system);
}

#[test]
fn can_be_turned_off_from_its_handler_exactly_one_timeout() {
    let (system, clock) = clocked_system("rt5");
    let probe = Probe::new();
    let a = started(
        &system,
        &probe,
        Some(ms(30)),
        |ctx| ctx.cancel_receive_timeout(),
        nothing,
    );
    clock.advance(ms(30));
    next_timeout(&probe);
    clock.advance(ms(300)); // ten more periods: no second one
    expect_no_timeout(&a, &probe);
    shutdown(&system);
}

#[test]
fn no_timeout_when_none_is_set() {
    let (system, clock) = clocked_system("rt6");
    let probe = Probe::new();
    let a = started(&system, &probe, None, nothing, nothing);
    a.tell(Msg::Tick);
    assert!(matches!(probe.expect(), Seen::Tick(_)));
    clock.advance(Duration::from_secs(3600));
    expect_no_timeout(&a, &probe);
    shutdown(&system);
}

#[test]
fn fires_while_only_non_influencing_messages_arrive() {
    let (system, clock) = clocked_system("rt7");
    let probe = Probe::new();
    let start = clock.now();
    let a = started(
        &system,
        &probe,
        Some(ms(100)),
        |ctx| ctx.cancel_receive_timeout(),
        nothing,
    );
    for _ in 0..9 {
        expect_no_timeout(&a, &probe);
        clock.advance(ms(10));
    }
    expect_no_timeout(&a, &probe);
    clock.advance(ms(10));
    assert_eq!(next_timeout(&probe).0, start + ms(100));
    shutdown(&system);
}

/// Sends itself non-influencing messages from a timer, and counts timeouts.
struct TimerDriven(Sender<&'static str>);
impl Actor for TimerDriven {
    type Msg = Msg;
    fn pre_start(&mut self, ctx: &mut Context<Self>) {
        ctx.set_receive_timeout(ms(100), Msg::Timeout).unwrap();
        ctx.timers()
            .start_timer_with_fixed_delay("tick", Msg::Transparent, ms(10))
            .unwrap();
        self.0.send("started").unwrap();
    }
    fn receive(&mut self, ctx: &mut Context<Self>, msg: Msg) {
        match msg {
            Msg::Transparent => self.0.send("transparent").unwrap(),
            Msg::Timeout => {
                self.0.send("timeout").unwrap();
                ctx.cancel_receive_timeout();
                ctx.timers().cancel_all();
            }
            _ => {}
        }
    }
    fn influences_receive_timeout(&self, msg: &Msg) -> bool {
        !matches!(msg, Msg::Transparent)
    }
}

#[test]
fn fires_while_a_timer_sends_non_influencing_messages() {
    let (system, clock) = clocked_system("rt9");
    let probe = Probe::new();
    let tx = probe.sender();
    system
        .spawn(Props::new(move || TimerDriven(tx.clone())), "t")
        .unwrap();
    assert_eq!(probe.expect(), "started");
    clock.advance(ms(100));
    // Ticks at 10..=90 ms, then the timeout at 100 ms (armed before the
    // periodic timer, so first among the two due at 100 ms; the tick due
    // with it is cancelled by the timeout's handler).
    let mut seen = probe.expect_n(10);
    assert_eq!(seen.pop(), Some("timeout"));
    assert_eq!(seen, vec!["transparent"; 9]);
    clock.advance(ms(100));
    assert!(probe.drain().is_empty());
    shutdown(&system);
}

#[test]
fn a_timeout_handler_that_only_sends_non_influencing_messages_gets_another_timeout() {
    let (system, clock) = clocked_system("rt8");
    let probe = Probe::new();
    fn send_transparent(ctx: &mut Context<Rt>) {
        ctx.myself().tell(Msg::Transparent);
    }
    let start = clock.now();
    let _a = started(&system, &probe, Some(ms(40)), send_transparent, nothing);
    clock.advance(ms(40));
    assert_eq!(next_timeout(&probe).0, start + ms(40));
    assert_eq!(probe.expect(), Seen::Transparent);
    clock.advance(ms(40));
    assert_eq!(next_timeout(&probe).0, start + ms(80));
    shutdown(&system);
}

#[test]
fn can_be_turned_on_in_a_non_influencing_handler() {
    let (system, clock) = clocked_system("rt10");
    let probe = Probe::new();
    fn turn_on(ctx: &mut Context<Rt>) {
        ctx.set_receive_timeout(ms(50), Msg::Timeout).unwrap();
    }
    let a = started(
        &system,
        &probe,
        None,
        |ctx| ctx.cancel_receive_timeout(),
        turn_on,
    );
    clock.advance(ms(500)); // nothing set: nothing fires
    let on = clock.now();
    a.tell(Msg::Transparent);
    assert_eq!(probe.expect(), Seen::Transparent);
    clock.advance(ms(50));
    assert_eq!(next_timeout(&probe), (on + ms(50), Some(ms(50))));
    shutdown(&system);
}

#[test]
fn can_be_turned_off_in_a_non_influencing_handler() {
    let (system, clock) = clocked_system("rt11");
    let probe = Probe::new();
    let a = started(&system, &probe, Some(ms(300)), nothing, |ctx| {
        ctx.cancel_receive_timeout()
    });
    a.tell(Msg::Transparent);
    assert_eq!(probe.expect(), Seen::Transparent);
    clock.advance(ms(3000));
    a.tell(Msg::Tick);
    assert!(matches!(probe.expect(), Seen::Tick(_)), "no timeout first");
    shutdown(&system);
}

#[test]
fn changed_several_times_in_a_non_influencing_handler_the_last_value_wins() {
    let (system, clock) = clocked_system("rt13");
    let probe = Probe::new();
    fn change_twice(ctx: &mut Context<Rt>) {
        ctx.set_receive_timeout(ms(2000), Msg::Timeout).unwrap();
        ctx.set_receive_timeout(ms(250), Msg::Timeout).unwrap();
    }
    let a = started(
        &system,
        &probe,
        Some(ms(1000)),
        |ctx| ctx.cancel_receive_timeout(),
        change_twice,
    );
    clock.advance(ms(100));
    a.tell(Msg::Transparent);
    assert_eq!(probe.expect(), Seen::Transparent);
    let changed = clock.now();
    clock.advance(ms(250));
    // The first timeout comes exactly 250 ms after the change: not earlier
    // (from the first setting) and not later (2000 ms).
    assert_eq!(next_timeout(&probe), (changed + ms(250), Some(ms(250))));
    shutdown(&system);
}

#[test]
fn measured_again_after_a_panic_and_restart() {
    let (system, clock) = clocked_system("rtPanic");
    let probe = Probe::new();
    let a = started(
        &system,
        &probe,
        Some(ms(100)),
        |ctx| ctx.cancel_receive_timeout(),
        nothing,
    );
    clock.advance(ms(60));
    let crashed = clock.now();
    a.tell(Msg::Crash);
    assert_eq!(probe.expect(), Seen::PostStop);
    assert_eq!(probe.expect(), Seen::Started); // post_restart runs pre_start
    clock.advance(ms(99));
    expect_no_timeout(&a, &probe);
    clock.advance(ms(1));
    assert_eq!(next_timeout(&probe).0, crashed + ms(100));
    shutdown(&system);
}

/// Sets its timeout in pre_start only after a restart (Akka #28266).
struct OnlyOnRestart {
    log: Sender<&'static str>,
    restarted: Arc<AtomicBool>,
}
impl Actor for OnlyOnRestart {
    type Msg = Msg;
    fn pre_start(&mut self, ctx: &mut Context<Self>) {
        if self.restarted.load(Ordering::SeqCst) {
            ctx.set_receive_timeout(ms(50), Msg::Timeout).unwrap();
        }
    }
    fn receive(&mut self, ctx: &mut Context<Self>, msg: Msg) {
        match msg {
            Msg::Crash => {
                self.log.send("crashing").unwrap();
                self.restarted.store(true, Ordering::SeqCst);
                panic!("crash");
            }
            Msg::Timeout => {
                self.log.send("timeout").unwrap();
                ctx.cancel_receive_timeout();
            }
            _ => {}
        }
    }
    fn post_stop(&mut self, _: &mut Context<Self>) {
        self.log.send("stopping").unwrap();
    }
    fn post_restart(&mut self, ctx: &mut Context<Self>, _: &weir_actor::Failure) {
        self.pre_start(ctx);
        self.log.send("restarted").unwrap();
    }
    fn influences_receive_timeout(&self, msg: &Msg) -> bool {
        !matches!(msg, Msg::Crash) // see `Rt`
    }
}

#[test]
fn a_timeout_set_in_pre_start_during_a_restart_fires() {
    let (system, clock) = clocked_system("rt14");
    let probe = Probe::new();
    let (tx, restarted) = (probe.sender(), Arc::new(AtomicBool::new(false)));
    let a = system
        .spawn(
            Props::new(move || OnlyOnRestart {
                log: tx.clone(),
                restarted: restarted.clone(),
            }),
            "r",
        )
        .unwrap();
    a.tell(Msg::Crash);
    assert_eq!(probe.expect_n(3), ["crashing", "stopping", "restarted"]);
    clock.advance(ms(50));
    assert_eq!(probe.expect(), "timeout");
    shutdown(&system);
}

#[test]
fn stopping_cancels_it_no_dead_letter_after_post_stop() {
    let (system, clock) = clocked_system("rt15");
    let probe = Probe::new();
    fn set_and_stop(ctx: &mut Context<Rt>) {
        ctx.set_receive_timeout(ms(50), Msg::Timeout).unwrap();
        ctx.stop_self();
    }
    let a = started(&system, &probe, None, nothing, set_and_stop);
    a.tell(Msg::Transparent);
    assert_eq!(probe.expect(), Seen::Transparent);
    assert_eq!(probe.expect(), Seen::PostStop);
    // Past the 50 ms timeout: the check found a closed mailbox.
    clock.advance(ms(100));
    assert!(probe.drain().is_empty());
    assert_eq!(system.event_stream().dead_letter_count(), 0);
    shutdown(&system);
}

#[test]
fn a_receive_timeout_too_long_for_the_clock_never_fires() {
    let (system, clock) = clocked_system("rtNever");
    let probe = Probe::new();
    // Used to panic in `pre_start` computing the deadline.
    let a = started(&system, &probe, Some(Duration::MAX), nothing, nothing);
    a.tell(Msg::Tick);
    assert!(matches!(probe.expect(), Seen::Tick(_)));
    clock.advance(Duration::from_secs(86_400 * 365 * 10));
    expect_no_timeout(&a, &probe);
    shutdown(&system);
}

#[test]
fn the_test_clock_is_the_one_a_handler_reads() {
    let clock = TestClock::new();
    let system = ActorSystem::builder()
        .name("rtClock")
        .clock(clock.clone())
        .build()
        .unwrap();
    clock.advance(ms(1234));
    assert_eq!(system.scheduler().now(), clock.now());
    shutdown(&system);
}
