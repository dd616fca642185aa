//! Bounded mailboxes: capacity, overflow strategies, `try_tell`, back-pressured `send`, dead letters for every drop.

use std::future::Future;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};

use weir_actor::{
    Actor, ActorRef, ActorSystem, Context, DeadLetterReason, Event, MailboxOverflow, Props,
    SpawnError, TellError,
};
use weir_tests::{PATIENCE, Probe, QUIET, eventually, shutdown};

/// Message 0 blocks the handler until the gate opens; every message is
/// reported to the probe.
struct Gated {
    gate: Arc<Mutex<Receiver<()>>>,
    seen: Sender<u32>,
}

impl Actor for Gated {
    type Msg = u32;
    fn receive(&mut self, _: &mut Context<Self>, n: u32) {
        let _ = self.seen.send(n);
        if n == 0 {
            let _ = self.gate.lock().unwrap().recv_timeout(PATIENCE);
        }
    }
}

struct Setup {
    system: ActorSystem,
    actor: ActorRef<u32>,
    open: Sender<()>,
    seen: Probe<u32>,
    dropped: Arc<Mutex<Vec<(u32, DeadLetterReason)>>>,
}

/// An actor with a bounded mailbox, already blocked in message 0, so the
/// next `capacity` messages fill its mailbox.
fn blocked(name: &str, capacity: usize, overflow: MailboxOverflow) -> Setup {
    blocked_with(name, Some((capacity, overflow)))
}

fn blocked_with(name: &str, bound: Option<(usize, MailboxOverflow)>) -> Setup {
    let system = ActorSystem::new(name).unwrap();
    let dropped = Arc::new(Mutex::new(Vec::new()));
    let letters = dropped.clone();
    // The subscription lasts as long as its handle: keep it for the test.
    let subscription = system.event_stream().subscribe(move |event| {
        let Event::DeadLetter(letter) = event else {
            return;
        };
        if let Some(&n) = letter.downcast_ref::<u32>() {
            letters.lock().unwrap().push((n, letter.reason()));
        }
    });
    std::mem::forget(subscription);
    let (open, gate) = channel();
    let seen = Probe::new();
    let sender = seen.sender();
    let gate = Arc::new(Mutex::new(gate));
    let props = Props::new(move || Gated {
        gate: gate.clone(),
        seen: sender.clone(),
    });
    let props = match bound {
        Some((capacity, overflow)) => props.with_bounded_mailbox(capacity, overflow),
        None => props,
    };
    let actor = system.spawn(props, "gated").unwrap();
    actor.tell(0);
    assert_eq!(seen.expect(), 0, "the actor is in message 0");
    Setup {
        system,
        actor,
        open,
        seen,
        dropped,
    }
}

#[test]
fn drop_new_drops_what_does_not_fit_as_dead_letters() {
    let s = blocked("dropNew", 3, MailboxOverflow::DropNew);
    for n in 1..=5 {
        s.actor.tell(n);
    }
    assert_eq!(
        *s.dropped.lock().unwrap(),
        vec![
            (4, DeadLetterReason::Dropped),
            (5, DeadLetterReason::Dropped)
        ]
    );
    assert_eq!(s.system.event_stream().dead_letter_count(), 2);
    s.open.send(()).unwrap();
    assert_eq!(s.seen.expect_n(3), vec![1, 2, 3]);
    s.seen.expect_nothing();
    shutdown(&s.system);
}

#[test]
fn drop_head_drops_the_oldest_as_dead_letters() {
    let s = blocked("dropHead", 3, MailboxOverflow::DropHead);
    for n in 1..=5 {
        s.actor.tell(n);
    }
    assert_eq!(
        *s.dropped.lock().unwrap(),
        vec![
            (1, DeadLetterReason::Dropped),
            (2, DeadLetterReason::Dropped)
        ]
    );
    s.open.send(()).unwrap();
    assert_eq!(s.seen.expect_n(3), vec![3, 4, 5]);
    s.seen.expect_nothing();
    shutdown(&s.system);
}

#[test]
fn try_tell_gives_the_message_back_when_full() {
    let s = blocked("tryTell", 2, MailboxOverflow::DropNew);
    assert_eq!(s.actor.try_tell(1), Ok(()));
    assert_eq!(s.actor.try_tell(2), Ok(()));
    let refused = s.actor.try_tell(3).unwrap_err();
    assert!(matches!(refused, TellError::MailboxFull(3)));
    assert_eq!(refused.into_inner(), 3);
    assert_eq!(
        s.system.event_stream().dead_letter_count(),
        0,
        "given back, not dropped"
    );
    s.open.send(()).unwrap();
    assert_eq!(s.seen.expect_n(2), vec![1, 2]);
    // Room again once the actor has taken its messages.
    assert!(eventually(PATIENCE, || s.actor.try_tell(4).is_ok()));
    assert_eq!(s.seen.expect(), 4);
    shutdown(&s.system);
}

#[test]
fn try_tell_with_drop_head_makes_room() {
    let s = blocked("tryTellHead", 1, MailboxOverflow::DropHead);
    assert_eq!(s.actor.try_tell(1), Ok(()));
    assert_eq!(s.actor.try_tell(2), Ok(()));
    assert_eq!(
        *s.dropped.lock().unwrap(),
        vec![(1, DeadLetterReason::Dropped)]
    );
    s.open.send(()).unwrap();
    assert_eq!(s.seen.expect(), 2);
    shutdown(&s.system);
}

#[test]
fn send_waits_for_room_and_loses_nothing() {
    let s = blocked("sendWaits", 2, MailboxOverflow::DropNew);
    let actor = s.actor.clone();
    let sender = std::thread::spawn(move || {
        futures_executor::block_on(async {
            for n in 1..=50 {
                actor.send(n).await;
            }
        });
    });
    // Two fit; the third waits while the actor is blocked.
    assert!(
        !eventually(QUIET, || sender.is_finished()),
        "send waits for room"
    );
    s.open.send(()).unwrap();
    assert_eq!(s.seen.expect_n(50), (1..=50).collect::<Vec<_>>());
    sender.join().unwrap();
    assert_eq!(s.system.event_stream().dead_letter_count(), 0);
    shutdown(&s.system);
}

#[test]
fn a_waiting_send_completes_when_the_actor_stops() {
    let s = blocked("sendStops", 1, MailboxOverflow::DropNew);
    s.actor.tell(1);
    let actor = s.actor.clone();
    let sender = std::thread::spawn(move || futures_executor::block_on(actor.send(2)));
    assert!(!eventually(QUIET, || sender.is_finished()));
    s.actor.stop();
    s.open.send(()).unwrap();
    assert!(
        eventually(PATIENCE, || sender.is_finished()),
        "the stop woke the waiting send"
    );
    sender.join().unwrap();
    assert!(eventually(PATIENCE, || s
        .dropped
        .lock()
        .unwrap()
        .contains(&(2, DeadLetterReason::RecipientStopped))));
    shutdown(&s.system);
}

#[test]
fn a_dropped_send_passes_its_turn_on() {
    let s = blocked("sendDropped", 1, MailboxOverflow::DropNew);
    s.actor.tell(1);
    // A send that waits and is then given up.
    let waker_count = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let abandoned = {
        let actor = s.actor.clone();
        let polls = waker_count.clone();
        std::thread::spawn(move || {
            let mut send = std::pin::pin!(actor.send(2));
            let waker = futures_util::task::noop_waker();
            let mut cx = std::task::Context::from_waker(&waker);
            assert!(send.as_mut().poll(&mut cx).is_pending());
            polls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            // Dropped here, still pending.
        })
    };
    abandoned.join().unwrap();
    let actor = s.actor.clone();
    let patient = std::thread::spawn(move || futures_executor::block_on(actor.send(3)));
    assert!(!eventually(QUIET, || patient.is_finished()));
    s.open.send(()).unwrap();
    assert!(
        eventually(PATIENCE, || patient.is_finished()),
        "the waiting send got the room"
    );
    assert_eq!(s.seen.expect_n(2), vec![1, 3]);
    shutdown(&s.system);
}

#[test]
fn internal_signals_are_never_refused() {
    let s = blocked("signals", 1, MailboxOverflow::DropNew);
    s.actor.tell(1); // full now
    s.actor.poison_pill();
    let watcher = s.actor.handle();
    s.open.send(()).unwrap();
    assert_eq!(s.seen.expect(), 1);
    assert!(
        eventually(PATIENCE, || watcher.is_terminated()),
        "the poison pill got in"
    );
    shutdown(&s.system);
}

#[test]
fn an_unbounded_actor_takes_try_tell_and_send_at_once() {
    let s = blocked_with("unbounded", None);
    for n in 1..=1000 {
        s.actor.try_tell(n).unwrap();
    }
    futures_executor::block_on(s.actor.send(1001));
    s.open.send(()).unwrap();
    assert_eq!(s.seen.expect_n(1001), (1..=1001).collect::<Vec<_>>());
    shutdown(&s.system);
}

#[test]
fn zero_capacity_is_refused_at_spawn() {
    struct Nothing;
    impl Actor for Nothing {
        type Msg = ();
        fn receive(&mut self, _: &mut Context<Self>, (): ()) {}
    }
    let system = ActorSystem::new("zeroCapacity").unwrap();
    let refused = system.spawn(
        Props::new(|| Nothing).with_bounded_mailbox(0, MailboxOverflow::DropHead),
        "zero",
    );
    assert_eq!(refused.unwrap_err(), SpawnError::Zero("mailbox capacity"));
    shutdown(&system);
}

#[test]
fn the_bound_holds_across_a_restart() {
    /// Panics on 0 (restarted by the guardian), reports the rest.
    struct Fragile(Sender<u32>, Arc<Mutex<Receiver<()>>>);
    impl Actor for Fragile {
        type Msg = u32;
        fn receive(&mut self, _: &mut Context<Self>, n: u32) {
            let _ = self.0.send(n);
            if n == 0 {
                let _ = self.1.lock().unwrap().recv_timeout(PATIENCE);
                panic!("boom");
            }
        }
    }
    let system = ActorSystem::new("restartBound").unwrap();
    let seen = Probe::new();
    let (open, gate) = channel();
    let (tx, gate) = (seen.sender(), Arc::new(Mutex::new(gate)));
    let props = Props::new(move || Fragile(tx.clone(), gate.clone()))
        .with_bounded_mailbox(2, MailboxOverflow::DropNew);
    let actor = system.spawn(props, "fragile").unwrap();
    actor.tell(0);
    assert_eq!(seen.expect(), 0);
    for n in 1..=3 {
        actor.tell(n);
    }
    open.send(()).unwrap();
    assert_eq!(
        seen.expect_n(2),
        vec![1, 2],
        "the mailbox is kept across the restart"
    );
    assert_eq!(system.event_stream().dead_letter_count(), 1);
    shutdown(&system);
}
