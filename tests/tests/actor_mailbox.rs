//! Mailbox and scheduling: per-sender order, start before messages, throughput yield, system messages first.

use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};

use weir_actor::{Actor, ActorRef, ActorSystem, Context, Props};
use weir_tests::{PATIENCE, Probe, eventually, shutdown};

/// Checks each sender's sequence numbers arrive in order, reports totals.
struct OrderChecker {
    next: Vec<u64>,
    done: Sender<Vec<u64>>,
    expected_total: u64,
    seen: u64,
}

impl Actor for OrderChecker {
    type Msg = (usize, u64);
    fn receive(&mut self, _: &mut Context<Self>, (sender, seq): (usize, u64)) {
        assert_eq!(self.next[sender], seq, "sender {sender} out of order");
        self.next[sender] += 1;
        self.seen += 1;
        if self.seen == self.expected_total {
            self.done.send(self.next.clone()).unwrap();
        }
    }
}

#[test]
fn messages_from_each_sender_arrive_in_order() {
    const SENDERS: usize = 4;
    const PER_SENDER: u64 = 20_000;
    let system = ActorSystem::new("order").unwrap();
    let (done, results) = channel();
    let checker = system
        .spawn(
            Props::new(move || OrderChecker {
                next: vec![0; SENDERS],
                done: done.clone(),
                expected_total: SENDERS as u64 * PER_SENDER,
                seen: 0,
            }),
            "checker",
        )
        .unwrap();
    let threads: Vec<_> = (0..SENDERS)
        .map(|s| {
            let checker = checker.clone();
            std::thread::spawn(move || {
                for seq in 0..PER_SENDER {
                    checker.tell((s, seq));
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let next = results
        .recv_timeout(PATIENCE)
        .expect("all messages processed");
    assert_eq!(next, vec![PER_SENDER; SENDERS]);
    // A panic in the checker would have restarted it and lost the count.
    assert!(!checker.is_terminated());
    shutdown(&system);
}

/// Records whether `pre_start` ran before each message.
struct StartFirst {
    started: bool,
    log: Sender<&'static str>,
}

impl Actor for StartFirst {
    type Msg = ();
    fn pre_start(&mut self, _: &mut Context<Self>) {
        self.started = true;
        self.log.send("pre_start").unwrap();
    }
    fn receive(&mut self, _: &mut Context<Self>, _: ()) {
        self.log
            .send(if self.started {
                "message after start"
            } else {
                "message before start"
            })
            .unwrap();
    }
}

#[test]
fn the_ref_works_at_once_and_start_runs_before_any_message() {
    let system = ActorSystem::new("start").unwrap();
    let probe = Probe::new();
    for i in 0..50 {
        let log = probe.sender();
        let actor = system
            .spawn(
                Props::new(move || StartFirst {
                    started: false,
                    log: log.clone(),
                }),
                &format!("a{i}"),
            )
            .unwrap();
        actor.tell(()); // immediately after spawn returns
        assert_eq!(probe.expect_n(2), vec!["pre_start", "message after start"]);
    }
    shutdown(&system);
}

/// Blocks its thread until the test opens the gate.
struct Gate {
    entered: Sender<()>,
    open: Arc<Mutex<Receiver<()>>>,
}

impl Actor for Gate {
    type Msg = ();
    fn receive(&mut self, _: &mut Context<Self>, _: ()) {
        self.entered.send(()).unwrap();
        self.open.lock().unwrap().recv().unwrap();
    }
}

/// A one-thread system whose only worker the test can block and release, to
/// queue messages while no actor runs.
struct OneThread {
    system: ActorSystem,
    gate: ActorRef<()>,
    entered: Receiver<()>,
    open: Sender<()>,
    log: Arc<Mutex<Vec<&'static str>>>,
}

impl OneThread {
    fn new(name: &str, throughput: usize) -> Self {
        let system = ActorSystem::builder()
            .name(name)
            .threads(1)
            .throughput(throughput)
            .build()
            .unwrap();
        let (entered_tx, entered) = channel();
        let (open, open_rx) = channel();
        let open_rx = Arc::new(Mutex::new(open_rx));
        let gate = system
            .spawn(
                Props::new(move || Gate {
                    entered: entered_tx.clone(),
                    open: open_rx.clone(),
                }),
                "gate",
            )
            .unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        Self {
            system,
            gate,
            entered,
            open,
            log,
        }
    }

    /// An actor that appends `name` to the log for every message.
    fn logger(
        &self,
        props: impl FnOnce(Props<Logger>) -> Props<Logger>,
        name: &'static str,
    ) -> ActorRef<()> {
        let log = self.log.clone();
        self.system
            .spawn(
                props(Props::new(move || Logger {
                    name,
                    log: log.clone(),
                })),
                name,
            )
            .unwrap()
    }

    /// Returns once the only worker is blocked.
    fn block(&self) {
        self.gate.tell(());
        self.entered.recv_timeout(PATIENCE).unwrap();
    }

    /// Releases the worker and waits until `n` log entries exist.
    fn open_and_wait_for(&self, n: usize) -> Vec<&'static str> {
        self.open.send(()).unwrap();
        assert!(eventually(PATIENCE, || self.log.lock().unwrap().len() >= n));
        self.log.lock().unwrap().clone()
    }
}

struct Logger {
    name: &'static str,
    log: Arc<Mutex<Vec<&'static str>>>,
}

impl Actor for Logger {
    type Msg = ();
    fn receive(&mut self, _: &mut Context<Self>, _: ()) {
        self.log.lock().unwrap().push(self.name);
    }
}

/// On a one-thread system, block the only worker, queue 3 messages to each of
/// two actors, open the gate and return the processing order.
fn interleaving(throughput: usize) -> Vec<&'static str> {
    let one = OneThread::new("fair", throughput);
    let a = one.logger(|p| p, "a");
    let b = one.logger(|p| p, "b");
    one.block();
    for _ in 0..3 {
        a.tell(());
    }
    for _ in 0..3 {
        b.tell(());
    }
    let order = one.open_and_wait_for(6);
    shutdown(&one.system);
    order
}

#[test]
fn a_run_processes_at_most_throughput_messages_then_yields() {
    assert_eq!(interleaving(1), vec!["a", "b", "a", "b", "a", "b"]);
    assert_eq!(interleaving(2), vec!["a", "a", "b", "b", "a", "b"]);
    assert_eq!(interleaving(100), vec!["a", "a", "a", "b", "b", "b"]);
}

#[test]
fn per_actor_throughput_overrides_the_system_default() {
    let one = OneThread::new("perActor", 100);
    let a = one.logger(|p| p.with_throughput(1), "a");
    let b = one.logger(|p| p.with_throughput(1), "b");
    one.block();
    for _ in 0..2 {
        a.tell(());
        b.tell(());
    }
    assert_eq!(one.open_and_wait_for(4), vec!["a", "b", "a", "b"]);
    shutdown(&one.system);
}

#[test]
fn a_stop_overtakes_queued_user_messages() {
    let one = OneThread::new("sysFirst", 32);
    let victim = one.logger(|p| p, "victim");
    // Let the victim start and handle one message, then block the worker.
    victim.tell(());
    assert!(eventually(PATIENCE, || one.log.lock().unwrap().len() == 1));
    one.block();
    for _ in 0..5 {
        victim.tell(());
    }
    victim.stop();
    one.open.send(()).unwrap();
    assert!(eventually(PATIENCE, || victim.is_terminated()));
    assert_eq!(
        one.log.lock().unwrap().len(),
        1,
        "queued messages must not run after a stop"
    );
    assert_eq!(one.system.event_stream().dead_letter_count(), 5);
    shutdown(&one.system);
}

/// Like the system builder's `throughput(0)`: a typed error, not a silent 1.
#[test]
fn a_zero_per_actor_throughput_is_a_spawn_error() {
    struct Never;
    impl Actor for Never {
        type Msg = ();
        fn receive(&mut self, _: &mut Context<Self>, _: ()) {}
    }
    let system = ActorSystem::new("zeroThroughput").unwrap();
    let refused = system.spawn(Props::new(|| Never).with_throughput(0), "zero");
    assert_eq!(
        refused.unwrap_err(),
        weir_actor::SpawnError::Zero("throughput")
    );
    assert!(
        system
            .spawn(Props::new(|| Never).with_throughput(1), "one")
            .is_ok()
    );
    shutdown(&system);
}

/// `tell` takes the message type itself: integer literals and arithmetic
/// infer it (with `impl Into<M>` this failed to compile: `u32: From<i32>`).
#[test]
fn tell_infers_the_message_type_of_literals() {
    struct Sum(Sender<u32>);
    impl Actor for Sum {
        type Msg = u32;
        fn receive(&mut self, _: &mut Context<Self>, n: u32) {
            self.0.send(n).unwrap();
        }
    }
    let system = ActorSystem::new("literals").unwrap();
    let probe = Probe::new();
    let tx = probe.sender();
    let sum: ActorRef<u32> = system
        .spawn(Props::new(move || Sum(tx.clone())), "sum")
        .unwrap();
    let base = 3;
    sum.tell(7);
    sum.tell(base + 4);
    sum.tell_into(1u8);
    assert_eq!(probe.expect_n(3), [7, 7, 1]);
    shutdown(&system);
}
