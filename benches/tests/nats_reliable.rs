//! Reliable delivery over a real `nats-server`: a producer and a consumer
//! in different OS processes (the peer binary `weir-nats-peer-reliable`),
//! the consumer killed and restarted, a durable producer killed and
//! restarted; and in one process, on a `TestClock`, flow control by the
//! consumer's demand and duplicates dropped by sequence number. Runs with
//! `--features nats` (CI: the NATS step).

use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use weir_actor::{Actor, ActorRef, ActorSystem, Context, Props};
use weir_benches::nats_server::NatsServer;
use weir_interop::{
    Delivery, Nats, ReliableConsumer, ReliableError, ReliableProducer, ReliableSettings,
    RemoteActorSystem, RemoteError, RemoteSettings, RequestNext,
};

const PATIENCE: Duration = Duration::from_secs(60);

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

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime")
}

/// As the peer binary's: a killed peer stalls a credit window for 500 ms.
fn remote_settings() -> RemoteSettings {
    RemoteSettings::default().heartbeat(Duration::from_millis(100), Duration::from_millis(500))
}

fn reliable_settings() -> ReliableSettings {
    ReliableSettings::default().resend_after(Duration::from_millis(300))
}

/// A peer process, killed when dropped.
struct Peer {
    child: Child,
    stdout: BufReader<ChildStdout>,
}

impl Peer {
    fn start(args: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_weir-nats-peer-reliable"))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the peer starts");
        let mut stdout = BufReader::new(child.stdout.take().expect("piped"));
        let mut ready = String::new();
        stdout.read_line(&mut ready).expect("the peer says ready");
        assert_eq!(ready.trim(), "ready");
        Self { child, stdout }
    }

    /// SIGKILL: no goodbye to anyone.
    fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Close its input and read what it says on the way out.
    fn finish(mut self) -> String {
        drop(self.child.stdin.take());
        let mut out = String::new();
        let _ = std::io::Read::read_to_string(&mut self.stdout, &mut out);
        let _ = self.child.wait();
        out
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Sends its next sequence number until `count`.
struct Counter(u64);

impl Actor for Counter {
    type Msg = RequestNext<u64>;
    fn receive(&mut self, _: &mut Context<Self>, next: RequestNext<u64>) {
        if next.next_seq() <= self.0 {
            next.send(next.next_seq());
        }
    }
}

/// The `<seq> <message>` lines of one consumer incarnation.
fn read_deliveries(path: &std::path::Path) -> Vec<(u64, u64)> {
    std::fs::read_to_string(path)
        .expect("the consumer's file")
        .lines()
        .map(|line| {
            let (seq, message) = line.split_once(' ').expect("two numbers");
            (seq.parse().expect("a seq"), message.parse().expect("a message"))
        })
        .collect()
}

/// Within one incarnation every sequence number comes once, in order (the
/// duplicates were dropped), and each message is its sequence number.
fn assert_in_order_once(deliveries: &[(u64, u64)], incarnation: usize) {
    for pair in deliveries.windows(2) {
        assert!(
            pair[1].0 > pair[0].0,
            "incarnation {incarnation} delivered {} after {}",
            pair[1].0,
            pair[0].0
        );
    }
    for &(seq, message) in deliveries {
        assert_eq!(seq, message, "incarnation {incarnation}: message {message} came as {seq}");
    }
}

#[test]
fn a_hundred_thousand_messages_survive_two_consumer_kills() {
    const COUNT: u64 = 100_000;
    let server = NatsServer::start().expect("nats-server starts (is it installed?)");
    let url = server.url();
    let dir = server.store_dir();
    let files: Vec<_> = (0..3).map(|i| dir.join(format!("consumer-{i}.txt"))).collect();
    let rt = runtime();
    let system = ActorSystem::new("rprod").expect("a valid name");
    let nats = Nats::connect(rt.handle(), &url).expect("connects");
    let remote = RemoteActorSystem::start(&system, &nats, remote_settings()).expect("serves");
    let counter = system
        .spawn(Props::new(|| Counter(COUNT)), "counter")
        .expect("spawned");
    let started = Instant::now();
    let producer = ReliableProducer::start(
        &remote,
        "numbers",
        "weir+nats://rcons/user/numbers",
        &counter,
        reliable_settings(),
    )
    .expect("started");
    let consumer_args = |file: &std::path::Path| {
        vec![
            "consumer".to_owned(),
            url.clone(),
            file.display().to_string(),
        ]
    };
    let start_consumer = |i: usize| {
        let args = consumer_args(&files[i]);
        Peer::start(&args.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let mut consumer = start_consumer(0);
    for (i, kill_at) in [30_000, 65_000].into_iter().enumerate() {
        assert!(
            eventually(PATIENCE, || producer.confirmed() >= kill_at),
            "confirmed only {} of {kill_at}",
            producer.confirmed()
        );
        consumer.kill();
        consumer = start_consumer(i + 1);
    }
    assert!(
        eventually(PATIENCE, || producer.confirmed() == COUNT),
        "confirmed only {} of {COUNT}",
        producer.confirmed()
    );
    let elapsed = started.elapsed();
    let said = consumer.finish();
    let mut seen = vec![false; COUNT as usize + 1];
    let mut total = 0;
    for (i, file) in files.iter().enumerate() {
        let deliveries = read_deliveries(file);
        assert!(!deliveries.is_empty(), "incarnation {i} got nothing");
        assert_in_order_once(&deliveries, i);
        total += deliveries.len();
        for (seq, _) in deliveries {
            seen[seq as usize] = true;
        }
    }
    let missing: Vec<_> = (1..=COUNT).filter(|&seq| !seen[seq as usize]).take(10).collect();
    assert!(missing.is_empty(), "never delivered: {missing:?}...");
    eprintln!(
        "{COUNT} messages in {elapsed:?}: {total} deliveries over 3 consumer incarnations, {} resent; last consumer: {}",
        producer.resent(),
        said.trim()
    );
    drop(remote);
    let _ = system.terminate().wait();
}
