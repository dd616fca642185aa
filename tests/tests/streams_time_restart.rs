//! Resilience: `RestartSource` / `RestartSink` / `RestartFlow` on a test clock (backoff schedule, reset, budget, cancel, back-pressure) and `recover_with_retries`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use weir_streams::prelude::*;
use weir_streams::testkit::{SinkProbe, TestSink, TestSource};
use weir_streams::{
    ArgumentError, ErrorKind, RestartFlow, RestartSettings, RestartSink, RestartSource, Restarts,
    StreamError,
};
use weir_tests::{PATIENCE, clocked_stream_system, eventually, shutdown};

const fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Runs a restarting source whose every run emits its run number and
/// then ends as `end` says; returns the probe, the restart count and the
/// number of runs started.
fn restarting(
    settings: RestartSettings,
    only_failures: bool,
    end: fn(u32) -> Option<StreamError>,
    mat: &Materializer,
) -> (SinkProbe<u32>, Restarts, Arc<AtomicU32>) {
    let runs = Arc::new(AtomicU32::new(0));
    let counter = runs.clone();
    let factory = move || {
        let run = counter.fetch_add(1, Ordering::SeqCst) + 1;
        match end(run) {
            None => Source::single(run),
            // The run number, then the failure.
            Some(error) => Source::from_iter([Some(run), None])
                .map_async(1, move |x| {
                    std::future::ready(x.ok_or_else(|| error.clone()))
                })
                .unwrap(),
        }
    };
    let source = if only_failures {
        RestartSource::on_failures_with_backoff(settings, factory)
    } else {
        RestartSource::with_backoff(settings, factory)
    };
    let (restarts, probe) = source.to_mat(TestSink::probe(), Keep::both).run(mat);
    (probe, restarts, runs)
}

fn settings(min: u64, max: u64) -> RestartSettings {
    RestartSettings::new(ms(min), ms(max), 0.0)
        .unwrap()
        .with_max_restarts(u64::MAX, Duration::from_secs(3600))
}

/// Waits until the `n`-th restart's backoff has begun (its timer is armed).
fn backoff_begun(restarts: &Restarts, n: u64) {
    assert!(
        eventually(PATIENCE, || restarts.count() == n),
        "restart {n} begun: {}",
        restarts.count()
    );
}

#[test]
fn the_backoff_doubles_up_to_its_cap() {
    let (system, mat, clock) = clocked_stream_system("restart-schedule");
    let (mut down, restarts, runs) = restarting(settings(100, 400), false, |_| None, &mat);
    down.request(100);
    assert_eq!(down.expect_next(), 1);
    // Waits of 100, 200, 400, 400 ms before runs 2..=5.
    for (run, wait) in [(2, 100), (3, 200), (4, 400), (5, 400)] {
        backoff_begun(&restarts, u64::from(run) - 1);
        clock.advance(ms(wait - 1));
        assert_eq!(runs.load(Ordering::SeqCst), run - 1, "not before {wait} ms");
        clock.advance(ms(1));
        assert_eq!(down.expect_next(), run);
    }
    shutdown(&system);
}

#[test]
fn the_backoff_resets_after_a_run_that_lasted_the_window() {
    let (system, mat, clock) = clocked_stream_system("restart-reset");
    let settings = RestartSettings::new(ms(100), ms(10_000), 0.0)
        .unwrap()
        .with_max_restarts(u64::MAX, ms(150));
    // Each run emits its number and completes, but run 4 is a probe the
    // test drives, so that it lasts as long as the test says.
    let (tx, rx) = std::sync::mpsc::channel();
    let tx = std::sync::Mutex::new(tx);
    let runs = Arc::new(AtomicU32::new(0));
    let counter = runs.clone();
    let source = RestartSource::with_backoff(settings, move || {
        let run = counter.fetch_add(1, Ordering::SeqCst) + 1;
        if run == 4 {
            let tx = tx.lock().unwrap().clone();
            TestSource::probe::<u32>().map_materialized_value(move |p| tx.send(p).unwrap())
        } else {
            Source::single(run)
        }
    });
    let (restarts, mut down) = source.to_mat(TestSink::probe(), Keep::both).run(&mat);
    down.request(100);
    assert_eq!(down.expect_next(), 1);
    // Runs that end as they start never reset the count, however long the
    // backoff between them: 100, 200, 400. Run 4 lasts 200 ms, past the
    // 150 ms window, so the wait before run 5 is back to 100, then 200.
    for (run, wait) in [(2, 100), (3, 200), (4, 400), (5, 100), (6, 200)] {
        backoff_begun(&restarts, u64::from(run) - 1);
        clock.advance(ms(wait - 1));
        down.wait_idle(); // the restart's timer, had it fired, is handled
        assert_eq!(runs.load(Ordering::SeqCst), run - 1, "not before {wait} ms");
        clock.advance(ms(1));
        down.wait_idle();
        assert_eq!(runs.load(Ordering::SeqCst), run, "after {wait} ms");
        if run == 4 {
            let mut up = rx.recv_timeout(PATIENCE).unwrap();
            up.send_next(4);
            assert_eq!(down.expect_next(), 4);
            clock.advance(ms(200));
            up.send_complete();
        } else {
            assert_eq!(down.expect_next(), run);
        }
    }
    shutdown(&system);
}

/// Settings whose window is no longer than the backoff (the default
/// window is `min_backoff`): the window is counted from each run's start,
/// so runs that fail at once still spend the budget.
fn short_window(max_restarts: u64) -> RestartSettings {
    RestartSettings::new(ms(100), ms(100), 0.0)
        .unwrap()
        .with_max_restarts(max_restarts, ms(50))
}

#[test]
fn max_restarts_ends_the_source_when_the_window_is_shorter_than_the_backoff() {
    let (system, mat, clock) = clocked_stream_system("restart-budget-short");
    let (mut down, restarts, runs) = restarting(
        short_window(2),
        false,
        |run| Some(StreamError::msg(format!("run {run}"))),
        &mat,
    );
    down.request(100);
    assert_eq!(down.expect_next(), 1);
    for n in 1..=2 {
        backoff_begun(&restarts, n);
        clock.advance(ms(100));
        assert_eq!(down.expect_next(), n as u32 + 1);
    }
    let error = down.expect_error();
    assert!(
        matches!(error.kind(), ErrorKind::Message(m) if m == "run 3"),
        "{error:?}"
    );
    clock.advance(ms(1000));
    assert_eq!(runs.load(Ordering::SeqCst), 3);
    assert_eq!(restarts.count(), 2);
    shutdown(&system);
}

#[test]
fn max_restarts_ends_the_sink_when_the_window_is_shorter_than_the_backoff() {
    let (system, mat, clock) = clocked_stream_system("restart-sink-short");
    let copies = Arc::new(AtomicU32::new(0));
    let counter = copies.clone();
    // Each copy takes one element and cancels.
    let sink = RestartSink::with_backoff(short_window(1), move || {
        counter.fetch_add(1, Ordering::SeqCst);
        Flow::new().take(1).to(Sink::ignore())
    });
    let (mut up, restarts) = TestSource::probe::<u32>()
        .to_mat(sink, Keep::both)
        .run(&mat);
    up.expect_request();
    up.send_next(1);
    backoff_begun(&restarts, 1);
    clock.advance(ms(100));
    up.expect_request();
    up.send_next(2);
    up.expect_cancellation();
    clock.advance(ms(1000));
    assert_eq!(copies.load(Ordering::SeqCst), 2);
    assert_eq!(restarts.count(), 1);
    shutdown(&system);
}

#[test]
fn max_restarts_ends_the_flow_when_the_window_is_shorter_than_the_backoff() {
    let (system, mat, clock) = clocked_stream_system("restart-flow-short");
    // Each copy passes one element, then completes.
    let flow = RestartFlow::with_backoff(short_window(1), || Flow::new().take(1));
    let ((mut up, restarts), mut down) = TestSource::probe::<u32>()
        .via_mat(flow, Keep::both)
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    down.request(10);
    up.send_next(1);
    assert_eq!(down.expect_next(), 1);
    backoff_begun(&restarts, 1);
    clock.advance(ms(100));
    up.send_next(2);
    assert_eq!(down.expect_next(), 2);
    down.expect_complete();
    up.expect_cancellation();
    assert_eq!(restarts.count(), 1);
    shutdown(&system);
}

#[test]
fn max_restarts_ends_the_outer_source_as_the_last_run_ended() {
    let (system, mat, clock) = clocked_stream_system("restart-budget");
    let settings = RestartSettings::new(ms(10), ms(10), 0.0)
        .unwrap()
        .with_max_restarts(2, Duration::from_secs(60));
    let (mut down, restarts, runs) = restarting(
        settings,
        false,
        |run| Some(StreamError::msg(format!("run {run}"))),
        &mat,
    );
    down.request(100);
    assert_eq!(down.expect_next(), 1);
    for n in 1..=2 {
        backoff_begun(&restarts, n);
        clock.advance(ms(10));
        assert_eq!(down.expect_next(), n as u32 + 1);
    }
    let error = down.expect_error();
    assert!(
        matches!(error.kind(), ErrorKind::Message(m) if m == "run 3"),
        "{error:?}"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 3);
    shutdown(&system);
}

#[test]
fn on_failures_only_a_completion_completes() {
    let (system, mat, clock) = clocked_stream_system("restart-failures");
    let fail_first = |run: u32| (run == 1).then(|| StreamError::msg("first"));
    let (mut down, restarts, runs) = restarting(settings(50, 50), true, fail_first, &mat);
    down.request(100);
    assert_eq!(down.expect_next(), 1);
    backoff_begun(&restarts, 1);
    clock.advance(ms(50));
    assert_eq!(down.expect_next(), 2);
    down.expect_complete();
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    shutdown(&system);
}

#[test]
fn cancelling_cancels_the_running_copy_and_restarts_nothing() {
    let (system, mat, clock) = clocked_stream_system("restart-cancel");
    let (tx, rx) = std::sync::mpsc::channel();
    let tx = std::sync::Mutex::new(tx);
    let runs = Arc::new(AtomicU32::new(0));
    let counter = runs.clone();
    let mut down = RestartSource::with_backoff(settings(10, 10), move || {
        counter.fetch_add(1, Ordering::SeqCst);
        let tx = tx.lock().unwrap().clone();
        Source::repeat(7u32)
            .via_mat(Flow::watch_termination(), Keep::right)
            .map_materialized_value(move |watched| tx.send(watched).unwrap())
    })
    .to_mat(TestSink::probe(), Keep::right)
    .run(&mat);
    down.request(1);
    assert_eq!(down.expect_next(), 7);
    down.cancel();
    let watched = rx.recv_timeout(PATIENCE).unwrap();
    assert_eq!(watched.wait(), Ok(()), "the running copy was cancelled");
    clock.advance(ms(1000));
    assert_eq!(runs.load(Ordering::SeqCst), 1, "and not restarted");
    shutdown(&system);
}

#[test]
fn bad_settings_are_typed_errors() {
    assert!(matches!(
        RestartSettings::new(ms(10), ms(5), 0.0),
        Err(ArgumentError::Invalid {
            argument: "max_backoff",
            ..
        })
    ));
    assert!(matches!(
        RestartSettings::new(ms(1), ms(5), -1.0),
        Err(ArgumentError::Invalid {
            argument: "random_factor",
            ..
        })
    ));
    for factor in [f64::INFINITY, f64::NAN] {
        assert!(matches!(
            RestartSettings::new(ms(1), ms(5), factor),
            Err(ArgumentError::Invalid {
                argument: "random_factor",
                ..
            })
        ));
    }
    // Extremes saturate at max_backoff instead of overflowing.
    let extreme = RestartSettings::new(Duration::ZERO, Duration::MAX, 1e300).unwrap();
    assert_eq!(extreme.backoff(0, 0.5), Duration::ZERO);
    assert_eq!(extreme.backoff(u32::MAX, 0.5), Duration::ZERO);
    let wide = RestartSettings::new(ms(1), Duration::MAX, 1e300).unwrap();
    assert_eq!(wide.backoff(u32::MAX, 0.0), Duration::MAX);
    assert_eq!(wide.backoff(3, 0.5), Duration::MAX);
    let huge = RestartSettings::new(Duration::MAX, Duration::MAX, 0.0).unwrap();
    assert_eq!(huge.backoff(40, 0.0), Duration::MAX);
    let jittered = RestartSettings::new(ms(100), ms(100), 0.5).unwrap();
    assert_eq!(jittered.backoff(0, 0.0), ms(100));
    let most = jittered.backoff(0, 0.999_999);
    assert!(most > ms(149) && most <= ms(150), "{most:?}");
}

/// A source that emits `xs` and then fails with `what`.
fn failing(xs: Vec<u32>, what: &'static str) -> Source<u32> {
    let n = xs.len();
    Source::from_iter(xs.into_iter().map(Some).chain([None]))
        .map_async(1, move |x| {
            std::future::ready(x.ok_or_else(|| StreamError::msg(what)))
        })
        .unwrap()
        .take(n as u64 + 1)
}

#[test]
fn recover_with_retries_switches_to_the_fallback() {
    let (system, mat, _clock) = clocked_stream_system("recover");
    let got = failing(vec![1, 2], "first")
        .recover_with_retries(3, |_| Some(Source::from_iter(vec![10u32, 11])))
        .run_with(Sink::collect(), &mat);
    assert_eq!(got.wait(), Ok(vec![1, 2, 10, 11]));
    shutdown(&system);
}

#[test]
fn recover_with_retries_gives_up_after_its_attempts() {
    let (system, mat, _clock) = clocked_stream_system("recover-budget");
    let tries = Arc::new(AtomicU32::new(0));
    let counter = tries.clone();
    let got = failing(vec![1], "upstream")
        .recover_with_retries(2, move |_| {
            let n = counter.fetch_add(1, Ordering::SeqCst);
            Some(failing(
                vec![100 + n],
                if n == 0 { "fallback 0" } else { "fallback 1" },
            ))
        })
        .run_with(Sink::collect(), &mat);
    let error = got.wait().unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::Message(m) if m == "fallback 1"),
        "{error:?}"
    );
    assert_eq!(tries.load(Ordering::SeqCst), 2);
    shutdown(&system);
}

#[test]
fn recover_with_retries_fails_when_the_function_declines_or_attempts_are_zero() {
    let (system, mat, _clock) = clocked_stream_system("recover-none");
    for (attempts, offer) in [(3, false), (0, true)] {
        let got = failing(vec![1], "kept")
            .recover_with_retries(attempts, move |_| offer.then(|| Source::single(9u32)))
            .run_with(Sink::collect(), &mat);
        let error = got.wait().unwrap_err();
        assert!(matches!(error.kind(), ErrorKind::Message(m) if m == "kept"));
    }
    shutdown(&system);
}

#[test]
fn recover_with_retries_backpressures_the_fallback_and_cancels_it() {
    let (system, mat, _clock) = clocked_stream_system("recover-bp");
    let (tx, rx) = std::sync::mpsc::channel();
    let tx = Arc::new(std::sync::Mutex::new(tx));
    let mut down = failing(vec![], "gone")
        .recover_with_retries(1, move |_| {
            let tx = tx.lock().unwrap().clone();
            Some(
                Source::repeat(5u32)
                    .via_mat(Flow::watch_termination(), Keep::right)
                    .map_materialized_value(move |w| tx.send(w).unwrap()),
            )
        })
        .to_mat(TestSink::probe(), Keep::right)
        .run(&mat);
    down.request(2);
    assert_eq!(down.expect_next_n(2), [5, 5]);
    down.wait_idle();
    down.expect_no_message(Duration::ZERO);
    down.cancel();
    let watched = rx.recv_timeout(PATIENCE).unwrap();
    assert_eq!(watched.wait(), Ok(()), "the fallback was cancelled");
    shutdown(&system);
}

#[test]
fn restart_sink_runs_a_new_copy_after_the_backoff_and_backpressures_meanwhile() {
    let (system, mat, clock) = clocked_stream_system("restart-sink");
    let (tx, rx) = std::sync::mpsc::channel();
    let tx = Arc::new(std::sync::Mutex::new(tx));
    let copies = Arc::new(AtomicU32::new(0));
    let counter = copies.clone();
    let settings = RestartSettings::new(ms(100), ms(100), 0.0)
        .unwrap()
        .with_max_restarts(1, Duration::from_secs(3600));
    // Each copy takes one element, records it with its copy number, and cancels.
    let sink = RestartSink::with_backoff(settings, move || {
        let copy = counter.fetch_add(1, Ordering::SeqCst) + 1;
        let tx = tx.lock().unwrap().clone();
        Flow::new()
            .take(1)
            .to(Sink::for_each(move |x: u32| tx.send((copy, x)).unwrap()))
    });
    let (mut up, restarts) = TestSource::probe::<u32>()
        .to_mat(sink, Keep::both)
        .run(&mat);
    up.expect_request();
    up.send_next(1);
    assert_eq!(rx.recv_timeout(PATIENCE), Ok((1, 1)));
    backoff_begun(&restarts, 1);
    clock.advance(ms(99));
    assert_eq!(up.take_requests(), 0, "back-pressure during the backoff");
    assert_eq!(copies.load(Ordering::SeqCst), 1);
    clock.advance(ms(1));
    up.expect_request();
    up.send_next(2);
    assert_eq!(rx.recv_timeout(PATIENCE), Ok((2, 2)));
    // The budget (one restart) is spent: the outer sink cancels upstream.
    up.expect_cancellation();
    clock.advance(ms(1000));
    assert_eq!(copies.load(Ordering::SeqCst), 2);
    shutdown(&system);
}

#[test]
fn restart_sink_passes_completion_to_the_running_copy() {
    let (system, mat, _clock) = clocked_stream_system("restart-sink-complete");
    let (tx, rx) = std::sync::mpsc::channel();
    let tx = Arc::new(std::sync::Mutex::new(tx));
    let sink = RestartSink::with_backoff(settings(10, 10), move || {
        let tx = tx.lock().unwrap().clone();
        Sink::collect().map_materialized_value(move |all: weir_streams::Completion<Vec<u32>>| {
            tx.send(all).unwrap()
        })
    });
    Source::range(0u32..4).run_with(sink, &mat);
    let all = rx.recv_timeout(PATIENCE).unwrap();
    assert_eq!(all.wait(), Ok(vec![0, 1, 2, 3]));
    shutdown(&system);
}

#[test]
fn restart_flow_runs_a_new_copy_after_the_backoff_and_ends_when_the_budget_is_spent() {
    let (system, mat, clock) = clocked_stream_system("restart-flow");
    let settings = RestartSettings::new(ms(100), ms(100), 0.0)
        .unwrap()
        .with_max_restarts(1, Duration::from_secs(3600));
    // Each copy multiplies two elements by ten, then completes.
    let flow = RestartFlow::with_backoff(settings, || Flow::new().take(2).map(|x: u32| x * 10));
    let ((mut up, restarts), mut down) = TestSource::probe::<u32>()
        .via_mat(flow, Keep::both)
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    down.request(10);
    for x in 1..=3 {
        up.send_next(x);
    }
    assert_eq!(down.expect_next_n(2), [10, 20]);
    backoff_begun(&restarts, 1);
    clock.advance(ms(99));
    down.wait_idle();
    down.expect_no_message(Duration::ZERO); // 3 waits for the next copy
    clock.advance(ms(1));
    assert_eq!(down.expect_next(), 30);
    up.send_next(4);
    assert_eq!(down.expect_next(), 40);
    // The second copy completed and no restart is left: the flow completes.
    down.expect_complete();
    up.expect_cancellation();
    shutdown(&system);
}

#[test]
fn restart_flow_on_failures_restarts_a_failed_copy_and_completes_with_a_completed_one() {
    let (system, mat, clock) = clocked_stream_system("restart-flow-failures");
    let copies = Arc::new(AtomicU32::new(0));
    let counter = copies.clone();
    // The first copy fails on its first element; the second passes one and completes.
    let flow = RestartFlow::on_failures_with_backoff(settings(50, 50), move || {
        let copy = counter.fetch_add(1, Ordering::SeqCst) + 1;
        Flow::new()
            .map_async(1, move |x: u32| {
                std::future::ready(if copy == 1 {
                    Err(StreamError::msg("first"))
                } else {
                    Ok(x)
                })
            })
            .unwrap()
            .take(1)
    });
    let ((mut up, restarts), mut down) = TestSource::probe::<u32>()
        .via_mat(flow, Keep::both)
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    down.request(10);
    up.send_next(1); // lost with the failed copy
    backoff_begun(&restarts, 1);
    up.send_next(2);
    clock.advance(ms(50));
    assert_eq!(down.expect_next(), 2);
    down.expect_complete();
    assert_eq!(copies.load(Ordering::SeqCst), 2);
    shutdown(&system);
}
