//! Stage actors, after Pekko's StageActorRefSpec: messages handled in the stage, replies, watch, lifecycle.

use std::sync::mpsc;

use weir_actor::{Actor, ActorHandle, ActorRef, Context, Props, Terminated};
use weir_streams::prelude::*;
use weir_streams::stage::{
    GraphStage, GraphStageLogic, InPort, MatContext, SinkShape, StageActor, StageActorMessage,
    StageContext, StageResult,
};
use weir_streams::testkit::TestSource;
use weir_tests::{PATIENCE, QUIET, shutdown, stream_system};

enum Cmd {
    Add(i64),
    AddAndTell(i64, ActorRef<i64>),
    Watch(ActorHandle),
    Unwatch(ActorHandle),
    StopNow,
}

/// A sink that sums its elements and the `Add` messages its stage actor gets.
struct SumStage;

struct SumLogic {
    shape: SinkShape<i64>,
    sum: i64,
    actor: Option<StageActor<Cmd>>,
    done: Option<mpsc::Sender<Result<i64, String>>>,
    terminated: mpsc::Sender<String>,
}

impl GraphStage for SumStage {
    type Shape = SinkShape<i64>;
    type Mat = (
        ActorRef<Cmd>,
        mpsc::Receiver<Result<i64, String>>,
        mpsc::Receiver<String>,
    );

    fn name(&self) -> &'static str {
        "sum"
    }

    fn create_logic(&self, cx: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, Self::Mat) {
        let actor = cx.stage_actor(|this: &mut SumLogic, message, ctx| {
            match message {
                StageActorMessage::Message(Cmd::Add(n)) => this.sum += n,
                StageActorMessage::Message(Cmd::AddAndTell(n, reply_to)) => {
                    this.sum += n;
                    reply_to.tell(this.sum);
                }
                StageActorMessage::Message(Cmd::Watch(target)) => {
                    this.actor.as_ref().unwrap().watch(target)
                }
                StageActorMessage::Message(Cmd::Unwatch(target)) => {
                    this.actor.as_ref().unwrap().unwatch(target)
                }
                StageActorMessage::Message(Cmd::StopNow) => {
                    this.finish();
                    ctx.complete_stage();
                }
                StageActorMessage::Terminated(t) => {
                    let _ = this.terminated.send(t.actor().path().name().to_owned());
                }
            }
            Ok(())
        });
        let (done, done_rx) = mpsc::channel();
        let (terminated, terminated_rx) = mpsc::channel();
        let actor_ref = actor.actor_ref();
        assert_eq!(actor.actor_ref(), actor_ref, "the same ref each time");
        let logic = SumLogic {
            shape: SinkShape::new(),
            sum: 0,
            actor: Some(actor),
            done: Some(done),
            terminated,
        };
        (Box::new(logic), (actor_ref, done_rx, terminated_rx))
    }
}

impl SumLogic {
    fn finish(&mut self) {
        if let Some(done) = self.done.take() {
            let _ = done.send(Ok(self.sum));
        }
    }
}

impl GraphStageLogic for SumLogic {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.pull(self.shape.inlet)
    }
    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.sum += ctx.grab(self.shape.inlet)?;
        ctx.pull(self.shape.inlet)
    }
    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.finish();
        ctx.complete_stage();
        Ok(())
    }
}

struct Replies(std::sync::mpsc::Sender<i64>);
impl Actor for Replies {
    type Msg = i64;
    fn receive(&mut self, _: &mut Context<Self>, sum: i64) {
        let _ = self.0.send(sum);
    }
}

struct Watcher(ActorHandle, mpsc::Sender<String>);
impl Actor for Watcher {
    type Msg = ();
    fn pre_start(&mut self, ctx: &mut Context<Self>) {
        ctx.watch(self.0.clone());
    }
    fn receive(&mut self, _: &mut Context<Self>, (): ()) {}
    fn on_terminated(&mut self, _: &mut Context<Self>, t: Terminated) {
        let _ = self.1.send(t.actor().path().name().to_owned());
    }
}

struct Idle;
impl Actor for Idle {
    type Msg = ();
    fn receive(&mut self, _: &mut Context<Self>, (): ()) {}
}

#[test]
fn receives_messages_in_order_inside_the_stage_even_before_demand() {
    let (system, mat) = stream_system("stage-actor-receive");
    let (_up, (actor, done, _)) = TestSource::probe::<i64>()
        .to_mat(Sink::from_graph(SumStage), Keep::both)
        .run(&mat);
    for n in [1, 2, 3] {
        actor.tell(Cmd::Add(n));
    }
    actor.tell(Cmd::StopNow);
    assert_eq!(done.recv_timeout(PATIENCE).unwrap(), Ok(6));
    shutdown(&system);
}

#[test]
fn replies_reach_the_sender() {
    let (system, mat) = stream_system("stage-actor-reply");
    let (mut up, (actor, done, _)) = TestSource::probe::<i64>()
        .to_mat(Sink::from_graph(SumStage), Keep::both)
        .run(&mat);
    let (tx, rx) = mpsc::channel();
    let replies = system
        .spawn(Props::new(move || Replies(tx.clone())), "replies")
        .unwrap();
    up.expect_request();
    up.send_next(10);
    actor.tell(Cmd::AddAndTell(1, replies.clone()));
    assert_eq!(rx.recv_timeout(PATIENCE).unwrap(), 11);
    up.send_complete();
    assert_eq!(done.recv_timeout(PATIENCE).unwrap(), Ok(11));
    shutdown(&system);
}

#[test]
fn is_watchable_and_terminates_when_the_stream_completes() {
    let (system, mat) = stream_system("stage-actor-watch");
    let (mut up, (actor, done, _)) = TestSource::probe::<i64>()
        .to_mat(Sink::from_graph(SumStage), Keep::both)
        .run(&mat);
    let (tx, rx) = mpsc::channel();
    let target = actor.handle();
    let tx2 = tx.clone();
    system
        .spawn(
            Props::new(move || Watcher(target.clone(), tx2.clone())),
            "watcher",
        )
        .unwrap();
    up.expect_request();
    up.send_complete();
    assert_eq!(done.recv_timeout(PATIENCE).unwrap(), Ok(0));
    assert!(
        rx.recv_timeout(PATIENCE)
            .unwrap()
            .starts_with("sum-stageActor")
    );
    assert!(actor.is_terminated());
    // Watching after termination notifies at once.
    let target = actor.handle();
    system
        .spawn(
            Props::new(move || Watcher(target.clone(), tx.clone())),
            "late",
        )
        .unwrap();
    assert!(
        rx.recv_timeout(PATIENCE)
            .unwrap()
            .starts_with("sum-stageActor")
    );
    // A message after termination is a dead letter, not a panic.
    actor.tell(Cmd::Add(1));
    shutdown(&system);
}

#[test]
fn watches_other_actors_and_can_unwatch() {
    let (system, mat) = stream_system("stage-actor-watches");
    let (_up, (actor, _done, terminated)) = TestSource::probe::<i64>()
        .to_mat(Sink::from_graph(SumStage), Keep::both)
        .run(&mat);
    let watched = system.spawn(Props::new(|| Idle), "watched").unwrap();
    let unwatched = system.spawn(Props::new(|| Idle), "unwatched").unwrap();
    actor.tell(Cmd::Watch(watched.handle()));
    actor.tell(Cmd::Watch(unwatched.handle()));
    actor.tell(Cmd::Unwatch(unwatched.handle()));
    // The stage handles its messages in order: once it has replied to the
    // next one, the watch requests have been sent, ahead of the stops.
    let (replies_tx, replies) = mpsc::channel();
    let reply_to = system
        .spawn(Props::new(move || Replies(replies_tx.clone())), "replies")
        .unwrap();
    actor.tell(Cmd::AddAndTell(0, reply_to));
    assert_eq!(replies.recv_timeout(PATIENCE), Ok(0));
    unwatched.stop();
    watched.stop();
    assert_eq!(terminated.recv_timeout(PATIENCE).unwrap(), "watched");
    assert!(
        terminated.recv_timeout(QUIET).is_err(),
        "no notice for the unwatched actor"
    );
    shutdown(&system);
}

#[test]
fn stop_and_poison_pill_are_ignored() {
    let (system, mat) = stream_system("stage-actor-lifecycle");
    let (_up, (actor, done, _)) = TestSource::probe::<i64>()
        .to_mat(Sink::from_graph(SumStage), Keep::both)
        .run(&mat);
    actor.tell(Cmd::Add(40));
    actor.stop();
    actor.poison_pill();
    actor.tell(Cmd::Add(2));
    actor.tell(Cmd::StopNow);
    assert_eq!(done.recv_timeout(PATIENCE).unwrap(), Ok(42));
    shutdown(&system);
}
