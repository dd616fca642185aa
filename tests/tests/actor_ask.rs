//! Ask: replies, typed time-outs, late replies to dead letters, asking a stopped actor.

use std::sync::mpsc::Sender;
use std::time::Duration;

use weir_actor::{Actor, ActorRef, ActorSystem, AskError, Context, Event, Props, ask};
use weir_tests::{PATIENCE, Probe, eventually, shutdown};

enum Msg {
    Double(u32, ActorRef<u32>),
    /// Keeps the reply address without answering.
    Hold(ActorRef<u32>),
    /// Answers the held address.
    Release(u32),
}

#[derive(Default)]
struct Responder {
    held: Option<ActorRef<u32>>,
}

impl Actor for Responder {
    type Msg = Msg;
    fn receive(&mut self, _: &mut Context<Self>, msg: Msg) {
        match msg {
            Msg::Double(n, reply_to) => reply_to.tell(n * 2),
            Msg::Hold(reply_to) => self.held = Some(reply_to),
            Msg::Release(n) => {
                if let Some(r) = self.held.take() {
                    r.tell(n);
                }
            }
        }
    }
}

#[test]
fn ask_gets_the_reply_blocking_and_as_a_future() {
    let system = ActorSystem::new("ask").unwrap();
    let r = system.spawn(Props::new(Responder::default), "r").unwrap();
    assert_eq!(ask(&r, |to| Msg::Double(21, to), PATIENCE).wait(), Ok(42));
    let answers: Vec<_> = (0..100)
        .map(|i| ask(&r, move |to| Msg::Double(i, to), PATIENCE))
        .collect();
    for (i, a) in answers.into_iter().enumerate() {
        assert_eq!(futures_executor::block_on(a), Ok(i as u32 * 2));
    }
    shutdown(&system);
}

#[test]
fn no_reply_is_a_typed_timeout_and_a_late_reply_is_a_dead_letter() {
    let system = ActorSystem::new("timeout").unwrap();
    let dead = Probe::new();
    let tx: Sender<(String, u32)> = dead.sender();
    let _sub = system.event_stream().subscribe(move |e| {
        let Event::DeadLetter(d) = e else { return };
        if let Some(v) = d.downcast_ref::<u32>() {
            tx.send((d.recipient().to_string_without_uid(), *v))
                .unwrap();
        }
    });
    let r = system.spawn(Props::new(Responder::default), "r").unwrap();
    let timeout = Duration::from_millis(50);
    let reply = ask(&r, Msg::Hold, timeout);
    assert_eq!(reply.wait(), Err(AskError::Timeout(timeout)));
    r.tell(Msg::Release(7));
    let (recipient, value) = dead.expect();
    assert_eq!(value, 7);
    assert!(
        recipient.starts_with("weir://timeout/temp/r$"),
        "the reply address is named after the target: {recipient}"
    );
    shutdown(&system);
}

#[test]
fn asking_a_stopped_actor_fails_at_once() {
    let system = ActorSystem::new("stopped").unwrap();
    let r = system.spawn(Props::new(Responder::default), "r").unwrap();
    r.stop();
    assert!(eventually(PATIENCE, || r.is_terminated()));
    // A long time-out: the answer must not wait for it.
    let answer = ask(&r, |to| Msg::Double(1, to), Duration::from_secs(3600));
    assert_eq!(answer.wait(), Err(AskError::TargetStopped));
    shutdown(&system);
}

/// Wait for `answer` on another thread, giving up after [`PATIENCE`], so a
/// test of an ask that never finishes fails instead of hanging.
fn answer_within_patience<R: Send + 'static>(
    answer: weir_actor::AskHandle<R>,
) -> Option<Result<R, AskError>> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(answer.wait()));
    rx.recv_timeout(PATIENCE).ok()
}

#[test]
fn an_ask_pending_at_termination_fails_with_terminated() {
    let system = ActorSystem::new("pendingAtEnd").unwrap();
    let r = system.spawn(Props::new(Responder::default), "r").unwrap();
    // Delivered and held: only the time-out (an hour away) could end it.
    let answer = ask(&r, Msg::Hold, Duration::from_secs(3600));
    shutdown(&system);
    assert_eq!(
        answer_within_patience(answer),
        Some(Err(AskError::Terminated))
    );
    // Asked after termination: the question goes nowhere, the ask still ends.
    let late = ask(&r, |to| Msg::Double(1, to), Duration::from_secs(3600));
    assert_eq!(
        answer_within_patience(late),
        Some(Err(AskError::TargetStopped))
    );
}

#[test]
fn an_ask_with_no_time_out_waits_for_its_reply_or_termination() {
    let system = ActorSystem::new("forever").unwrap();
    let r = system.spawn(Props::new(Responder::default), "r").unwrap();
    // `Duration::MAX` means "no time-out", not a panic.
    assert_eq!(
        ask(&r, |to| Msg::Double(4, to), Duration::MAX).wait(),
        Ok(8)
    );
    let held = ask(&r, Msg::Hold, Duration::MAX);
    let future = ask(&r, Msg::Hold, Duration::MAX);
    r.tell(Msg::Release(5)); // answers the second (the held address was replaced)
    assert_eq!(futures_executor::block_on(future), Ok(5));
    shutdown(&system);
    assert_eq!(
        answer_within_patience(held),
        Some(Err(AskError::Terminated))
    );
}

/// Asks `target` from inside its handler and blocks on the answer.
struct Waiter {
    target: ActorRef<Msg>,
    out: Sender<Result<u32, AskError>>,
}

impl Actor for Waiter {
    type Msg = ();
    fn receive(&mut self, _: &mut Context<Self>, (): ()) {
        let answer = ask(&self.target, |to| Msg::Double(3, to), PATIENCE).wait();
        self.out.send(answer).unwrap();
    }
}

#[test]
fn waiting_on_the_only_pool_thread_is_refused_not_a_deadlock() {
    let system = ActorSystem::builder()
        .name("oneThread")
        .threads(1)
        .build()
        .unwrap();
    let r = system.spawn(Props::new(Responder::default), "r").unwrap();
    let probe = Probe::new();
    let out = probe.sender();
    let waiter = system
        .spawn(
            Props::new(move || Waiter {
                target: r.clone(),
                out: out.clone(),
            }),
            "waiter",
        )
        .unwrap();
    let started = std::time::Instant::now();
    waiter.tell(());
    // Refused at once: the reply needs the thread the waiter would block.
    assert_eq!(probe.expect(), Err(AskError::WouldDeadlock));
    assert!(started.elapsed() < PATIENCE, "refused, not timed out");
    shutdown(&system);
}

#[test]
fn waiting_on_the_scheduler_thread_is_refused() {
    let system = ActorSystem::new("onTimer").unwrap();
    let r = system.spawn(Props::new(Responder::default), "r").unwrap();
    let probe = Probe::new();
    let out = probe.sender();
    system
        .scheduler()
        .schedule_once_fn(Duration::ZERO, move || {
            // Blocking here would stop every time-out, its own included.
            let answer = ask(&r, Msg::Hold, Duration::from_millis(10)).wait();
            out.send(answer).unwrap();
        });
    assert_eq!(probe.expect(), Err(AskError::WouldDeadlock));
    shutdown(&system);
}

#[test]
fn an_ask_with_a_zero_time_out_is_refused_without_sending() {
    let system = ActorSystem::new("zeroAsk").unwrap();
    let r = system.spawn(Props::new(Responder::default), "r").unwrap();
    let mut made = false;
    let answer = ask(
        &r,
        |to| {
            made = true;
            Msg::Double(1, to)
        },
        Duration::ZERO,
    );
    assert_eq!(answer.wait(), Err(AskError::ZeroTimeout));
    assert!(!made, "the question is never made, so never sent");
    // The responder got nothing: a held ask is the first it sees.
    let held = ask(&r, Msg::Hold, PATIENCE);
    r.tell(Msg::Release(7));
    assert_eq!(held.wait(), Ok(7));
    shutdown(&system);
}
