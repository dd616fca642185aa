//! Keyed actor timers and the system scheduler on a test clock: replace, cancel, stale suppression, deadline order.

use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use weir_actor::testkit::TestClock;
use weir_actor::{Actor, ActorRef, ActorSystem, Context, Props, ScheduleError};
use weir_tests::{PATIENCE, Probe, QUIET, clocked_system, eventually, shutdown};

const fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[derive(Clone, Debug, PartialEq)]
enum Msg {
    Fired(&'static str),
    StartSingle(&'static str, &'static str, u64),
    StartPeriodic(&'static str, &'static str, u64),
    Cancel(&'static str),
    IsActive(&'static str),
    /// Start a 1 ms timer, say so, wait until the test has advanced the
    /// clock past it (so its id is in the mailbox), cancel it.
    StartWaitCancel,
    Crash,
}

struct Timed {
    log: Sender<String>,
    advanced: Arc<Mutex<Receiver<()>>>,
}

impl Actor for Timed {
    type Msg = Msg;
    fn receive(&mut self, ctx: &mut Context<Self>, msg: Msg) {
        match msg {
            Msg::Fired(what) => self.log.send(format!("fired {what}")).unwrap(),
            Msg::StartSingle(key, what, delay) => {
                ctx.timers()
                    .start_single_timer(key, Msg::Fired(what), ms(delay))
            }
            Msg::StartPeriodic(key, what, interval) => {
                ctx.timers()
                    .start_timer_with_fixed_delay(key, Msg::Fired(what), ms(interval))
                    .unwrap();
            }
            Msg::Cancel(key) => {
                let had = ctx.timers().cancel(&key);
                self.log.send(format!("cancelled {key}: {had}")).unwrap();
            }
            Msg::IsActive(key) => {
                let active = ctx.timers().is_timer_active(&key);
                self.log.send(format!("active {key}: {active}")).unwrap();
            }
            Msg::StartWaitCancel => {
                ctx.timers()
                    .start_single_timer("stale", Msg::Fired("stale"), ms(1));
                self.log.send("armed".into()).unwrap();
                self.advanced
                    .lock()
                    .unwrap()
                    .recv_timeout(PATIENCE)
                    .unwrap();
                assert!(ctx.timers().cancel(&"stale"));
            }
            Msg::Crash => panic!("crash"),
        }
    }
}

/// The actor, and the sender that tells it the clock has been advanced.
fn timed(system: &ActorSystem, probe: &Probe<String>) -> (ActorRef<Msg>, Sender<()>) {
    let log = probe.sender();
    let (advanced_tx, advanced) = channel();
    let advanced = Arc::new(Mutex::new(advanced));
    let t = system
        .spawn(
            Props::new(move || Timed {
                log: log.clone(),
                advanced: advanced.clone(),
            }),
            "timed",
        )
        .unwrap();
    (t, advanced_tx)
}

/// Asks whether `key` is active and expects `answer` as the next log line:
/// every timer message the last `advance` enqueued comes before it.
fn expect_active(t: &ActorRef<Msg>, probe: &Probe<String>, key: &'static str, answer: bool) {
    t.tell(Msg::IsActive(key));
    assert_eq!(probe.expect(), format!("active {key}: {answer}"));
}

#[test]
fn a_single_timer_fires_once_at_its_deadline_and_is_then_inactive() {
    let (system, clock) = clocked_system("single");
    let probe = Probe::new();
    let (t, _) = timed(&system, &probe);
    t.tell(Msg::StartSingle("k", "a", 20));
    expect_active(&t, &probe, "k", true);
    clock.advance(ms(19));
    expect_active(&t, &probe, "k", true);
    clock.advance(ms(1));
    assert_eq!(probe.expect(), "fired a");
    expect_active(&t, &probe, "k", false);
    clock.advance(ms(1000));
    expect_active(&t, &probe, "k", false);
    shutdown(&system);
}

#[test]
fn starting_with_an_existing_key_replaces_the_timer() {
    let (system, clock) = clocked_system("replace");
    let probe = Probe::new();
    let (t, _) = timed(&system, &probe);
    t.tell(Msg::StartSingle("k", "old", 10));
    t.tell(Msg::StartSingle("k", "new", 20));
    expect_active(&t, &probe, "k", true);
    clock.advance(ms(10));
    expect_active(&t, &probe, "k", true); // the old deadline passed: nothing
    clock.advance(ms(10));
    assert_eq!(probe.expect(), "fired new");
    expect_active(&t, &probe, "k", false);
    shutdown(&system);
}

#[test]
fn a_cancelled_timer_never_fires() {
    let (system, clock) = clocked_system("cancel");
    let probe = Probe::new();
    let (t, _) = timed(&system, &probe);
    t.tell(Msg::StartSingle("k", "a", 30));
    t.tell(Msg::Cancel("k"));
    assert_eq!(probe.expect(), "cancelled k: true");
    t.tell(Msg::Cancel("k"));
    assert_eq!(probe.expect(), "cancelled k: false");
    clock.advance(ms(100));
    expect_active(&t, &probe, "k", false);
    shutdown(&system);
}

#[test]
fn a_message_already_enqueued_by_a_cancelled_timer_is_not_delivered() {
    let (system, clock) = clocked_system("stale");
    let probe = Probe::new();
    let (t, advanced) = timed(&system, &probe);
    t.tell(Msg::StartWaitCancel);
    assert_eq!(probe.expect(), "armed");
    // The actor is still in its handler: the timer's id lands in the
    // mailbox behind it, then the handler cancels the timer.
    clock.advance(ms(1));
    advanced.send(()).unwrap();
    expect_active(&t, &probe, "stale", false);
    shutdown(&system);
}

#[test]
fn restart_and_stop_cancel_all_timers() {
    let (system, clock) = clocked_system("restartTimers");
    let probe = Probe::new();
    let (t, _) = timed(&system, &probe);
    t.tell(Msg::StartPeriodic("p", "tick", 5));
    expect_active(&t, &probe, "p", true);
    clock.advance(ms(5));
    assert_eq!(probe.expect(), "fired tick");
    t.tell(Msg::Crash);
    expect_active(&t, &probe, "p", false);
    clock.advance(ms(50));
    expect_active(&t, &probe, "p", false); // and no tick before the answer
    t.tell(Msg::StartPeriodic("p", "tick", 5));
    expect_active(&t, &probe, "p", true);
    clock.advance(ms(5));
    assert_eq!(probe.expect(), "fired tick");
    t.stop();
    assert!(eventually(PATIENCE, || t.is_terminated()));
    clock.advance(ms(50));
    assert_eq!(
        system.event_stream().dead_letter_count(),
        0,
        "no timer message after stop"
    );
    shutdown(&system);
}

#[test]
fn periodic_timers_fire_once_per_period_covered_by_an_advance() {
    let (system, clock) = clocked_system("periodic");
    let probe = Probe::new();
    let (t, _) = timed(&system, &probe);
    t.tell(Msg::StartPeriodic("p", "tick", 10));
    expect_active(&t, &probe, "p", true);
    clock.advance(ms(95));
    assert_eq!(probe.expect_n(9), vec!["fired tick"; 9]);
    expect_active(&t, &probe, "p", true); // exactly nine before the answer
    clock.advance(ms(5));
    assert_eq!(probe.expect(), "fired tick");
    shutdown(&system);
}

#[test]
fn advance_runs_due_jobs_in_deadline_order_each_at_its_deadline() {
    let (system, clock) = clocked_system("order");
    let start = clock.now();
    let (tx, rx) = channel();
    let scheduler = system.scheduler().clone();
    for d in [30u64, 10, 20, 10] {
        let (tx, s) = (tx.clone(), scheduler.clone());
        scheduler.schedule_once_fn(ms(d), move || {
            tx.send((d, s.now() - start)).unwrap();
        });
    }
    // A job scheduled by a job runs in the same advance when it is due by then.
    let (tx2, s) = (tx.clone(), scheduler.clone());
    scheduler.schedule_once_fn(ms(5), move || {
        let (tx3, s2) = (tx2.clone(), s.clone());
        s.schedule_once_fn(ms(10), move || tx3.send((15, s2.now() - start)).unwrap());
    });
    clock.advance(ms(25));
    let ran: Vec<_> = rx.try_iter().collect();
    assert_eq!(
        ran,
        [(10, ms(10)), (10, ms(10)), (15, ms(15)), (20, ms(20))]
    );
    assert_eq!(clock.elapsed(), ms(25));
    clock.advance(ms(5));
    assert_eq!(rx.try_iter().collect::<Vec<_>>(), [(30, ms(30))]);
    shutdown(&system);
}

#[test]
fn zero_intervals_are_typed_errors() {
    struct Z(Sender<Vec<ScheduleError>>);
    impl Actor for Z {
        type Msg = u8;
        fn pre_start(&mut self, ctx: &mut Context<Self>) {
            let mut errors = Vec::new();
            errors.extend(
                ctx.timers()
                    .start_timer_with_fixed_delay("a", 1, Duration::ZERO)
                    .err(),
            );
            errors.extend(
                ctx.timers()
                    .start_timer_at_fixed_rate("b", 1, Duration::ZERO)
                    .err(),
            );
            self.0.send(errors).unwrap();
        }
        fn receive(&mut self, _: &mut Context<Self>, _: u8) {}
    }
    let system = ActorSystem::new("zero").unwrap();
    let probe = Probe::new();
    let tx = probe.sender();
    let z = system
        .spawn(Props::new(move || Z(tx.clone())), "z")
        .unwrap();
    assert_eq!(
        probe.expect(),
        [ScheduleError::ZeroInterval, ScheduleError::ZeroInterval]
    );
    assert_eq!(
        system
            .scheduler()
            .schedule_at_fixed_rate(ms(1), Duration::ZERO, &z, 1)
            .unwrap_err(),
        ScheduleError::ZeroInterval
    );
    shutdown(&system);
}

/// Counts what it receives.
struct Count(Arc<Mutex<u32>>);
impl Actor for Count {
    type Msg = ();
    fn receive(&mut self, _: &mut Context<Self>, _: ()) {
        *self.0.lock().unwrap() += 1;
    }
}

/// Real time is the point here: a late timer thread (held by a job) and
/// what each kind of periodic schedule does about it. Under a test clock
/// no job is ever late.
#[test]
fn fixed_rate_catches_up_after_a_delay_and_fixed_delay_does_not() {
    let system = ActorSystem::new("drift").unwrap();
    let (rate_n, delay_n) = (Arc::new(Mutex::new(0)), Arc::new(Mutex::new(0)));
    let (r, d) = (rate_n.clone(), delay_n.clone());
    let rate = system
        .spawn(Props::new(move || Count(r.clone())), "rate")
        .unwrap();
    let delay = system
        .spawn(Props::new(move || Count(d.clone())), "delay")
        .unwrap();
    let scheduler = system.scheduler();
    // Hold the timer thread before anything else is scheduled, so every
    // deadline below is overdue when it is released, whatever the machine's
    // load, and due jobs then run in deadline order.
    let (blocked_tx, blocked) = channel();
    let (go, go_rx) = channel::<()>();
    scheduler.schedule_once_fn(Duration::ZERO, move || {
        blocked_tx.send(()).unwrap();
        let _ = go_rx.recv_timeout(PATIENCE);
    });
    blocked.recv_timeout(PATIENCE).unwrap();
    let at_rate = scheduler
        .schedule_at_fixed_rate(ms(10), ms(10), &rate, ())
        .unwrap();
    let at_delay = scheduler
        .schedule_with_fixed_delay(ms(10), ms(10), &delay, ())
        .unwrap();
    // Due after every rate deadline up to 200 ms and after the first
    // fixed-delay send, whose next send is due 10 ms after the release.
    let (done_tx, done) = channel();
    let (c1, c2) = (at_rate.clone(), at_delay.clone());
    scheduler.schedule_once_fn(ms(205), move || {
        c1.cancel();
        c2.cancel();
        done_tx.send(()).unwrap();
    });
    // Release the timer thread once every deadline above has passed.
    let all_overdue = std::time::Instant::now() + ms(300);
    assert!(eventually(PATIENCE, || std::time::Instant::now() >= all_overdue));
    go.send(()).unwrap();
    done.recv_timeout(PATIENCE).unwrap();
    assert!(at_rate.is_cancelled() && at_delay.is_cancelled());
    assert!(
        eventually(PATIENCE, || *rate_n.lock().unwrap() >= 15),
        "rate: {}",
        rate_n.lock().unwrap()
    );
    assert!(eventually(PATIENCE, || *delay_n.lock().unwrap() == 1));
    assert!(
        !eventually(QUIET, || *delay_n.lock().unwrap() > 1),
        "fixed delay sent once, then waited its delay: {}",
        delay_n.lock().unwrap()
    );
    shutdown(&system);
}

#[test]
fn scheduler_once_cancel_and_after_terminate() {
    let (system, clock) = clocked_system("sched");
    let n = Arc::new(Mutex::new(0));
    let c = n.clone();
    let counter = system
        .spawn(Props::new(move || Count(c.clone())), "c")
        .unwrap();
    let scheduler = system.scheduler().clone();
    scheduler.schedule_once(ms(5), &counter, ());
    let cancelled = scheduler.schedule_once(ms(20), &counter, ());
    assert!(cancelled.cancel());
    assert!(!cancelled.cancel(), "only the first cancel counts");
    let (tx, rx) = channel();
    scheduler.schedule_once_fn(ms(5), move || tx.send("ran").unwrap());
    clock.advance(ms(4));
    assert!(rx.try_recv().is_err(), "not due yet");
    clock.advance(ms(30));
    assert_eq!(rx.try_recv(), Ok("ran"));
    assert!(eventually(PATIENCE, || *n.lock().unwrap() == 1));
    assert!(
        !eventually(QUIET, || *n.lock().unwrap() != 1),
        "the cancelled send did not happen"
    );
    shutdown(&system);
    let late = scheduler.schedule_once(ms(1), &counter, ());
    assert!(late.is_cancelled(), "nothing is scheduled after terminate");
    assert_eq!(
        system.event_stream().dead_letter_count(),
        1,
        "the message went to dead letters"
    );
    clock.advance(ms(10)); // a terminated system's clock still advances
}

#[test]
fn durations_too_long_for_the_clock_mean_never() {
    let (system, clock) = clocked_system("never");
    let probe = Probe::new();
    let (t, _) = timed(&system, &probe);
    let scheduler = system.scheduler();
    // Each of these used to panic computing its deadline.
    let once = scheduler.schedule_once(Duration::MAX, &t, Msg::Fired("once"));
    let f = scheduler.schedule_once_fn(Duration::MAX, || unreachable!("never due"));
    let late = scheduler
        .schedule_with_fixed_delay(Duration::MAX, ms(1), &t, Msg::Fired("late"))
        .unwrap();
    // Due now (so run at once on a test clock), then "never" (the re-arm
    // saturates).
    let rate = scheduler
        .schedule_at_fixed_rate(Duration::ZERO, Duration::MAX, &t, Msg::Fired("rate"))
        .unwrap();
    let delay = scheduler
        .schedule_with_fixed_delay(Duration::ZERO, Duration::MAX, &t, Msg::Fired("delay"))
        .unwrap();
    assert_eq!(probe.expect_n(2), ["fired rate", "fired delay"]);
    t.tell(Msg::StartSingle("single", "single", u64::MAX));
    t.tell(Msg::StartPeriodic("periodic", "periodic", u64::MAX));
    expect_active(&t, &probe, "single", true);
    // A year later nothing else has come due.
    clock.advance(Duration::from_secs(86_400 * 365));
    expect_active(&t, &probe, "single", true);
    for c in [once, f, late, rate, delay] {
        assert!(c.cancel());
    }
    // The scheduler still works on time.
    let (tx, rx) = channel();
    scheduler.schedule_once_fn(ms(1), move || tx.send(()).unwrap());
    clock.advance(ms(1));
    assert_eq!(rx.try_recv(), Ok(()));
    shutdown(&system);
}

/// The test clock leaves real time alone: a system without one fires on
/// the real clock.
#[test]
fn without_a_test_clock_timers_fire_in_real_time() {
    let system = ActorSystem::new("real").unwrap();
    let (tx, rx) = channel();
    system
        .scheduler()
        .schedule_once_fn(ms(1), move || tx.send(()).unwrap());
    assert_eq!(rx.recv_timeout(PATIENCE), Ok(()));
    shutdown(&system);
}

#[test]
fn a_test_clock_is_debug_and_clones_share_time() {
    let clock = TestClock::new();
    let other = clock.clone();
    other.advance(ms(7));
    assert_eq!(clock.elapsed(), ms(7));
    assert!(format!("{clock:?}").contains("TestClock"));
}

#[test]
fn timers_are_cancelled_before_post_stop() {
    struct Ticking(Sender<bool>);
    impl Actor for Ticking {
        type Msg = ();
        fn pre_start(&mut self, ctx: &mut Context<Self>) {
            ctx.timers()
                .start_timer_with_fixed_delay("tick", (), ms(10))
                .unwrap();
        }
        fn receive(&mut self, _: &mut Context<Self>, _: ()) {}
        fn post_stop(&mut self, ctx: &mut Context<Self>) {
            self.0.send(ctx.timers().is_timer_active(&"tick")).unwrap();
        }
    }
    let (system, _clock) = clocked_system("postStopTimers");
    let probe = Probe::new();
    let tx = probe.sender();
    let t = system
        .spawn(Props::new(move || Ticking(tx.clone())), "ticking")
        .unwrap();
    t.stop();
    assert!(
        !probe.expect(),
        "a stopping actor's timers are cancelled before post_stop"
    );
    shutdown(&system);
}

/// `schedule_once_fn_at` runs at its deadline however late it was
/// scheduled (a delay counts from the scheduling), at once (on the
/// calling thread, on a test clock) when the deadline has passed.
#[test]
fn a_job_scheduled_at_an_instant_runs_at_that_instant() {
    let (system, clock) = clocked_system("at-instant");
    let scheduler = system.scheduler().clone();
    let start = scheduler.now();
    clock.advance(ms(59));
    let (tx, rx) = channel();
    let (at, passed) = (tx.clone(), tx);
    scheduler.schedule_once_fn_at(start + ms(60), move || at.send("at").unwrap());
    scheduler.schedule_once_fn_at(start, move || passed.send("passed").unwrap());
    assert_eq!(rx.try_recv(), Ok("passed"));
    clock.advance(Duration::ZERO);
    assert!(rx.try_recv().is_err(), "not before its deadline");
    clock.advance(ms(1));
    assert_eq!(rx.try_recv(), Ok("at"));
    let cancelled = scheduler.schedule_once_fn_at(start + ms(70), || panic!("cancelled"));
    assert!(cancelled.cancel());
    clock.advance(ms(20));
    shutdown(&system);
}
