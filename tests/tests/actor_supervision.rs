//! Supervision: restart, resume, stop and escalate; one-for-one and all-for-one; the restart budget.

use std::sync::mpsc::Sender;
use std::time::Duration;

use weir_actor::{
    Actor, ActorRef, ActorSystem, Context, Directive, Failure, FailurePhase, Props,
    SupervisorStrategy, ask,
};
use weir_tests::{PATIENCE, Probe, eventually, shutdown};

/// A counter that panics on `Crash`, logs its hooks, and reports its count.
struct Worker {
    name: &'static str,
    count: u64,
    log: Sender<String>,
    crash_in_pre_start: bool,
}

enum WorkerMsg {
    Add,
    Crash,
    Get(ActorRef<u64>),
}

impl Actor for Worker {
    type Msg = WorkerMsg;
    fn pre_start(&mut self, _: &mut Context<Self>) {
        self.log.send(format!("{}:pre_start", self.name)).unwrap();
        if self.crash_in_pre_start {
            panic!("boom in pre_start");
        }
    }
    fn receive(&mut self, _: &mut Context<Self>, msg: WorkerMsg) {
        match msg {
            WorkerMsg::Add => self.count += 1,
            WorkerMsg::Crash => panic!("boom"),
            WorkerMsg::Get(reply_to) => reply_to.tell(self.count),
        }
    }
    fn pre_restart(&mut self, ctx: &mut Context<Self>, failure: &Failure) {
        self.log
            .send(format!("{}:pre_restart:{}", self.name, failure.message()))
            .unwrap();
        ctx.stop_all_children();
        self.post_stop(ctx);
    }
    fn post_restart(&mut self, ctx: &mut Context<Self>, _: &Failure) {
        self.log
            .send(format!("{}:post_restart", self.name))
            .unwrap();
        self.pre_start(ctx);
    }
    fn post_stop(&mut self, _: &mut Context<Self>) {
        self.log.send(format!("{}:post_stop", self.name)).unwrap();
    }
}

fn worker(name: &'static str, log: &Sender<String>) -> Props<Worker> {
    let log = log.clone();
    Props::new(move || Worker {
        name,
        count: 0,
        log: log.clone(),
        crash_in_pre_start: false,
    })
}

fn count(w: &ActorRef<WorkerMsg>) -> u64 {
    ask(w, WorkerMsg::Get, PATIENCE).wait().unwrap()
}

/// A parent with a given strategy and children.
struct Supervisor {
    strategy: SupervisorStrategy,
    children: Vec<(&'static str, Props<Worker>)>,
    refs: Sender<ActorRef<WorkerMsg>>,
}

impl Actor for Supervisor {
    type Msg = ();
    fn pre_start(&mut self, ctx: &mut Context<Self>) {
        for (name, props) in self.children.clone() {
            self.refs.send(ctx.spawn(props, name).unwrap()).unwrap();
        }
    }
    fn receive(&mut self, _: &mut Context<Self>, _: ()) {}
    fn supervisor_strategy(&self) -> SupervisorStrategy {
        self.strategy.clone()
    }
}

fn supervised(
    system: &ActorSystem,
    strategy: SupervisorStrategy,
    children: Vec<(&'static str, Props<Worker>)>,
) -> Vec<ActorRef<WorkerMsg>> {
    let refs = Probe::new();
    let n = children.len();
    let tx = refs.sender();
    system
        .spawn(
            Props::new(move || Supervisor {
                strategy: strategy.clone(),
                children: children.clone(),
                refs: tx.clone(),
            }),
            "supervisor",
        )
        .unwrap();
    refs.expect_n(n)
}

#[test]
fn the_default_strategy_restarts_with_a_fresh_instance_and_keeps_the_mailbox() {
    let system = ActorSystem::new("restart").unwrap();
    let log = Probe::new();
    // Top level: supervised by the user guardian, whose default is restart.
    let w = system.spawn(worker("w", &log.sender()), "w").unwrap();
    assert_eq!(log.expect(), "w:pre_start");
    w.tell(WorkerMsg::Add);
    w.tell(WorkerMsg::Add);
    w.tell(WorkerMsg::Crash);
    w.tell(WorkerMsg::Add); // queued behind the crash: kept across the restart
    assert_eq!(
        log.expect_n(4),
        [
            "w:pre_restart:boom",
            "w:post_stop",
            "w:post_restart",
            "w:pre_start"
        ]
    );
    assert_eq!(
        count(&w),
        1,
        "fresh state, plus the message queued after the crash"
    );
    assert!(!w.is_terminated());
    shutdown(&system);
    assert_eq!(
        log.expect(),
        "w:post_stop",
        "post_stop once for the second incarnation"
    );
    log.expect_nothing();
}

#[test]
fn resume_keeps_the_state_and_drops_only_the_failing_message() {
    let system = ActorSystem::new("resume").unwrap();
    let log = Probe::new();
    let strategy = SupervisorStrategy::one_for_one().with_decider(|_| Directive::Resume);
    let w = supervised(&system, strategy, vec![("w", worker("w", &log.sender()))]).remove(0);
    assert_eq!(log.expect(), "w:pre_start");
    w.tell(WorkerMsg::Add);
    w.tell(WorkerMsg::Crash);
    w.tell(WorkerMsg::Add);
    assert_eq!(count(&w), 2);
    log.expect_nothing();
    shutdown(&system);
}

#[test]
fn stop_directive_stops_the_child() {
    let system = ActorSystem::new("stopDir").unwrap();
    let log = Probe::new();
    let strategy = SupervisorStrategy::one_for_one().with_decider(|_| Directive::Stop);
    let w = supervised(&system, strategy, vec![("w", worker("w", &log.sender()))]).remove(0);
    assert_eq!(log.expect(), "w:pre_start");
    w.tell(WorkerMsg::Crash);
    w.tell(WorkerMsg::Add);
    assert_eq!(log.expect(), "w:post_stop");
    assert!(eventually(PATIENCE, || w.is_terminated()));
    shutdown(&system);
}

#[test]
fn all_for_one_restarts_the_siblings_too() {
    let system = ActorSystem::new("allForOne").unwrap();
    let log = Probe::new();
    let children = vec![
        ("a", worker("a", &log.sender())),
        ("b", worker("b", &log.sender())),
    ];
    let refs = supervised(&system, SupervisorStrategy::all_for_one(), children);
    log.expect_n(2);
    refs[1].tell(WorkerMsg::Add);
    assert_eq!(count(&refs[1]), 1);
    refs[0].tell(WorkerMsg::Crash);
    let mut events = log.expect_n(8);
    events.sort();
    assert_eq!(
        events,
        [
            "a:post_restart",
            "a:post_stop",
            "a:pre_restart:boom",
            "a:pre_start",
            "b:post_restart",
            "b:post_stop",
            "b:pre_restart:boom",
            "b:pre_start"
        ]
    );
    assert_eq!(
        count(&refs[1]),
        0,
        "the sibling was restarted with fresh state"
    );
    shutdown(&system);
}

#[test]
fn one_for_one_leaves_the_siblings_alone() {
    let system = ActorSystem::new("oneForOne").unwrap();
    let log = Probe::new();
    let children = vec![
        ("a", worker("a", &log.sender())),
        ("b", worker("b", &log.sender())),
    ];
    let refs = supervised(&system, SupervisorStrategy::one_for_one(), children);
    log.expect_n(2);
    refs[1].tell(WorkerMsg::Add);
    refs[0].tell(WorkerMsg::Crash);
    assert_eq!(
        log.expect_n(4),
        [
            "a:pre_restart:boom",
            "a:post_stop",
            "a:post_restart",
            "a:pre_start"
        ]
    );
    assert_eq!(count(&refs[1]), 1);
    shutdown(&system);
}

#[test]
fn past_the_restart_budget_the_child_is_stopped() {
    let system = ActorSystem::new("budget").unwrap();
    let log = Probe::new();
    let strategy = SupervisorStrategy::one_for_one().with_max_restarts(2, Duration::from_secs(60));
    let w = supervised(&system, strategy, vec![("w", worker("w", &log.sender()))]).remove(0);
    assert_eq!(log.expect(), "w:pre_start");
    for _ in 0..3 {
        w.tell(WorkerMsg::Crash);
    }
    // Two restarts, then the third failure stops it.
    assert_eq!(
        log.expect_n(8)
            .iter()
            .filter(|e| e.ends_with("pre_restart:boom"))
            .count(),
        2
    );
    assert_eq!(log.expect(), "w:post_stop");
    assert!(eventually(PATIENCE, || w.is_terminated()));
    shutdown(&system);
}

#[test]
fn a_panic_in_pre_start_is_supervised() {
    let system = ActorSystem::new("preStart").unwrap();
    let log = Probe::new();
    let tx = log.sender();
    let phases = Probe::new();
    let ptx = phases.sender();
    let strategy = SupervisorStrategy::one_for_one()
        .with_max_restarts(1, Duration::from_secs(60))
        .with_decider(move |f: &Failure| {
            ptx.send(f.phase()).unwrap();
            Directive::Restart
        });
    let props = Props::new(move || Worker {
        name: "w",
        count: 0,
        log: tx.clone(),
        crash_in_pre_start: true,
    });
    let w = supervised(&system, strategy, vec![("w", props)]).remove(0);
    assert_eq!(phases.expect(), FailurePhase::Start);
    assert_eq!(
        phases.expect(),
        FailurePhase::Restart,
        "post_restart calls pre_start, which fails again"
    );
    assert!(
        eventually(PATIENCE, || w.is_terminated()),
        "budget of 1 spent: stopped"
    );
    assert!(log.expect_n(3).contains(&"w:pre_start".to_owned()));
    shutdown(&system);
}

/// A middle actor that escalates whatever its child does.
struct Escalator {
    log: Sender<String>,
    child: Sender<ActorRef<WorkerMsg>>,
}

impl Actor for Escalator {
    type Msg = ();
    fn pre_start(&mut self, ctx: &mut Context<Self>) {
        self.log.send("mid:pre_start".into()).unwrap();
        self.child
            .send(ctx.spawn(worker("leaf", &self.log), "leaf").unwrap())
            .unwrap();
    }
    fn receive(&mut self, _: &mut Context<Self>, _: ()) {}
    fn supervisor_strategy(&self) -> SupervisorStrategy {
        SupervisorStrategy::one_for_one().with_decider(|_| Directive::Escalate)
    }
}

#[test]
fn escalate_hands_the_failure_to_the_grandparent() {
    let system = ActorSystem::new("escalate").unwrap();
    let log = Probe::new();
    let children = Probe::new();
    let (l, c) = (log.sender(), children.sender());
    // Top level under the user guardian: restart on escalation.
    system
        .spawn(
            Props::new(move || Escalator {
                log: l.clone(),
                child: c.clone(),
            }),
            "mid",
        )
        .unwrap();
    let leaf = children.expect();
    log.expect_n(2);
    leaf.tell(WorkerMsg::Add);
    leaf.tell(WorkerMsg::Crash);
    // The middle actor restarts: its default pre_restart stops the leaf, and
    // the fresh instance spawns a fresh leaf.
    let events = log.expect_n(3);
    assert_eq!(
        events,
        ["leaf:post_stop", "mid:pre_start", "leaf:pre_start"]
    );
    let new_leaf = children.expect();
    assert_ne!(new_leaf, leaf);
    assert!(leaf.is_terminated());
    assert_eq!(count(&new_leaf), 0);
    shutdown(&system);
}

/// A middle actor that escalates its children's failures and keeps them
/// across its own restart (its `pre_restart` stops nothing).
struct Keeper {
    log: Sender<String>,
    child: Sender<ActorRef<WorkerMsg>>,
}

impl Actor for Keeper {
    type Msg = ();
    fn pre_start(&mut self, ctx: &mut Context<Self>) {
        self.log.send("keeper:pre_start".into()).unwrap();
        self.child
            .send(ctx.spawn(worker("leaf", &self.log), "leaf").unwrap())
            .unwrap();
    }
    fn receive(&mut self, _: &mut Context<Self>, _: ()) {}
    fn pre_restart(&mut self, _: &mut Context<Self>, _: &Failure) {
        self.log.send("keeper:pre_restart".into()).unwrap();
    }
    fn post_restart(&mut self, _: &mut Context<Self>, _: &Failure) {
        self.log.send("keeper:post_restart".into()).unwrap();
    }
    fn supervisor_strategy(&self) -> SupervisorStrategy {
        SupervisorStrategy::one_for_one().with_decider(|_| Directive::Escalate)
    }
}

#[test]
fn children_kept_by_a_restarted_parent_are_restarted_with_the_same_cause() {
    let system = ActorSystem::new("keptChildren").unwrap();
    let log = Probe::new();
    let children = Probe::new();
    let (l, c) = (log.sender(), children.sender());
    // Under the user guardian, which restarts on escalation.
    system
        .spawn(
            Props::new(move || Keeper {
                log: l.clone(),
                child: c.clone(),
            }),
            "keeper",
        )
        .unwrap();
    let leaf = children.expect();
    assert_eq!(log.expect_n(2), ["keeper:pre_start", "leaf:pre_start"]);
    leaf.tell(WorkerMsg::Add);
    leaf.tell(WorkerMsg::Crash);
    assert_eq!(
        log.expect_n(2),
        ["keeper:pre_restart", "keeper:post_restart"]
    );
    // The kept leaf is restarted (not left suspended), with the leaf's cause.
    assert_eq!(
        log.expect_n(4),
        [
            "leaf:pre_restart:boom",
            "leaf:post_stop",
            "leaf:post_restart",
            "leaf:pre_start"
        ]
    );
    assert_eq!(count(&leaf), 0, "the same leaf, restarted with fresh state");
    assert!(!leaf.is_terminated());
    children.expect_nothing();
    shutdown(&system);
}

/// An actor with a chain of `depth` descendants below it; answers `Get`
/// with its depth and panics on `Crash`; escalates its child's failures
/// when `escalate`.
struct Node {
    depth: u64,
    refs: Sender<ActorRef<WorkerMsg>>,
    escalate: bool,
}

impl Actor for Node {
    type Msg = WorkerMsg;
    fn pre_start(&mut self, ctx: &mut Context<Self>) {
        if self.depth > 0 {
            let (depth, refs, escalate) = (self.depth - 1, self.refs.clone(), self.escalate);
            let child = ctx
                .spawn(
                    Props::new(move || Node {
                        depth,
                        refs: refs.clone(),
                        escalate,
                    }),
                    "node",
                )
                .unwrap();
            self.refs.send(child).unwrap();
        }
    }
    fn receive(&mut self, _: &mut Context<Self>, msg: WorkerMsg) {
        match msg {
            WorkerMsg::Add => {}
            WorkerMsg::Crash => panic!("node down"),
            WorkerMsg::Get(reply_to) => reply_to.tell(self.depth),
        }
    }
    fn pre_restart(&mut self, _: &mut Context<Self>, _: &Failure) {}
    fn post_restart(&mut self, _: &mut Context<Self>, _: &Failure) {}
    fn supervisor_strategy(&self) -> SupervisorStrategy {
        match self.escalate {
            true => SupervisorStrategy::one_for_one().with_decider(|_| Directive::Escalate),
            false => SupervisorStrategy::default(),
        }
    }
}

/// A supervisor whose decider reports that it is deciding, then waits for
/// the test to release it with a directive.
fn held_decision(
    system: &ActorSystem,
    escalate: bool,
) -> (
    Vec<ActorRef<WorkerMsg>>,
    std::sync::mpsc::Receiver<()>,
    Sender<Directive>,
) {
    let (deciding_tx, deciding) = std::sync::mpsc::channel();
    let (release, release_rx) = std::sync::mpsc::channel::<Directive>();
    let deciding_tx = std::sync::Mutex::new(deciding_tx);
    let release_rx = std::sync::Arc::new(std::sync::Mutex::new(release_rx));
    let strategy = SupervisorStrategy::one_for_one().with_decider(move |_| {
        deciding_tx.lock().unwrap().send(()).unwrap();
        release_rx
            .lock()
            .unwrap()
            .recv_timeout(PATIENCE)
            .unwrap_or(Directive::Stop)
    });
    let refs = Probe::new();
    let tx = refs.sender();
    let props = Props::new(move || Node {
        depth: 2,
        refs: tx.clone(),
        escalate,
    });
    let top = supervised_node(system, strategy, props);
    let mut chain = vec![top];
    chain.extend(refs.expect_n(2));
    (chain, deciding, release)
}

/// Spawns `props` as "node" under a supervisor with `strategy`.
fn supervised_node(
    system: &ActorSystem,
    strategy: SupervisorStrategy,
    props: Props<Node>,
) -> ActorRef<WorkerMsg> {
    struct Holder {
        strategy: SupervisorStrategy,
        props: Props<Node>,
        out: Sender<ActorRef<WorkerMsg>>,
    }
    impl Actor for Holder {
        type Msg = ();
        fn pre_start(&mut self, ctx: &mut Context<Self>) {
            let node = ctx.spawn(self.props.clone(), "node").unwrap();
            self.out.send(node).unwrap();
        }
        fn receive(&mut self, _: &mut Context<Self>, _: ()) {}
        fn supervisor_strategy(&self) -> SupervisorStrategy {
            self.strategy.clone()
        }
    }
    let out = Probe::new();
    let tx = out.sender();
    system
        .spawn(
            Props::new(move || Holder {
                strategy: strategy.clone(),
                props: props.clone(),
                out: tx.clone(),
            }),
            "holder",
        )
        .unwrap();
    out.expect()
}

fn answers(node: &ActorRef<WorkerMsg>, within: Duration) -> Option<u64> {
    ask(node, WorkerMsg::Get, within).wait().ok()
}

#[test]
fn the_descendants_of_a_failing_actor_wait_for_its_supervisor() {
    let system = ActorSystem::new("suspendSubtree").unwrap();
    let (chain, deciding, release) = held_decision(&system, false);
    assert_eq!(answers(&chain[2], PATIENCE), Some(0));
    chain[0].tell(WorkerMsg::Crash);
    deciding.recv_timeout(PATIENCE).unwrap();
    // The failing actor's child and grandchild hold their messages too.
    let child = ask(&chain[1], WorkerMsg::Get, PATIENCE);
    let grandchild = ask(&chain[2], WorkerMsg::Get, PATIENCE);
    assert_eq!(answers(&chain[2], weir_tests::QUIET), None);
    assert_eq!(answers(&chain[1], weir_tests::QUIET), None);
    // Resumed: the whole subtree takes its messages again.
    release.send(Directive::Resume).unwrap();
    assert_eq!(child.wait(), Ok(1));
    assert_eq!(grandchild.wait(), Ok(0));
    assert_eq!(answers(&chain[0], PATIENCE), Some(2));
    shutdown(&system);
}

#[test]
fn the_descendants_kept_across_a_restart_run_again_after_it() {
    let system = ActorSystem::new("suspendSubtreeRestart").unwrap();
    let (chain, deciding, release) = held_decision(&system, false);
    chain[0].tell(WorkerMsg::Crash);
    deciding.recv_timeout(PATIENCE).unwrap();
    assert_eq!(answers(&chain[2], weir_tests::QUIET), None);
    // Restarted: the kept descendants are restarted and answer again.
    release.send(Directive::Restart).unwrap();
    assert_eq!(answers(&chain[2], PATIENCE), Some(0));
    assert_eq!(answers(&chain[1], PATIENCE), Some(1));
    assert_eq!(answers(&chain[0], PATIENCE), Some(2));
    shutdown(&system);
}

#[test]
fn a_resumed_escalation_resumes_the_actor_that_failed_first() {
    let system = ActorSystem::new("resumeEscalated").unwrap();
    let (chain, deciding, release) = held_decision(&system, true);
    // The grandchild fails; its parent and grandparent escalate.
    chain[2].tell(WorkerMsg::Crash);
    deciding.recv_timeout(PATIENCE).unwrap();
    for node in &chain {
        assert_eq!(answers(node, weir_tests::QUIET), None);
    }
    release.send(Directive::Resume).unwrap();
    assert_eq!(answers(&chain[2], PATIENCE), Some(0));
    assert_eq!(answers(&chain[1], PATIENCE), Some(1));
    assert_eq!(answers(&chain[0], PATIENCE), Some(2));
    // Each failure is decided once: a second failure is decided again.
    chain[2].tell(WorkerMsg::Crash);
    deciding.recv_timeout(PATIENCE).unwrap();
    release.send(Directive::Resume).unwrap();
    assert_eq!(answers(&chain[2], PATIENCE), Some(0));
    shutdown(&system);
}

/// Spawns a child "kid" in `pre_start` (so again in `post_restart`, after
/// the default `pre_restart` stopped the old one) and reports it; says so
/// before it panics on `Crash`.
struct Respawner {
    refs: Sender<ActorRef<WorkerMsg>>,
    crashing: Sender<()>,
}

impl Actor for Respawner {
    type Msg = WorkerMsg;
    fn pre_start(&mut self, ctx: &mut Context<Self>) {
        let (refs, _) = std::sync::mpsc::channel();
        let props = Props::new(move || Node {
            depth: 0,
            refs: refs.clone(),
            escalate: false,
        });
        self.refs.send(ctx.spawn(props, "kid").unwrap()).unwrap();
    }
    fn receive(&mut self, _: &mut Context<Self>, msg: WorkerMsg) {
        match msg {
            WorkerMsg::Add => {}
            WorkerMsg::Crash => {
                self.crashing.send(()).unwrap();
                panic!("respawner down")
            }
            WorkerMsg::Get(reply_to) => reply_to.tell(1),
        }
    }
}

/// The parent of a [`Respawner`] (default strategy: restart). On `Crash`
/// it has its child crash first, then panics itself, so it decides the
/// child's failure while its own waits for its supervisor.
struct CrashesAfterChild {
    child: Option<ActorRef<WorkerMsg>>,
    refs: Sender<ActorRef<WorkerMsg>>,
    crashing: std::sync::Arc<std::sync::Mutex<std::sync::mpsc::Receiver<()>>>,
    crashing_tx: Sender<()>,
}

impl Actor for CrashesAfterChild {
    type Msg = WorkerMsg;
    fn pre_start(&mut self, ctx: &mut Context<Self>) {
        let (refs, crashing) = (self.refs.clone(), self.crashing_tx.clone());
        let props = Props::new(move || Respawner {
            refs: refs.clone(),
            crashing: crashing.clone(),
        });
        self.child = Some(ctx.spawn(props, "respawner").unwrap());
    }
    fn receive(&mut self, _: &mut Context<Self>, msg: WorkerMsg) {
        match msg {
            WorkerMsg::Add => {}
            WorkerMsg::Crash => {
                self.child.as_ref().unwrap().tell(WorkerMsg::Crash);
                let said = self.crashing.lock().unwrap().recv_timeout(PATIENCE);
                said.expect("the child crashes");
                panic!("parent down")
            }
            WorkerMsg::Get(reply_to) => reply_to.tell(2),
        }
    }
    fn pre_restart(&mut self, _: &mut Context<Self>, _: &Failure) {}
    fn post_restart(&mut self, _: &mut Context<Self>, _: &Failure) {}
}

/// A child made while an ancestor's failure waits for its directive (here:
/// by a restarted parent, whose own parent is the failing one) is held
/// with the rest of the subtree, as in Akka, where a new child takes its
/// parent's suspensions; it was made running, and ran through the wait.
#[test]
fn a_child_made_while_an_ancestor_fails_waits_with_the_subtree() {
    let system = ActorSystem::new("suspendNewChild").unwrap();
    let (deciding_tx, deciding) = std::sync::mpsc::channel();
    let (release, release_rx) = std::sync::mpsc::channel::<Directive>();
    let deciding_tx = std::sync::Mutex::new(deciding_tx);
    let release_rx = std::sync::Arc::new(std::sync::Mutex::new(release_rx));
    let strategy = SupervisorStrategy::one_for_one().with_decider(move |_| {
        deciding_tx.lock().unwrap().send(()).unwrap();
        release_rx
            .lock()
            .unwrap()
            .recv_timeout(PATIENCE)
            .unwrap_or(Directive::Stop)
    });
    let refs = Probe::new();
    let tx = refs.sender();
    let (crashing_tx, crashing) = std::sync::mpsc::channel();
    let crashing = std::sync::Arc::new(std::sync::Mutex::new(crashing));
    struct Holder {
        strategy: SupervisorStrategy,
        props: Props<CrashesAfterChild>,
        out: Sender<ActorRef<WorkerMsg>>,
    }
    impl Actor for Holder {
        type Msg = ();
        fn pre_start(&mut self, ctx: &mut Context<Self>) {
            let top = ctx.spawn(self.props.clone(), "top").unwrap();
            self.out.send(top).unwrap();
        }
        fn receive(&mut self, _: &mut Context<Self>, _: ()) {}
        fn supervisor_strategy(&self) -> SupervisorStrategy {
            self.strategy.clone()
        }
    }
    let props = Props::new(move || CrashesAfterChild {
        child: None,
        refs: tx.clone(),
        crashing: crashing.clone(),
        crashing_tx: crashing_tx.clone(),
    });
    let out = Probe::new();
    let out_tx = out.sender();
    system
        .spawn(
            Props::new(move || Holder {
                strategy: strategy.clone(),
                props: props.clone(),
                out: out_tx.clone(),
            }),
            "holder",
        )
        .unwrap();
    let top = out.expect();
    let first_kid = refs.expect();
    assert_eq!(answers(&first_kid, PATIENCE), Some(0));
    top.tell(WorkerMsg::Crash);
    deciding.recv_timeout(PATIENCE).unwrap();
    // The top decided its child's failure (restart) while its own waits:
    // the restarted child made a new kid, under the failing top.
    let kid = refs.expect();
    let asked = ask(&kid, WorkerMsg::Get, PATIENCE);
    assert_eq!(
        answers(&kid, weir_tests::QUIET),
        None,
        "a kid made under a failing ancestor waits for its directive"
    );
    release.send(Directive::Resume).unwrap();
    assert_eq!(asked.wait(), Ok(0));
    assert_eq!(answers(&kid, PATIENCE), Some(0));
    assert_eq!(answers(&top, PATIENCE), Some(2));
    shutdown(&system);
}
