//! `Context::message_adapter`: references of other message types that feed an actor's own mailbox.

use std::sync::mpsc;
use std::time::Duration;

use weir_actor::testkit::TestProbe;
use weir_actor::{
    Actor, ActorRef, ActorSystem, Context, Directive, Event, FailurePhase, Props,
    SupervisorStrategy, ask,
};
use weir_tests::{PATIENCE, QUIET, shutdown};

/// Replies of another actor's protocol.
#[derive(Debug, PartialEq)]
struct Pong(u32);

#[derive(Debug)]
enum Msg {
    Direct(u32),
    Adapted(u32),
    /// Hand out a fresh adapter (a second registration for `Pong`).
    Another(ActorRef<ActorRef<Pong>>),
}

/// Reports what it receives, and hands its `Pong` adapter to `adapters`
/// when it starts (again after each restart).
struct Recorder {
    adapters: ActorRef<ActorRef<Pong>>,
    seen: ActorRef<String>,
    count: u32,
}

impl Actor for Recorder {
    type Msg = Msg;
    fn pre_start(&mut self, ctx: &mut Context<Self>) {
        self.adapters.tell(ctx.message_adapter(|Pong(n)| {
            assert!(n != 13, "adapter boom");
            Msg::Adapted(n)
        }));
    }
    fn receive(&mut self, ctx: &mut Context<Self>, msg: Msg) {
        self.count += 1;
        match msg {
            Msg::Direct(n) => self.seen.tell(format!("direct {n} #{}", self.count)),
            Msg::Adapted(n) => self.seen.tell(format!("adapted {n} #{}", self.count)),
            Msg::Another(to) => to.tell(ctx.message_adapter(|Pong(n)| Msg::Adapted(n + 1000))),
        }
    }
}

struct Rig {
    system: ActorSystem,
    adapters: TestProbe<ActorRef<Pong>>,
    seen: TestProbe<String>,
}

impl Rig {
    fn new(name: &str) -> Self {
        let system = ActorSystem::new(name).unwrap();
        let adapters = TestProbe::new(&system);
        let seen = TestProbe::new(&system);
        Self {
            system,
            adapters,
            seen,
        }
    }

    fn props(&self) -> Props<Recorder> {
        let (adapters, seen) = (self.adapters.actor_ref(), self.seen.actor_ref());
        Props::new(move || Recorder {
            adapters: adapters.clone(),
            seen: seen.clone(),
            count: 0,
        })
    }
}

#[test]
fn adapted_messages_reach_the_actor_in_order_with_its_own() {
    let mut rig = Rig::new("adapter-order");
    let recorder = rig.system.spawn(rig.props(), "recorder").unwrap();
    let pongs = rig.adapters.receive_msg();
    recorder.tell(Msg::Direct(1));
    pongs.tell(Pong(2));
    recorder.tell(Msg::Direct(3));
    pongs.tell(Pong(4));
    assert_eq!(
        rig.seen.receive_n(4),
        ["direct 1 #1", "adapted 2 #2", "direct 3 #3", "adapted 4 #4"]
    );
    shutdown(&rig.system);
}

#[test]
fn an_adapter_is_an_asks_reply_to() {
    let mut rig = Rig::new("adapter-ask");
    rig.system.spawn(rig.props(), "recorder").unwrap();
    let pongs = rig.adapters.receive_msg();
    // The adapter takes `Pong`s from anyone who has it, such as a service
    // answering an ask-shaped request.
    let mut service = TestProbe::<(u32, ActorRef<Pong>)>::new(&rig.system);
    service.actor_ref().tell((5, pongs));
    let (n, reply_to) = service.receive_msg();
    reply_to.tell(Pong(n));
    rig.seen.expect_msg("adapted 5 #1".to_owned());
    shutdown(&rig.system);
}

#[test]
fn an_adapter_dies_with_its_actor_and_later_messages_are_dead_letters() {
    let mut rig = Rig::new("adapter-stop");
    let recorder = rig.system.spawn(rig.props(), "recorder").unwrap();
    let pongs = rig.adapters.receive_msg();
    let (tx, rx) = mpsc::channel();
    let _subscription = rig.system.event_stream().subscribe(move |event| {
        if let Event::DeadLetter(letter) = event
            && let Some(Pong(n)) = letter.downcast_ref::<Pong>()
        {
            let _ = tx.send((*n, letter.recipient().clone()));
        }
    });
    rig.adapters.watch(&recorder);
    recorder.stop();
    rig.adapters.expect_terminated(&recorder);
    assert!(pongs.is_terminated());
    pongs.tell(Pong(9));
    let (n, recipient) = rx.recv_timeout(PATIENCE).unwrap();
    assert_eq!((n, &recipient), (9, recorder.path()));
    rig.seen.expect_no_msg(QUIET);
    shutdown(&rig.system);
}

#[test]
fn watching_an_adapter_gives_its_terminated_notice_when_the_actor_stops() {
    let mut rig = Rig::new("adapter-watch");
    let recorder = rig.system.spawn(rig.props(), "recorder").unwrap();
    let pongs = rig.adapters.receive_msg();
    let mut watcher = TestProbe::<()>::new(&rig.system);
    watcher.watch(&pongs);
    watcher.expect_no_msg(QUIET);
    recorder.stop();
    watcher.expect_terminated(&pongs);
    // A watch after the stop is answered at once.
    watcher.watch(&pongs);
    watcher.expect_terminated(&pongs);
    shutdown(&rig.system);
}

#[test]
fn stopping_an_adapter_is_ignored_and_the_actor_goes_on() {
    let mut rig = Rig::new("adapter-lifecycle");
    let recorder = rig.system.spawn(rig.props(), "recorder").unwrap();
    let pongs = rig.adapters.receive_msg();
    pongs.stop();
    pongs.poison_pill();
    pongs.tell(Pong(1));
    rig.seen.expect_msg("adapted 1 #1".to_owned());
    assert!(!recorder.is_terminated() && !pongs.is_terminated());
    assert_eq!(pongs.handle().downcast::<Pong>(), Some(pongs.clone()));
    assert_eq!(pongs.path(), recorder.path());
    shutdown(&rig.system);
}

#[test]
fn a_second_adapter_for_the_same_type_is_another_reference_and_both_work() {
    let mut rig = Rig::new("adapter-twice");
    let recorder = rig.system.spawn(rig.props(), "recorder").unwrap();
    let first = rig.adapters.receive_msg();
    recorder.tell(Msg::Another(rig.adapters.actor_ref()));
    let second = rig.adapters.receive_msg();
    assert_ne!(first, second);
    second.tell(Pong(1));
    rig.seen.expect_msg("adapted 1001 #2".to_owned());
    first.tell(Pong(1));
    rig.seen.expect_msg("adapted 1 #3".to_owned());
    shutdown(&rig.system);
}

/// Restarts by default: the adapter made before the restart still works.
#[test]
fn a_panicking_adapter_restarts_the_actor_not_the_sender_and_the_adapter_survives() {
    let mut rig = Rig::new("adapter-panic");
    rig.system.spawn(rig.props(), "recorder").unwrap();
    let pongs = rig.adapters.receive_msg();
    pongs.tell(Pong(1));
    rig.seen.expect_msg("adapted 1 #1".to_owned());
    // The sender's `tell` returns normally: the panic was caught on its thread.
    pongs.tell(Pong(13));
    pongs.tell(Pong(2));
    // The restart ran `pre_start` again (a fresh adapter) and reset the state.
    let _fresh = rig.adapters.receive_msg();
    rig.seen.expect_msg("adapted 2 #1".to_owned());
    shutdown(&rig.system);
}

/// Spawns a `Recorder` child and lets `decide` rule on its failures.
struct Parent {
    child: Option<Props<Recorder>>,
    failures: mpsc::Sender<(String, FailurePhase, String)>,
    directive: Directive,
}

impl Actor for Parent {
    type Msg = ();
    fn pre_start(&mut self, ctx: &mut Context<Self>) {
        ctx.spawn(self.child.take().unwrap(), "child").unwrap();
    }
    fn receive(&mut self, _: &mut Context<Self>, (): ()) {}
    fn supervisor_strategy(&self) -> SupervisorStrategy {
        let (failures, directive) = (self.failures.clone(), self.directive);
        SupervisorStrategy::one_for_one().with_decider(move |failure| {
            let _ = failures.send((
                failure.message().to_owned(),
                failure.phase(),
                failure.origin().name().to_owned(),
            ));
            directive
        })
    }
}

#[test]
fn a_panicking_adapter_fails_the_actor_at_that_point_of_its_mailbox() {
    let mut rig = Rig::new("adapter-supervised");
    let (tx, failures) = mpsc::channel();
    let child = rig.props();
    let failures_to = std::sync::Mutex::new(Some((child, tx)));
    rig.system
        .spawn(
            Props::new(move || {
                let (child, failures) = failures_to.lock().unwrap().take().unwrap();
                Parent {
                    child: Some(child),
                    failures,
                    directive: Directive::Resume,
                }
            }),
            "parent",
        )
        .unwrap();
    let pongs = rig.adapters.receive_msg();
    pongs.tell(Pong(1));
    pongs.tell(Pong(13));
    pongs.tell(Pong(2));
    let (message, phase, origin) = failures.recv_timeout(PATIENCE).unwrap();
    assert!(message.contains("adapter boom"), "{message}");
    assert_eq!((phase, origin.as_str()), (FailurePhase::Receive, "child"));
    // Resumed: the state is kept, and the messages before and after the
    // failure are handled in order.
    assert_eq!(rig.seen.receive_n(2), ["adapted 1 #1", "adapted 2 #2"]);
    shutdown(&rig.system);
}

#[test]
fn an_adapter_with_a_stopping_directive_stops_the_actor() {
    let mut rig = Rig::new("adapter-stop-directive");
    let (tx, failures) = mpsc::channel();
    let child = rig.props();
    let parts = std::sync::Mutex::new(Some((child, tx)));
    rig.system
        .spawn(
            Props::new(move || {
                let (child, failures) = parts.lock().unwrap().take().unwrap();
                Parent {
                    child: Some(child),
                    failures,
                    directive: Directive::Stop,
                }
            }),
            "parent",
        )
        .unwrap();
    let pongs = rig.adapters.receive_msg();
    rig.seen.watch(&pongs);
    pongs.tell(Pong(13));
    failures.recv_timeout(PATIENCE).unwrap();
    rig.seen.expect_terminated(&pongs);
    shutdown(&rig.system);
}

/// An ask whose reply type is not the asker's message type: the asker
/// passes an adapter as the reply-to.
#[test]
fn an_adapter_carries_an_ask_reply_of_another_type_into_the_actor() {
    struct Counter;
    impl Actor for Counter {
        type Msg = ActorRef<u64>;
        fn receive(&mut self, _: &mut Context<Self>, reply_to: ActorRef<u64>) {
            reply_to.tell(3);
        }
    }
    enum Asker {
        Start(ActorRef<ActorRef<u64>>),
        Count(u64),
    }
    struct AskerActor(ActorRef<u64>);
    impl Actor for AskerActor {
        type Msg = Asker;
        fn receive(&mut self, ctx: &mut Context<Self>, msg: Asker) {
            match msg {
                Asker::Start(counter) => counter.tell(ctx.message_adapter(Asker::Count)),
                Asker::Count(n) => self.0.tell(n * 10),
            }
        }
    }
    let system = ActorSystem::new("adapter-reply").unwrap();
    let mut probe = TestProbe::<u64>::new(&system);
    let to = probe.actor_ref();
    let counter = system.spawn(Props::new(|| Counter), "counter").unwrap();
    let asker = system
        .spawn(Props::new(move || AskerActor(to.clone())), "asker")
        .unwrap();
    asker.tell(Asker::Start(counter.clone()));
    probe.expect_msg(30);
    // And the plain ask still works on the same service.
    assert_eq!(ask(&counter, |r| r, Duration::from_secs(5)).wait(), Ok(3));
    shutdown(&system);
}
