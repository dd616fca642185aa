//! Receive timeouts, mirroring Pekko's ReceiveTimeoutSpec (lower-bound timing only, bounded waits).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

use weir_actor::{Actor, ActorRef, ActorSystem, Context, Props, ScheduleError};
use weir_tests::{PATIENCE, Probe, shutdown};

const fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[derive(Clone, Debug)]
enum Msg {
    /// An ordinary (influencing) message.
    Tick,
    /// Does not influence the timeout; runs the actor's `on_transparent`.
    Transparent,
    /// The timeout message.
    Timeout,
    Crash,
}

#[derive(Debug, PartialEq)]
enum Seen {
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

impl Actor for Rt {
    type Msg = Msg;
    fn pre_start(&mut self, ctx: &mut Context<Self>) {
        if let Some(d) = self.start {
            ctx.set_receive_timeout(d, Msg::Timeout).unwrap();
        }
    }
    fn receive(&mut self, ctx: &mut Context<Self>, msg: Msg) {
        match msg {
            Msg::Tick => self.log.send(Seen::Tick(Instant::now())).unwrap(),
            Msg::Transparent => {
                self.log.send(Seen::Transparent).unwrap();
                (self.on_transparent)(ctx);
            }
            Msg::Timeout => {
                self.log
                    .send(Seen::Timeout(Instant::now(), ctx.receive_timeout()))
                    .unwrap();
                (self.on_timeout)(ctx);
            }
            Msg::Crash => panic!("crash"),
        }
    }
    fn influences_receive_timeout(&self, msg: &Msg) -> bool {
        !matches!(msg, Msg::Transparent)
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

/// The next timeout, skipping ticks and transparent messages.
fn next_timeout(probe: &Probe<Seen>) -> (Instant, Option<Duration>) {
    loop {
        if let Seen::Timeout(at, d) = probe.expect() {
            return (at, d);
        }
    }
}

#[test]
fn gets_the_timeout_and_it_carries_the_configured_duration() {
    let system = ActorSystem::new("rt1").unwrap();
    let probe = Probe::new();
    let started = Instant::now();
    let _a = rt(&system, &probe, Some(ms(50)), nothing, nothing);
    let (at, configured) = next_timeout(&probe);
    assert!(at - started >= ms(50));
    assert_eq!(configured, Some(ms(50)));
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
    let system = ActorSystem::new("rt4").unwrap();
    let probe = Probe::new();
    let started = Instant::now();
    let a = rt(&system, &probe, Some(ms(150)), nothing, nothing);
    // 100 ticks over about 300 ms: twice the timeout, so a timer that was not
    // reset would fire in the middle of the burst.
    for _ in 0..100 {
        a.tell(Msg::Tick);
        std::thread::sleep(ms(3));
    }
    // Every timeout comes at least 150 ms after the last influencing message
    // before it (a tick, or the previous timeout). A stalled machine may
    // legitimately fire one mid-burst; a timer that is not reset fires ~3 ms
    // after a tick. Done at the first timeout after the 100th tick.
    let (mut last_influencing, mut ticks) = (started, 0);
    loop {
        match probe.expect() {
            Seen::Tick(at) => {
                ticks += 1;
                last_influencing = at;
            }
            Seen::Timeout(at, _) => {
                assert!(
                    at - last_influencing >= ms(150),
                    "measured from the last influencing message"
                );
                last_influencing = at;
                if ticks == 100 {
                    break;
                }
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    shutdown(&system);
}

#[test]
fn can_be_turned_off_from_its_handler_exactly_one_timeout() {
    let system = ActorSystem::new("rt5").unwrap();
    let probe = Probe::new();
    let _a = rt(
        &system,
        &probe,
        Some(ms(30)),
        |ctx| ctx.cancel_receive_timeout(),
        nothing,
    );
    next_timeout(&probe);
    // No second one: the quiet wait spans several 30 ms timeouts.
    probe.expect_nothing();
    shutdown(&system);
}

#[test]
fn no_timeout_when_none_is_set() {
    let system = ActorSystem::new("rt6").unwrap();
    let probe = Probe::new();
    let a = rt(&system, &probe, None, nothing, nothing);
    a.tell(Msg::Tick);
    assert!(matches!(probe.expect(), Seen::Tick(_)));
    probe.expect_nothing();
    shutdown(&system);
}

#[test]
fn fires_while_only_non_influencing_messages_arrive() {
    let system = ActorSystem::new("rt7").unwrap();
    let probe = Probe::new();
    let a = rt(
        &system,
        &probe,
        Some(ms(100)),
        |ctx| ctx.cancel_receive_timeout(),
        nothing,
    );
    let stop = Arc::new(AtomicBool::new(false));
    let sender = {
        let (a, stop) = (a.clone(), stop.clone());
        std::thread::spawn(move || {
            let deadline = Instant::now() + PATIENCE;
            while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
                a.tell(Msg::Transparent);
                std::thread::sleep(ms(10));
            }
        })
    };
    next_timeout(&probe);
    stop.store(true, Ordering::Relaxed);
    sender.join().unwrap();
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
    let system = ActorSystem::new("rt9").unwrap();
    let probe = Probe::new();
    let tx = probe.sender();
    system
        .spawn(Props::new(move || TimerDriven(tx.clone())), "t")
        .unwrap();
    let mut transparent = 0;
    while probe.expect() == "transparent" {
        transparent += 1;
    }
    assert!(transparent >= 3, "the timer kept sending: {transparent}");
    shutdown(&system);
}

#[test]
fn a_timeout_handler_that_only_sends_non_influencing_messages_gets_another_timeout() {
    let system = ActorSystem::new("rt8").unwrap();
    let probe = Probe::new();
    fn send_transparent(ctx: &mut Context<Rt>) {
        ctx.myself().tell(Msg::Transparent);
    }
    let _a = rt(&system, &probe, Some(ms(40)), send_transparent, nothing);
    next_timeout(&probe);
    next_timeout(&probe);
    shutdown(&system);
}

#[test]
fn can_be_turned_on_in_a_non_influencing_handler() {
    let system = ActorSystem::new("rt10").unwrap();
    let probe = Probe::new();
    fn turn_on(ctx: &mut Context<Rt>) {
        ctx.set_receive_timeout(ms(50), Msg::Timeout).unwrap();
    }
    let a = rt(
        &system,
        &probe,
        None,
        |ctx| ctx.cancel_receive_timeout(),
        turn_on,
    );
    a.tell(Msg::Transparent);
    assert_eq!(probe.expect(), Seen::Transparent);
    next_timeout(&probe);
    shutdown(&system);
}

#[test]
fn can_be_turned_off_in_a_non_influencing_handler() {
    let system = ActorSystem::new("rt11").unwrap();
    let probe = Probe::new();
    let a = rt(&system, &probe, Some(ms(300)), nothing, |ctx| {
        ctx.cancel_receive_timeout()
    });
    a.tell(Msg::Transparent);
    assert_eq!(probe.expect(), Seen::Transparent);
    // Nothing for well past the 300 ms it was set to (three quiet waits).
    for _ in 0..3 {
        probe.expect_nothing();
    }
    shutdown(&system);
}

#[test]
fn changed_several_times_in_a_non_influencing_handler_the_last_value_wins() {
    let system = ActorSystem::new("rt13").unwrap();
    let probe = Probe::new();
    fn change_twice(ctx: &mut Context<Rt>) {
        ctx.set_receive_timeout(ms(2000), Msg::Timeout).unwrap();
        ctx.set_receive_timeout(ms(250), Msg::Timeout).unwrap();
    }
    let a = rt(
        &system,
        &probe,
        Some(ms(1000)),
        |ctx| ctx.cancel_receive_timeout(),
        change_twice,
    );
    let changed = Instant::now();
    a.tell(Msg::Transparent);
    assert_eq!(probe.expect(), Seen::Transparent);
    let (at, configured) = next_timeout(&probe);
    assert_eq!(configured, Some(ms(250)));
    assert!(
        at - changed >= ms(250),
        "measured from the change, not the first setting"
    );
    shutdown(&system);
}

#[test]
fn measured_again_after_a_panic_and_restart() {
    let system = ActorSystem::new("rtPanic").unwrap();
    let probe = Probe::new();
    let a = rt(
        &system,
        &probe,
        Some(ms(100)),
        |ctx| ctx.cancel_receive_timeout(),
        nothing,
    );
    let crashed = Instant::now();
    a.tell(Msg::Crash);
    let (at, _) = next_timeout(&probe);
    assert!(at - crashed >= ms(100));
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
        self.log.send("restarting").unwrap();
        self.pre_start(ctx);
    }
}

#[test]
fn a_timeout_set_in_pre_start_during_a_restart_fires() {
    let system = ActorSystem::new("rt14").unwrap();
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
    assert_eq!(
        probe.expect_n(4),
        ["crashing", "stopping", "restarting", "timeout"]
    );
    shutdown(&system);
}

#[test]
fn stopping_cancels_it_no_dead_letter_after_post_stop() {
    let system = ActorSystem::new("rt15").unwrap();
    let probe = Probe::new();
    fn set_and_stop(ctx: &mut Context<Rt>) {
        ctx.set_receive_timeout(ms(50), Msg::Timeout).unwrap();
        ctx.stop_self();
    }
    let a = rt(&system, &probe, None, nothing, set_and_stop);
    a.tell(Msg::Transparent);
    assert_eq!(probe.expect(), Seen::Transparent);
    assert_eq!(probe.expect(), Seen::PostStop);
    // Well past the 50 ms timeout: nothing, and no dead letter.
    probe.expect_nothing();
    assert_eq!(system.event_stream().dead_letter_count(), 0);
    shutdown(&system);
}

#[test]
fn a_receive_timeout_too_long_for_the_clock_never_fires() {
    let system = ActorSystem::new("rtNever").unwrap();
    let probe = Probe::new();
    // Used to panic in `pre_start` computing the deadline.
    let a = rt(&system, &probe, Some(Duration::MAX), nothing, nothing);
    a.tell(Msg::Tick);
    assert!(matches!(probe.expect(), Seen::Tick(_)));
    probe.expect_nothing();
    shutdown(&system);
}
