//! Remote actors over core NATS, two actor systems (each with its own
//! client) on a real `nats-server`: tells in order through a small credit
//! window, asks and their typed errors, dead letters with reasons on the
//! receiving side, the bounded outbox, and remote death watch. Runs with
//! `--features nats` (CI: its own step).
//!
//! Heartbeats and watch time-outs run on the actor systems' clock: the
//! watch test builds both systems on one `TestClock` and advances it.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use weir_actor::testkit::TestClock;
use weir_actor::{
    Actor, ActorRef, ActorSystem, Context, DeadLetterReason, Event, MailboxOverflow, Props,
};
use weir_benches::nats_server::NatsServer;
use weir_interop::{
    Nats, RemoteActorSystem, RemoteAskError, RemoteFailure, RemoteLetter, RemoteSettings,
    RemoteTerminated, TerminationReason,
};

const PATIENCE: Duration = Duration::from_secs(20);

fn eventually(timeout: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Greeting {
    n: u32,
    text: String,
}

/// Forwards what it receives to a channel.
struct Probe<M>(mpsc::Sender<M>);

impl<M: Send + 'static> Actor for Probe<M> {
    type Msg = M;
    fn receive(&mut self, _: &mut Context<Self>, msg: M) {
        let _ = self.0.send(msg);
    }
}

fn probe<M: Send + 'static>(system: &ActorSystem, name: &str) -> (ActorRef<M>, mpsc::Receiver<M>) {
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    let actor = system
        .spawn(Props::new(move || Probe(tx.lock().unwrap().clone())), name)
        .expect("spawned");
    (actor, rx)
}

struct Doubler;

impl Actor for Doubler {
    type Msg = (u32, ActorRef<u64>);
    fn receive(&mut self, _: &mut Context<Self>, (n, reply_to): (u32, ActorRef<u64>)) {
        if n != 0 {
            reply_to.tell(u64::from(n) * 2);
        }
    }
}

struct Node {
    system: ActorSystem,
    remote: Option<RemoteActorSystem>,
}

impl Drop for Node {
    fn drop(&mut self) {
        self.remote = None;
        let _ = self.system.terminate().wait();
    }
}

struct Setup {
    _server: NatsServer,
    runtime: tokio::runtime::Runtime,
    url: String,
}

impl Setup {
    fn new() -> Self {
        let server = NatsServer::start().expect("nats-server starts (is it installed?)");
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a runtime");
        let url = server.url();
        Self {
            _server: server,
            runtime,
            url,
        }
    }

    fn node(&self, name: &str, settings: RemoteSettings) -> Node {
        self.node_on(ActorSystem::new(name).expect("a valid name"), settings)
    }

    fn node_on(&self, system: ActorSystem, settings: RemoteSettings) -> Node {
        let nats = Nats::connect(self.runtime.handle(), &self.url).expect("connects");
        let remote = RemoteActorSystem::start(&system, &nats, settings).expect("serves");
        Node {
            system,
            remote: Some(remote),
        }
    }
}

impl Node {
    fn remote(&self) -> &RemoteActorSystem {
        self.remote.as_ref().expect("running")
    }
}

/// The reasons (and remote failures) of the dead letters published.
type Letters = Arc<Mutex<Vec<(DeadLetterReason, Option<RemoteFailure>)>>>;

fn dead_letters(system: &ActorSystem) -> Letters {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let subscription = system.event_stream().subscribe(move |event| {
        let Event::DeadLetter(letter) = event else {
            return;
        };
        let failure = letter
            .downcast_ref::<RemoteLetter>()
            .map(|l| l.failure.clone());
        log.lock().unwrap().push((letter.reason(), failure));
    });
    std::mem::forget(subscription);
    seen
}

#[test]
fn tells_arrive_in_order_through_a_small_window() {
    let s = Setup::new();
    let server = s.node("server", RemoteSettings::default());
    let client = s.node("client", RemoteSettings::default().window(8));
    let (greeter, received) = probe::<Greeting>(&server.system, "greeter");
    let uri = server
        .remote()
        .expose(&greeter, "greeter")
        .expect("exposed");
    assert_eq!(uri, "weir+nats://server/user/greeter");
    let remote = client.remote().resolve::<Greeting>(&uri).expect("resolves");
    for n in 0..2_000 {
        remote
            .tell(Greeting {
                n,
                text: format!("hello {n}"),
            })
            .expect("encodes");
    }
    for n in 0..2_000 {
        let got = received.recv_timeout(PATIENCE).expect("arrives");
        assert_eq!(got.n, n);
        assert_eq!(got.text, format!("hello {n}"));
    }
    assert_eq!(remote.dropped(), 0);
    assert!(eventually(PATIENCE, || remote.queued() == 0));
}

#[test]
fn asks_answer_and_fail_with_typed_errors() {
    let s = Setup::new();
    let server = s.node("answers", RemoteSettings::default());
    let client = s.node("asks", RemoteSettings::default());
    let doubler = server
        .system
        .spawn(Props::new(|| Doubler), "doubler")
        .expect("spawned");
    let uri = server
        .remote()
        .expose_ask(
            &doubler,
            "doubler",
            Duration::from_millis(300),
            |n: u32, r| (n, r),
        )
        .expect("exposed");
    let remote = client.remote().resolve::<u32>(&uri).expect("resolves");
    let answer = futures_executor::block_on(remote.ask::<u64>(21, PATIENCE));
    assert_eq!(answer.expect("answered"), 42);

    // The actor does not answer 0: its system's ask times out.
    let silent = futures_executor::block_on(remote.ask::<u64>(0, PATIENCE));
    assert!(
        matches!(
            silent,
            Err(RemoteAskError::Remote(RemoteFailure::NoAnswer(_)))
        ),
        "{silent:?}"
    );

    // The asker's own time-out, shorter than the actor's.
    let short = futures_executor::block_on(remote.ask::<u64>(0, Duration::from_millis(50)));
    assert!(
        matches!(short, Err(RemoteAskError::Timeout(_))),
        "{short:?}"
    );

    // Wrong question type.
    let wrong = client.remote().resolve::<String>(&uri).expect("resolves");
    let refused = futures_executor::block_on(wrong.ask::<u64>("21".into(), PATIENCE));
    assert!(
        matches!(&refused, Err(RemoteAskError::Remote(RemoteFailure::WrongType { expected, .. })) if expected == "u32"),
        "{refused:?}"
    );

    // Unknown path on a running system.
    let nobody = client
        .remote()
        .resolve::<u32>("weir+nats://answers/user/nobody")
        .expect("resolves");
    let unknown = futures_executor::block_on(nobody.ask::<u64>(1, PATIENCE));
    assert!(
        matches!(&unknown, Err(RemoteAskError::Remote(RemoteFailure::UnknownPath(p))) if p == "nobody"),
        "{unknown:?}"
    );

    // No such system.
    let absent = client
        .remote()
        .resolve::<u32>("weir+nats://absent/user/x")
        .expect("resolves");
    let none = futures_executor::block_on(absent.ask::<u64>(1, PATIENCE));
    assert!(
        matches!(none, Err(RemoteAskError::NoResponders)),
        "{none:?}"
    );

    // A malformed URI is refused at once.
    assert!(
        client
            .remote()
            .resolve::<u32>("weir://answers/user/doubler")
            .is_err()
    );
}

#[test]
fn undeliverable_tells_are_dead_letters_with_reasons_on_the_receiving_side() {
    let s = Setup::new();
    let server = s.node("receiver", RemoteSettings::default());
    let client = s.node("sender", RemoteSettings::default());
    let letters = dead_letters(&server.system);
    let (greeter, received) = probe::<Greeting>(&server.system, "greeter");
    let uri = server
        .remote()
        .expose(&greeter, "greeter")
        .expect("exposed");

    // The wrong type.
    let wrong = client.remote().resolve::<u64>(&uri).expect("resolves");
    wrong.tell(7).expect("encodes");
    // An unknown path.
    let nobody = client
        .remote()
        .resolve::<Greeting>("weir+nats://receiver/user/nobody")
        .expect("resolves");
    nobody
        .tell(Greeting {
            n: 1,
            text: "x".into(),
        })
        .expect("encodes");
    // Garbage on the actor's subject.
    let raw = Nats::connect(s.runtime.handle(), &s.url).expect("connects");
    s.runtime
        .block_on(async {
            raw.client()
                .publish("weir.receiver.user.greeter", vec![0xff, 0xff, 0xff].into())
                .await?;
            raw.client().flush().await?;
            Ok::<_, async_nats::Error>(())
        })
        .expect("published");

    assert!(eventually(PATIENCE, || server.remote().undelivered() == 3));
    let letters = letters.lock().unwrap().clone();
    assert!(
        letters.iter().any(|(reason, failure)| matches!(
            reason,
            DeadLetterReason::WrongMessageType { .. }
        ) && matches!(
            failure,
            Some(RemoteFailure::WrongType { .. })
        )),
        "{letters:?}"
    );
    assert!(
        letters
            .iter()
            .any(|(reason, failure)| *reason == DeadLetterReason::NoMatch
                && matches!(failure, Some(RemoteFailure::UnknownPath(p)) if p == "nobody")),
        "{letters:?}"
    );
    assert!(
        letters.iter().any(
            |(reason, failure)| *reason == DeadLetterReason::Undeliverable
                && matches!(failure, Some(RemoteFailure::Undecodable(_)))
        ),
        "{letters:?}"
    );

    // The receiving system still works.
    let good = client.remote().resolve::<Greeting>(&uri).expect("resolves");
    good.tell(Greeting {
        n: 9,
        text: "still here".into(),
    })
    .expect("encodes");
    assert_eq!(received.recv_timeout(PATIENCE).expect("arrives").n, 9);
}

#[test]
fn tells_beyond_window_and_outbox_are_counted_dead_letters() {
    let s = Setup::new();
    // No system serves "silent": no credit ever comes back.
    let settings = RemoteSettings::default()
        .window(8)
        .outbox(16)
        .heartbeat(Duration::from_secs(1), Duration::from_secs(60));
    let client = s.node("flooder", settings);
    let letters = dead_letters(&client.system);
    let remote = client
        .remote()
        .resolve::<u32>("weir+nats://silent/user/sink")
        .expect("resolves");
    // The first 8 go out; then 16 wait; after that each tell is dropped.
    for n in 0..8 {
        remote.tell(n).expect("encodes");
    }
    assert!(eventually(PATIENCE, || remote.queued() == 0));
    for n in 8..48 {
        remote.tell(n).expect("encodes");
    }
    assert_eq!(remote.queued(), 16);
    assert_eq!(remote.dropped(), 24);
    assert!(eventually(PATIENCE, || letters.lock().unwrap().len() == 24));
    assert!(
        letters
            .lock()
            .unwrap()
            .iter()
            .all(|(reason, _)| *reason == DeadLetterReason::Dropped)
    );
}

#[test]
fn watch_tells_when_the_remote_actor_stops_or_its_system_goes_silent() {
    let s = Setup::new();
    let clock = TestClock::new();
    let on_clock = |name: &str| {
        ActorSystem::builder()
            .name(name)
            .clock(clock.clone())
            .build()
            .expect("a valid name")
    };
    let interval = Duration::from_millis(100);
    let timeout = Duration::from_millis(500);
    let settings = RemoteSettings::default().heartbeat(interval, timeout);
    let mut server = s.node_on(on_clock("watched"), settings.clone());
    let client = s.node_on(on_clock("watcher"), settings);
    let (a, _) = probe::<u32>(&server.system, "a");
    let (b, _) = probe::<u32>(&server.system, "b");
    let uri_a = server.remote().expose(&a, "a").expect("exposed");
    let uri_b = server.remote().expose(&b, "b").expect("exposed");
    let (watcher, notices) = probe::<RemoteTerminated>(&client.system, "watcher");
    let remote_a = client.remote().resolve::<u32>(&uri_a).expect("resolves");
    let remote_b = client.remote().resolve::<u32>(&uri_b).expect("resolves");
    remote_a.watch(&watcher);
    remote_b.watch(&watcher);
    // The first heartbeats go out one interval after the node's heartbeat
    // timer is armed, which the node does as it starts, on its own
    // threads: a test that advances before that has moved the clock for
    // nothing (CI saw it once). So advance an interval at a time until the
    // first beat is heard; fewer intervals than the time-out, so no watch
    // can fire meanwhile.
    let first_beat = (0..3).any(|_| {
        clock.advance(interval);
        eventually(Duration::from_secs(2), || {
            client.remote().heartbeats_from("watched") >= 1
        })
    });
    assert!(first_beat, "no heartbeat heard");

    // Three time-outs of clock time, one heartbeat interval at a time:
    // every beat is heard before the clock moves on, so no watch fires.
    for step in 1..=15 {
        clock.advance(interval);
        assert!(
            eventually(PATIENCE, || client.remote().heartbeats_from("watched")
                > step),
            "beat {step} not heard"
        );
    }

    // The first notice is a's stop (a premature `Unreachable` would come
    // first).
    a.stop();
    let notice = notices.recv_timeout(PATIENCE).expect("a notice");
    assert_eq!(
        notice,
        RemoteTerminated {
            uri: uri_a,
            reason: TerminationReason::Stopped
        }
    );

    // The whole remote system goes away: its heartbeats stop, and b is
    // unreachable once the clock has passed the time-out.
    server.remote = None;
    let heard = client.remote().heartbeats_from("watched");
    clock.advance(timeout - interval);
    assert!(
        notices.try_recv().is_err(),
        "unreachable before the time-out"
    );
    clock.advance(interval);
    let notice = notices.recv_timeout(PATIENCE).expect("a notice");
    assert_eq!(
        notice,
        RemoteTerminated {
            uri: uri_b,
            reason: TerminationReason::Unreachable
        }
    );
    assert_eq!(client.remote().heartbeats_from("watched"), heard);
}

#[test]
fn watching_what_is_already_gone_tells_at_once() {
    let s = Setup::new();
    // Time-outs far beyond the test: any notice comes from the probe.
    let settings =
        RemoteSettings::default().heartbeat(Duration::from_secs(60), Duration::from_secs(600));
    let server = s.node("gone-host", settings.clone());
    let client = s.node("gone-watcher", settings);
    let (a, _) = probe::<u32>(&server.system, "a");
    let uri_a = server.remote().expose(&a, "a").expect("exposed");
    let (watcher, notices) = probe::<RemoteTerminated>(&client.system, "watcher");

    // Stopped (and withdrawn) before anyone watched it.
    a.stop();
    let remote_a = client.remote().resolve::<u32>(&uri_a).expect("resolves");
    assert!(eventually(PATIENCE, || {
        futures_executor::block_on(remote_a.ask::<u64>(1, PATIENCE))
            .is_err_and(|e| matches!(e, RemoteAskError::Remote(RemoteFailure::UnknownPath(_))))
    }));
    remote_a.watch(&watcher);
    assert_eq!(
        notices.recv_timeout(PATIENCE).expect("a notice"),
        RemoteTerminated {
            uri: uri_a,
            reason: TerminationReason::Stopped
        }
    );

    // Never exposed.
    let never = "weir+nats://gone-host/user/never";
    client
        .remote()
        .resolve::<u32>(never)
        .expect("resolves")
        .watch(&watcher);
    assert_eq!(
        notices.recv_timeout(PATIENCE).expect("a notice").reason,
        TerminationReason::Stopped
    );

    // No such system running.
    let absent = "weir+nats://absent/user/x";
    client
        .remote()
        .resolve::<u32>(absent)
        .expect("resolves")
        .watch(&watcher);
    assert_eq!(
        notices.recv_timeout(PATIENCE).expect("a notice"),
        RemoteTerminated {
            uri: absent.into(),
            reason: TerminationReason::Unreachable
        }
    );
}

type Gate = Arc<(Mutex<bool>, std::sync::Condvar)>;

/// Holds every message until the gate opens, then forwards it.
struct Gated {
    gate: Gate,
    out: mpsc::Sender<u32>,
}

/// Opens the gate when dropped (also when the test fails, so that the
/// actor does not hold up the system's termination).
struct Opener(Gate);

impl Drop for Opener {
    fn drop(&mut self) {
        let (open, changed) = &*self.0;
        *open.lock().unwrap() = true;
        changed.notify_all();
    }
}

impl Actor for Gated {
    type Msg = u32;
    fn receive(&mut self, _: &mut Context<Self>, n: u32) {
        let (open, changed) = &*self.gate;
        let mut open = open.lock().unwrap();
        while !*open {
            open = changed.wait(open).unwrap();
        }
        let _ = self.out.send(n);
    }
}

#[test]
fn a_slow_actor_with_a_bounded_mailbox_holds_the_senders_window_shut() {
    let s = Setup::new();
    let server = s.node("slow-host", RemoteSettings::default());
    let client = s.node(
        "fast-sender",
        RemoteSettings::default().window(8).outbox(1_000),
    );
    let server_letters = dead_letters(&server.system);
    let gate: Gate = Arc::new((Mutex::new(false), std::sync::Condvar::new()));
    let opener = Opener(gate.clone());
    let (tx, received) = mpsc::channel();
    let (g, out) = (gate.clone(), Mutex::new(tx));
    let slow = server
        .system
        .spawn(
            Props::new(move || Gated {
                gate: g.clone(),
                out: out.lock().unwrap().clone(),
            })
            .with_bounded_mailbox(4, MailboxOverflow::DropNew),
            "slow",
        )
        .expect("spawned");
    let uri = server.remote().expose(&slow, "slow").expect("exposed");
    let remote = client.remote().resolve::<u32>(&uri).expect("resolves");
    for n in 0..200 {
        remote.tell(n).expect("encodes");
    }
    // The window (8) goes out. The actor is stuck on the first tell, its
    // mailbox takes 4 more and the sixth waits for room: the credit for
    // those 5 comes back in batches of window / 4 = 2, so 4 more tells go
    // out, and then nothing until the actor moves: 200 - 12 stay queued.
    assert!(
        eventually(PATIENCE, || remote.queued() == 188),
        "queued {}",
        remote.queued()
    );
    drop(opener);
    for n in 0..200 {
        assert_eq!(received.recv_timeout(PATIENCE).expect("arrives"), n);
    }
    assert_eq!(remote.dropped(), 0);
    assert!(server_letters.lock().unwrap().is_empty());
}
