//! The dispatcher attribute: a blocking stage's island runs off the shared pool.

use std::sync::mpsc;

use weir_actor::{ActorSystem, DispatcherKind};
use weir_streams::Attributes;
use weir_streams::prelude::*;
use weir_streams::stage::{
    GraphStage, GraphStageLogic, MatContext, OutPort, SourceShape, StageContext, StageResult,
};
use weir_tests::{PATIENCE, QUIET, shutdown};

/// A source whose first pull blocks its thread until the test says go,
/// then emits the thread's name and completes.
struct BlockOnPull {
    entered: mpsc::Sender<()>,
    go: std::sync::Arc<std::sync::Mutex<mpsc::Receiver<()>>>,
}

struct BlockOnPullLogic {
    shape: SourceShape<String>,
    entered: mpsc::Sender<()>,
    go: std::sync::Arc<std::sync::Mutex<mpsc::Receiver<()>>>,
}

impl GraphStage for BlockOnPull {
    type Shape = SourceShape<String>;
    type Mat = ();
    fn name(&self) -> &'static str {
        "block-on-pull"
    }
    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        let logic = BlockOnPullLogic {
            shape: SourceShape::new(),
            entered: self.entered.clone(),
            go: std::sync::Arc::clone(&self.go),
        };
        (Box::new(logic), ())
    }
}

impl GraphStageLogic for BlockOnPullLogic {
    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        let _ = self.entered.send(());
        let _ = self.go.lock().unwrap().recv();
        let thread = std::thread::current().name().unwrap_or("").to_owned();
        ctx.push(self.shape.out, thread)?;
        ctx.complete(self.shape.out);
        Ok(())
    }
}

/// A blocking source, the channel that says it is blocked, and the one that releases it.
fn blocking_source() -> (Source<String, ()>, mpsc::Receiver<()>, mpsc::Sender<()>) {
    let (entered, entered_rx) = mpsc::channel();
    let (go_tx, go) = mpsc::channel();
    let stage = BlockOnPull {
        entered,
        go: std::sync::Arc::new(std::sync::Mutex::new(go)),
    };
    (Source::from_graph(stage), entered_rx, go_tx)
}

/// One shared-pool thread, so a stage blocking it would stall everything.
fn one_thread_system(name: &str) -> (ActorSystem, Materializer) {
    let system = ActorSystem::builder()
        .name(name)
        .threads(1)
        .pool("io", 1)
        .build()
        .expect("a valid system");
    let materializer = Materializer::new(&system);
    (system, materializer)
}

fn blocked_stream_does_not_stall_the_pool(attributes: Attributes, system_name: &str) {
    let (system, materializer) = one_thread_system(system_name);
    let (source, entered, go) = blocking_source();
    let blocked = source
        .with_attributes(attributes)
        .run_with(Sink::head(), &materializer);
    assert!(entered.recv_timeout(PATIENCE).is_ok(), "the stage blocks");

    // An unrelated stream on the shared pool runs to the end meanwhile.
    let other = Source::range(1u64..=1000)
        .async_boundary()
        .run_with(Sink::fold(0u64, |a, x| a + x), &materializer);
    assert_eq!(other.wait_timeout(PATIENCE).ok(), Some(Ok(500_500)));

    go.send(()).unwrap();
    let thread = blocked.wait_timeout(PATIENCE).expect("unblocked").unwrap();
    assert!(!thread.is_empty());
    shutdown(&system);
}

#[test]
fn a_blocking_stage_on_a_pinned_thread_does_not_delay_the_shared_pool() {
    blocked_stream_does_not_stall_the_pool(Attributes::blocking(), "pinned-io");
}

#[test]
fn a_blocking_stage_on_a_named_pool_does_not_delay_the_shared_pool() {
    let named = Attributes::new().with_dispatcher(DispatcherKind::Named("io"));
    blocked_stream_does_not_stall_the_pool(named, "named-io");
}

/// The control: without the attribute, the blocking stage holds the one
/// shared thread and the other stream waits (what the attribute prevents).
#[test]
fn without_the_attribute_a_blocking_stage_holds_the_shared_pool() {
    let (system, materializer) = one_thread_system("shared-io");
    let (source, entered, go) = blocking_source();
    let blocked = source.run_with(Sink::head(), &materializer);
    assert!(entered.recv_timeout(PATIENCE).is_ok());
    let other = Source::range(1u64..=1000)
        .async_boundary()
        .run_with(Sink::fold(0u64, |a, x| a + x), &materializer);
    let other = other
        .wait_timeout(QUIET)
        .expect_err("stalled behind the blocked stage");
    go.send(()).unwrap();
    assert!(blocked.wait_timeout(PATIENCE).is_ok());
    assert_eq!(other.wait_timeout(PATIENCE).ok(), Some(Ok(500_500)));
    shutdown(&system);
}

/// The attribute set on the blueprint overrides the stage's default.
#[test]
fn the_blueprint_dispatcher_overrides_the_stage_default() {
    let set =
        Attributes::blocking().and(&Attributes::new().with_dispatcher(DispatcherKind::Shared));
    assert_eq!(set.dispatcher(), Some(DispatcherKind::Shared));
}

/// An island that asks for a pool the system builder did not declare does
/// not start, and neither does the rest of its graph: `try_run` names the
/// pool, the island already spawned is aborted, and `run`'s sink fails
/// with `AbruptTermination` rather than waiting for ever.
#[test]
fn an_island_on_an_undeclared_pool_fails_its_whole_graph_typed() {
    let (system, materializer) = one_thread_system("unknown-pool");
    // The second island asks: the first is spawned by then, and aborted.
    let graph = Source::range(1u64..=10)
        .async_boundary()
        .map(|x| x + 1)
        .with_attributes(Attributes::new().with_dispatcher(DispatcherKind::Named("nope")))
        .to_mat(Sink::fold(0u64, |a, x| a + x), Keep::right);
    match graph.try_run(&materializer) {
        Err(weir_streams::MaterializeError::Spawn(weir_actor::SpawnError::UnknownDispatcher(
            name,
        ))) => assert_eq!(name, "nope"),
        other => panic!("expected the undeclared pool, got {other:?}"),
    }
    let done = graph.run(&materializer);
    let error = done
        .wait_timeout(PATIENCE)
        .expect("the sink hears of it")
        .expect_err("the graph does not run");
    assert!(
        matches!(error.kind(), weir_streams::ErrorKind::AbruptTermination),
        "{error:?}"
    );
    // The system goes on: a graph on declared pools still runs.
    let fine = Source::range(1u64..=10)
        .async_boundary()
        .run_with(Sink::fold(0u64, |a, x| a + x), &materializer);
    assert_eq!(fine.wait_timeout(PATIENCE).ok(), Some(Ok(55)));
    shutdown(&system);
}
