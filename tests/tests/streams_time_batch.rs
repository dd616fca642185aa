//! Rate decoupling, limits and watching: `batch`, `conflate`, `expand`, `extrapolate`, `limit`, `watch_termination` and `monitor`, driven by probes.

use weir_streams::prelude::*;
use weir_streams::testkit::{TestSink, TestSource};
use weir_streams::{ArgumentError, ErrorKind, Flow, MonitorState, StreamError};
use weir_tests::clocked::Rig;
use weir_tests::{shutdown, stream_system};

#[test]
fn batch_sums_while_downstream_is_slow_and_backpressures_at_max() {
    let flow = Flow::new()
        .batch(
            3,
            |x: u32| vec![x],
            |mut v, x| {
                v.push(x);
                v
            },
        )
        .unwrap();
    let mut rig = Rig::new("batch", flow);
    rig.send(1..=7);
    rig.down.wait_idle();
    assert_eq!(rig.requests(), 4, "a batch of 3 and one pending element");
    rig.down.request(1);
    assert_eq!(rig.down.expect_next(), [1, 2, 3]);
    rig.down.request(1);
    assert_eq!(rig.down.expect_next(), [4, 5, 6]);
    rig.down.request(1);
    assert_eq!(rig.down.expect_next(), [7]);
    rig.up.send_complete();
    rig.down.request(1);
    rig.down.expect_complete();
    rig.shutdown();
}

#[test]
fn batch_passes_elements_one_by_one_to_a_fast_downstream() {
    let flow = Flow::new().batch(10, |x: u32| x, |a, x| a + x).unwrap();
    let mut rig = Rig::new("batch-fast", flow);
    rig.down.request(10);
    for i in 1..=3 {
        rig.send([i]);
        assert_eq!(rig.down.expect_next(), i);
    }
    rig.shutdown();
}

#[test]
fn batch_weighted_closes_before_the_weight_is_exceeded_and_completion_flushes() {
    let flow = Flow::new()
        .batch_weighted(10, |x: &u32| u64::from(*x), |x: u32| x, |a, x| a + x)
        .unwrap();
    let mut rig = Rig::new("batch-weighted", flow);
    rig.send([4, 5, 3]);
    rig.up.send_complete();
    rig.down.wait_idle();
    rig.down.request(10);
    assert_eq!(rig.down.expect_next_n(2), [9, 3]);
    rig.down.expect_complete();
    rig.shutdown();
}

#[test]
fn conflate_never_backpressures() {
    let mut rig = Rig::new("conflate", Flow::new().conflate(|a: u32, x| a.max(x)));
    rig.send([3, 9, 2, 5]);
    assert_eq!(rig.requests(), 5, "every element pulled, and the next");
    rig.down.request(1);
    assert_eq!(rig.down.expect_next(), 9);
    rig.shutdown();
}

#[test]
fn expand_repeats_while_downstream_is_faster() {
    let flow = Flow::new().expand(|x: u32| std::iter::repeat(x));
    let mut rig = Rig::new("expand", flow);
    rig.send([1]);
    rig.down.request(3);
    assert_eq!(rig.down.expect_next_n(3), [1, 1, 1]);
    rig.send([2]);
    rig.down.wait_idle();
    rig.down.request(2);
    assert_eq!(rig.down.expect_next_n(2), [2, 2]);
    rig.up.send_complete();
    rig.down.expect_complete();
    rig.shutdown();
}

#[test]
fn expand_backpressures_until_the_first_output_went_out() {
    let flow = Flow::new().expand(|x: u32| [x, x * 10]);
    let mut rig = Rig::new("expand-bp", flow);
    rig.send([1, 2]);
    assert_eq!(rig.requests(), 1, "holds 1 until it has gone out");
    rig.down.request(1);
    assert_eq!(rig.down.expect_next(), 1);
    rig.down.wait_idle(); // 2 arrived before the next demand: 10 is skipped
    rig.down.request(1);
    assert_eq!(rig.down.expect_next(), 2);
    rig.up.send_complete();
    rig.down.expect_complete();
    rig.shutdown();
}

#[test]
fn extrapolate_emits_the_element_first() {
    let flow = Flow::new().extrapolate(|x: &u32| std::iter::repeat(x + 100));
    let mut rig = Rig::new("extrapolate", flow);
    rig.send([1]);
    rig.down.request(3);
    assert_eq!(rig.down.expect_next_n(3), [1, 101, 101]);
    rig.shutdown();
}

#[test]
fn limit_fails_once_exceeded_and_passes_up_to_it() {
    let (system, mat) = stream_system("limit");
    let ok = Source::range(0u32..3)
        .limit(3)
        .run_with(Sink::collect(), &mat);
    assert_eq!(ok.wait(), Ok(vec![0, 1, 2]));
    let over = Source::range(0u32..4)
        .limit(3)
        .run_with(Sink::collect(), &mat);
    let error = over.wait().unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::LimitExceeded { max: 3 }),
        "{error:?}"
    );
    let weighted = Source::from_iter(vec![4u64, 4, 4])
        .limit_weighted(10, |x| *x)
        .run_with(Sink::collect(), &mat);
    assert!(matches!(
        weighted.wait().unwrap_err().kind(),
        ErrorKind::LimitExceeded { max: 10 }
    ));
    shutdown(&system);
}

#[test]
fn watch_termination_reports_completion_failure_and_cancel() {
    let (system, mat) = stream_system("watch");
    let (watched, done) = Source::range(0u32..3)
        .via_mat(Flow::watch_termination(), Keep::right)
        .to_mat(Sink::ignore(), Keep::both)
        .run(&mat);
    assert!(done.wait().is_ok());
    assert_eq!(watched.wait(), Ok(()));

    let (watched, _) = Source::<u32>::failed(StreamError::msg("boom"))
        .via_mat(Flow::watch_termination(), Keep::right)
        .to_mat(Sink::ignore(), Keep::both)
        .run(&mat);
    let error = watched.wait().unwrap_err();
    assert!(matches!(error.kind(), ErrorKind::Message(m) if m == "boom"));

    let (watched, first) = Source::repeat(1u32)
        .via_mat(Flow::watch_termination(), Keep::right)
        .to_mat(Sink::head(), Keep::both)
        .run(&mat);
    assert_eq!(first.wait(), Ok(1));
    assert_eq!(watched.wait(), Ok(()), "a cancel is a normal end here");
    shutdown(&system);
}

#[test]
fn bad_arguments_are_typed_errors() {
    assert_eq!(
        Flow::<u32>::new().batch(0, |x| x, |a, x| a + x).err(),
        Some(ArgumentError::Zero { argument: "max" })
    );
}

#[test]
fn monitor_reports_the_last_element_then_the_end() {
    let (system, mat) = stream_system("monitor");
    let ((mut up, monitor), mut down) = TestSource::probe::<u32>()
        .via_mat(Flow::monitor(), Keep::both)
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    assert_eq!(monitor.state(), MonitorState::Initialized);
    down.request(2);
    up.send_next(7);
    assert_eq!(down.expect_next(), 7);
    assert_eq!(monitor.state(), MonitorState::Received(7));
    up.send_error(StreamError::msg("boom"));
    down.expect_error();
    assert!(matches!(monitor.state(), MonitorState::Failed(e) if e.to_string().contains("boom")));
    assert!(format!("{monitor:?}").contains("failed"));

    let (monitor, done) = Source::range(0u32..3)
        .via_mat(Flow::monitor(), Keep::right)
        .to_mat(Sink::ignore(), Keep::both)
        .run(&mat);
    assert!(done.wait().is_ok());
    assert_eq!(monitor.state(), MonitorState::Finished);
    shutdown(&system);
}

#[test]
fn batch_keeps_the_last_element_when_it_arrives_with_completion() {
    // from_iter pushes its last element and completes in one go; batch
    // read the inlet as closed before that element's on_push and
    // completed without it (found by NatsSink::ack, which counts batches).
    let (system, mat) = stream_system("batch-last");
    let batches = Source::from_iter(0..40u32)
        .batch(
            16,
            |x: u32| vec![x],
            |mut a: Vec<u32>, x| {
                a.push(x);
                a
            },
        )
        .unwrap()
        .map_async(1, |batch: Vec<u32>| async move { Ok(batch) })
        .unwrap()
        .run_with(Sink::collect(), &mat)
        .wait()
        .unwrap();
    assert_eq!(batches.concat(), (0..40).collect::<Vec<_>>());
    let last = Source::from_iter(0..40u32)
        .conflate(|a: u32, b| a.max(b))
        .buffer(1, OverflowStrategy::Backpressure)
        .unwrap()
        .run_with(Sink::collect(), &mat)
        .wait()
        .unwrap();
    assert_eq!(last.last(), Some(&39));
    shutdown(&system);
}

/// A failure before any element fails `expand` and `extrapolate` (one or
/// two in a row), fused or not. `expand`'s `on_pull` used to read a closed
/// inlet as a completion and complete before the failure on its way
/// arrived: `Source::failed(e).expand(..)` completed empty.
#[test]
fn expand_passes_a_failure_that_comes_before_any_element() {
    let (system, _) = stream_system("expand-failure");
    for fusion in [true, false] {
        let mat = Materializer::builder(&system).fusion(fusion).build();
        let boom = || Source::<u32>::failed(StreamError::msg("boom"));
        let one = boom()
            .expand(std::iter::repeat)
            .run_with(Sink::collect(), &mat);
        assert!(one.wait().is_err(), "one expand, fusion {fusion}");
        let two = boom()
            .expand(std::iter::repeat)
            .extrapolate(|x| std::iter::repeat(*x))
            .run_with(Sink::collect(), &mat);
        assert!(
            two.wait().is_err(),
            "expand then extrapolate, fusion {fusion}"
        );
        // After an element: it goes out, then the failure (which, as in
        // Pekko, does not wait for demand).
        let (mut up, mut down) = TestSource::probe::<u32>()
            .expand(std::iter::repeat)
            .to_mat(TestSink::probe(), Keep::both)
            .run(&mat);
        down.request(1);
        up.send_next(1);
        assert_eq!(down.expect_next(), 1);
        up.send_error(StreamError::msg("late"));
        assert!(down.expect_error().to_string().contains("late"));
    }
    shutdown(&system);
}
