//! Failures reach the completion: panics in sink closures name their stage, a stream run after shutdown fails instead of panicking, and an island whose actor panics stops.

use std::sync::mpsc::{Sender, channel};
use std::time::Duration;

use weir_streams::prelude::*;
use weir_streams::stage::{
    AsyncCallback, GraphStage, GraphStageLogic, InPort, Inlet, MatContext, OutPort, SinkShape,
    SourceShape, StageContext, StageResult,
};
use weir_streams::testkit::TestSink;
use weir_streams::{ErrorKind, MaterializeError, StreamError};
use weir_tests::{PATIENCE, eventually, shutdown, stream_system};

fn assert_panicked(error: &StreamError, stage: &str, message: &str, case: &str) {
    assert!(
        matches!(error.kind(), ErrorKind::Panicked(m) if m.contains(message)),
        "{case}: {error:?}"
    );
    // A sink fused with operators before it is named after all of them.
    assert!(
        error.stage().is_some_and(|s| s.ends_with(stage)),
        "{case}: {error:?}"
    );
}

#[test]
fn a_panic_in_a_sink_closure_reaches_its_completion_after_any_operator() {
    let (system, mat) = stream_system("sink-panics");
    let upstreams: Vec<(&str, Source<Vec<u32>, ()>)> = vec![
        ("map", Source::range(1u32..10).map(|x| vec![x])),
        ("grouped", Source::range(1u32..10).grouped(2).unwrap()),
        (
            "map_concat",
            Source::range(1u32..10).map_concat(|x| vec![vec![x], vec![x]]),
        ),
        (
            "tick",
            Source::tick(Duration::ZERO, Duration::from_millis(1), vec![1u32])
                .unwrap()
                .map_materialized_value(|_| ()),
        ),
    ];
    for (case, source) in upstreams {
        let done = source
            .clone()
            .run_with(Sink::for_each(|_: Vec<u32>| panic!("for_each boom")), &mat);
        assert_panicked(&done.wait().unwrap_err(), "for_each", "for_each boom", case);
        let done = source.run_with(
            Sink::fold(0usize, |_, _: Vec<u32>| -> usize { panic!("fold boom") }),
            &mat,
        );
        assert_panicked(&done.wait().unwrap_err(), "fold", "fold boom", case);
    }
    shutdown(&system);
}

#[test]
fn running_after_the_system_terminated_fails_the_sinks_instead_of_panicking() {
    let (system, mat) = stream_system("after-terminate");
    shutdown(&system);
    let done = Source::range(1u32..10)
        .map(|x| x + 1)
        .async_boundary()
        .run_with(Sink::fold(0, |a, x| a + x), &mat);
    assert!(
        matches!(
            done.wait().unwrap_err().kind(),
            ErrorKind::AbruptTermination
        ),
        "the sink hears of it"
    );
    let mut probe = TestSource::probe::<u32>()
        .run_with(TestSink::probe(), &mat)
        .with_timeout(PATIENCE);
    assert!(matches!(
        probe.expect_error().kind(),
        ErrorKind::AbruptTermination
    ));
    let graph = Source::single(1u32)
        .via(Flow::new().map(|x: u32| x))
        .to_mat(Sink::ignore(), Keep::right);
    assert!(matches!(
        graph.try_run(&mat),
        Err(MaterializeError::SystemTerminated)
    ));
}

use weir_streams::testkit::TestSource;

/// Panics when dropped: a value whose drop fails outside every stage
/// handler (as a dead letter to a stopped stage).
struct Bomb;

impl Drop for Bomb {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            panic!("bomb dropped");
        }
    }
}

/// A source that completes at once and hands out a callback into itself.
struct Finished;
struct FinishedLogic(SourceShape<u32>);

impl GraphStage for Finished {
    type Shape = SourceShape<u32>;
    type Mat = AsyncCallback<Bomb>;
    fn name(&self) -> &'static str {
        "finished"
    }
    fn create_logic(&self, cx: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, Self::Mat) {
        let callback = cx.async_callback(|_: &mut FinishedLogic, _: Bomb, _| Ok(()));
        (Box::new(FinishedLogic(SourceShape::new())), callback)
    }
}

impl GraphStageLogic for FinishedLogic {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.complete(self.0.out);
        Ok(())
    }
    fn on_pull(&mut self, _: OutPort, _: &mut StageContext<'_>) -> StageResult {
        Ok(())
    }
}

/// A sink that outlives its upstream (keeps its island running) and
/// reports how it ends.
struct Lingering(Sender<Result<(), StreamError>>);
struct LingeringLogic {
    inlet: Inlet<u32>,
    ended: Sender<Result<(), StreamError>>,
}

impl GraphStage for Lingering {
    type Shape = SinkShape<u32>;
    type Mat = ();
    fn name(&self) -> &'static str {
        "lingering"
    }
    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        let logic = LingeringLogic {
            inlet: SinkShape::<u32>::new().inlet,
            ended: self.0.clone(),
        };
        (Box::new(logic), ())
    }
}

impl GraphStageLogic for LingeringLogic {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.set_keep_going(true);
        ctx.pull(self.inlet)
    }
    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let _ = ctx.grab(self.inlet)?;
        ctx.pull(self.inlet)
    }
    fn on_upstream_finish(&mut self, _: InPort, _: &mut StageContext<'_>) -> StageResult {
        Ok(()) // keeps going
    }
    fn on_failure(&mut self, error: &StreamError) {
        let _ = self.ended.send(Err(error.clone()));
    }
    fn post_stop(&mut self) {
        let _ = self.ended.send(Ok(()));
    }
}

#[test]
fn an_island_whose_task_panics_fails_its_stream_and_ends() {
    let (system, mat) = stream_system("island-panic");
    let (ended, outcome) = channel();
    let callback = Source::from_graph(Finished)
        .to_mat(Sink::from_graph(Lingering(ended)), Keep::left)
        .run(&mat);
    let islands = || mat.running_islands();
    assert!(eventually(PATIENCE, || islands() == 1), "the island runs");
    // The source has stopped, the island has not: the value becomes a dead
    // letter, and its drop panics in the island's task, outside every
    // stage handler.
    callback.invoke(Bomb);
    let first = outcome
        .recv_timeout(PATIENCE)
        .expect("the sink hears of it");
    let error = first.expect_err("the stream fails");
    assert!(
        matches!(error.kind(), ErrorKind::Panicked(m) if m.contains("bomb dropped")),
        "{error:?}"
    );
    assert_eq!(outcome.recv_timeout(PATIENCE), Ok(Ok(())), "then post_stop");
    assert!(
        eventually(PATIENCE, || islands() == 0),
        "the island's task ends with it"
    );
    shutdown(&system);
}

#[test]
fn a_source_that_panics_while_being_made_fails_a_fused_stream_run_as_a_task() {
    let (system, materializer) = stream_system("failures-task-make");
    let source = Source::<u32>::from_poll_fn(|| -> fn(&mut std::task::Context<'_>) -> _ {
        panic!("no source today")
    });
    let done = source
        .map(|x| x + 1)
        .run_with(Sink::fold(0u32, |a, x| a + x), &materializer);
    let error = done.wait().unwrap_err();
    assert_panicked(&error, "from_poll_fn.map.fold", "no source today", "task");
    shutdown(&system);
}
