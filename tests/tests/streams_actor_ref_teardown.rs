//! Actor-backed stages when they stop: what they still hold becomes dead letters, and any stage name works.

use std::sync::{Arc, Mutex};

use weir_actor::{Actor, ActorRef, Context, DeadLetterReason, Event, Props, Subscription};
use weir_streams::prelude::*;
use weir_streams::stage::{
    GraphStage, GraphStageLogic, InPort, MatContext, SinkShape, StageActorMessage, StageContext,
    StageResult,
};
use weir_streams::testkit::{TestSink, TestSource};
use weir_tests::{IslandGate, PATIENCE, eventually, shutdown, stream_system};

/// The `u32` dead letters published with `reason`, in order.
fn letters(
    system: &weir_actor::ActorSystem,
    reason: DeadLetterReason,
) -> (Arc<Mutex<Vec<u32>>>, Subscription) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let subscription = system.event_stream().subscribe(move |event| {
        let Event::DeadLetter(letter) = event else {
            return;
        };
        if letter.reason() == reason
            && let Some(&x) = letter.downcast_ref::<u32>()
        {
            log.lock().unwrap().push(x);
        }
    });
    (seen, subscription)
}

/// An acknowledgement target that ignores what it is told.
struct Ignore;
impl Actor for Ignore {
    type Msg = ();
    fn receive(&mut self, _: &mut Context<Self>, (): ()) {}
}

fn ignorer(system: &weir_actor::ActorSystem) -> ActorRef<()> {
    system.spawn_anonymous(Props::new(|| Ignore)).unwrap()
}

#[test]
fn buffered_elements_become_dead_letters_when_downstream_cancels() {
    let (system, mat) = stream_system("teardown-buffered");
    let (seen, _subscription) = letters(&system, DeadLetterReason::StageStopped);
    let (src, mut down) = Source::actor_ref(8, OverflowStrategy::DropHead)
        .unwrap()
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    // No demand: all three wait in the buffer (or in the inbox, if the
    // island has not taken them yet); either way they are the stage's.
    (1..=3u32).for_each(|x| src.tell(x));
    down.cancel();
    assert!(
        eventually(PATIENCE, || *seen.lock().unwrap() == [1, 2, 3]),
        "published: {:?}",
        seen.lock().unwrap()
    );
    // Counted on the handle once the batch settles, just after publishing.
    assert!(eventually(PATIENCE, || src.dropped() == 3));
    shutdown(&system);
}

#[test]
fn complete_now_publishes_the_discarded_elements_themselves() {
    let (system, mat) = stream_system("teardown-complete-now");
    let (seen, _subscription) = letters(&system, DeadLetterReason::Dropped);
    let (src, mut down) = Source::actor_ref(8, OverflowStrategy::DropHead)
        .unwrap()
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    (1..=3u32).for_each(|x| src.tell(x));
    src.complete_now();
    down.expect_complete();
    assert!(eventually(PATIENCE, || *seen.lock().unwrap() == [1, 2, 3]));
    shutdown(&system);
}

#[test]
fn overflow_drops_publish_the_dropped_elements_themselves() {
    let (system, mat) = stream_system("teardown-overflow");
    let (seen, _subscription) = letters(&system, DeadLetterReason::Dropped);
    for (strategy, dropped) in [
        (OverflowStrategy::DropHead, vec![1]),
        (OverflowStrategy::DropTail, vec![2]),
        (OverflowStrategy::DropBuffer, vec![1, 2]),
        (OverflowStrategy::DropNew, vec![3]),
    ] {
        seen.lock().unwrap().clear();
        let (src, _down) = Source::actor_ref(2, strategy)
            .unwrap()
            .to_mat(TestSink::probe::<u32>(), Keep::both)
            .run(&mat);
        (1..=3u32).for_each(|x| src.tell(x));
        assert!(
            eventually(PATIENCE, || *seen.lock().unwrap() == dropped),
            "{strategy:?}: {:?}",
            seen.lock().unwrap()
        );
    }
    shutdown(&system);
}

#[test]
fn elements_queued_behind_a_fused_sink_that_ends_become_dead_letters() {
    let (system, mat) = stream_system("teardown-fused");
    let (seen, _subscription) = letters(&system, DeadLetterReason::StageStopped);
    let gate = IslandGate::new();
    // Into `head` the source runs fused; hold it on the first element.
    let (src, first) = Source::actor_ref(8, OverflowStrategy::DropHead)
        .unwrap()
        .map(gate.hold_first())
        .to_mat(Sink::head(), Keep::both)
        .run(&mat);
    src.tell(1u32);
    assert!(gate.entered(PATIENCE));
    // Queued in the inbox while the island is held: `head` ends on 1.
    src.tell(2u32);
    src.tell(3u32);
    gate.open();
    assert_eq!(first.wait(), Ok(1));
    assert!(
        eventually(PATIENCE, || *seen.lock().unwrap() == [2, 3]),
        "published: {:?}",
        seen.lock().unwrap()
    );
    shutdown(&system);
}

#[test]
fn an_unacknowledged_element_becomes_a_dead_letter_when_the_stream_is_cancelled() {
    let (system, mat) = stream_system("teardown-backpressure");
    let (seen, _subscription) = letters(&system, DeadLetterReason::StageStopped);
    let (src, mut down) = Source::actor_ref_with_backpressure(ignorer(&system), ())
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    src.tell(7u32); // no demand: it waits, unacknowledged
    down.cancel();
    assert!(eventually(PATIENCE, || *seen.lock().unwrap() == [7]));
    shutdown(&system);
}

#[test]
fn an_empty_name_on_actor_backed_sources_is_a_name_like_any_other() {
    let (system, mat) = stream_system("empty-name");
    let (src, mut down) = Source::actor_ref(1, OverflowStrategy::DropHead)
        .unwrap()
        .named("")
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    assert_eq!(
        src.actor_ref().path().name(),
        "actor_ref",
        "the stage kind's name"
    );
    down.request(1);
    src.tell(5u32);
    assert_eq!(down.expect_next(), 5);

    // Fused into a folding sink.
    let (src, done) = Source::actor_ref(1, OverflowStrategy::DropHead)
        .unwrap()
        .named("")
        .to_mat(Sink::collect(), Keep::both)
        .run(&mat);
    src.tell(6u32);
    src.complete();
    assert_eq!(done.wait(), Ok(vec![6]));

    let (src, mut down) = Source::actor_ref_with_backpressure(ignorer(&system), ())
        .named("")
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    down.request(1);
    src.tell(8u32);
    assert_eq!(down.expect_next(), 8);
    shutdown(&system);
}

/// A sink whose stage actor forwards what it is told.
struct StageActorSink(std::sync::mpsc::Sender<u32>);

struct StageActorSinkLogic {
    shape: SinkShape<()>,
    report: std::sync::mpsc::Sender<u32>,
}

impl GraphStage for StageActorSink {
    type Shape = SinkShape<()>;
    type Mat = weir_actor::ActorRef<u32>;

    fn name(&self) -> &'static str {
        "stage_actor_sink"
    }

    fn create_logic(&self, cx: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, Self::Mat) {
        let actor = cx.stage_actor(|this: &mut StageActorSinkLogic, message, _ctx| {
            if let StageActorMessage::Message(x) = message {
                let _ = this.report.send(x);
            }
            Ok(())
        });
        let logic = StageActorSinkLogic {
            shape: SinkShape::new(),
            report: self.0.clone(),
        };
        (Box::new(logic), actor.actor_ref())
    }
}

impl GraphStageLogic for StageActorSinkLogic {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.pull(self.shape.inlet)
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.grab(self.shape.inlet)?;
        ctx.pull(self.shape.inlet)
    }
}

#[test]
fn an_empty_name_on_a_stage_with_a_stage_actor_is_a_name_like_any_other() {
    let (system, mat) = stream_system("empty-name-stage-actor");
    let (tx, rx) = std::sync::mpsc::channel();
    let actor = TestSource::probe::<()>()
        .to_mat(Sink::from_graph(StageActorSink(tx)).named(""), Keep::right)
        .run(&mat);
    assert!(
        actor.path().name().ends_with("-stageActor"),
        "{}",
        actor.path()
    );
    actor.tell(9u32);
    assert_eq!(rx.recv_timeout(PATIENCE), Ok(9));
    shutdown(&system);
}
