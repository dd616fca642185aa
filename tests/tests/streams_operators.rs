//! Flow operators: elements, completion, failure and back-pressure edges of each.

use std::time::Duration;

use weir_streams::prelude::*;
use weir_streams::testkit::{SinkProbe, SourceProbe, TestSink, TestSource};
use weir_streams::{ArgumentError, ErrorKind, Materializer};
use weir_tests::{QUIET, shutdown, stream_system};

/// Probes on both sides of `flow`.
fn probed<I: Send + 'static, O: Send + 'static>(
    flow: Flow<I, O>,
    mat: &Materializer,
) -> (SourceProbe<I>, SinkProbe<O>) {
    TestSource::probe::<I>()
        .via(flow)
        .to_mat(TestSink::probe(), Keep::both)
        .run(mat)
}

fn collect<T: Send + Sync + 'static>(
    source: Source<T>,
    mat: &Materializer,
) -> Result<Vec<T>, StreamError> {
    source.run_with(Sink::collect(), mat).wait()
}

/// Upstream failure reaches downstream unchanged; downstream cancel reaches upstream.
fn check_failure_and_cancel<O: Send + 'static>(flow: Flow<u32, O>, mat: &Materializer) {
    let (mut up, mut down) = probed(flow.clone(), mat);
    down.request(1);
    up.expect_request();
    up.send_error(StreamError::msg("up failed"));
    assert!(down.expect_error().to_string().ends_with("up failed"));
    let (mut up, mut down) = probed(flow, mat);
    down.request(1);
    up.expect_request();
    down.cancel();
    up.expect_cancellation();
}

#[test]
fn sources_emit_and_complete() {
    let (system, mat) = stream_system("sources");
    assert_eq!(collect(Source::<u8>::empty(), &mat), Ok(vec![]));
    assert_eq!(collect(Source::single(7u8), &mat), Ok(vec![7]));
    assert_eq!(collect(Source::range(0u8..4), &mat), Ok(vec![0, 1, 2, 3]));
    assert_eq!(collect(Source::repeat('x').take(3), &mat), Ok(vec!['x'; 3]));
    assert_eq!(
        collect(
            Source::unfold(1u32, |s| (s < 100).then_some((s * 3, s))),
            &mat
        ),
        Ok(vec![1, 3, 9, 27, 81])
    );
    let failed = collect(Source::<u8>::failed(StreamError::msg("nope")), &mat).unwrap_err();
    assert!(failed.to_string().ends_with("nope"));
    shutdown(&system);
}

#[test]
fn lazy_runs_its_factory_on_the_first_pull_only() {
    let (system, mat) = stream_system("lazy");
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&calls);
    let source = Source::lazy(move || {
        counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        vec![1u8, 2]
    });
    let mut down = source.clone().run_with(TestSink::probe(), &mat);
    down.expect_no_message(QUIET);
    assert_eq!(
        calls.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "not called at materialization"
    );
    down.request(3);
    assert_eq!(down.expect_next_n(2), vec![1, 2]);
    down.expect_complete();
    assert_eq!(collect(source, &mat), Ok(vec![1, 2]));
    assert_eq!(
        calls.load(std::sync::atomic::Ordering::SeqCst),
        2,
        "once per run"
    );
    shutdown(&system);
}

#[test]
fn tick_emits_on_schedule_and_drops_ticks_without_demand() {
    let (system, mat, clock) = weir_tests::clocked_stream_system("tick");
    let ms = Duration::from_millis;
    let (handle, mut down) = Source::tick(ms(2), ms(2), 1u8)
        .unwrap()
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    down.request(2);
    down.wait_idle();
    clock.advance(ms(1));
    down.wait_idle(); // whatever the advance sent has been handled
    down.expect_no_message(Duration::ZERO);
    clock.advance(ms(1));
    assert_eq!(down.expect_next(), 1);
    clock.advance(ms(2));
    assert_eq!(down.expect_next(), 1);
    clock.advance(ms(10)); // five ticks without demand
    down.request(1);
    down.wait_idle();
    down.expect_no_message(Duration::ZERO); // dropped, not queued
    clock.advance(ms(2));
    assert_eq!(down.expect_next(), 1);
    handle.cancel();
    down.expect_complete();
    shutdown(&system);
}

#[test]
fn simple_operators_transform_and_propagate() {
    let (system, mat) = stream_system("simple");
    let src = || Source::range(1u32..=6);
    assert_eq!(
        collect(src().map(|x| x * 2), &mat),
        Ok(vec![2, 4, 6, 8, 10, 12])
    );
    assert_eq!(collect(src().filter(|x| x % 3 == 0), &mat), Ok(vec![3, 6]));
    assert_eq!(
        collect(src().filter_map(|x| (x % 2 == 0).then_some(x * 10)), &mat),
        Ok(vec![20, 40, 60])
    );
    assert_eq!(collect(src().take(2), &mat), Ok(vec![1, 2]));
    assert_eq!(collect(src().take(0), &mat), Ok(vec![]));
    assert_eq!(
        collect(src().take_while(|x| *x < 4), &mat),
        Ok(vec![1, 2, 3])
    );
    assert_eq!(collect(src().skip(4), &mat), Ok(vec![5, 6]));
    assert_eq!(collect(src().skip_while(|x| *x < 5), &mat), Ok(vec![5, 6]));
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = std::sync::Arc::clone(&seen);
    assert_eq!(
        collect(
            src().inspect(move |x| log.lock().unwrap().push(*x)).take(2),
            &mat
        ),
        Ok(vec![1, 2])
    );
    assert_eq!(*seen.lock().unwrap(), vec![1, 2]);
    for flow in [
        Flow::new().map(|x: u32| x),
        Flow::new().filter(|_: &u32| true),
        Flow::new().take(5),
        Flow::new().skip(1),
        Flow::new().take_while(|_: &u32| true),
    ] {
        check_failure_and_cancel(flow, &mat);
    }
    shutdown(&system);
}

#[test]
fn take_completes_downstream_and_cancels_upstream() {
    let (system, mat) = stream_system("take");
    let (mut up, mut down) = probed(Flow::new().take(2), &mat);
    down.request(5);
    up.expect_request();
    up.send_next(1u32);
    up.expect_request();
    up.send_next(2);
    assert_eq!(down.expect_next_n(2), vec![1, 2]);
    down.expect_complete();
    up.expect_cancellation();
    shutdown(&system);
}

#[test]
fn operators_respect_back_pressure() {
    let (system, mat) = stream_system("back-pressure");
    // filter asks for another element only after dropping one; nothing unrequested moves.
    let (mut up, mut down) = probed(Flow::new().filter(|x: &u32| x.is_multiple_of(2)), &mat);
    up.expect_no_signal(QUIET);
    down.request(1);
    up.expect_request();
    up.send_next(1);
    up.expect_request();
    up.send_next(2);
    assert_eq!(down.expect_next(), 2);
    up.expect_no_signal(QUIET);
    shutdown(&system);
}

#[test]
fn scan_fold_and_reduce() {
    let (system, mat) = stream_system("scan");
    assert_eq!(
        collect(Source::range(1u32..=3).scan(0, |a, x| a + x), &mat),
        Ok(vec![0, 1, 3, 6])
    );
    assert_eq!(
        collect(Source::<u32>::empty().scan(5, |a, x| a + x), &mat),
        Ok(vec![5])
    );
    assert_eq!(
        collect(Source::range(1u32..=4).fold(0, |a, x| a + x), &mat),
        Ok(vec![10])
    );
    assert_eq!(
        collect(Source::<u32>::empty().fold(0, |a, x| a + x), &mat),
        Ok(vec![0])
    );
    assert_eq!(
        collect(Source::range(1u32..=4).reduce(|a, x| a * x), &mat),
        Ok(vec![24])
    );
    let empty = collect(Source::<u32>::empty().reduce(|a, x| a + x), &mat).unwrap_err();
    assert!(matches!(empty.kind(), ErrorKind::EmptyStream));
    // fold emits nothing before upstream completes
    let (mut up, mut down) = probed(Flow::new().fold(0u32, |a, x| a + x), &mat);
    down.request(1);
    up.expect_request();
    up.send_next(2);
    up.expect_request();
    down.expect_no_message(QUIET);
    up.send_complete();
    assert_eq!(down.expect_next(), 2);
    down.expect_complete();
    check_failure_and_cancel(Flow::new().fold(0u32, |a, x| a + x), &mat);
    shutdown(&system);
}

#[test]
fn grouped_and_sliding() {
    let (system, mat) = stream_system("grouped");
    let src = || Source::range(1u32..=5);
    assert_eq!(
        collect(src().grouped(2).unwrap(), &mat),
        Ok(vec![vec![1, 2], vec![3, 4], vec![5]])
    );
    assert_eq!(
        collect(src().sliding(3, 1).unwrap(), &mat),
        Ok(vec![vec![1, 2, 3], vec![2, 3, 4], vec![3, 4, 5]])
    );
    assert_eq!(
        collect(Source::range(1u32..=4).sliding(3, 2).unwrap(), &mat),
        Ok(vec![vec![1, 2, 3], vec![3, 4]])
    );
    assert_eq!(
        collect(src().sliding(2, 3).unwrap(), &mat),
        Ok(vec![vec![1, 2], vec![4, 5]])
    );
    assert_eq!(
        collect(Source::range(1u32..=2).sliding(3, 1).unwrap(), &mat),
        Ok(vec![vec![1, 2]])
    );
    assert_eq!(
        src().grouped(0).unwrap_err(),
        ArgumentError::Zero { argument: "size" }
    );
    assert_eq!(
        src().sliding(2, 0).unwrap_err(),
        ArgumentError::Zero { argument: "step" }
    );
    check_failure_and_cancel(Flow::new().grouped(2).unwrap(), &mat);
    shutdown(&system);
}

#[test]
fn intersperse_and_map_concat() {
    let (system, mat) = stream_system("intersperse");
    assert_eq!(
        collect(Source::from_iter(["a", "b", "c"]).intersperse(","), &mat),
        Ok(vec!["a", ",", "b", ",", "c"])
    );
    assert_eq!(
        collect(
            Source::from_iter(["a", "b"]).intersperse_with(Some("["), ",", Some("]")),
            &mat
        ),
        Ok(vec!["[", "a", ",", "b", "]"])
    );
    assert_eq!(
        collect(
            Source::<&str>::empty().intersperse_with(Some("["), ",", Some("]")),
            &mat
        ),
        Ok(vec!["[", "]"])
    );
    assert_eq!(
        collect(
            Source::range(1u32..=3).map_concat(|x| vec![x; x as usize]),
            &mat
        ),
        Ok(vec![1, 2, 2, 3, 3, 3])
    );
    // map_concat emits lazily: one request, one element.
    let (mut up, mut down) = probed(Flow::new().map_concat(|x: u32| 0..x), &mat);
    down.request(1);
    up.expect_request();
    up.send_next(3);
    assert_eq!(down.expect_next(), 0);
    down.expect_no_message(QUIET);
    down.request(2);
    assert_eq!(down.expect_next_n(2), vec![1, 2]);
    up.send_complete();
    down.expect_complete();
    check_failure_and_cancel(Flow::new().intersperse(0u32), &mat);
    shutdown(&system);
}

#[test]
fn map_error_and_recover() {
    let (system, mat) = stream_system("errors");
    let failing = || Source::range(1u32..=5).map(|x| if x == 3 { panic!("three") } else { x });
    let mapped = collect(
        failing().map_error(|e| StreamError::msg(format!("wrapped: {e}"))),
        &mat,
    )
    .unwrap_err();
    assert!(
        mapped
            .to_string()
            .contains("wrapped: stage `range.map` failed: panicked: three"),
        "{mapped}"
    );
    assert_eq!(
        collect(failing().recover(|_| Some(0)), &mat),
        Ok(vec![1, 2, 0])
    );
    let unrecovered = collect(failing().recover(|_| None), &mat).unwrap_err();
    assert_eq!(unrecovered.stage(), Some("range.map"));
    shutdown(&system);
}

#[test]
fn buffer_applies_each_overflow_strategy() {
    let (system, mat) = stream_system("buffer");
    // Five elements into a three-slot buffer with no demand.
    for (strategy, expected) in [
        (OverflowStrategy::DropHead, vec![3, 4, 5]),
        (OverflowStrategy::DropTail, vec![1, 2, 5]),
        (OverflowStrategy::DropBuffer, vec![4, 5]),
        (OverflowStrategy::DropNew, vec![1, 2, 3]),
    ] {
        let (mut up, mut down) = probed(Flow::new().buffer(3, strategy).unwrap(), &mat);
        for x in 1..=5u32 {
            up.expect_request();
            up.send_next(x);
        }
        up.expect_request();
        up.send_complete();
        down.request(10);
        assert_eq!(down.expect_next_n(expected.len()), expected, "{strategy:?}");
        down.expect_complete();
    }
    let (mut up, mut down) = probed(Flow::new().buffer(2, OverflowStrategy::Fail).unwrap(), &mat);
    for x in 1..=3u32 {
        up.expect_request();
        up.send_next(x);
    }
    let error = down.expect_error();
    assert!(
        matches!(error.kind(), ErrorKind::BufferOverflow { capacity: 2 }),
        "{error}"
    );
    // Back-pressure: no request beyond the capacity.
    let (mut up, mut down) = probed(
        Flow::new()
            .buffer(2, OverflowStrategy::Backpressure)
            .unwrap(),
        &mat,
    );
    for x in 1..=2u32 {
        up.expect_request();
        up.send_next(x);
    }
    up.expect_no_signal(QUIET);
    down.request(1);
    assert_eq!(down.expect_next(), 1);
    up.expect_request();
    assert_eq!(
        Flow::<u8>::new()
            .buffer(0, OverflowStrategy::Fail)
            .unwrap_err(),
        ArgumentError::Zero { argument: "size" }
    );
    shutdown(&system);
}

#[test]
fn kill_switches_shut_down_and_abort() {
    use weir_streams::KillSwitches;
    let (system, mat) = stream_system("kill");
    let ((up_probe, switch), mut down) = TestSource::probe::<u32>()
        .via_mat(KillSwitches::single(), Keep::both)
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    let mut up = up_probe;
    down.request(1);
    up.expect_request();
    switch.shutdown();
    down.expect_complete();
    up.expect_cancellation();

    let ((mut up, switch), mut down) = TestSource::probe::<u32>()
        .via_mat(KillSwitches::single(), Keep::both)
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    down.request(1);
    up.expect_request();
    switch.abort(StreamError::msg("killed"));
    assert!(down.expect_error().to_string().ends_with("killed"));
    up.expect_cancellation();

    let shared = KillSwitches::shared("both");
    let a = Source::repeat(1u8)
        .via(shared.flow())
        .run_with(Sink::ignore(), &mat);
    let b = Source::repeat(2u8)
        .via(shared.flow())
        .run_with(Sink::ignore(), &mat);
    shared.shutdown();
    assert_eq!((a.wait(), b.wait()), (Ok(()), Ok(())));
    let late = Source::repeat(3u8)
        .via(shared.flow())
        .run_with(Sink::ignore(), &mat);
    assert_eq!(
        late.wait(),
        Ok(()),
        "a stream started after the switch fired stops at once"
    );
    shutdown(&system);
}
