//! Mailbox and scheduling: per-sender order, start before messages, throughput yield, system messages first.

use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};

use weir_actor::{Actor, ActorRef, ActorSystem, Context, Props};
use weir_tests::{PATIENCE, Probe, eventually};

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
    system.terminate().wait().unwrap();
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
    system.terminate().wait().unwrap();
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
    let system = ActorSystem::builder()
        .name("fair")
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
    let spawn_logger = |name: &'static str| -> ActorRef<()> {
        let log = log.clone();
        system
            .spawn(
                Props::new(move || Logger {
                    name,
                    log: log.clone(),
                }),
                name,
            )
            .unwrap()
    };
    let a = spawn_logger("a");
    let b = spawn_logger("b");
    gate.tell(());
    entered.recv_timeout(PATIENCE).unwrap();
    for _ in 0..3 {
        a.tell(());
    }
    for _ in 0..3 {
        b.tell(());
    }
    open.send(()).unwrap();
    assert!(eventually(PATIENCE, || log.lock().unwrap().len() == 6));
    system.terminate().wait().unwrap();
    log.lock().unwrap().clone()
}

#[test]
fn a_run_processes_at_most_throughput_messages_then_yields() {
    assert_eq!(interleaving(1), vec!["a", "b", "a", "b", "a", "b"]);
    assert_eq!(interleaving(2), vec!["a", "a", "b", "b", "a", "b"]);
    assert_eq!(interleaving(100), vec!["a", "a", "a", "b", "b", "b"]);
}

#[test]
fn per_actor_throughput_overrides_the_system_default() {
    let system = ActorSystem::builder()
        .name("perActor")
        .threads(1)
        .throughput(100)
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
    let (la, lb) = (log.clone(), log.clone());
    let a = system
        .spawn(
            Props::new(move || Logger {
                name: "a",
                log: la.clone(),
            })
            .with_throughput(1),
            "a",
        )
        .unwrap();
    let b = system
        .spawn(
            Props::new(move || Logger {
                name: "b",
                log: lb.clone(),
            })
            .with_throughput(1),
            "b",
        )
        .unwrap();
    gate.tell(());
    entered.recv_timeout(PATIENCE).unwrap();
    for _ in 0..2 {
        a.tell(());
        b.tell(());
    }
    open.send(()).unwrap();
    assert!(eventually(PATIENCE, || log.lock().unwrap().len() == 4));
    assert_eq!(*log.lock().unwrap(), vec!["a", "b", "a", "b"]);
    system.terminate().wait().unwrap();
}

#[test]
fn a_stop_overtakes_queued_user_messages() {
    let system = ActorSystem::builder()
        .name("sysFirst")
        .threads(1)
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
    let l = log.clone();
    let victim = system
        .spawn(
            Props::new(move || Logger {
                name: "victim",
                log: l.clone(),
            }),
            "victim",
        )
        .unwrap();
    // Let the victim start, then block the only worker.
    victim.tell(());
    assert!(eventually(PATIENCE, || log.lock().unwrap().len() == 1));
    gate.tell(());
    entered.recv_timeout(PATIENCE).unwrap();
    for _ in 0..5 {
        victim.tell(());
    }
    victim.stop();
    open.send(()).unwrap();
    assert!(eventually(PATIENCE, || victim.is_terminated()));
    assert_eq!(
        log.lock().unwrap().len(),
        1,
        "queued messages must not run after a stop"
    );
    assert_eq!(system.event_stream().dead_letter_count(), 5);
    system.terminate().wait().unwrap();
}
