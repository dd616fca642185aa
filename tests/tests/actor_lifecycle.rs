//! Lifecycle: hooks, stop paths, poison pill, children before parents, terminate order and completion.

use std::sync::mpsc::Sender;

use weir_actor::{Actor, ActorSystem, Context, Props, WaitError};
use weir_tests::{PATIENCE, Probe, eventually, shutdown};

/// Logs its hooks as "<name>:<hook>" and spawns the children it is given.
struct Node {
    name: String,
    children: Vec<String>,
    log: Sender<String>,
}

fn node(name: &str, children: &[&str], log: &Sender<String>) -> Props<Node> {
    let name = name.to_owned();
    let children: Vec<String> = children.iter().map(|c| (*c).to_owned()).collect();
    let log = log.clone();
    Props::new(move || Node {
        name: name.clone(),
        children: children.clone(),
        log: log.clone(),
    })
}

enum NodeMsg {
    Echo(String),
    StopSelf,
    StopChild(String),
}

impl Actor for Node {
    type Msg = NodeMsg;
    fn pre_start(&mut self, ctx: &mut Context<Self>) {
        self.log.send(format!("{}:pre_start", self.name)).unwrap();
        for child in self.children.clone() {
            let grandchildren: &[&str] = if child.ends_with("-deep") {
                &["leaf"]
            } else {
                &[]
            };
            ctx.spawn(node(&child, grandchildren, &self.log), &child)
                .unwrap();
        }
    }
    fn receive(&mut self, ctx: &mut Context<Self>, msg: NodeMsg) {
        match msg {
            NodeMsg::Echo(s) => self.log.send(format!("{}:{s}", self.name)).unwrap(),
            NodeMsg::StopSelf => ctx.stop_self(),
            NodeMsg::StopChild(name) => {
                let child = ctx.child(&name).expect("child exists");
                ctx.stop(child);
            }
        }
    }
    fn post_stop(&mut self, _: &mut Context<Self>) {
        self.log.send(format!("{}:post_stop", self.name)).unwrap();
    }
}

#[test]
fn children_stop_before_their_parent_and_post_stop_runs_once() {
    let system = ActorSystem::new("tree").unwrap();
    let probe = Probe::new();
    let parent = system
        .spawn(node("parent", &["child-deep"], &probe.sender()), "parent")
        .unwrap();
    let mut started = probe.expect_n(3);
    started.sort();
    assert_eq!(
        started,
        ["child-deep:pre_start", "leaf:pre_start", "parent:pre_start"]
    );
    parent.stop();
    assert_eq!(
        probe.expect_n(3),
        ["leaf:post_stop", "child-deep:post_stop", "parent:post_stop"]
    );
    assert!(eventually(PATIENCE, || parent.is_terminated()));
    parent.stop(); // stopping again is harmless
    probe.expect_nothing();
    shutdown(&system);
    probe.expect_nothing();
}

#[test]
fn stop_self_stop_child_and_stop_through_a_ref() {
    let system = ActorSystem::new("stops").unwrap();
    let probe = Probe::new();
    let parent = system
        .spawn(node("p", &["c1", "c2"], &probe.sender()), "p")
        .unwrap();
    probe.expect_n(3);

    parent.tell(NodeMsg::StopChild("c1".into()));
    assert_eq!(probe.expect(), "c1:post_stop");

    let c2 = system
        .spawn(node("solo", &[], &probe.sender()), "solo")
        .unwrap();
    assert_eq!(probe.expect(), "solo:pre_start");
    c2.tell(NodeMsg::StopSelf);
    assert_eq!(probe.expect(), "solo:post_stop");

    parent.stop();
    assert_eq!(probe.expect_n(2), ["c2:post_stop", "p:post_stop"]);
    shutdown(&system);
}

#[test]
fn poison_pill_stops_after_the_queued_messages() {
    let system = ActorSystem::new("pill").unwrap();
    let probe = Probe::new();
    let actor = system.spawn(node("a", &[], &probe.sender()), "a").unwrap();
    assert_eq!(probe.expect(), "a:pre_start");
    for i in 0..100 {
        actor.tell(NodeMsg::Echo(i.to_string()));
    }
    actor.poison_pill();
    let expected: Vec<String> = (0..100)
        .map(|i| format!("a:{i}"))
        .chain(["a:post_stop".to_owned()])
        .collect();
    assert_eq!(probe.expect_n(101), expected);
    assert!(eventually(PATIENCE, || actor.is_terminated()));
    actor.tell(NodeMsg::Echo("late".into()));
    probe.expect_nothing();
    assert_eq!(system.event_stream().dead_letter_count(), 1);
    shutdown(&system);
}

#[test]
fn terminate_stops_user_actors_top_down_before_system_actors() {
    let system = ActorSystem::new("term").unwrap();
    let probe = Probe::new();
    system
        .spawn(node("top", &["mid-deep"], &probe.sender()), "top")
        .unwrap();
    system
        .spawn_system_actor(node("service", &[], &probe.sender()), "service")
        .unwrap();
    probe.expect_n(4);
    let termination = system.terminate();
    termination.wait().unwrap();
    assert_eq!(
        probe.expect_n(4),
        [
            "leaf:post_stop",
            "mid-deep:post_stop",
            "top:post_stop",
            "service:post_stop"
        ]
    );
    probe.expect_nothing();
}

#[test]
fn termination_is_a_future_too_and_terminate_is_idempotent() {
    let system = ActorSystem::new("fut").unwrap();
    let probe = Probe::new();
    let _a = system
        .spawn(node("a", &["b"], &probe.sender()), "a")
        .unwrap();
    probe.expect_n(2);
    let first = system.terminate();
    let second = system.terminate();
    futures_executor::block_on(first);
    assert!(second.is_completed());
    second.wait().unwrap();
    assert!(system.when_terminated().is_completed());
}

/// Blocks on its own system's termination from inside: must be refused.
struct WaitsInside(Sender<Result<(), WaitError>>);
impl Actor for WaitsInside {
    type Msg = ();
    fn receive(&mut self, ctx: &mut Context<Self>, _: ()) {
        let waited = ctx.system().when_terminated().wait().map(|_| ());
        self.0.send(waited).unwrap();
    }
}

#[test]
fn waiting_for_termination_from_inside_an_actor_is_refused() {
    let system = ActorSystem::new("inside").unwrap();
    let probe = Probe::new();
    let tx = probe.sender();
    let actor = system
        .spawn(Props::new(move || WaitsInside(tx.clone())), "w")
        .unwrap();
    actor.tell(());
    assert_eq!(probe.expect(), Err(WaitError::OnDispatcherThread));
    shutdown(&system);
}

#[test]
fn waiting_for_termination_with_a_timeout_too_long_for_the_clock_waits_until_it_ends() {
    let system = ActorSystem::new("forever").unwrap();
    assert_eq!(
        system
            .terminate()
            .wait_timeout(std::time::Duration::MAX)
            .map(|report| report.is_clean()),
        Ok(true)
    );
}

#[test]
fn terminate_right_after_build_completes() {
    // Races `terminate` against the root's first run, many times.
    for _ in 0..200 {
        let system = ActorSystem::builder()
            .name("quick")
            .threads(2)
            .build()
            .unwrap();
        system.terminate().wait_timeout(PATIENCE).unwrap();
    }
}
