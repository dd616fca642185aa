//! Routers: pool and group routers, every routing logic, resizing,
//! supervision of pool routees, death watch of group routees.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use weir_actor::routing::{Group, Pool, RouteeError, Router, RouterMsg, Routing};
use weir_actor::testkit::TestClock;
use weir_actor::{
    Actor, ActorRef, ActorSystem, AskError, Context, DeadLetterReason, Directive, Event, Props,
    SupervisorStrategy, ask,
};

const LONG: Duration = Duration::from_secs(10);

/// Poll `cond` until it holds; panics after ten seconds.
fn wait_until(what: &str, cond: impl Fn() -> bool) {
    let deadline = Instant::now() + LONG;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::yield_now();
    }
}

enum Msg {
    /// Reply with this routee's name.
    Who(ActorRef<String>),
    /// Reply with the key, and record it as seen by this routee.
    Key(u64, ActorRef<String>),
    /// Block until the receiver gets something (or its sender is dropped).
    Block(Arc<Mutex<mpsc::Receiver<()>>>, mpsc::Sender<()>),
    Panic,
    Stop,
    Count(Arc<Mutex<HashMap<String, usize>>>),
}

impl Clone for Msg {
    fn clone(&self) -> Self {
        match self {
            Msg::Who(r) => Msg::Who(r.clone()),
            Msg::Key(k, r) => Msg::Key(*k, r.clone()),
            Msg::Block(rx, tx) => Msg::Block(rx.clone(), tx.clone()),
            Msg::Panic => Msg::Panic,
            Msg::Stop => Msg::Stop,
            Msg::Count(c) => Msg::Count(c.clone()),
        }
    }
}

struct Routee {
    starts: Arc<AtomicUsize>,
}

impl Actor for Routee {
    type Msg = Msg;
    fn pre_start(&mut self, _: &mut Context<Self>) {
        self.starts.fetch_add(1, Ordering::SeqCst);
    }
    fn receive(&mut self, ctx: &mut Context<Self>, msg: Msg) {
        let me = ctx.path().name().to_owned();
        match msg {
            Msg::Who(reply_to) | Msg::Key(_, reply_to) => reply_to.tell(me),
            Msg::Block(gate, blocked) => {
                blocked.send(()).unwrap();
                let _ = gate.lock().unwrap().recv();
            }
            Msg::Panic => panic!("routee failure"),
            Msg::Stop => ctx.stop_self(),
            Msg::Count(counts) => {
                *counts
                    .lock()
                    .unwrap()
                    .entry(ctx.path().to_string())
                    .or_default() += 1
            }
        }
    }
}

fn routee_props(starts: &Arc<AtomicUsize>) -> Props<Routee> {
    let starts = starts.clone();
    Props::new(move || Routee {
        starts: starts.clone(),
    })
}

fn who(router: &Router<Msg>) -> String {
    router.ask(Msg::Who, LONG).wait().unwrap()
}

fn group_of(system: &ActorSystem, n: usize, prefix: &str) -> Vec<ActorRef<Msg>> {
    let starts = Arc::new(AtomicUsize::new(0));
    (0..n)
        .map(|i| {
            system
                .spawn(routee_props(&starts), &format!("{prefix}{i}"))
                .unwrap()
        })
        .collect()
}

fn names(routees: &[ActorRef<Msg>]) -> Vec<String> {
    routees.iter().map(|r| r.path().name().to_owned()).collect()
}

#[test]
fn round_robin_gives_each_routee_its_turn() {
    let system = ActorSystem::new("rr").unwrap();
    let starts = Arc::new(AtomicUsize::new(0));
    let router = Pool::new(4, routee_props(&starts))
        .spawn(&system, "pool")
        .unwrap();
    let routees = names(&router.routees());
    assert_eq!(routees.len(), 4);
    let answers: Vec<String> = (0..40).map(|_| who(&router)).collect();
    for (i, answer) in answers.iter().enumerate() {
        assert_eq!(*answer, routees[i % 4], "answer {i}");
    }
    // The routees are children of the router actor.
    for routee in router.routees() {
        assert_eq!(routee.handle().parent().unwrap().path(), router.path());
    }
    system.terminate().wait().unwrap();
}

#[test]
fn random_reaches_every_routee() {
    let system = ActorSystem::new("random").unwrap();
    let routees = group_of(&system, 4, "r");
    let router = Group::new(routees)
        .with_routing(Routing::random())
        .spawn(&system, "group")
        .unwrap();
    let seen: HashSet<String> = (0..400).map(|_| who(&router)).collect();
    assert_eq!(seen.len(), 4, "400 random picks missed a routee: {seen:?}");
    system.terminate().wait().unwrap();
}

#[test]
fn consistent_hashing_keeps_keys_and_moves_only_to_a_new_routee() {
    let system = ActorSystem::new("hashing").unwrap();
    let mut routees = group_of(&system, 4, "h");
    let extra = routees.pop().unwrap();
    let router = Group::new(routees)
        .with_routing(Routing::consistent_hashing(|m: &Msg| match m {
            Msg::Key(k, _) => *k,
            _ => 0,
        }))
        .spawn(&system, "group")
        .unwrap();
    let place = |k: u64| router.ask(|r| Msg::Key(k, r), LONG).wait().unwrap();
    let before: Vec<String> = (0..300).map(place).collect();
    assert_eq!(
        before,
        (0..300).map(place).collect::<Vec<_>>(),
        "a key changed routee"
    );
    assert_eq!(
        before.iter().collect::<HashSet<_>>().len(),
        3,
        "keys spread over all routees"
    );

    router.add_routee(extra.clone());
    wait_until("the fourth routee", || router.routees().len() == 4);
    let after: Vec<String> = (0..300).map(place).collect();
    let moved: Vec<usize> = (0..300).filter(|&k| before[k] != after[k]).collect();
    assert!(!moved.is_empty(), "the new routee got no keys");
    for k in moved {
        assert_eq!(
            after[k],
            extra.path().name(),
            "key {k} moved between old routees"
        );
    }
    system.terminate().wait().unwrap();
}

#[test]
fn smallest_mailbox_avoids_a_busy_routee() {
    let system = ActorSystem::new("smallest").unwrap();
    let routees = group_of(&system, 2, "s");
    let (busy, idle) = (routees[0].clone(), routees[1].clone());
    let (release, gate) = mpsc::channel();
    let (blocked_tx, blocked) = mpsc::channel();
    busy.tell(Msg::Block(Arc::new(Mutex::new(gate)), blocked_tx));
    blocked.recv_timeout(LONG).unwrap();
    let counts = Arc::new(Mutex::new(HashMap::new()));
    for _ in 0..5 {
        busy.tell(Msg::Count(counts.clone())); // queued behind the block
    }
    let router = Group::new(routees)
        .with_routing(Routing::smallest_mailbox())
        .spawn(&system, "group")
        .unwrap();
    for _ in 0..20 {
        assert_eq!(who(&router), idle.path().name());
    }
    release.send(()).unwrap();
    system.terminate().wait().unwrap();
}

#[test]
fn broadcast_reaches_every_routee_with_every_message() {
    let system = ActorSystem::new("broadcast").unwrap();
    let starts = Arc::new(AtomicUsize::new(0));
    let counts = Arc::new(Mutex::new(HashMap::new()));
    let router = Pool::new(3, routee_props(&starts))
        .with_routing(Routing::broadcast())
        .spawn(&system, "pool")
        .unwrap();
    for _ in 0..5 {
        router.tell(Msg::Count(counts.clone()));
    }
    // And the envelope form, whatever the logic.
    let rr = Pool::new(2, routee_props(&starts))
        .spawn(&system, "rr")
        .unwrap();
    rr.broadcast(Msg::Count(counts.clone()));
    wait_until("every copy", || {
        counts.lock().unwrap().values().sum::<usize>() == 17
    });
    let counts = counts.lock().unwrap();
    for routee in router.routees() {
        assert_eq!(counts[&routee.path().to_string()], 5);
    }
    for routee in rr.routees() {
        assert_eq!(counts[&routee.path().to_string()], 1);
    }
    drop(counts);
    system.terminate().wait().unwrap();
}

/// Answers only after a gate opens, or never.
struct Slow(Option<Arc<Mutex<mpsc::Receiver<()>>>>, &'static str);
impl Actor for Slow {
    type Msg = ActorRef<&'static str>;
    fn receive(&mut self, _: &mut Context<Self>, reply_to: ActorRef<&'static str>) {
        // Without a gate it never answers.
        if let Some(gate) = &self.0 {
            let _ = gate.lock().unwrap().recv();
            reply_to.tell(self.1);
        }
    }
}

#[test]
fn scatter_gather_takes_the_first_answer_and_times_out_on_the_test_clock() {
    let clock = TestClock::new();
    let system = ActorSystem::builder()
        .name("scatter")
        .clock(clock.clone())
        .build()
        .unwrap();
    let (open, gate) = mpsc::channel();
    let gated = system
        .spawn(Props::new(move || Slow(None, "slow")), "silent")
        .unwrap();
    let gate = Arc::new(Mutex::new(gate));
    let fast = system
        .spawn(Props::new(move || Slow(Some(gate.clone()), "fast")), "fast")
        .unwrap();
    let router = Group::new([gated.clone(), fast])
        .spawn(&system, "group")
        .unwrap();
    let first = router.scatter_gather(|r| r, Duration::from_secs(1));
    open.send(()).unwrap();
    assert_eq!(first.wait(), Ok("fast"));

    let silent = Group::new([gated]).spawn(&system, "silent-group").unwrap();
    let nobody = silent.scatter_gather(|r| r, Duration::from_secs(1));
    clock.advance(Duration::from_secs(1));
    assert_eq!(
        nobody.wait(),
        Err(AskError::Timeout(Duration::from_secs(1)))
    );
    system.terminate().wait().unwrap();
}

#[test]
fn a_failed_pool_routee_is_restarted_in_place() {
    let system = ActorSystem::new("restart").unwrap();
    let starts = Arc::new(AtomicUsize::new(0));
    let router = Pool::new(2, routee_props(&starts))
        .spawn(&system, "pool")
        .unwrap();
    wait_until("both started", || starts.load(Ordering::SeqCst) == 2);
    let before = router.routees();
    before[0].tell(Msg::Panic);
    wait_until("the restart", || starts.load(Ordering::SeqCst) == 3);
    assert_eq!(
        router.routees(),
        before,
        "a restart keeps the routee's reference"
    );
    assert_eq!(who(&router), before[0].path().name());
    assert_eq!(who(&router), before[1].path().name());
    system.terminate().wait().unwrap();
}

#[test]
fn a_pool_drops_stopped_routees_and_stops_after_the_last() {
    let system = ActorSystem::new("stopped").unwrap();
    let starts = Arc::new(AtomicUsize::new(0));
    let router = Pool::new(2, routee_props(&starts))
        .with_supervisor_strategy(SupervisorStrategy::default().with_decider(|_| Directive::Stop))
        .spawn(&system, "pool")
        .unwrap();
    let routees = router.routees();
    routees[0].tell(Msg::Panic); // stopped by the strategy
    wait_until("the first removal", || {
        router.routees() == [routees[1].clone()]
    });
    for _ in 0..3 {
        assert_eq!(who(&router), routees[1].path().name());
    }
    routees[1].tell(Msg::Stop);
    wait_until("the router's stop", || router.actor_ref().is_terminated());
    assert!(router.routees().is_empty());
    system.terminate().wait().unwrap();
}

#[test]
fn a_group_forgets_a_routee_that_stops() {
    let system = ActorSystem::new("group-watch").unwrap();
    let routees = group_of(&system, 3, "g");
    let router = Group::new(routees.clone()).spawn(&system, "group").unwrap();
    routees[1].stop();
    wait_until("the removal", || router.routees().len() == 2);
    let answers: HashSet<String> = (0..10).map(|_| who(&router)).collect();
    assert_eq!(answers, HashSet::from(["g0".to_owned(), "g2".to_owned()]));
    // The group router stays, and takes new routees.
    router.add_routee(routees[1].clone()); // stopped: watched, then removed again
    router.remove_routee(routees[0].clone());
    wait_until("one routee left", || {
        router.routees() == [routees[2].clone()]
    });
    assert!(!router.actor_ref().is_terminated());
    system.terminate().wait().unwrap();
}

#[test]
fn a_pool_is_resized_by_messages() {
    let system = ActorSystem::new("resize").unwrap();
    let starts = Arc::new(AtomicUsize::new(0));
    let router = Pool::new(2, routee_props(&starts))
        .spawn(&system, "pool")
        .unwrap();
    let get = |router: &Router<Msg>| {
        ask(router.actor_ref(), RouterMsg::get_routees, LONG)
            .wait()
            .unwrap()
    };
    router.resize(5);
    assert_eq!(get(&router).len(), 5);
    assert_eq!(router.routees().len(), 5);
    let before = router.routees();
    router.actor_ref().tell(RouterMsg::adjust_pool_size(-3));
    let after = get(&router);
    assert_eq!(after, before[..2]);
    wait_until("the removed routees' stop", || {
        before[2..].iter().all(ActorRef::is_terminated)
    });
    assert_eq!(
        router.routees(),
        after,
        "a resize-removed routee does not count as a death"
    );
    // Never below one routee: the router stays useful, as Akka's.
    assert_eq!(
        Pool::new(0, routee_props(&starts))
            .spawn(&system, "empty")
            .err(),
        Some(weir_actor::SpawnError::Zero("pool size"))
    );
    router.actor_ref().tell(RouterMsg::adjust_pool_size(-5));
    assert_eq!(get(&router), after[..1]);
    router.resize(0);
    assert_eq!(get(&router), after[..1]);
    assert_eq!(router.ask(Msg::Who, LONG).wait().map(|_| ()), Ok(()));
    // A group ignores resizing.
    let group = Group::new(group_of(&system, 1, "x"))
        .spawn(&system, "group")
        .unwrap();
    group.resize(4);
    assert_eq!(get(&group).len(), 1);
    system.terminate().wait().unwrap();
}

#[test]
fn messages_without_a_routee_are_dead_letters() {
    let system = ActorSystem::new("no-routee").unwrap();
    let reasons = Arc::new(Mutex::new(Vec::new()));
    let log = reasons.clone();
    let _subscription = system.event_stream().subscribe(move |event| {
        if let Event::DeadLetter(letter) = event {
            log.lock().unwrap().push(letter.reason());
        }
    });
    let empty: Router<Msg> = Group::new([]).spawn(&system, "empty").unwrap();
    empty.tell(Msg::Stop);
    assert_eq!(*reasons.lock().unwrap(), [DeadLetterReason::NoRoutee]);
    assert_eq!(
        empty.ask(Msg::Who, LONG).wait(),
        Err(AskError::TargetStopped)
    );

    let starts = Arc::new(AtomicUsize::new(0));
    let pool = Pool::new(2, routee_props(&starts))
        .spawn(&system, "pool")
        .unwrap();
    pool.stop();
    wait_until("the pool's stop", || pool.actor_ref().is_terminated());
    pool.tell(Msg::Stop);
    assert_eq!(
        reasons.lock().unwrap().last(),
        Some(&DeadLetterReason::NoRoutee)
    );
    system.terminate().wait().unwrap();
}

/// A routee on the calling thread that routes again through its own router.
struct Relay {
    router: Arc<Mutex<Option<Router<u32>>>>,
    done: mpsc::Sender<u32>,
}
impl Actor for Relay {
    type Msg = u32;
    fn receive(&mut self, _: &mut Context<Self>, n: u32) {
        if n == 0 {
            self.done.send(n).unwrap();
        } else if let Some(router) = self.router.lock().unwrap().clone() {
            router.tell(n - 1);
        }
    }
}

#[test]
fn a_routee_may_route_again_from_inside_a_send() {
    let system = ActorSystem::new("reentrant").unwrap();
    let slot = Arc::new(Mutex::new(None));
    let (done, finished) = mpsc::channel();
    let (s, d) = (slot.clone(), done);
    let props = Props::new(move || Relay {
        router: s.clone(),
        done: d.clone(),
    })
    .with_dispatcher(weir_actor::DispatcherKind::CallingThread);
    let router = Pool::new(3, props).spawn(&system, "relay").unwrap();
    *slot.lock().unwrap() = Some(router.clone());
    router.tell(100);
    assert_eq!(finished.recv_timeout(LONG), Ok(0));
    *slot.lock().unwrap() = None; // break the router <-> routee cycle
    system.terminate().wait().unwrap();
}

#[test]
fn a_group_from_paths_resolves_once_with_typed_errors() {
    let system = ActorSystem::new("paths").unwrap();
    let routees = group_of(&system, 2, "p");
    let group = Group::<Msg>::from_paths(&system, ["/user/p0", "/user/p1"]).unwrap();
    let router = group.spawn(&system, "group").unwrap();
    assert_eq!(router.routees(), routees);
    assert_eq!(who(&router), "p0");

    match Group::<Msg>::from_paths(&system, ["/user/p0", "/user/nobody"]) {
        Err(RouteeError::Resolve { path, error }) => {
            assert_eq!(path, "/user/nobody");
            assert_eq!(error, weir_actor::ResolveError::NotFound);
        }
        other => panic!("expected a resolve error, got {other:?}"),
    }
    match Group::<u32>::from_paths(&system, ["/user/p1"]) {
        Err(RouteeError::WrongMessageType { path, actor_type }) => {
            assert_eq!(path, "/user/p1");
            assert!(actor_type.ends_with("Routee"), "{actor_type}");
        }
        other => panic!("expected a type error, got {other:?}"),
    }
    system.terminate().wait().unwrap();
}

#[test]
fn a_ring_with_too_many_virtual_nodes_is_a_typed_error() {
    use weir_actor::routing::{MAX_VIRTUAL_NODES, RoutingError};
    let key = |m: &Msg| matches!(m, Msg::Stop);
    assert_eq!(
        Routing::consistent_hashing_with_virtual_nodes(key, usize::MAX).err(),
        Some(RoutingError::TooManyVirtualNodes {
            requested: usize::MAX,
            max: MAX_VIRTUAL_NODES
        })
    );
    assert_eq!(
        Routing::consistent_hashing_with_virtual_nodes(key, 0).err(),
        Some(RoutingError::ZeroVirtualNodes)
    );
    // The largest ring allowed routes.
    let system = ActorSystem::new("bigRing").unwrap();
    let starts = Arc::new(AtomicUsize::new(0));
    let routing = Routing::consistent_hashing_with_virtual_nodes(key, MAX_VIRTUAL_NODES).unwrap();
    let router = Pool::new(2, routee_props(&starts))
        .with_routing(routing)
        .spawn(&system, "pool")
        .unwrap();
    assert!(router.ask(Msg::Who, LONG).wait().is_ok());
    system.terminate().wait().unwrap();
}
