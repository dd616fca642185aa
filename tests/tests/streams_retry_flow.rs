//! `RetryFlow::with_backoff`: per-element retries with exponential backoff
//! on the test clock; one element in the wrapped flow at a time; the last
//! output after `max_retries`; completion, failure and cancellation while
//! a retry waits. Each test runs fused and unfused.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use weir_streams::prelude::*;
use weir_streams::testkit::{SinkProbe, SourceProbe, TestSink, TestSource};
use weir_streams::{ArgumentError, RetryFlow};
use weir_tests::{clocked_system, shutdown};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

const QUIET: Duration = Duration::from_millis(30);

/// An attempt of element `x`: fails (`Err`) while `attempt < x`.
type Attempt = (u32, u32);

/// The wrapped "service": element `x` succeeds on its attempt number `x`;
/// counts every call.
fn service(calls: &Arc<AtomicUsize>) -> Flow<Attempt, Result<u32, Attempt>> {
    let calls = calls.clone();
    Flow::new().map(move |(x, attempt): Attempt| {
        calls.fetch_add(1, Ordering::SeqCst);
        if attempt < x {
            Err((x, attempt))
        } else {
            Ok(x * 10)
        }
    })
}

fn retry_next(_: &Attempt, out: &Result<u32, Attempt>) -> Option<Attempt> {
    out.as_ref().err().map(|&(x, attempt)| (x, attempt + 1))
}

fn materializers(system: &weir_actor::ActorSystem) -> [Materializer; 2] {
    [
        Materializer::new(system),
        Materializer::builder(system).fusion(false).build(),
    ]
}

fn probed(
    mat: &Materializer,
    max_retries: u32,
    calls: &Arc<AtomicUsize>,
) -> (SourceProbe<Attempt>, SinkProbe<Result<u32, Attempt>>) {
    let retried = RetryFlow::with_backoff(
        ms(100),
        ms(250),
        0.0,
        max_retries,
        service(calls),
        retry_next,
    )
    .unwrap();
    TestSource::probe::<Attempt>()
        .via(retried)
        .to_mat(TestSink::probe(), Keep::both)
        .run(mat)
}

/// Two retries of one element wait 100 ms, then 200 ms (min doubled) on
/// the test clock; the next element is asked for only after the first's
/// final output went out.
#[test]
fn retries_wait_their_backoff_and_one_element_is_in_flight() {
    let (system, clock) = clocked_system("retry-backoff");
    for mat in &materializers(&system) {
        let calls = Arc::new(AtomicUsize::new(0));
        let (mut up, mut down) = probed(mat, 5, &calls);
        down.request(3);
        assert_eq!(up.expect_request(), 1);
        up.send_next((2, 0));
        down.wait_idle();
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        up.expect_no_signal(QUIET);
        clock.advance(ms(99));
        down.wait_idle();
        assert_eq!(calls.load(Ordering::SeqCst), 1, "still backing off");
        clock.advance(ms(1));
        down.wait_idle();
        assert_eq!(calls.load(Ordering::SeqCst), 2, "the first retry");
        clock.advance(ms(199));
        down.wait_idle();
        assert_eq!(calls.load(Ordering::SeqCst), 2, "the second waits 200 ms");
        clock.advance(ms(1));
        assert_eq!(down.expect_next(), Ok(20));
        assert_eq!(calls.load(Ordering::SeqCst), 3);
        assert_eq!(up.expect_request(), 1, "the next element after the output");
        up.send_next((0, 0));
        assert_eq!(down.expect_next(), Ok(0));
        up.send_complete();
        down.expect_complete();
    }
    shutdown(&system);
}

/// After `max_retries` retries the last output is emitted as it is; the
/// backoff is capped at `max_backoff`.
#[test]
fn the_last_output_goes_out_after_max_retries() {
    let (system, clock) = clocked_system("retry-max");
    for mat in &materializers(&system) {
        let calls = Arc::new(AtomicUsize::new(0));
        let (mut up, mut down) = probed(mat, 3, &calls);
        down.request(1);
        up.expect_request();
        up.send_next((9, 0));
        for wait in [100, 200, 250] {
            down.wait_idle();
            clock.advance(ms(wait));
        }
        assert_eq!(down.expect_next(), Err((9, 3)));
        assert_eq!(calls.load(Ordering::SeqCst), 4, "one try and three retries");
        up.send_complete();
        down.request(1);
        down.expect_complete();
    }
    shutdown(&system);
}

/// Upstream completes while a retry waits: the retry still runs and its
/// output comes before the completion. Downstream cancelling while a
/// retry waits cancels upstream and the retry never runs.
#[test]
fn completion_waits_for_a_pending_retry_and_cancel_stops_it() {
    let (system, clock) = clocked_system("retry-end");
    for mat in &materializers(&system) {
        let calls = Arc::new(AtomicUsize::new(0));
        let (mut up, mut down) = probed(mat, 5, &calls);
        down.request(1);
        up.expect_request();
        up.send_next((1, 0));
        up.send_complete();
        down.wait_idle();
        down.expect_no_message(QUIET);
        clock.advance(ms(100));
        assert_eq!(down.expect_next(), Ok(10));
        down.expect_complete();

        let calls = Arc::new(AtomicUsize::new(0));
        let (mut up, mut down) = probed(mat, 5, &calls);
        down.request(1);
        up.expect_request();
        up.send_next((1, 0));
        down.wait_idle();
        down.cancel();
        up.expect_cancellation();
        clock.advance(ms(1000));
        std::thread::sleep(QUIET);
        assert_eq!(calls.load(Ordering::SeqCst), 1, "no retry after cancel");
    }
    shutdown(&system);
}

/// A failure of the wrapped flow fails the stream; a flow that completes
/// while it owes an output fails it with a message that says why.
#[test]
fn the_wrapped_flows_failure_and_early_end_fail_the_stream() {
    let (system, _clock) = clocked_system("retry-fail");
    for mat in &materializers(&system) {
        let failing = Flow::<u32>::new().map(|x| {
            assert!(x < 3, "three");
            x
        });
        let retried = RetryFlow::with_backoff(ms(1), ms(1), 0.0, 1, failing, |_, _| None).unwrap();
        let got = Source::range(1u32..=5)
            .via(retried)
            .run_with(Sink::collect(), mat);
        assert!(got.wait().is_err());

        // `take(1)` ends the flow with its first output, owing nothing: the
        // retried flow ends with it.
        let short = Flow::<u32>::new().take(1);
        let retried = RetryFlow::with_backoff(ms(1), ms(1), 0.0, 1, short, |_, _| None).unwrap();
        let got = Source::range(1u32..=5)
            .via(retried)
            .run_with(Sink::collect(), mat);
        assert_eq!(got.wait(), Ok(vec![1]), "ends with the flow");

        // `take_while` ends the flow on element 3 without an output for it.
        let owing = Flow::<u32>::new().take_while(|x| *x < 3);
        let retried = RetryFlow::with_backoff(ms(1), ms(1), 0.0, 1, owing, |_, _| None).unwrap();
        let got = Source::range(1u32..=5)
            .via(retried)
            .run_with(Sink::collect(), mat);
        let error = got.wait().unwrap_err();
        assert!(
            error
                .to_string()
                .contains("completed with an element in it"),
            "{error}"
        );
    }
    shutdown(&system);
}

/// The no-retry path (the coordinator keeps its own demand flags): one
/// upstream request per downstream request, each only after the last
/// output went out, and none without demand; also when the wrapped flow
/// sits behind an async boundary, so its pull reaches the coordinator
/// after the element it asks for (the element waits for it).
#[test]
fn the_no_retry_path_asks_upstream_once_per_downstream_request() {
    let (system, _clock) = clocked_system("retry-demand");
    for mat in &materializers(&system) {
        for boundary in [false, true] {
            let inner = Flow::<u32>::new().map(|x| x + 1);
            let inner = if boundary {
                Flow::new().async_boundary().via(inner).async_boundary()
            } else {
                inner
            };
            let retried =
                RetryFlow::with_backoff(ms(1), ms(1), 0.0, 3, inner, |_, _| None).unwrap();
            let (mut up, mut down) = TestSource::probe::<u32>()
                .via(retried)
                .to_mat(TestSink::probe(), Keep::both)
                .run(mat);
            down.wait_idle();
            assert_eq!(up.take_requests(), 0, "no demand, no request");
            down.request(3);
            for x in 0..3 {
                assert_eq!(up.expect_request(), 1, "element {x}");
                up.send_next(x);
                assert_eq!(down.expect_next(), x + 1);
            }
            down.wait_idle();
            assert_eq!(up.take_requests(), 0, "demand spent");
            up.expect_no_signal(QUIET);
            down.request(1);
            assert_eq!(up.expect_request(), 1);
            up.send_next(7);
            assert_eq!(down.expect_next(), 8);
            up.send_complete();
            down.expect_complete();
        }
    }
    shutdown(&system);
}

#[test]
fn bad_backoff_settings_are_refused() {
    let calls = Arc::new(AtomicUsize::new(0));
    let refused = RetryFlow::with_backoff(ms(10), ms(5), 0.0, 1, service(&calls), retry_next);
    assert!(matches!(
        refused.err(),
        Some(ArgumentError::Invalid {
            argument: "max_backoff",
            ..
        })
    ));
    let refused = RetryFlow::with_backoff(ms(1), ms(5), f64::NAN, 1, service(&calls), retry_next);
    assert!(refused.is_err());
}

/// `with_backoff_and_context`: `decide_retry` sees both pairs and picks
/// the next attempt's context; the output leaves with the context of the
/// attempt that produced it, after the backoff on the test clock.
#[test]
fn with_context_retries_carry_the_chosen_context() {
    use weir_streams::{ContextOps, FlowWithContext, SourceWithContext};
    let (system, clock) = clocked_system("retry-context");
    for mat in &materializers(&system) {
        // Element x succeeds once its context (the attempt) reaches x.
        let service = FlowWithContext::<u32, u32>::new()
            .via_tuples(Flow::new().map(|(x, attempt): (u32, u32)| ((x, attempt >= x), attempt)));
        let retried = RetryFlow::with_backoff_and_context(
            ms(100),
            ms(250),
            0.0,
            5,
            service,
            |(x, attempt): &(u32, u32), ((_, ok), _): &((u32, bool), u32)| {
                (!ok).then_some((*x, attempt + 1))
            },
        )
        .unwrap();
        let (mut up, mut down) = SourceWithContext::from_tuples(TestSource::probe::<(u32, u32)>())
            .via(retried)
            .as_source()
            .to_mat(TestSink::probe(), Keep::both)
            .run(mat);
        down.request(2);
        assert_eq!(up.expect_request(), 1);
        up.send_next((1, 0));
        down.wait_idle();
        clock.advance(ms(99));
        down.expect_no_message(QUIET);
        clock.advance(ms(1));
        assert_eq!(down.expect_next(), ((1, true), 1));
        up.expect_request();
        up.send_next((0, 7));
        assert_eq!(
            down.expect_next(),
            ((0, true), 7),
            "no retry: its own context"
        );
        up.send_complete();
        down.expect_complete();
    }
    assert!(
        RetryFlow::with_backoff_and_context(
            ms(10),
            ms(1),
            0.0,
            1,
            FlowWithContext::<u32, u32>::new(),
            |_: &(u32, u32), _: &(u32, u32)| None,
        )
        .is_err()
    );
    shutdown(&system);
}
