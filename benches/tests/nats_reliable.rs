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

use weir_actor::testkit::TestClock;
use weir_actor::{Actor, ActorRef, ActorSystem, Context, Props};
use weir_benches::nats_server::NatsServer;
use weir_interop::{
    ConfirmTo, Delivery, Nats, ReliableConsumer, ReliableError, ReliableProducer, ReliableSettings,
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

/// The `<seq> <message>` lines of one consumer incarnation (a line the
/// kill cut short was not confirmed: it is left out).
fn read_deliveries(path: &std::path::Path) -> Vec<(u64, u64)> {
    let text = std::fs::read_to_string(path).expect("the consumer's file");
    let complete = text.rfind('\n').map_or("", |end| &text[..end]);
    complete
        .lines()
        .map(|line| {
            let (seq, message) = line.split_once(' ').expect("two numbers");
            (
                seq.parse().expect("a seq"),
                message.parse().expect("a message"),
            )
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
        assert_eq!(
            seq, message,
            "incarnation {incarnation}: message {message} came as {seq}"
        );
    }
}

#[test]
fn a_hundred_thousand_messages_survive_two_consumer_kills() {
    const COUNT: u64 = 100_000;
    let server = NatsServer::start().expect("nats-server starts (is it installed?)");
    let url = server.url();
    let dir = server.store_dir();
    let files: Vec<_> = (0..3)
        .map(|i| dir.join(format!("consumer-{i}.txt")))
        .collect();
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
    let missing: Vec<_> = (1..=COUNT)
        .filter(|&seq| !seen[seq as usize])
        .take(10)
        .collect();
    assert!(missing.is_empty(), "never delivered: {missing:?}...");
    eprintln!(
        "{COUNT} messages in {elapsed:?}: {total} deliveries over 3 consumer incarnations, {} resent; last consumer: {}",
        producer.resent(),
        said.trim()
    );
    drop(remote);
    let _ = system.terminate().wait();
}

/// Records every delivery, confirming at once.
struct Recorder(Arc<Mutex<Vec<(u64, u64)>>>);

impl Actor for Recorder {
    type Msg = Delivery<u64>;
    fn receive(&mut self, _: &mut Context<Self>, delivery: Delivery<u64>) {
        self.0
            .lock()
            .unwrap()
            .push((delivery.seq, delivery.message));
        delivery.confirm();
    }
}

#[test]
fn a_durable_producer_resends_what_was_unconfirmed_after_it_is_killed() {
    const COUNT: u64 = 20_000;
    let server = NatsServer::start().expect("nats-server starts (is it installed?)");
    let url = server.url();
    let rt = runtime();
    let system = ActorSystem::new("rcons").expect("a valid name");
    let nats = Nats::connect(rt.handle(), &url).expect("connects");
    let remote = RemoteActorSystem::start(&system, &nats, remote_settings()).expect("serves");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let recorder = system
        .spawn(Props::new(move || Recorder(log.clone())), "recorder")
        .expect("spawned");
    let consumer = ReliableConsumer::start(
        &remote,
        "numbers",
        "weir+nats://rprod/user/numbers",
        &recorder,
        reliable_settings(),
    )
    .expect("started");
    let count = COUNT.to_string();
    let args = ["producer", url.as_str(), count.as_str(), "RELIABLE"];
    let producer = Peer::start(&args);
    assert!(
        eventually(PATIENCE, || consumer.confirmed() >= 5_000),
        "confirmed only {}",
        consumer.confirmed()
    );
    producer.kill();
    let at_kill = consumer.confirmed();
    let producer = Peer::start(&args);
    assert!(
        eventually(PATIENCE, || consumer.confirmed() == COUNT),
        "confirmed only {} of {COUNT}",
        consumer.confirmed()
    );
    producer.finish();
    let deliveries = seen.lock().unwrap().clone();
    // The restarted producer continued the numbering (the consumer saw no
    // new incarnation), and resent what was unconfirmed from its stream.
    assert_in_order_once(&deliveries, 0);
    assert_eq!(deliveries.len() as u64, COUNT, "killed at {at_kill}");
    drop(remote);
    let _ = system.terminate().wait();
}

/// Holds its deliveries until told to confirm them; reports each seq.
struct Holder {
    held: Vec<Delivery<u64>>,
    seqs: mpsc::Sender<u64>,
    /// Drop the first delivery of this seq unconfirmed, as if it was lost.
    lose: Option<u64>,
    hold: bool,
}

enum HolderMsg {
    Delivery(Delivery<u64>),
    Release,
}

impl Actor for Holder {
    type Msg = HolderMsg;
    fn receive(&mut self, _: &mut Context<Self>, msg: HolderMsg) {
        match msg {
            HolderMsg::Delivery(delivery) => {
                let _ = self.seqs.send(delivery.seq);
                if self.lose == Some(delivery.seq) {
                    self.lose = None;
                } else if self.hold {
                    self.held.push(delivery);
                } else {
                    delivery.confirm();
                }
            }
            HolderMsg::Release => {
                self.hold = false;
                for delivery in self.held.drain(..) {
                    delivery.confirm();
                }
            }
        }
    }
}

/// A producer and a consumer system on one `TestClock`, each with its own
/// connection: the resend timers fire only when the test advances it.
struct Pair {
    _server: NatsServer,
    _rt: tokio::runtime::Runtime,
    clock: TestClock,
    systems: Vec<(ActorSystem, RemoteActorSystem)>,
    producer: ReliableProducer<u64>,
    consumer: ReliableConsumer<u64>,
    holder: ActorRef<HolderMsg>,
    seqs: mpsc::Receiver<u64>,
}

impl Pair {
    fn new(
        count: u64,
        producer_settings: ReliableSettings,
        consumer_settings: ReliableSettings,
        hold: bool,
        lose: Option<u64>,
    ) -> Self {
        let server = NatsServer::start().expect("nats-server starts (is it installed?)");
        let rt = runtime();
        let clock = TestClock::new();
        let node = |name: &str| {
            let system = ActorSystem::builder()
                .name(name)
                .clock(clock.clone())
                .build()
                .expect("a valid name");
            let nats = Nats::connect(rt.handle(), &server.url()).expect("connects");
            let remote =
                RemoteActorSystem::start(&system, &nats, remote_settings()).expect("serves");
            (system, remote)
        };
        let (psys, premote) = node("tprod");
        let (csys, cremote) = node("tcons");
        let counter = psys
            .spawn(Props::new(move || Counter(count)), "counter")
            .expect("spawned");
        let producer = ReliableProducer::start(
            &premote,
            "numbers",
            "weir+nats://tcons/user/numbers",
            &counter,
            producer_settings,
        )
        .expect("started");
        let (tx, seqs) = mpsc::channel();
        let tx = Mutex::new(tx);
        let holder = csys
            .spawn(
                Props::new(move || Holder {
                    held: Vec::new(),
                    seqs: tx.lock().unwrap().clone(),
                    lose,
                    hold,
                }),
                "holder",
            )
            .expect("spawned");
        let deliveries = csys
            .spawn(
                Props::new({
                    let holder = holder.clone();
                    move || Forward(holder.clone())
                }),
                "deliveries",
            )
            .expect("spawned");
        let consumer = ReliableConsumer::start(
            &cremote,
            "numbers",
            "weir+nats://tprod/user/numbers",
            &deliveries,
            consumer_settings,
        )
        .expect("started");
        Self {
            _server: server,
            _rt: rt,
            clock,
            systems: vec![(psys, premote), (csys, cremote)],
            producer,
            consumer,
            holder,
            seqs,
        }
    }

    /// The seqs delivered within `wait` (until none came for 200 ms).
    fn delivered(&self, wait: Duration) -> Vec<u64> {
        let deadline = Instant::now() + wait;
        let mut seqs = Vec::new();
        while Instant::now() < deadline {
            match self.seqs.recv_timeout(Duration::from_millis(200)) {
                Ok(seq) => seqs.push(seq),
                Err(_) => break,
            }
        }
        seqs
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        for (system, remote) in self.systems.drain(..) {
            drop(remote);
            let _ = system.terminate().wait();
        }
    }
}

/// Hands deliveries to a [`Holder`].
struct Forward(ActorRef<HolderMsg>);

impl Actor for Forward {
    type Msg = Delivery<u64>;
    fn receive(&mut self, _: &mut Context<Self>, delivery: Delivery<u64>) {
        self.0.tell(HolderMsg::Delivery(delivery));
    }
}

/// A clock time the tests never reach: that side's timer does not fire.
const NEVER: Duration = Duration::from_secs(3_600);

#[test]
fn the_producer_sends_no_further_than_the_consumer_demands() {
    let settings = ReliableSettings::default().window(16).resend_after(NEVER);
    let pair = Pair::new(1_000, settings.clone(), settings, true, None);
    let first = pair.delivered(PATIENCE);
    assert_eq!(first, (1..=16).collect::<Vec<_>>(), "one window, in order");
    assert_eq!(
        pair.producer.produced(),
        16,
        "the producing actor was asked for one window only"
    );
    pair.holder.tell(HolderMsg::Release);
    // Confirmations come back every window / 4; each reopens the window
    // by as much, and the holder now confirms as it goes.
    assert!(
        eventually(PATIENCE, || pair.producer.confirmed() == 1_000),
        "confirmed only {}",
        pair.producer.confirmed()
    );
    let rest = pair.delivered(PATIENCE);
    assert_eq!(rest, (17..=1_000).collect::<Vec<_>>());
    assert_eq!(pair.consumer.duplicates(), 0);
}

#[test]
fn a_resend_of_what_the_consumer_has_is_dropped_as_duplicates() {
    let window = ReliableSettings::default().window(8);
    let pair = Pair::new(
        8,
        window.clone().resend_after(Duration::from_secs(1)),
        window.resend_after(NEVER),
        true,
        None,
    );
    assert_eq!(pair.delivered(PATIENCE), (1..=8).collect::<Vec<_>>());
    // No confirmation for the producer's resend time-out: it sends all
    // eight again, and the consumer drops them by sequence number.
    pair.clock.advance(Duration::from_secs(1));
    assert!(
        eventually(PATIENCE, || pair.consumer.duplicates() == 8),
        "duplicates: {}",
        pair.consumer.duplicates()
    );
    assert_eq!(pair.producer.resent(), 8);
    assert_eq!(
        pair.delivered(Duration::from_millis(300)),
        Vec::<u64>::new()
    );
    pair.holder.tell(HolderMsg::Release);
    assert!(eventually(PATIENCE, || pair.producer.confirmed() == 8));
}

#[test]
fn a_delivery_never_confirmed_is_handed_over_again() {
    let window = ReliableSettings::default().window(8);
    let pair = Pair::new(
        20,
        window.clone().resend_after(NEVER),
        window.resend_after(Duration::from_secs(1)),
        false,
        Some(3),
    );
    assert_eq!(pair.delivered(PATIENCE), (1..=10).collect::<Vec<_>>());
    assert_eq!(pair.consumer.confirmed(), 2, "held back by the lost 3");
    // One interval with progress (1 and 2), one without: the consumer
    // hands over again from 3 and asks the producer to resend from there.
    // Its timer is armed anew when it handles a tick, after the clock has
    // moved, so advance an interval at a time until that happened.
    let repaired = (0..100).any(|_| {
        pair.clock.advance(Duration::from_secs(1));
        eventually(Duration::from_millis(100), || {
            pair.producer.confirmed() == 20
        })
    });
    assert!(repaired, "confirmed only {}", pair.producer.confirmed());
    assert_eq!(pair.delivered(PATIENCE), (3..=20).collect::<Vec<_>>());
}

/// Takes numbers and does nothing.
struct Ignore;

impl Actor for Ignore {
    type Msg = u64;
    fn receive(&mut self, _: &mut Context<Self>, _: u64) {}
}

#[test]
fn bad_input_is_a_typed_error() {
    let server = NatsServer::start().expect("nats-server starts (is it installed?)");
    let rt = runtime();
    let system = ActorSystem::new("typed").expect("a valid name");
    let nats = Nats::connect(rt.handle(), &server.url()).expect("connects");
    let remote = RemoteActorSystem::start(&system, &nats, remote_settings()).expect("serves");
    let counter = system
        .spawn(Props::new(|| Counter(1)), "counter")
        .expect("spawned");
    let uri = "weir+nats://other/user/numbers";
    let zero = ReliableSettings::default().resend_after(Duration::ZERO);
    assert!(matches!(
        ReliableProducer::start(&remote, "numbers", uri, &counter, zero),
        Err(ReliableError::InvalidSettings(_))
    ));
    assert!(matches!(
        ReliableProducer::start(
            &remote,
            "numbers",
            "nats://x",
            &counter,
            reliable_settings()
        ),
        Err(ReliableError::Remote(RemoteError::InvalidUri(_)))
    ));
    assert!(matches!(
        ReliableProducer::start(&remote, "a.b", uri, &counter, reliable_settings()),
        Err(ReliableError::Remote(RemoteError::InvalidUri(_)))
    ));
    let other = system
        .spawn(Props::new(|| Ignore), "other")
        .expect("spawned");
    remote.expose(&other, "taken").expect("exposed");
    assert!(matches!(
        ReliableProducer::start(&remote, "taken", uri, &counter, reliable_settings()),
        Err(ReliableError::Remote(RemoteError::PathTaken(_)))
    ));
    drop(remote);
    let _ = system.terminate().wait();
}

#[test]
fn the_handles_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<ReliableProducer<u64>>();
    send_sync::<ReliableConsumer<u64>>();
    send_sync::<RequestNext<u64>>();
    send_sync::<Delivery<u64>>();
    send_sync::<ConfirmTo>();
    send_sync::<ReliableError>();
}
