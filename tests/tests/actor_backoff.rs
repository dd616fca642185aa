//! Backoff supervision on the test clock: growing delays, jitter bounds,
//! reset after a stable period, the restart limit, messages kept while the
//! child is down, and the on-stop mode.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use weir_actor::backoff::{Backoff, BackoffMsg, BackoffSupervisor};
use weir_actor::testkit::TestClock;
use weir_actor::{Actor, ActorRef, ActorSystem, Context, Props, ask};

const LONG: Duration = Duration::from_secs(10);
const MS: Duration = Duration::from_millis(1);
const MIN: Duration = Duration::from_secs(1);

fn wait_until(what: &str, cond: impl Fn() -> bool) {
    let deadline = Instant::now() + LONG;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::yield_now();
    }
}

enum Msg {
    Boom,
    Echo(u32),
    Quit,
}

/// Reports every start (with the clock's time) and every echo.
struct Child {
    starts: mpsc::Sender<Instant>,
    echoes: mpsc::Sender<u32>,
}

impl Actor for Child {
    type Msg = Msg;
    fn pre_start(&mut self, ctx: &mut Context<Self>) {
        let _ = self.starts.send(ctx.system().scheduler().now());
    }
    fn receive(&mut self, ctx: &mut Context<Self>, msg: Msg) {
        match msg {
            Msg::Boom => panic!("child failure"),
            Msg::Echo(n) => {
                let _ = self.echoes.send(n);
            }
            Msg::Quit => ctx.stop_self(),
        }
    }
}

struct Fixture {
    clock: TestClock,
    system: ActorSystem,
    sup: ActorRef<BackoffMsg<Msg>>,
    starts: mpsc::Receiver<Instant>,
    echoes: mpsc::Receiver<u32>,
}

fn fixture(backoff: Backoff) -> Fixture {
    let clock = TestClock::new();
    let system = ActorSystem::builder()
        .name("backoff")
        .clock(clock.clone())
        .build()
        .unwrap();
    let (starts_tx, starts) = mpsc::channel();
    let (echoes_tx, echoes) = mpsc::channel();
    let child = Props::new(move || Child {
        starts: starts_tx.clone(),
        echoes: echoes_tx.clone(),
    });
    let sup = system
        .spawn(BackoffSupervisor::props(child, "child", backoff), "sup")
        .unwrap();
    starts.recv_timeout(LONG).expect("the first start");
    Fixture {
        clock,
        system,
        sup,
        starts,
        echoes,
    }
}

impl Fixture {
    fn restarts(&self) -> u32 {
        ask(&self.sup, BackoffMsg::get_restart_count, LONG)
            .wait()
            .unwrap()
    }

    fn child(&self) -> Option<ActorRef<Msg>> {
        ask(&self.sup, BackoffMsg::get_current_child, LONG)
            .wait()
            .unwrap()
    }

    /// Fail the child and wait until the supervisor has armed restart
    /// number `n`.
    fn fail(&self, n: u32) {
        self.sup.tell_into(Msg::Boom);
        wait_until("the failure to be handled", || {
            self.restarts() == n && self.child().is_none()
        });
    }

    /// The child is not restarted `delay - 1ms` after the failure, and is
    /// restarted at `delay`.
    fn expect_restart_after(&self, delay: Duration) {
        let failed_at = self.clock.now();
        self.clock.advance(delay - MS);
        // A restart timer that fired is in the supervisor's mailbox before
        // this question, so the answer shows its effect.
        assert!(self.child().is_none(), "restarted before {delay:?}");
        assert!(
            self.starts.try_recv().is_err(),
            "restarted before {delay:?}"
        );
        self.clock.advance(MS);
        let started = self.starts.recv_timeout(LONG).expect("the restart");
        assert_eq!(started - failed_at, delay);
        wait_until("the new child", || self.child().is_some());
    }

    fn end(self) {
        self.system.terminate().wait().unwrap();
    }
}

#[test]
fn delays_double_up_to_the_maximum() {
    let f = fixture(
        Backoff::new(MIN, MIN * 4)
            .with_random_factor(0.0)
            .without_reset(),
    );
    let first = f.child().unwrap();
    for (n, delay) in [(1, MIN), (2, MIN * 2), (3, MIN * 4), (4, MIN * 4)] {
        f.fail(n);
        f.expect_restart_after(delay);
    }
    assert_ne!(f.child().unwrap(), first, "each restart is a fresh child");
    assert_eq!(
        f.child().unwrap().path().name(),
        "child",
        "under the same name"
    );
    f.end();
}

#[test]
fn jitter_stays_within_the_random_factor() {
    let backoff = Backoff::new(MIN, MIN * 8).with_random_factor(0.5);
    for restarts in 0..6 {
        let base = (MIN * 2u32.pow(restarts)).min(MIN * 8);
        let delays: Vec<Duration> = (0..200).map(|_| backoff.delay(restarts)).collect();
        for d in &delays {
            assert!(
                *d >= base && *d < base.mul_f64(1.5),
                "{d:?} outside [{base:?}, 1.5 x)"
            );
        }
        assert!(delays.iter().any(|d| *d != delays[0]), "no jitter at all");
    }
    // Absurd counts saturate at the maximum instead of overflowing.
    assert_eq!(
        Backoff::new(MIN, MIN * 8)
            .with_random_factor(0.0)
            .delay(u32::MAX),
        MIN * 8
    );
}

#[test]
fn a_stable_period_resets_the_delay() {
    let f = fixture(
        Backoff::new(MIN, MIN * 60)
            .with_random_factor(0.0)
            .with_reset_after(MIN * 10),
    );
    f.fail(1);
    f.expect_restart_after(MIN);
    f.fail(2);
    f.expect_restart_after(MIN * 2);
    // Ten quiet seconds: forgotten.
    f.clock.advance(MIN * 10);
    wait_until("the reset", || f.restarts() == 0);
    f.fail(1);
    f.expect_restart_after(MIN);
    // A failure before the period ends keeps counting.
    f.clock.advance(MIN * 9);
    f.fail(2);
    f.expect_restart_after(MIN * 2);
    // And the explicit reset.
    f.sup.tell(BackoffMsg::reset());
    wait_until("the reset", || f.restarts() == 0);
    f.end();
}

#[test]
fn the_supervisor_stops_after_the_restart_limit() {
    let f = fixture(
        Backoff::new(MIN, MIN)
            .with_random_factor(0.0)
            .with_max_restarts(2),
    );
    f.fail(1);
    f.expect_restart_after(MIN);
    f.fail(2);
    f.expect_restart_after(MIN);
    let last = f.child().unwrap();
    f.sup.tell_into(Msg::Boom);
    wait_until("the supervisor's stop", || f.sup.is_terminated());
    assert!(last.is_terminated());
    f.clock.advance(MIN * 100);
    assert!(f.starts.try_recv().is_err(), "no restart past the limit");
    f.end();
}

#[test]
fn messages_sent_while_the_child_is_down_reach_the_next_child_in_order() {
    let f = fixture(Backoff::new(MIN, MIN).with_random_factor(0.0));
    f.sup.tell_into(Msg::Echo(0));
    assert_eq!(f.echoes.recv_timeout(LONG), Ok(0));
    f.fail(1);
    for n in 1..=5 {
        f.sup.tell_into(Msg::Echo(n));
    }
    // Nothing is delivered while the child is down.
    wait_until("the messages to be stashed", || f.restarts() == 1);
    assert!(f.echoes.try_recv().is_err());
    f.expect_restart_after(MIN);
    for n in 1..=5 {
        assert_eq!(f.echoes.recv_timeout(LONG), Ok(n));
    }
    f.end();
}

#[test]
fn a_child_that_stops_without_failing_ends_the_supervisor() {
    let f = fixture(Backoff::new(MIN, MIN));
    f.sup.tell_into(Msg::Quit);
    wait_until("the supervisor's stop", || f.sup.is_terminated());
    f.clock.advance(MIN * 10);
    assert!(
        f.starts.try_recv().is_err(),
        "a normal stop is not restarted"
    );
    f.end();
}

#[test]
fn on_stop_a_child_that_stops_is_restarted_with_backoff() {
    let f = fixture(
        Backoff::new(MIN, MIN * 4)
            .with_random_factor(0.0)
            .without_reset()
            .with_max_restarts(2)
            .on_stop(),
    );
    for (n, delay) in [(1, MIN), (2, MIN * 2)] {
        f.sup.tell_into(Msg::Quit);
        wait_until("the stop to be handled", || {
            f.restarts() == n && f.child().is_none()
        });
        f.expect_restart_after(delay);
    }
    // The third stop is past the limit: the supervisor stops.
    f.sup.tell_into(Msg::Quit);
    wait_until("the supervisor's stop", || f.sup.is_terminated());
    f.clock.advance(MIN * 100);
    assert!(f.starts.try_recv().is_err(), "no restart past the limit");
    f.end();
}

#[test]
fn on_stop_messages_wait_for_the_restarted_child() {
    let f = fixture(Backoff::new(MIN, MIN).with_random_factor(0.0).on_stop());
    f.sup.tell_into(Msg::Quit);
    wait_until("the stop to be handled", || {
        f.restarts() == 1 && f.child().is_none()
    });
    f.sup.tell_into(Msg::Echo(7));
    f.expect_restart_after(MIN);
    assert_eq!(f.echoes.recv_timeout(LONG), Ok(7));
    f.fail(2);
    f.expect_restart_after(MIN);
    f.end();
}
