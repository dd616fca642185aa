//! Death watch: one Terminated per watch, also for an actor already dead, in order with its last messages.

use std::sync::mpsc::Sender;

use weir_actor::{Actor, ActorHandle, ActorRef, ActorSystem, Context, Props, Terminated};
use weir_tests::{PATIENCE, Probe, eventually, shutdown};

struct Target;
impl Actor for Target {
    type Msg = ();
    fn receive(&mut self, ctx: &mut Context<Self>, _: ()) {
        ctx.stop_self();
    }
}

enum WatcherMsg {
    Watch(ActorHandle),
    Unwatch(ActorHandle),
    Note(String),
}

impl From<String> for WatcherMsg {
    fn from(s: String) -> Self {
        WatcherMsg::Note(s)
    }
}

struct Watcher(Sender<String>);
impl Actor for Watcher {
    type Msg = WatcherMsg;
    fn receive(&mut self, ctx: &mut Context<Self>, msg: WatcherMsg) {
        match msg {
            WatcherMsg::Watch(h) => ctx.watch(h),
            WatcherMsg::Unwatch(h) => ctx.unwatch(h),
            WatcherMsg::Note(s) => self.0.send(s).unwrap(),
        }
    }
    fn on_terminated(&mut self, _: &mut Context<Self>, t: Terminated) {
        self.0
            .send(format!("terminated:{}", t.actor().path().name()))
            .unwrap();
    }
}

fn watcher(system: &ActorSystem, probe: &Probe<String>) -> ActorRef<WatcherMsg> {
    let tx = probe.sender();
    system
        .spawn(Props::new(move || Watcher(tx.clone())), "watcher")
        .unwrap()
}

#[test]
fn terminated_is_delivered_exactly_once_even_when_watched_twice() {
    let system = ActorSystem::new("watch").unwrap();
    let probe = Probe::new();
    let w = watcher(&system, &probe);
    let target = system.spawn(Props::new(|| Target), "target").unwrap();
    w.tell(WatcherMsg::Watch(target.handle()));
    w.tell(WatcherMsg::Watch(target.handle()));
    w.tell(WatcherMsg::Note("watching".into()));
    assert_eq!(probe.expect(), "watching");
    target.tell(());
    assert_eq!(probe.expect(), "terminated:target");
    probe.expect_nothing();
    shutdown(&system);
}

#[test]
fn watching_an_already_dead_actor_still_gives_one_notice() {
    let system = ActorSystem::new("late").unwrap();
    let probe = Probe::new();
    let w = watcher(&system, &probe);
    let target = system.spawn(Props::new(|| Target), "target").unwrap();
    target.tell(());
    assert!(eventually(PATIENCE, || target.is_terminated()));
    w.tell(WatcherMsg::Watch(target.handle()));
    assert_eq!(probe.expect(), "terminated:target");
    probe.expect_nothing();
    shutdown(&system);
}

#[test]
fn unwatch_means_no_notice() {
    let system = ActorSystem::new("unwatch").unwrap();
    let probe = Probe::new();
    let w = watcher(&system, &probe);
    let target = system.spawn(Props::new(|| Target), "target").unwrap();
    w.tell(WatcherMsg::Watch(target.handle()));
    w.tell(WatcherMsg::Unwatch(target.handle()));
    w.tell(WatcherMsg::Note("unwatched".into()));
    assert_eq!(probe.expect(), "unwatched");
    target.tell(());
    assert!(eventually(PATIENCE, || target.is_terminated()));
    probe.expect_nothing();
    shutdown(&system);
}

/// Sends `n` notes to the watcher, then stops.
struct Chatty {
    to: ActorRef<WatcherMsg>,
    n: usize,
}
impl Actor for Chatty {
    type Msg = ();
    fn receive(&mut self, ctx: &mut Context<Self>, _: ()) {
        for i in 0..self.n {
            self.to.tell_into(format!("note {i}"));
        }
        ctx.stop_self();
    }
}

#[test]
fn terminated_comes_after_the_last_messages_of_the_watched_actor() {
    let system = ActorSystem::new("order").unwrap();
    let probe = Probe::new();
    let w = watcher(&system, &probe);
    let to = w.clone();
    let chatty = system
        .spawn(
            Props::new(move || Chatty {
                to: to.clone(),
                n: 50,
            }),
            "chatty",
        )
        .unwrap();
    w.tell(WatcherMsg::Watch(chatty.handle()));
    w.tell(WatcherMsg::Note("watching".into()));
    assert_eq!(probe.expect(), "watching");
    chatty.tell(());
    let mut expected: Vec<String> = (0..50).map(|i| format!("note {i}")).collect();
    expected.push("terminated:chatty".into());
    assert_eq!(probe.expect_n(51), expected);
    shutdown(&system);
}

/// Watches `target` from pre_start and reports to the probe.
struct SelfWatcher {
    target: ActorHandle,
    log: Sender<String>,
}
impl Actor for SelfWatcher {
    type Msg = ();
    fn pre_start(&mut self, ctx: &mut Context<Self>) {
        ctx.watch(&self.target);
    }
    fn receive(&mut self, _: &mut Context<Self>, _: ()) {}
    fn on_terminated(&mut self, _: &mut Context<Self>, t: Terminated) {
        self.log.send(t.actor().path().name().to_owned()).unwrap();
    }
}

#[test]
fn many_watchers_each_get_one_notice() {
    let system = ActorSystem::new("many").unwrap();
    let probe = Probe::new();
    let target = system.spawn(Props::new(|| Target), "target").unwrap();
    for i in 0..20 {
        let (t, log) = (target.handle(), probe.sender());
        system
            .spawn(
                Props::new(move || SelfWatcher {
                    target: t.clone(),
                    log: log.clone(),
                }),
                &format!("w{i}"),
            )
            .unwrap();
    }
    target.tell(());
    assert_eq!(probe.expect_n(20), vec!["target".to_owned(); 20]);
    probe.expect_nothing();
    shutdown(&system);
}
