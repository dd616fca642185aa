//! Failure and back-pressure edges of the rate and time operators
//! (`batch`, `batch_weighted`, `conflate_with_seed`, `expand`,
//! `extrapolate`, `initial_delay`, `take_within`, `drop_within`,
//! `keep_alive`, `limit`, `limit_weighted`, `RestartSource`) on a test
//! clock. As in Akka, an upstream failure fails the stage at once: what
//! an operator holds (a batch, an element to expand, a due keep-alive) is
//! dropped, and the failure does not wait for demand.

use std::sync::mpsc::channel;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use weir_streams::prelude::*;
use weir_streams::testkit::{SourceProbe, TestSink, TestSource};
use weir_streams::{
    ArgumentError, DelayOverflowStrategy, ErrorKind, Flow, RestartSettings, RestartSource,
    StreamError,
};
use weir_tests::clocked::Rig;
use weir_tests::{PATIENCE, QUIET, clocked_stream_system, eventually, shutdown};

const fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Fail upstream; downstream, which has no demand, gets that failure at
/// once and nothing before it.
fn fails_at_once<O: Send + std::fmt::Debug + 'static>(rig: &mut Rig<u32, O>) {
    rig.up.send_error(StreamError::msg("boom"));
    let error = rig.down.expect_error();
    assert!(
        matches!(error.kind(), ErrorKind::Message(m) if m == "boom"),
        "{error:?}"
    );
}

// ---- failure edges ----

#[test]
fn batch_drops_its_pending_batch_and_fails_at_once() {
    let flow = Flow::new().batch(3, |x: u32| x, |a, x| a + x).unwrap();
    let mut rig = Rig::new("batch-fail", flow);
    rig.send([1, 2]);
    assert_eq!(
        rig.requests(),
        3,
        "both taken into the batch, the next asked"
    );
    fails_at_once(&mut rig);
    rig.shutdown();
}

#[test]
fn batch_weighted_fails_at_once_with_a_full_batch_held() {
    let flow = Flow::new()
        .batch_weighted(
            5,
            |x: &u32| u64::from(*x),
            |x: u32| vec![x],
            |mut v, x| {
                v.push(x);
                v
            },
        )
        .unwrap();
    let mut rig = Rig::new("batch-weighted-fail", flow);
    rig.send([2, 3, 4]); // [2, 3] is full, 4 waits for room
    rig.down.wait_idle();
    fails_at_once(&mut rig);
    rig.shutdown();
}

#[test]
fn conflate_with_seed_seeds_a_new_type_and_fails_at_once() {
    let flow = Flow::new().conflate_with_seed(
        |x: u32| vec![x],
        |mut v: Vec<u32>, x| {
            v.push(x);
            v
        },
    );
    let mut rig = Rig::new("conflate-seed", flow);
    rig.send([1, 2, 3]);
    rig.down.wait_idle();
    rig.down.request(1);
    assert_eq!(rig.down.expect_next(), [1, 2, 3]);
    rig.send([4, 5]);
    assert_eq!(rig.requests(), 6, "never back-pressures");
    fails_at_once(&mut rig);
    rig.shutdown();
}

#[test]
fn conflate_fails_at_once() {
    let mut rig = Rig::new("conflate-fail", Flow::new().conflate(|a: u32, x| a + x));
    rig.send([1, 2]);
    rig.down.wait_idle();
    fails_at_once(&mut rig);
    rig.shutdown();
}

#[test]
fn expand_fails_at_once_while_it_holds_an_element() {
    let flow = Flow::new().expand(|x: u32| std::iter::repeat(x));
    let mut rig = Rig::new("expand-fail", flow);
    rig.send([1]);
    rig.down.request(2);
    assert_eq!(rig.down.expect_next_n(2), [1, 1]);
    fails_at_once(&mut rig);
    rig.shutdown();
}

#[test]
fn extrapolate_fails_at_once_before_its_element_went_out() {
    let flow = Flow::new().extrapolate(|x: &u32| std::iter::repeat(x + 100));
    let mut rig = Rig::new("extrapolate-fail", flow);
    rig.send([1]);
    rig.down.wait_idle();
    fails_at_once(&mut rig);
    rig.shutdown();
}

#[test]
fn initial_delay_fails_at_once_during_the_delay() {
    let mut rig = Rig::new("initial-delay-fail", Flow::new().initial_delay(ms(50)));
    rig.advance(ms(10));
    fails_at_once(&mut rig);
    rig.shutdown();
}

#[test]
fn take_within_fails_at_once_inside_its_window() {
    let mut rig = Rig::new("take-within-fail", Flow::new().take_within(ms(100)));
    rig.down.request(1);
    rig.send([1]);
    assert_eq!(rig.down.expect_next(), 1);
    rig.advance(ms(50));
    fails_at_once(&mut rig);
    rig.shutdown();
}

#[test]
fn drop_within_fails_at_once_inside_and_after_its_window() {
    let mut rig = Rig::new("drop-within-fail", Flow::new().drop_within(ms(100)));
    rig.down.request(1);
    rig.send([1]); // dropped
    rig.advance(ms(50));
    fails_at_once(&mut rig);
    rig.shutdown();

    let mut rig = Rig::new("drop-within-fail-late", Flow::new().drop_within(ms(100)));
    rig.advance(ms(100));
    fails_at_once(&mut rig);
    rig.shutdown();
}

#[test]
fn keep_alive_fails_at_once_with_an_injection_due() {
    let mut rig = Rig::new("keep-alive-fail", Flow::new().keep_alive(ms(100), || 0));
    rig.advance(ms(100)); // an injection is due, but nobody asked
    fails_at_once(&mut rig);
    rig.shutdown();
}

#[test]
fn limit_and_limit_weighted_pass_upstream_failure() {
    for flow in [
        Flow::<u32>::new().limit(3),
        Flow::new().limit_weighted(10, |x| u64::from(*x)),
    ] {
        let mut rig = Rig::new("limit-fail", flow);
        rig.down.request(1);
        rig.send([2]);
        assert_eq!(rig.down.expect_next(), 2);
        fails_at_once(&mut rig);
        rig.shutdown();
    }
}

// ---- back-pressure edges ----

/// No demand, no pull; one pull per demand.
fn pulls_only_on_demand(rig: &mut Rig<u32, u32>, element: u32) {
    assert_eq!(rig.requests(), 0, "no demand, no pull");
    rig.down.request(1);
    assert_eq!(rig.requests(), 1);
    rig.send([element]);
    assert_eq!(rig.down.expect_next(), element);
    assert_eq!(rig.requests(), 0, "one pull per demand");
}

#[test]
fn limit_and_limit_weighted_pull_only_on_demand() {
    for flow in [
        Flow::<u32>::new().limit(3),
        Flow::new().limit_weighted(10, |x| u64::from(*x)),
    ] {
        let mut rig = Rig::new("limit-bp", flow);
        pulls_only_on_demand(&mut rig, 2);
        pulls_only_on_demand(&mut rig, 3);
        rig.up.send_complete();
        rig.down.expect_complete();
        rig.shutdown();
    }
}

#[test]
fn take_within_pulls_only_on_demand() {
    let mut rig = Rig::new("take-within-bp", Flow::new().take_within(ms(100)));
    pulls_only_on_demand(&mut rig, 1);
    rig.advance(ms(50));
    assert_eq!(rig.requests(), 0, "time alone pulls nothing");
    pulls_only_on_demand(&mut rig, 2);
    rig.shutdown();
}

#[test]
fn drop_within_replaces_a_dropped_element_by_a_pull_and_no_more() {
    let mut rig = Rig::new("drop-within-bp", Flow::new().drop_within(ms(100)));
    assert_eq!(rig.requests(), 0, "no demand, no pull");
    rig.down.request(1);
    assert_eq!(rig.requests(), 1);
    rig.send([1]);
    assert_eq!(rig.requests(), 1, "the dropped element is replaced");
    rig.advance(ms(100));
    assert_eq!(rig.requests(), 0, "time alone pulls nothing");
    rig.send([2]);
    assert_eq!(rig.down.expect_next(), 2);
    assert_eq!(rig.requests(), 0, "one pull per demand");
    pulls_only_on_demand(&mut rig, 3);
    rig.shutdown();
}

/// Each run of the wrapped source is a source probe, handed to the test.
#[test]
fn restart_source_pulls_each_run_only_on_outer_demand() {
    let (system, mat, clock) = clocked_stream_system("restart-bp");
    let (runs_in, runs) = channel::<SourceProbe<u32>>();
    let runs_in = Arc::new(Mutex::new(runs_in));
    let settings = RestartSettings::new(ms(100), ms(100), 0.0).unwrap();
    for only_failures in [false, true] {
        let runs_in = Arc::clone(&runs_in);
        let factory = move || {
            let runs_in = Arc::clone(&runs_in);
            TestSource::probe::<u32>().map_materialized_value(move |probe| {
                runs_in.lock().unwrap().send(probe).unwrap();
            })
        };
        let source = if only_failures {
            RestartSource::on_failures_with_backoff(settings, factory)
        } else {
            RestartSource::with_backoff(settings, factory)
        };
        let (restarts, mut down) = source.to_mat(TestSink::probe(), Keep::both).run(&mat);
        let mut run = runs.recv_timeout(PATIENCE).unwrap();
        // Nothing asked of the run while the outer source has no demand.
        run.expect_no_signal(QUIET);
        down.request(1);
        assert_eq!(run.expect_request(), 1);
        run.send_next(1);
        assert_eq!(down.expect_next(), 1);
        run.expect_no_signal(QUIET);
        // A new run after a restart is not asked either until there is
        // demand; then it is asked once per demand.
        run.send_error(StreamError::msg("boom"));
        assert!(eventually(PATIENCE, || restarts.count() == 1));
        clock.advance(ms(100));
        let mut run = runs.recv_timeout(PATIENCE).unwrap();
        run.expect_no_signal(QUIET);
        down.request(1);
        assert_eq!(run.expect_request(), 1);
        run.send_next(2);
        assert_eq!(down.expect_next(), 2);
        run.expect_no_signal(QUIET);
        down.cancel();
        run.expect_cancellation();
    }
    shutdown(&system);
}

// ---- zero and huge durations ----

/// A year: far beyond any window below but `Duration::MAX`, which the
/// clock cannot reach (it saturates at a far future).
const YEAR: Duration = Duration::from_secs(86_400 * 365);

/// `flow` over 1, 2, 3 from a source that pushes as soon as asked, fused
/// with it in one island: a stage that waits for its own timer message
/// sees every element first.
fn fused_run(name: &str, flow: Flow<u32, u32>) -> Result<Vec<u32>, StreamError> {
    let (system, mat, _clock) = clocked_stream_system(name);
    let got = Source::range(1u32..=3)
        .via(flow)
        .run_with(Sink::collect(), &mat)
        .wait();
    shutdown(&system);
    got
}

#[test]
fn drop_within_zero_drops_nothing() {
    let got = fused_run("drop-within-zero", Flow::new().drop_within(Duration::ZERO));
    assert_eq!(got, Ok(vec![1, 2, 3]));
    let mut rig = Rig::new("drop-within-zero", Flow::new().drop_within(Duration::ZERO));
    rig.down.request(10);
    rig.send([1, 2]);
    assert_eq!(rig.down.expect_next_n(2), [1, 2]);
    rig.up.send_complete();
    rig.down.expect_complete();
    rig.shutdown();
}

#[test]
fn take_within_zero_takes_nothing() {
    let got = fused_run("take-within-zero", Flow::new().take_within(Duration::ZERO));
    assert_eq!(got, Ok(vec![]));
    let mut rig = Rig::new(
        "take-within-zero",
        Flow::<u32>::new().take_within(Duration::ZERO),
    );
    rig.down.expect_complete();
    rig.up.expect_cancellation();
    rig.shutdown();
}

#[test]
fn initial_delay_zero_does_not_wait() {
    let got = fused_run(
        "initial-delay-zero",
        Flow::new().initial_delay(Duration::ZERO),
    );
    assert_eq!(got, Ok(vec![1, 2, 3]));
}

#[test]
fn the_windows_are_exact_at_their_end_without_waiting_for_their_timer() {
    // The clock, not the order of the timer's message among the elements,
    // decides: at the end of the window, drop_within passes and
    // take_within takes no more.
    let (system, mat, clock) = clocked_stream_system("windows-exact");
    for (flow, expected) in [
        (Flow::new().drop_within(ms(100)), vec![2]),
        (Flow::new().take_within(ms(100)), vec![1]),
    ] {
        let (mut up, mut down) = TestSource::probe::<u32>()
            .via(flow)
            .to_mat(TestSink::probe(), Keep::both)
            .run(&mat);
        down.request(10);
        down.wait_idle();
        up.send_next(1);
        down.wait_idle();
        clock.advance(ms(100));
        up.send_next(2);
        up.send_complete();
        let mut got = Vec::new();
        for _ in 0..expected.len() {
            got.push(down.expect_next());
        }
        assert_eq!(got, expected);
        down.expect_complete();
    }
    shutdown(&system);
}

#[test]
fn the_windows_take_duration_max_as_never() {
    let mut rig = Rig::new("drop-within-max", Flow::new().drop_within(Duration::MAX));
    rig.down.request(10);
    rig.send([1, 2]);
    rig.advance(YEAR);
    rig.send([3]);
    rig.expect_nothing();
    rig.up.send_complete();
    rig.down.expect_complete();
    rig.shutdown();

    let mut rig = Rig::new("take-within-max", Flow::new().take_within(Duration::MAX));
    rig.down.request(10);
    rig.advance(YEAR);
    rig.send([1, 2]);
    assert_eq!(rig.down.expect_next_n(2), [1, 2]);
    rig.up.send_complete();
    rig.down.expect_complete();
    rig.shutdown();

    let mut rig = Rig::new(
        "initial-delay-max",
        Flow::<u32>::new().initial_delay(Duration::MAX),
    );
    rig.down.request(10);
    rig.advance(YEAR);
    assert_eq!(rig.requests(), 0, "still waiting");
    rig.shutdown();
}

#[test]
fn tick_refuses_a_zero_interval() {
    // A zero interval ticked once and never again: refused at the call.
    assert_eq!(
        Source::tick(ms(1), Duration::ZERO, 1u8).err(),
        Some(ArgumentError::Zero {
            argument: "interval"
        })
    );
}

/// A zero initial wait ticks at once: the timer is due as the stage
/// starts. A tick with no demand is dropped (as in Pekko), so a probe that
/// asks only after the run started could miss it, depending on whether its
/// request reached the island before the timer's message (CI saw both).
/// A buffer fused after the tick asks as it starts, in the same turn, so
/// the first tick is kept; `Duration::MAX` as the interval never ticks
/// again.
#[test]
fn tick_takes_a_zero_initial_wait_and_a_huge_interval() {
    let (system, mat, clock) = clocked_stream_system("tick-edges");
    let (_handle, mut down) = Source::tick(Duration::ZERO, Duration::MAX, 7u8)
        .unwrap()
        .buffer(1, OverflowStrategy::Backpressure)
        .unwrap()
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    down.request(2);
    assert_eq!(down.expect_next(), 7);
    down.wait_idle();
    clock.advance(YEAR);
    down.wait_idle();
    down.expect_no_message(Duration::ZERO);
    down.cancel();
    shutdown(&system);
}

#[test]
fn delay_and_grouped_within_take_zero_and_duration_max() {
    let got = fused_run(
        "delay-zero",
        Flow::new().delay(Duration::ZERO, DelayOverflowStrategy::Backpressure),
    );
    assert_eq!(got, Ok(vec![1, 2, 3]));

    let flow = Flow::new().delay(Duration::MAX, DelayOverflowStrategy::Backpressure);
    let mut rig = Rig::new("delay-max", flow);
    rig.down.request(10);
    rig.send([1]);
    rig.advance(YEAR);
    rig.expect_nothing();
    rig.shutdown();

    let flow = Flow::new().grouped_within(2, Duration::MAX).unwrap();
    let mut rig = Rig::new("grouped-within-max", flow);
    rig.down.request(10);
    rig.send([1, 2, 3]);
    assert_eq!(rig.down.expect_next(), [1, 2]);
    rig.advance(YEAR);
    rig.expect_nothing();
    rig.up.send_complete();
    assert_eq!(rig.down.expect_next(), [3]);
    rig.down.expect_complete();
    rig.shutdown();
}
