//! Keyed actor timers and the system scheduler: replace, cancel, stale suppression, fixed delay vs fixed rate.

use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use weir_actor::{Actor, ActorRef, ActorSystem, Context, Props, ScheduleError};
use weir_tests::{PATIENCE, Probe, QUIET, eventually, shutdown};

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
    /// Start a 1 ms timer, wait until the scheduler has sent it, cancel it.
    StartWaitCancel,
    Crash,
}

struct Timed {
    log: Sender<String>,
    fired_sent: Arc<Mutex<Receiver<()>>>,
    fired_tx: Sender<()>,
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
                // The timer thread runs due jobs in deadline order: once this
                // later job has run, the timer's id is already in our mailbox.
                let tx = self.fired_tx.clone();
                ctx.system()
                    .scheduler()
                    .schedule_once_fn(ms(5), move || tx.send(()).unwrap());
                self.fired_sent
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

fn timed(system: &ActorSystem, probe: &Probe<String>) -> ActorRef<Msg> {
    let log = probe.sender();
    let (fired_tx, fired_rx) = channel();
    let fired_sent = Arc::new(Mutex::new(fired_rx));
    system
        .spawn(
            Props::new(move || Timed {
                log: log.clone(),
                fired_sent: fired_sent.clone(),
                fired_tx: fired_tx.clone(),
            }),
            "timed",
        )
        .unwrap()
}

#[test]
fn a_single_timer_fires_once_and_is_then_inactive() {
    let system = ActorSystem::new("single").unwrap();
    let probe = Probe::new();
    let t = timed(&system, &probe);
    t.tell(Msg::StartSingle("k", "a", 20));
    t.tell(Msg::IsActive("k"));
    assert_eq!(probe.expect(), "active k: true");
    assert_eq!(probe.expect(), "fired a");
    t.tell(Msg::IsActive("k"));
    assert_eq!(probe.expect(), "active k: false");
    probe.expect_nothing();
    shutdown(&system);
}

#[test]
fn starting_with_an_existing_key_replaces_the_timer() {
    let system = ActorSystem::new("replace").unwrap();
    let probe = Probe::new();
    let t = timed(&system, &probe);
    t.tell(Msg::StartSingle("k", "old", 20));
    t.tell(Msg::StartSingle("k", "new", 20));
    assert_eq!(probe.expect(), "fired new");
    probe.expect_nothing();
    shutdown(&system);
}

#[test]
fn a_cancelled_timer_never_fires() {
    let system = ActorSystem::new("cancel").unwrap();
    let probe = Probe::new();
    let t = timed(&system, &probe);
    t.tell(Msg::StartSingle("k", "a", 30));
    t.tell(Msg::Cancel("k"));
    assert_eq!(probe.expect(), "cancelled k: true");
    t.tell(Msg::Cancel("k"));
    assert_eq!(probe.expect(), "cancelled k: false");
    probe.expect_nothing();
    shutdown(&system);
}

#[test]
fn a_message_already_enqueued_by_a_cancelled_timer_is_not_delivered() {
    let system = ActorSystem::new("stale").unwrap();
    let probe = Probe::new();
    let t = timed(&system, &probe);
    t.tell(Msg::StartWaitCancel);
    t.tell(Msg::IsActive("stale"));
    assert_eq!(probe.expect(), "active stale: false");
    probe.expect_nothing();
    shutdown(&system);
}

#[test]
fn restart_and_stop_cancel_all_timers() {
    let system = ActorSystem::new("restartTimers").unwrap();
    let probe = Probe::new();
    let t = timed(&system, &probe);
    t.tell(Msg::StartPeriodic("p", "tick", 5));
    assert_eq!(probe.expect(), "fired tick");
    t.tell(Msg::Crash);
    // Processed after the restart: the periodic timer is gone. Ticks that
    // were queued before the crash may come first; none comes after.
    t.tell(Msg::IsActive("p"));
    loop {
        match probe.expect().as_str() {
            "fired tick" => continue,
            other => {
                assert_eq!(other, "active p: false");
                break;
            }
        }
    }
    probe.expect_nothing();
    t.tell(Msg::StartPeriodic("p", "tick", 5));
    assert_eq!(probe.expect(), "fired tick");
    t.stop();
    assert!(eventually(PATIENCE, || t.is_terminated()));
    assert!(
        !eventually(QUIET, || system.event_stream().dead_letter_count() > 0),
        "no timer message after stop"
    );
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
    let system = ActorSystem::new("sched").unwrap();
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
    assert_eq!(rx.recv_timeout(PATIENCE), Ok("ran"));
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
}

#[test]
fn durations_too_long_for_the_clock_mean_never() {
    let system = ActorSystem::new("never").unwrap();
    let probe = Probe::new();
    let t = timed(&system, &probe);
    let scheduler = system.scheduler();
    // Each of these used to panic computing its deadline.
    let once = scheduler.schedule_once(Duration::MAX, &t, Msg::Fired("once"));
    let f = scheduler.schedule_once_fn(Duration::MAX, || unreachable!("never due"));
    let late = scheduler
        .schedule_with_fixed_delay(Duration::MAX, ms(1), &t, Msg::Fired("late"))
        .unwrap();
    // Due now, then "never" (the re-arm saturates on the timer thread).
    let rate = scheduler
        .schedule_at_fixed_rate(Duration::ZERO, Duration::MAX, &t, Msg::Fired("rate"))
        .unwrap();
    let delay = scheduler
        .schedule_with_fixed_delay(Duration::ZERO, Duration::MAX, &t, Msg::Fired("delay"))
        .unwrap();
    t.tell(Msg::StartSingle("single", "single", u64::MAX));
    t.tell(Msg::StartPeriodic("periodic", "periodic", u64::MAX));
    let mut first = probe.expect_n(2);
    first.sort();
    assert_eq!(first, ["fired delay", "fired rate"]);
    t.tell(Msg::IsActive("single"));
    assert_eq!(probe.expect(), "active single: true");
    probe.expect_nothing();
    for c in [once, f, late, rate, delay] {
        assert!(c.cancel());
    }
    // The timer thread is alive and on time.
    let (tx, rx) = channel();
    scheduler.schedule_once_fn(ms(1), move || tx.send(()).unwrap());
    assert_eq!(rx.recv_timeout(PATIENCE), Ok(()));
    shutdown(&system);
}
