//! Priority mailboxes: messages waiting together are handled by priority,
//! in send order among equals; signals rank last; a panicking priority
//! function does not hurt the sender; the bounded variant keeps the most
//! urgent messages.

use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};

use weir_actor::{
    Actor, ActorRef, ActorSystem, Context, DeadLetterReason, Event, MailboxOverflow, Props,
    TellError,
};
use weir_tests::{PATIENCE, Probe, eventually, shutdown};

/// `(priority, id)`; ids 0 and 999 block the handler until the gate
/// opens. Every id handled is reported.
type Job = (i64, u32);

struct Gated {
    gate: Arc<Mutex<Receiver<()>>>,
    seen: Sender<u32>,
}

impl Actor for Gated {
    type Msg = Job;
    fn receive(&mut self, _: &mut Context<Self>, (_, id): Job) {
        let _ = self.seen.send(id);
        if id == 0 || id == 999 {
            let _ = self.gate.lock().unwrap().recv_timeout(PATIENCE);
        }
    }
}

struct Setup {
    system: ActorSystem,
    actor: ActorRef<Job>,
    open: Sender<()>,
    seen: Probe<u32>,
    dropped: Arc<Mutex<Vec<(u32, DeadLetterReason)>>>,
}

/// A priority-mailbox actor blocked in job 0, so what is sent next waits
/// together in its mailbox.
fn blocked(name: &str, bound: Option<(usize, MailboxOverflow)>) -> Setup {
    let system = ActorSystem::new(name).unwrap();
    let dropped = Arc::new(Mutex::new(Vec::new()));
    let letters = dropped.clone();
    let subscription = system.event_stream().subscribe(move |event| {
        let Event::DeadLetter(letter) = event else {
            return;
        };
        if let Some(&(_, id)) = letter.downcast_ref::<Job>() {
            letters.lock().unwrap().push((id, letter.reason()));
        }
    });
    std::mem::forget(subscription); // kept for the test's length
    let (open, gate) = channel();
    let seen = Probe::new();
    let sender = seen.sender();
    let gate = Arc::new(Mutex::new(gate));
    let props = Props::new(move || Gated {
        gate: gate.clone(),
        seen: sender.clone(),
    })
    .with_priority_mailbox(|&(priority, _): &Job| {
        assert!(priority != 666, "a priority function that panics");
        priority
    });
    let props = match bound {
        Some((capacity, overflow)) => props.with_bounded_mailbox(capacity, overflow),
        None => props,
    };
    let actor = system.spawn(props, "gated").unwrap();
    actor.tell((0, 0));
    assert_eq!(seen.expect(), 0, "the actor is in job 0");
    Setup {
        system,
        actor,
        open,
        seen,
        dropped,
    }
}

#[test]
fn waiting_messages_go_by_priority_then_send_order() {
    let s = blocked("priority-order", None);
    for job in [(2, 1), (1, 2), (2, 3), (0, 4), (1, 5), (-7, 6)] {
        s.actor.tell(job);
    }
    s.open.send(()).unwrap();
    assert_eq!(s.seen.expect_n(6), [6, 4, 2, 5, 1, 3]);
    shutdown(&s.system);
}

#[test]
fn a_message_sent_later_overtakes_less_urgent_ones_already_waiting() {
    let s = blocked("priority-overtake", None);
    s.actor.tell((10, 999)); // the next to block
    for id in 1..=100 {
        s.actor.tell((10, id));
    }
    s.open.send(()).unwrap();
    assert_eq!(s.seen.expect(), 999, "the actor is in job 999");
    s.actor.tell((0, 1000));
    s.open.send(()).unwrap();
    let seen = s.seen.expect_n(101);
    assert_eq!(seen[0], 1000, "the urgent job goes first");
    assert_eq!(
        seen[1..],
        (1..=100).collect::<Vec<_>>()[..],
        "equal priorities keep send order"
    );
    shutdown(&s.system);
}

#[test]
fn a_poison_pill_ranks_after_the_messages_it_waits_with() {
    let s = blocked("priority-pill", None);
    s.actor.tell((i64::MAX - 1, 1));
    s.actor.poison_pill();
    s.actor.tell((5, 2)); // sent after the pill, more urgent than it
    s.open.send(()).unwrap();
    assert_eq!(s.seen.expect_n(2), [2, 1]);
    assert!(eventually(PATIENCE, || s.actor.is_terminated()));
    shutdown(&s.system);
}

#[test]
fn a_panicking_priority_function_ranks_the_message_last() {
    let s = blocked("priority-panic", None);
    s.actor.tell((666, 1)); // the function panics: ranked last
    s.actor.tell((100, 2));
    s.open.send(()).unwrap();
    assert_eq!(s.seen.expect_n(2), [2, 1]);
    shutdown(&s.system);
}

#[test]
fn a_bounded_priority_mailbox_keeps_the_most_urgent_messages() {
    let s = blocked("priority-bounded", Some((2, MailboxOverflow::DropHead)));
    s.actor.tell((5, 1));
    s.actor.tell((1, 2)); // full now
    s.actor.tell((0, 3)); // evicts job 1, the least urgent
    s.actor.tell((9, 4)); // less urgent than every queued job: dropped
    assert_eq!(
        s.actor.try_tell((9, 5)),
        Err(TellError::MailboxFull((9, 5)))
    );
    s.open.send(()).unwrap();
    assert_eq!(s.seen.expect_n(2), [3, 2]);
    assert_eq!(
        *s.dropped.lock().unwrap(),
        [
            (1, DeadLetterReason::Dropped),
            (4, DeadLetterReason::Dropped)
        ]
    );
    shutdown(&s.system);
}

#[test]
fn a_bounded_priority_mailbox_with_drop_new_refuses_when_full() {
    let s = blocked("priority-drop-new", Some((1, MailboxOverflow::DropNew)));
    s.actor.tell((5, 1));
    s.actor.tell((0, 2)); // more urgent, but no room and no eviction
    s.open.send(()).unwrap();
    assert_eq!(s.seen.expect_n(1), [1]);
    assert_eq!(*s.dropped.lock().unwrap(), [(2, DeadLetterReason::Dropped)]);
    shutdown(&s.system);
}
