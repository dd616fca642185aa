//! `testkit::TestProbe`: expectations on what reaches a probe's reference, death watch, time-outs.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

use weir_actor::testkit::{DEFAULT_PROBE_TIMEOUT, TestProbe};
use weir_actor::{Actor, ActorRef, ActorSystem, Context, Event, Props, ask};
use weir_tests::{PATIENCE, QUIET, clocked_system, shutdown};

/// Forwards every number, doubled, to where it was told to.
struct Doubler(ActorRef<u32>);
impl Actor for Doubler {
    type Msg = u32;
    fn receive(&mut self, _: &mut Context<Self>, n: u32) {
        self.0.tell(n * 2);
    }
}

fn panics(f: impl FnOnce()) -> String {
    let payload = catch_unwind(AssertUnwindSafe(f)).expect_err("the expectation fails");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_default()
}

#[test]
fn messages_arrive_in_order_and_expectations_check_them() {
    let system = ActorSystem::new("probe-order").unwrap();
    let mut probe = TestProbe::<u32>::new(&system);
    let doubler = system
        .spawn(
            Props::new({
                let to = probe.actor_ref();
                move || Doubler(to.clone())
            }),
            "doubler",
        )
        .unwrap();
    for n in 1..=6 {
        doubler.tell(n);
    }
    assert_eq!(probe.expect_msg(2), 2);
    assert_eq!(probe.receive_msg(), 4);
    assert_eq!(probe.expect_msg_that(|n| *n == 6), 6);
    assert_eq!(
        probe.expect_msg_pf(|n| (n == 8).then_some("eight")),
        "eight"
    );
    assert_eq!(probe.receive_n(2), [10, 12]);
    probe.expect_no_msg(QUIET);
    shutdown(&system);
}

#[test]
fn a_wrong_message_fails_the_expectation_and_says_what_came() {
    let system = ActorSystem::new("probe-wrong").unwrap();
    let mut probe = TestProbe::<u32>::new(&system);
    probe.actor_ref().tell(7);
    let message = panics(|| {
        probe.expect_msg(8);
    });
    assert!(message.contains("expected 8, got 7"), "{message}");
    probe.actor_ref().tell(7);
    let message = panics(|| {
        probe.expect_msg_that(|n| *n > 10);
    });
    assert!(message.contains("does not hold for 7"), "{message}");
    probe.actor_ref().tell(7);
    let message = panics(|| {
        probe.expect_msg_pf(|_| None::<()>);
    });
    assert!(message.contains("did not match"), "{message}");
    shutdown(&system);
}

#[test]
fn expect_no_msg_fails_on_a_message_within_its_window() {
    let system = ActorSystem::new("probe-no-msg").unwrap();
    let mut probe = TestProbe::<u32>::new(&system);
    probe.actor_ref().tell(1);
    let message = panics(|| probe.expect_no_msg(QUIET));
    assert!(message.contains("got 1"), "{message}");
    shutdown(&system);
}

#[test]
fn an_expectation_with_nothing_arriving_fails_after_the_probe_time_out() {
    let system = ActorSystem::new("probe-timeout").unwrap();
    let probe = TestProbe::<u32>::new(&system);
    assert_eq!(probe.timeout(), DEFAULT_PROBE_TIMEOUT);
    let mut probe = probe.with_timeout(Duration::from_millis(50));
    let started = Instant::now();
    let message = panics(|| {
        probe.receive_msg();
    });
    let waited = started.elapsed();
    assert!(message.contains("within 50ms, got nothing"), "{message}");
    assert!(
        waited >= Duration::from_millis(50) && waited < PATIENCE,
        "{waited:?}"
    );
    // A message that arrives while the probe waits ends the wait at once.
    let to = probe.actor_ref();
    let mut probe = probe.with_timeout(PATIENCE);
    let sender = std::thread::spawn(move || to.tell(3));
    assert_eq!(probe.receive_msg(), 3);
    sender.join().unwrap();
    shutdown(&system);
}

#[test]
fn receive_n_fails_when_fewer_arrive_in_time() {
    let system = ActorSystem::new("probe-receive-n").unwrap();
    let mut probe = TestProbe::<u32>::new(&system).with_timeout(Duration::from_millis(50));
    probe.actor_ref().tell(1);
    let message = panics(|| {
        probe.receive_n(2);
    });
    assert!(message.contains("message 2 of 2"), "{message}");
    shutdown(&system);
}

#[test]
fn fish_for_message_skips_until_the_hook_accepts() {
    let system = ActorSystem::new("probe-fish").unwrap();
    let mut probe = TestProbe::<u32>::new(&system);
    for n in [1, 3, 5, 8, 9] {
        probe.actor_ref().tell(n);
    }
    assert_eq!(probe.fish_for_message(|n| n % 2 == 0), 8);
    assert_eq!(probe.receive_msg(), 9);
    let mut probe = probe.with_timeout(Duration::from_millis(50));
    probe.actor_ref().tell(1);
    let message = panics(|| {
        probe.fish_for_message(|n| *n == 2);
    });
    assert!(message.contains("hook accepts"), "{message}");
    shutdown(&system);
}

enum Query {
    Count(ActorRef<u64>),
}

#[test]
fn a_probe_answers_an_ask_through_the_reply_to_in_the_message() {
    let system = ActorSystem::new("probe-ask").unwrap();
    let mut service = TestProbe::<Query>::new(&system);
    let answer = ask(&service.actor_ref(), Query::Count, PATIENCE);
    let reply_to = service.expect_msg_pf(|Query::Count(reply_to)| Some(reply_to));
    reply_to.tell(42);
    assert_eq!(answer.wait(), Ok(42));
    shutdown(&system);
}

struct Idle;
impl Actor for Idle {
    type Msg = ();
    fn receive(&mut self, _: &mut Context<Self>, _: ()) {}
}

#[test]
fn a_watching_probe_is_told_when_the_actor_stops() {
    let system = ActorSystem::new("probe-watch").unwrap();
    let mut probe = TestProbe::<u32>::new(&system);
    let first = system.spawn(Props::new(|| Idle), "first").unwrap();
    let second = system.spawn(Props::new(|| Idle), "second").unwrap();
    probe.watch(&first);
    probe.watch(&second);
    first.stop();
    probe.expect_terminated(&first);
    // The notices keep their order with the messages around them.
    probe.actor_ref().tell(1);
    second.stop();
    let message = panics(|| probe.expect_terminated(&second));
    assert!(message.contains("got a message"), "{message}");
    probe.expect_terminated(&second);
    // Watching an actor that has already stopped gives its notice at once.
    probe.watch(&first);
    let message = panics(|| {
        probe.receive_msg();
    });
    assert!(
        message.contains("got Terminated(") && message.contains("first"),
        "{message}"
    );
    shutdown(&system);
}

#[test]
fn expect_terminated_fails_for_another_actors_notice() {
    let system = ActorSystem::new("probe-watch-other").unwrap();
    let mut probe = TestProbe::<u32>::new(&system);
    let first = system.spawn(Props::new(|| Idle), "first").unwrap();
    let second = system.spawn(Props::new(|| Idle), "second").unwrap();
    probe.watch(&first);
    first.stop();
    let message = panics(|| probe.expect_terminated(&second));
    assert!(
        message.contains("got Terminated(") && message.contains("first"),
        "{message}"
    );
    // An unwatched actor sends no notice.
    probe.unwatch(&second);
    second.stop();
    probe.expect_no_msg(QUIET);
    shutdown(&system);
}

#[test]
fn a_dropped_probe_turns_later_messages_into_dead_letters() {
    let system = ActorSystem::new("probe-drop").unwrap();
    let mut dead = TestProbe::<u32>::new(&system);
    let to_dead = dead.actor_ref();
    let _subscription = system.event_stream().subscribe(move |event| {
        if let Event::DeadLetter(letter) = event
            && let Some(n) = letter.downcast_ref::<u32>()
        {
            to_dead.tell(*n);
        }
    });
    let probe = TestProbe::<u32>::new(&system);
    let to = probe.actor_ref();
    drop(probe);
    assert!(to.is_terminated());
    to.tell(5);
    dead.expect_msg(5);
    shutdown(&system);
}

/// Fires its timer once, to the probe.
struct Alarm(ActorRef<&'static str>);
impl Actor for Alarm {
    type Msg = &'static str;
    fn pre_start(&mut self, ctx: &mut Context<Self>) {
        ctx.timers()
            .start_single_timer("alarm", "ring", Duration::from_secs(60));
        self.0.tell("armed");
    }
    fn receive(&mut self, _: &mut Context<Self>, msg: &'static str) {
        self.0.tell(msg);
    }
}

#[test]
fn on_a_test_clock_the_probe_sees_what_came_due_after_advance() {
    let (system, clock) = clocked_system("probe-clock");
    let mut probe = TestProbe::<&'static str>::new(&system);
    let to = probe.actor_ref();
    let alarm = system
        .spawn(Props::new(move || Alarm(to.clone())), "alarm")
        .unwrap();
    probe.expect_msg("armed");
    probe.expect_no_msg(QUIET);
    clock.advance(Duration::from_secs(60));
    probe.expect_msg("ring");
    alarm.stop();
    shutdown(&system);
}

#[test]
fn a_probe_reference_subscribes_to_user_events_like_any_actor() {
    let system = ActorSystem::new("probe-events").unwrap();
    let mut probe = TestProbe::<u32>::new(&system);
    assert!(system.event_stream().subscribe_actor(&probe.actor_ref()));
    system.event_stream().publish(7u32);
    probe.expect_msg(7);
    shutdown(&system);
}
