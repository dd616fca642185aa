//! Dead letters: messages to stopped actors are counted and published, never a panic.

use std::sync::{Arc, Mutex};

use weir_actor::{Actor, ActorSystem, Context, Event, Props};
use weir_tests::{PATIENCE, eventually, shutdown};

struct Quiet;
impl Actor for Quiet {
    type Msg = String;
    fn receive(&mut self, _: &mut Context<Self>, _: String) {}
}

#[test]
fn messages_to_a_stopped_actor_are_counted_and_published() {
    let system = ActorSystem::new("dead").unwrap();
    let letters = Arc::new(Mutex::new(Vec::new()));
    let l = letters.clone();
    let subscription = system.event_stream().subscribe(move |e| {
        let Event::DeadLetter(d) = e else { return };
        l.lock().unwrap().push((
            d.recipient().name().to_owned(),
            d.message_type(),
            d.downcast_ref::<String>().cloned(),
        ));
    });
    let q = system.spawn(Props::new(|| Quiet), "quiet").unwrap();
    q.stop();
    assert!(eventually(PATIENCE, || q.is_terminated()));
    for i in 0..3 {
        q.tell(format!("lost {i}"));
    }
    assert_eq!(system.event_stream().dead_letter_count(), 3);
    let letters_now = letters.lock().unwrap().clone();
    assert_eq!(letters_now.len(), 3);
    assert_eq!(
        letters_now[0],
        (
            "quiet".to_owned(),
            std::any::type_name::<String>(),
            Some("lost 0".to_owned())
        )
    );
    // Unsubscribed: still counted, no longer published to us.
    drop(subscription);
    q.tell("after".to_owned());
    assert_eq!(system.event_stream().dead_letter_count(), 4);
    assert_eq!(letters.lock().unwrap().len(), 3);
    shutdown(&system);
    // After termination too: counted, no panic.
    q.tell("after terminate".to_owned());
    assert_eq!(system.event_stream().dead_letter_count(), 5);
}

#[test]
fn messages_queued_when_an_actor_stops_become_dead_letters() {
    let system = ActorSystem::new("queued").unwrap();
    let q = system.spawn(Props::new(|| Quiet), "quiet").unwrap();
    let sent = 10_000;
    let sender = {
        let q = q.clone();
        std::thread::spawn(move || {
            for i in 0..sent {
                q.tell(i.to_string());
            }
        })
    };
    q.stop();
    sender.join().unwrap();
    assert!(eventually(PATIENCE, || q.is_terminated()));
    // Every message was either processed or is a dead letter; the count of
    // dead letters can be anything from 0 to `sent`, and never panics.
    assert!(system.event_stream().dead_letter_count() <= sent);
    shutdown(&system);
}

/// A subscriber that tells a stopped actor causes a dead letter from
/// inside publishing. Before the fix that letter was published to the same
/// subscriber on the same stack, which told again: the stack overflowed.
#[test]
fn a_subscriber_that_causes_dead_letters_does_not_recurse() {
    let system = ActorSystem::new("recursive").unwrap();
    let q = system.spawn(Props::new(|| Quiet), "quiet").unwrap();
    q.stop();
    assert!(eventually(PATIENCE, || q.is_terminated()));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (log, echo) = (seen.clone(), q.clone());
    let _subscription = system.event_stream().subscribe(move |e| {
        let Event::DeadLetter(d) = e else { return };
        let text = d.downcast_ref::<String>().cloned().unwrap_or_default();
        log.lock().unwrap().push(text.clone());
        echo.tell(format!("echo of {text}"));
    });
    q.tell("first".to_owned());
    // The subscriber saw the letter it was published; the letter its own
    // tell caused is counted, not fed back to it.
    assert_eq!(*seen.lock().unwrap(), ["first"]);
    assert_eq!(system.event_stream().dead_letter_count(), 2);
    shutdown(&system);
}

/// The guard tells event streams apart: a subscriber of one system that
/// tells a stopped actor of another still reaches that system's subscribers.
#[test]
fn a_subscriber_may_cause_dead_letters_on_another_system() {
    let (one, other) = (
        ActorSystem::new("one").unwrap(),
        ActorSystem::new("other").unwrap(),
    );
    let gone = other.spawn(Props::new(|| Quiet), "gone").unwrap();
    gone.stop();
    assert!(eventually(PATIENCE, || gone.is_terminated()));
    let seen_by_other = Arc::new(Mutex::new(0));
    let count = seen_by_other.clone();
    let _on_other = other
        .event_stream()
        .subscribe(move |_| *count.lock().unwrap() += 1);
    let forward = gone.clone();
    let _on_one = one
        .event_stream()
        .subscribe(move |_| forward.tell("forwarded".to_owned()));
    let q = one.spawn(Props::new(|| Quiet), "quiet").unwrap();
    q.stop();
    assert!(eventually(PATIENCE, || q.is_terminated()));
    q.tell("first".to_owned());
    assert_eq!(*seen_by_other.lock().unwrap(), 1);
    shutdown(&one);
    shutdown(&other);
}
