//! A peer process for the reliable-delivery tests (`benches/tests/nats_reliable.rs`,
//! feature `nats`): one side of a reliable pair, so that the test can kill
//! and restart it.
//!
//! - `consumer <url> <out-file>`: the consumer `weir+nats://rcons/user/numbers`
//!   of `weir+nats://rprod/user/numbers`; it writes `<seq> <message>` for
//!   every delivery to `<out-file>` (unbuffered, before confirming, so a
//!   kill loses no line of a confirmed delivery).
//! - `producer <url> <count> <stream>`: the durable producer of the numbers
//!   1 to `<count>` (each message is its own sequence number), its queue in
//!   the JetStream stream `<stream>`.
//!
//! Both print `ready` once serving and run until their standard input
//! closes (then the consumer prints `duplicates <n>`) or they are killed.

use std::io::{BufRead, Write};
use std::time::Duration;

use weir_actor::{Actor, ActorSystem, Context, Props};
use weir_interop::{
    Delivery, Nats, ReliableConsumer, ReliableProducer, ReliableSettings, RemoteActorSystem,
    RemoteSettings, RequestNext,
};

/// Heartbeats (and so the credit window's stall time-out) short enough
/// that a killed peer costs the test little.
fn remote_settings() -> RemoteSettings {
    RemoteSettings::default().heartbeat(Duration::from_millis(100), Duration::from_millis(500))
}

fn reliable_settings() -> ReliableSettings {
    ReliableSettings::default().resend_after(Duration::from_millis(300))
}

struct Recorder(std::fs::File);

impl Actor for Recorder {
    type Msg = Delivery<u64>;
    fn receive(&mut self, _: &mut Context<Self>, delivery: Delivery<u64>) {
        // One write: a kill leaves no torn line.
        let line = format!("{} {}\n", delivery.seq, delivery.message);
        self.0.write_all(line.as_bytes()).expect("written");
        delivery.confirm();
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

fn wait_for_stdin() {
    println!("ready");
    std::io::stdout().flush().expect("stdout");
    let mut line = String::new();
    while std::io::stdin()
        .lock()
        .read_line(&mut line)
        .is_ok_and(|n| n > 0)
    {}
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(role), Some(url)) = (args.first(), args.get(1)) else {
        eprintln!(
            "usage: weir-nats-peer-reliable consumer <url> <out-file> | producer <url> <count> <stream>"
        );
        std::process::exit(2);
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime");
    let nats = Nats::connect(runtime.handle(), url).expect("connects");
    match role.as_str() {
        "consumer" => {
            let file =
                std::fs::File::create(args.get(2).expect("an output file")).expect("created");
            let system = ActorSystem::new("rcons").expect("a valid name");
            let remote =
                RemoteActorSystem::start(&system, &nats, remote_settings()).expect("serves");
            let recorder = system
                .spawn(
                    Props::new(move || Recorder(file.try_clone().expect("a file"))),
                    "recorder",
                )
                .expect("spawned");
            let consumer = ReliableConsumer::start(
                &remote,
                "numbers",
                "weir+nats://rprod/user/numbers",
                &recorder,
                reliable_settings(),
            )
            .expect("started");
            wait_for_stdin();
            println!("duplicates {}", consumer.duplicates());
            drop(remote);
            let _ = system.terminate().wait();
        }
        "producer" => {
            let count: u64 = args.get(2).and_then(|c| c.parse().ok()).expect("a count");
            let stream = args.get(3).expect("a stream name");
            let system = ActorSystem::new("rprod").expect("a valid name");
            let remote =
                RemoteActorSystem::start(&system, &nats, remote_settings()).expect("serves");
            let counter = system
                .spawn(Props::new(move || Counter(count)), "counter")
                .expect("spawned");
            let _producer = ReliableProducer::start_durable(
                &remote,
                "numbers",
                "weir+nats://rcons/user/numbers",
                &counter,
                reliable_settings(),
                stream,
            )
            .expect("started");
            wait_for_stdin();
            drop(remote);
            let _ = system.terminate().wait();
        }
        other => {
            eprintln!("unknown role {other}");
            std::process::exit(2);
        }
    }
}
