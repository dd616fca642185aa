//! The interpreter: the push/pull protocol, failure and cancellation, async boundaries, teardown.

use std::time::Duration;

use weir_streams::prelude::*;
use weir_streams::stage::{
    FlowShape, GraphStage, GraphStageLogic, InPort, MatContext, OutPort, StageContext, StageResult,
};
use weir_streams::testkit::{TestSink, TestSource};
use weir_streams::{Attributes, ErrorKind};
use weir_tests::{QUIET, shutdown, stream_system};

/// A flow that pushes twice per pull: a protocol violation.
struct DoublePush;
struct DoublePushLogic(FlowShape<u32, u32>);

impl GraphStage for DoublePush {
    type Shape = FlowShape<u32, u32>;
    type Mat = ();
    fn name(&self) -> &'static str {
        "double-push"
    }
    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        (Box::new(DoublePushLogic(FlowShape::new())), ())
    }
}

impl GraphStageLogic for DoublePushLogic {
    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let x = ctx.grab(self.0.inlet)?;
        ctx.push(self.0.out, x)?;
        ctx.push(self.0.out, x)
    }
    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.pull(self.0.inlet)
    }
}

#[test]
fn a_push_without_a_pull_fails_the_stage_that_pushed() {
    let (system, mat) = stream_system("push-without-pull");
    let ((mut up, mut down), _) = (
        TestSource::probe::<u32>()
            .via(Flow::from_graph(DoublePush))
            .to_mat(TestSink::probe(), Keep::both)
            .run(&mat),
        (),
    );
    down.request(5);
    up.expect_request();
    up.send_next(1);
    assert_eq!(down.expect_next(), 1, "the first push went through");
    let error = down.expect_error();
    assert!(
        matches!(error.kind(), ErrorKind::Protocol(m) if m.contains("push without a pull")),
        "{error}"
    );
    assert_eq!(error.stage(), Some("double-push"));
    up.expect_cancellation();
    shutdown(&system);
}

#[test]
fn a_failure_flows_downstream_and_cancellation_upstream() {
    let (system, mat) = stream_system("failure-flows");
    let (mut up, mut down) = TestSource::probe::<u32>()
        .map(|x| x + 1)
        .filter(|_| true)
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    down.request(1);
    up.expect_request();
    up.send_error(StreamError::msg("upstream broke"));
    let error = down.expect_error();
    assert_eq!(
        error.to_string(),
        "stage `source_probe` failed: upstream broke"
    );

    let (mut up, mut down) = TestSource::probe::<u32>()
        .map(|x| x + 1)
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    down.request(1);
    up.expect_request();
    down.cancel();
    up.expect_cancellation();
    shutdown(&system);
}

#[test]
fn nothing_is_signalled_after_completion() {
    let (system, mat) = stream_system("after-complete");
    let (mut up, mut down) = TestSource::probe::<u32>()
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    down.request(10);
    up.expect_request();
    up.send_next(1);
    up.send_complete();
    up.send_next(2); // after completion: a protocol error inside the probe stage, never delivered
    assert_eq!(down.expect_next(), 1);
    down.expect_complete();
    down.expect_no_message(QUIET);
    shutdown(&system);
}

#[test]
fn an_async_boundary_keeps_order_and_bounds_what_is_requested() {
    let (system, mat) = stream_system("boundary-order");
    let done = Source::range(0u64..100_000)
        .async_boundary()
        .map(|x| x * 2)
        .async_boundary()
        .run_with(
            Sink::fold((0u64, true, 0u64), |(n, ordered, last), x| {
                (n + 1, ordered && (n == 0 || x == last + 2), x)
            }),
            &mat,
        );
    assert_eq!(done.wait(), Ok((100_000, true, 199_998)));

    // Back-pressure across the boundary: with an input buffer of 4 and no
    // demand downstream, upstream sees at most 4 requests.
    let (mut up, mut down) = TestSource::probe::<u32>()
        .async_boundary()
        .via(
            Flow::new()
                .map(|x: u32| x)
                .with_attributes(Attributes::new().with_input_buffer(4).unwrap()),
        )
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    for i in 0..4 {
        up.expect_request();
        up.send_next(i);
    }
    up.expect_no_signal(QUIET);
    down.request(4);
    assert_eq!(down.expect_next_n(4), vec![0, 1, 2, 3]);
    up.expect_request();
    shutdown(&system);
}

#[test]
fn failure_and_cancellation_cross_async_boundaries() {
    let (system, mat) = stream_system("boundary-signals");
    let (mut up, mut down) = TestSource::probe::<u32>()
        .async_boundary()
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    down.request(1);
    up.expect_request();
    up.send_next(7);
    assert_eq!(down.expect_next(), 7);
    up.send_error(StreamError::msg("far away"));
    assert!(down.expect_error().to_string().contains("far away"));

    let (mut up, mut down) = TestSource::probe::<u32>()
        .async_boundary()
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    down.request(1);
    up.expect_request();
    down.cancel();
    up.expect_cancellation();
    shutdown(&system);
}

#[test]
fn a_panic_in_a_later_island_cancels_the_earlier_one() {
    let (system, mat) = stream_system("island-panic");
    let (mut up, done) = TestSource::probe::<u32>()
        .async_boundary()
        .map(|x| if x == 2 { panic!("two") } else { x })
        .to_mat(Sink::ignore(), Keep::both)
        .run(&mat);
    up.expect_request();
    for i in 0..3 {
        up.send_next(i);
    }
    let error = done.wait().unwrap_err();
    assert_eq!(error.stage(), Some("map"));
    up.expect_cancellation();
    shutdown(&system);
}

#[test]
fn stopping_the_system_fails_running_streams_instead_of_hanging() {
    let (system, mat) = stream_system("abrupt");
    let endless = Source::<u8, _>::tick(Duration::from_millis(1), Duration::from_millis(1), 1)
        .unwrap()
        .async_boundary()
        .run_with(Sink::ignore(), &mat);
    let (_up, probe_done) = TestSource::probe::<u8>()
        .to_mat(Sink::ignore(), Keep::both)
        .run(&mat);
    shutdown(&system);
    assert!(matches!(
        endless.wait().unwrap_err().kind(),
        ErrorKind::AbruptTermination
    ));
    assert!(matches!(
        probe_done.wait().unwrap_err().kind(),
        ErrorKind::AbruptTermination
    ));
}

#[test]
fn many_short_streams_leave_no_island_behind() {
    let (system, mat) = stream_system("many");
    for i in 0..200u64 {
        let done = Source::range(0..i)
            .async_boundary()
            .run_with(Sink::fold(0, |a, x| a + x), &mat);
        assert_eq!(done.wait(), Ok(i * i.saturating_sub(1) / 2));
    }
    assert!(
        weir_tests::eventually(weir_tests::PATIENCE, || mat.running_islands() == 0),
        "island tasks end when their stream ends"
    );
    // Islands are tasks: none of them is an actor under `/system`.
    assert_eq!(
        system.select("/system/stream-*").map(|s| s.resolve().len()),
        Ok(0)
    );
    shutdown(&system);
}

#[test]
fn fusion_reaches_across_an_async_boundary_without_changing_semantics() {
    let (system, mat) = stream_system("boundary-fusion");
    // Order and completeness through fused halves.
    let all = Source::range(0u32..50_000)
        .async_boundary()
        .run_with(Sink::collect(), &mat);
    assert_eq!(all.wait(), Ok((0..50_000).collect::<Vec<_>>()));
    // A sink that stops early cancels the fused iterator on the other island.
    assert_eq!(
        Source::repeat(1u8)
            .async_boundary()
            .run_with(Sink::head(), &mat)
            .wait(),
        Ok(1)
    );
    assert_eq!(
        Source::repeat(1u8)
            .async_boundary()
            .run_with(Sink::cancelled(), &mat)
            .wait(),
        Ok(())
    );
    // A panic in the fused iterator names it; a panic in the fused sink names the sink.
    let up = Source::range(0u32..10)
        .map(|x| if x == 3 { panic!("up") } else { x })
        .async_boundary()
        .run_with(Sink::fold(0, |a, x| a + x), &mat)
        .wait()
        .unwrap_err();
    assert_eq!(up.stage(), Some("range.map"));
    let down = Source::range(0u32..10)
        .async_boundary()
        .run_with(
            Sink::fold(0, |a, x| if x == 5 { panic!("down") } else { a + x }),
            &mat,
        )
        .wait()
        .unwrap_err();
    assert_eq!(down.stage(), Some("fold"));
    // Materialized values survive the fusion, on both sides.
    let (five, done) = Source::range(0u32..3)
        .map_materialized_value(|()| 5u8)
        .async_boundary()
        .to_mat(Sink::collect(), Keep::both)
        .run(&mat);
    assert_eq!((five, done.wait()), (5, Ok(vec![0, 1, 2])));
    // Back-pressure holds: a fused iterator produces at most the buffer ahead.
    let produced = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&produced);
    let mut down = Source::range(0u32..1_000_000)
        .inspect(move |_| {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        })
        .async_boundary()
        .run_with(TestSink::probe(), &mat);
    down.request(1);
    assert_eq!(down.expect_next(), 0);
    down.expect_no_message(QUIET);
    let ahead = produced.load(std::sync::atomic::Ordering::SeqCst);
    assert!(
        (1..=17).contains(&ahead),
        "at most the 16-element buffer (plus the one delivered) ran ahead: {ahead}"
    );
    shutdown(&system);
}
