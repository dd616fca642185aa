//! `initial_timeout`, `completion_timeout`, `idle_timeout`, `backpressure_timeout` and `keep_alive` on a test clock: exact deadlines and typed errors.

use std::time::Duration;

use weir_streams::prelude::*;
use weir_streams::{ErrorKind, Flow, StreamError, TimeoutKind};
use weir_tests::clocked::Rig;

const fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn expect_timeout(rig: &mut Rig<u32, u32>, kind: TimeoutKind, after: Duration) {
    let error = rig.down.expect_error();
    assert!(
        matches!(error.kind(), ErrorKind::Timeout(k, d) if *k == kind && *d == after),
        "{error:?}"
    );
    rig.up.expect_cancellation();
    let text = error.to_string();
    assert!(text.contains(&format!("{after:?}")), "{text}");
}

#[test]
fn initial_timeout_fails_when_the_first_element_is_late() {
    let mut rig = Rig::new("initial-late", Flow::new().initial_timeout(ms(100)));
    rig.down.request(10);
    rig.advance(ms(99));
    rig.expect_nothing();
    rig.advance(ms(1));
    expect_timeout(&mut rig, TimeoutKind::Initial, ms(100));
    rig.shutdown();
}

#[test]
fn initial_timeout_is_off_once_an_element_passed() {
    let mut rig = Rig::new("initial-ok", Flow::new().initial_timeout(ms(100)));
    rig.down.request(10);
    rig.advance(ms(50));
    rig.send([1]);
    assert_eq!(rig.down.expect_next(), 1);
    rig.advance(ms(1000));
    rig.expect_nothing();
    rig.up.send_complete();
    rig.down.expect_complete();
    rig.shutdown();
}

#[test]
fn completion_timeout_fails_a_stream_still_running_at_the_deadline() {
    let mut rig = Rig::new("completion", Flow::new().completion_timeout(ms(100)));
    rig.down.request(10);
    for i in 0..9 {
        rig.send([i]);
        assert_eq!(rig.down.expect_next(), i);
        rig.advance(ms(11));
    }
    rig.advance(ms(1));
    expect_timeout(&mut rig, TimeoutKind::Completion, ms(100));
    rig.shutdown();
}

#[test]
fn completion_timeout_lets_a_quick_stream_complete() {
    let mut rig = Rig::new(
        "completion-ok",
        Flow::<u32>::new().completion_timeout(ms(100)),
    );
    rig.down.request(10);
    rig.advance(ms(99));
    rig.up.send_complete();
    rig.down.expect_complete();
    rig.shutdown();
}

#[test]
fn idle_timeout_is_measured_from_the_last_element() {
    let mut rig = Rig::new("idle", Flow::new().idle_timeout(ms(100)));
    rig.down.request(10);
    // Elements every 60 ms keep it alive well past 100 ms.
    for i in 0..5 {
        rig.advance(ms(60));
        rig.send([i]);
        assert_eq!(rig.down.expect_next(), i);
    }
    rig.advance(ms(99));
    rig.expect_nothing();
    rig.advance(ms(1));
    expect_timeout(&mut rig, TimeoutKind::Idle, ms(100));
    rig.shutdown();
}

#[test]
fn idle_timeout_counts_a_back_pressured_stream_as_idle_too() {
    let mut rig = Rig::new("idle-bp", Flow::new().idle_timeout(ms(100)));
    rig.send([1]);
    rig.advance(ms(100)); // nobody asks: nothing passes
    expect_timeout(&mut rig, TimeoutKind::Idle, ms(100));
    rig.shutdown();
}

#[test]
fn backpressure_timeout_fails_when_downstream_does_not_ask_in_time() {
    let mut rig = Rig::new("bp", Flow::new().backpressure_timeout(ms(100)));
    rig.down.request(1);
    rig.send([1, 2]);
    assert_eq!(rig.down.expect_next(), 1);
    rig.advance(ms(99));
    rig.down.request(1); // in time
    assert_eq!(rig.down.expect_next(), 2);
    rig.advance(ms(99));
    rig.expect_nothing();
    rig.advance(ms(1));
    expect_timeout(&mut rig, TimeoutKind::Backpressure, ms(100));
    rig.shutdown();
}

#[test]
fn backpressure_timeout_fails_when_downstream_never_asks_for_the_first_element() {
    // As Akka's: the stage waits for demand from its start.
    let mut rig = Rig::new("bp-first", Flow::new().backpressure_timeout(ms(100)));
    rig.advance(ms(99));
    rig.expect_nothing();
    rig.advance(ms(1));
    expect_timeout(&mut rig, TimeoutKind::Backpressure, ms(100));
    rig.shutdown();
}

#[test]
fn backpressure_timeout_is_quiet_while_upstream_is_slow() {
    let mut rig = Rig::new("bp-slow", Flow::new().backpressure_timeout(ms(100)));
    rig.down.request(1);
    rig.advance(ms(1000)); // demand waits on upstream: not downstream's fault
    rig.send([1]);
    assert_eq!(rig.down.expect_next(), 1);
    rig.up.send_complete();
    rig.down.expect_complete();
    rig.shutdown();
}

#[test]
fn timeouts_pass_upstream_failure_and_completion() {
    for flow in [
        Flow::<u32>::new().initial_timeout(ms(100)),
        Flow::new().completion_timeout(ms(100)),
        Flow::new().idle_timeout(ms(100)),
        Flow::new().backpressure_timeout(ms(100)),
    ] {
        let mut rig = Rig::new("timeouts-pass", flow.clone());
        rig.down.request(1);
        rig.up.send_error(StreamError::msg("boom"));
        let error = rig.down.expect_error();
        assert!(matches!(error.kind(), ErrorKind::Message(m) if m == "boom"));
        rig.shutdown();
        let mut rig = Rig::new("timeouts-complete", flow);
        rig.up.send_complete();
        rig.down.expect_complete();
        rig.shutdown();
    }
}

#[test]
fn keep_alive_injects_when_nothing_passed_for_a_while() {
    let mut rig = Rig::new("keep-alive", Flow::new().keep_alive(ms(100), || 0));
    rig.down.request(1);
    rig.advance(ms(99));
    rig.expect_nothing();
    rig.advance(ms(1));
    assert_eq!(rig.down.expect_next(), 0, "injected");
    rig.down.request(1);
    rig.advance(ms(50));
    rig.send([7]);
    assert_eq!(rig.down.expect_next(), 7);
    rig.down.request(1);
    rig.advance(ms(99)); // measured from the 7
    rig.expect_nothing();
    rig.advance(ms(1));
    assert_eq!(rig.down.expect_next(), 0);
    rig.shutdown();
}

#[test]
fn keep_alive_injects_only_on_demand_and_completes_after_a_held_element() {
    let mut rig = Rig::new("keep-alive-bp", Flow::new().keep_alive(ms(10), || 0));
    rig.advance(ms(100));
    rig.expect_nothing(); // no demand: nothing injected, nothing queued
    rig.send([5]);
    rig.up.send_complete();
    rig.down.wait_idle();
    rig.down.request(5);
    assert_eq!(
        rig.down.expect_next(),
        5,
        "the real element, not an injection"
    );
    rig.down.expect_complete();
    rig.shutdown();
}

/// Each timeout over 1, 2, 3 from a source fused with it, which pushes as
/// soon as asked: a stage that waited for its own timer's message would
/// see every element first.
fn fused_runs(after: Duration) -> Vec<(TimeoutKind, Result<Vec<u32>, StreamError>)> {
    let (system, mat, _clock) = weir_tests::clocked_stream_system("timeouts-fused");
    let runs = [
        (TimeoutKind::Initial, Flow::new().initial_timeout(after)),
        (
            TimeoutKind::Completion,
            Flow::new().completion_timeout(after),
        ),
        (TimeoutKind::Idle, Flow::new().idle_timeout(after)),
        (
            TimeoutKind::Backpressure,
            Flow::new().backpressure_timeout(after),
        ),
    ]
    .into_iter()
    .map(|(kind, flow)| {
        let got = Source::range(1u32..=3)
            .via(flow)
            .run_with(Sink::collect(), &mat)
            .wait();
        (kind, got)
    })
    .collect();
    weir_tests::shutdown(&system);
    runs
}

#[test]
fn a_zero_timeout_has_passed_at_the_start() {
    // The clock decides, not whether the timer's message comes before
    // the elements: fused or not, the stream fails and passes nothing.
    for (kind, got) in fused_runs(Duration::ZERO) {
        let error = got.expect_err("a zero timeout fails");
        assert!(
            matches!(error.kind(), ErrorKind::Timeout(k, d) if *k == kind && d.is_zero()),
            "{kind:?}: {error:?}"
        );
    }
}

#[test]
fn a_timeout_of_duration_max_never_fires() {
    for (kind, got) in fused_runs(Duration::MAX) {
        assert_eq!(got, Ok(vec![1, 2, 3]), "{kind:?}");
    }
    let mut rig = Rig::new(
        "keep-alive-max",
        Flow::new().keep_alive(Duration::MAX, || 0),
    );
    rig.down.request(1);
    rig.advance(Duration::from_secs(86_400 * 365));
    rig.expect_nothing();
    rig.shutdown();
}

#[test]
fn keep_alive_zero_injects_whenever_asked_with_nothing_to_send() {
    let mut rig = Rig::new(
        "keep-alive-zero",
        Flow::new().keep_alive(Duration::ZERO, || 0),
    );
    rig.down.request(2);
    assert_eq!(rig.down.expect_next_n(2), [0, 0]);
    rig.send([7]);
    rig.down.request(1);
    assert_eq!(rig.down.expect_next(), 7, "an element waiting goes first");
    rig.down.cancel();
    rig.up.expect_cancellation();
    rig.shutdown();
}
