//! `weir-bench remote`'s reliable-delivery rows (feature `nats`): the rate
//! of [`ReliableProducer`] -> [`ReliableConsumer`] beside the plain remote
//! tell rate, same server, same run, two actor systems with a connection
//! each in this process.
//!
//! - Plain tell: `--reliable-messages` (default 200,000) `u64` tells to a
//!   counting actor through one [`RemoteRef`](weir_interop::RemoteRef)
//!   (its default credit window of 256, an outbox big enough that none is
//!   dropped), timed until the actor has counted them all.
//! - Reliable: the same number of `u64`s from a producing actor answering
//!   each `RequestNext`, through a reliable pair with the default window
//!   of 1,024, to a counting actor that confirms each delivery; timed until
//!   it has counted them all.
//! - Durable: the same through `ReliableProducer::start_durable`, each
//!   message stored in a JetStream file stream before it is sent and
//!   purged in batches once confirmed.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use weir_actor::{Actor, ActorSystem, Context, Props};
use weir_interop::{
    Delivery, Nats, ReliableConsumer, ReliableProducer, ReliableSettings, RemoteActorSystem,
    RemoteSettings, RequestNext,
};

/// Counts `u64`s and says when it has `target`.
#[derive(Clone)]
struct Count {
    seen: u64,
    target: u64,
    done: mpsc::Sender<()>,
}

impl Count {
    fn one(&mut self) {
        self.seen += 1;
        if self.seen == self.target {
            let _ = self.done.send(());
        }
    }
}

struct Plain(Count);

impl Actor for Plain {
    type Msg = u64;
    fn receive(&mut self, _: &mut Context<Self>, _: u64) {
        self.0.one();
    }
}

struct Confirming(Count);

impl Actor for Confirming {
    type Msg = Delivery<u64>;
    fn receive(&mut self, _: &mut Context<Self>, delivery: Delivery<u64>) {
        delivery.confirm();
        self.0.one();
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

fn count(target: u64) -> (Count, mpsc::Receiver<()>) {
    let (done, finished) = mpsc::channel();
    (
        Count {
            seen: 0,
            target,
            done,
        },
        finished,
    )
}

fn median(mut rates: Vec<f64>) -> f64 {
    rates.sort_by(f64::total_cmp);
    rates[rates.len() / 2]
}

/// Print the plain tell and reliable rows: `n` messages, median of `runs`.
pub fn run(rt: &tokio::runtime::Runtime, url: &str, n: u64, runs: usize) {
    let node = |name: &str, settings: RemoteSettings| {
        let system = ActorSystem::new(name).expect("a valid name");
        let nats = Nats::connect(rt.handle(), url).expect("connects");
        let remote = RemoteActorSystem::start(&system, &nats, settings).expect("serves");
        (system, remote)
    };
    let outbox = usize::try_from(n).unwrap_or(usize::MAX);
    let (sender, sending) = node("relsend", RemoteSettings::default().outbox(outbox));
    let (receiver, receiving) = node("relrecv", RemoteSettings::default());
    let patience = Duration::from_secs(120);
    let mut plain = Vec::new();
    let mut reliable = Vec::new();
    let mut durable = Vec::new();
    for round in 0..runs {
        let (counting, done) = count(n);
        let actor = receiver
            .spawn(
                Props::new(move || Plain(counting.clone())),
                &format!("plain-{round}"),
            )
            .expect("spawned");
        let uri = receiving
            .expose(&actor, &format!("plain-{round}"))
            .expect("exposed");
        let target = sending.resolve::<u64>(&uri).expect("a valid URI");
        let start = Instant::now();
        for i in 0..n {
            target.tell(i).expect("encodes");
        }
        done.recv_timeout(patience)
            .expect("every plain tell arrives");
        plain.push(n as f64 / start.elapsed().as_secs_f64());
        assert_eq!(target.dropped(), 0, "the outbox holds every tell");

        // One reliable pair: `prefix` names its actors and path, `stream`
        // makes the producer durable. Messages per second.
        let pair = |prefix: &str, stream: Option<String>| {
            let (counting, done) = count(n);
            let confirming = receiver
                .spawn(
                    Props::new(move || Confirming(counting.clone())),
                    &format!("{prefix}confirming-{round}"),
                )
                .expect("spawned");
            let path = format!("{prefix}reliable-{round}");
            let start = Instant::now();
            let counter = sender
                .spawn(
                    Props::new(move || Counter(n)),
                    &format!("{prefix}counter-{round}"),
                )
                .expect("spawned");
            let consumer_uri = format!("weir+nats://relrecv/user/{path}");
            let settings = ReliableSettings::default();
            let producer = match &stream {
                None => ReliableProducer::start(&sending, &path, &consumer_uri, &counter, settings),
                Some(stream) => ReliableProducer::start_durable(
                    &sending,
                    &path,
                    &consumer_uri,
                    &counter,
                    settings,
                    stream,
                ),
            }
            .expect("started");
            let consumer = ReliableConsumer::start(
                &receiving,
                &path,
                producer.uri(),
                &confirming,
                ReliableSettings::default(),
            )
            .expect("started");
            done.recv_timeout(patience)
                .expect("every reliable message arrives");
            let rate = n as f64 / start.elapsed().as_secs_f64();
            producer.stop();
            consumer.stop();
            rate
        };
        reliable.push(pair("", None));
        durable.push(pair("durable-", Some(format!("RELIABLE_BENCH_{round}"))));
    }
    let (plain, reliable, durable) = (median(plain), median(reliable), median(durable));
    println!("Reliable delivery: {n} u64 messages, one pair, median of {runs} runs");
    println!("{:<52} {:>12} {:>7}", "variant", "msgs/s", "ratio");
    println!(
        "{:<52} {plain:>12.0} {:>6.2}x",
        "plain remote tell (window 256)", 1.0
    );
    println!(
        "{:<52} {reliable:>12.0} {:>6.2}x",
        "ReliableProducer -> ReliableConsumer (window 1024)",
        reliable / plain
    );
    println!(
        "{:<52} {durable:>12.0} {:>6.2}x",
        "the same, start_durable (JetStream file stream)",
        durable / plain
    );
    drop((sending, receiving));
    let _ = sender.terminate().wait();
    let _ = receiver.terminate().wait();
}
