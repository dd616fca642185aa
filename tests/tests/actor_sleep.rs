//! `ActorSystem::sleep` / `after`: timer futures on the system's clock, driven by a test clock.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use weir_actor::testkit::TestProbe;
use weir_actor::{Actor, ActorRef, ActorSystem, Props, SchedulerStopped};
use weir_tests::{PATIENCE, QUIET, clocked_system, shutdown};

/// A waker that counts its wake-ups.
#[derive(Default)]
struct Counter(AtomicUsize);
impl Wake for Counter {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn poll<F: Future + Unpin>(future: &mut F, waker: &Waker) -> Poll<F::Output> {
    Pin::new(future).poll(&mut Context::from_waker(waker))
}

const fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

#[test]
fn a_sleep_completes_when_the_test_clock_reaches_its_deadline() {
    let (system, clock) = clocked_system("sleep-clock");
    let wakes = Arc::new(Counter::default());
    let waker = Waker::from(wakes.clone());
    let mut sleep = system.sleep(secs(10));
    assert_eq!(poll(&mut sleep, &waker), Poll::Pending);
    clock.advance(secs(9));
    assert!(!sleep.is_elapsed());
    assert_eq!(poll(&mut sleep, &waker), Poll::Pending);
    assert_eq!(wakes.0.load(Ordering::SeqCst), 0);
    clock.advance(secs(1));
    // `advance` ran the timer on this thread: the task is woken already.
    assert_eq!(wakes.0.load(Ordering::SeqCst), 1);
    assert!(sleep.is_elapsed());
    assert_eq!(poll(&mut sleep, &waker), Poll::Ready(Ok(())));
    shutdown(&system);
}

#[test]
fn after_gives_its_value_at_the_deadline_and_sleeps_end_in_deadline_order() {
    let (system, clock) = clocked_system("after-clock");
    let waker = Waker::noop();
    let mut late = system.after(secs(5), "late");
    let mut early = system.after(secs(2), "early");
    let mut now = system.after(Duration::ZERO, "now");
    assert_eq!(poll(&mut now, waker), Poll::Ready(Ok("now")));
    clock.advance(secs(2));
    assert_eq!(poll(&mut late, waker), Poll::Pending);
    assert_eq!(poll(&mut early, waker), Poll::Ready(Ok("early")));
    clock.advance(secs(3));
    assert_eq!(poll(&mut late, waker), Poll::Ready(Ok("late")));
    shutdown(&system);
}

#[test]
fn a_pending_sleep_fails_when_the_system_terminates_instead_of_hanging() {
    let (system, _clock) = clocked_system("sleep-terminate");
    let wakes = Arc::new(Counter::default());
    let waker = Waker::from(wakes.clone());
    let mut sleep = system.sleep(secs(60));
    let mut after = system.after(secs(60), String::from("kept"));
    assert_eq!(poll(&mut sleep, &waker), Poll::Pending);
    assert_eq!(poll(&mut after, &waker), Poll::Pending);
    shutdown(&system);
    assert_eq!(wakes.0.load(Ordering::SeqCst), 2);
    assert_eq!(
        poll(&mut sleep, &waker),
        Poll::Ready(Err(SchedulerStopped(())))
    );
    assert_eq!(
        poll(&mut after, &waker),
        Poll::Ready(Err(SchedulerStopped(String::from("kept"))))
    );
    // After termination a new timer cannot fire either: it fails at once.
    assert_eq!(
        poll(&mut system.sleep(secs(1)), &waker),
        Poll::Ready(Err(SchedulerStopped(())))
    );
}

#[test]
fn a_sleep_on_the_real_clock_completes_under_an_executor() {
    let system = ActorSystem::new("sleep-real").unwrap();
    let started = std::time::Instant::now();
    futures_executor::block_on(system.sleep(Duration::from_millis(20))).unwrap();
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(20) && waited < PATIENCE,
        "{waited:?}"
    );
    shutdown(&system);
}

/// Waits with `after` and `pipe_to_self`, then reports.
struct Delayed(ActorRef<&'static str>);
impl Actor for Delayed {
    type Msg = &'static str;
    fn pre_start(&mut self, ctx: &mut weir_actor::Context<Self>) {
        let later = ctx.system().after(secs(30), "woke");
        ctx.pipe_to_self(later, |woke| woke.unwrap_or("stopped"));
        self.0.tell("waiting");
    }
    fn receive(&mut self, _: &mut weir_actor::Context<Self>, msg: &'static str) {
        self.0.tell(msg);
    }
}

#[test]
fn an_actor_awaits_after_through_pipe_to_self_on_the_test_clock() {
    let (system, clock) = clocked_system("after-actor");
    let mut probe = TestProbe::new(&system);
    let to = probe.actor_ref();
    system
        .spawn(Props::new(move || Delayed(to.clone())), "delayed")
        .unwrap();
    probe.expect_msg("waiting");
    probe.expect_no_msg(QUIET);
    clock.advance(secs(30));
    probe.expect_msg("woke");
    shutdown(&system);
}
