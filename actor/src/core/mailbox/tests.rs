//! Single-threaded tests of the mailbox's `unsafe` consumer side, with
//! heap-owning messages so that a double drop, a leak or a read of a moved-out
//! slot shows under `valgrind --tool=memcheck` (see "Memory checks" in
//! `docs/testing.md`; CI runs these there).

use super::{Enqueued, Mailbox};

fn msg(n: usize) -> String {
    format!("message {n}")
}

/// A mailbox whose spawner handed the token back, as after the start signal.
fn idle() -> Mailbox<String, Box<usize>> {
    let mailbox = Mailbox::new_claimed();
    // SAFETY: `new_claimed` gave this thread the token; the batch is empty.
    assert!(!unsafe { mailbox.release(true) });
    mailbox
}

#[test]
fn the_first_send_claims_and_the_rest_queue() {
    let mailbox = idle();
    assert_eq!(
        mailbox.enqueue_user(msg(0)).unwrap(),
        Enqueued::MustSchedule
    );
    assert_eq!(mailbox.enqueue_user(msg(1)).unwrap(), Enqueued::Queued);
    assert_eq!(
        mailbox.enqueue_system(Box::new(7)).unwrap(),
        Enqueued::Queued
    );
    // SAFETY: the first send won the token for this thread.
    unsafe {
        assert_eq!(
            mailbox.next_system().as_deref(),
            Some(&7),
            "system messages first"
        );
        assert_eq!(mailbox.next_system(), None);
        assert_eq!(mailbox.next_user().as_deref(), Some("message 0"));
        assert_eq!(mailbox.next_user().as_deref(), Some("message 1"));
        assert_eq!(mailbox.next_user(), None);
        assert!(mailbox.batch_is_empty());
        assert!(!mailbox.release(true), "nothing left, the token goes back");
    }
}

#[test]
fn release_with_work_left_claims_again() {
    let mailbox = idle();
    assert_eq!(
        mailbox.enqueue_user(msg(0)).unwrap(),
        Enqueued::MustSchedule
    );
    // SAFETY: this thread owns the token from the send above.
    unsafe {
        assert!(mailbox.next_user().is_some());
        // A message arrives while the owner is busy; it stays in `shared`.
        assert_eq!(mailbox.enqueue_user(msg(1)).unwrap(), Enqueued::Queued);
        assert!(
            mailbox.release(true),
            "the queued message makes the owner claim again"
        );
        // A suspended owner (user messages do not count) lets go of it.
        assert!(!mailbox.release(false));
    }
    assert_eq!(
        mailbox.enqueue_user(msg(2)).unwrap(),
        Enqueued::MustSchedule
    );
    // SAFETY: the send above won the token back.
    unsafe {
        let left: Vec<_> = std::iter::from_fn(|| mailbox.next_user()).collect();
        assert_eq!(left, ["message 1", "message 2"]);
    }
}

#[test]
fn close_takes_the_batch_and_the_queues_exactly_once() {
    let mailbox = idle();
    for n in 0..4 {
        let _ = mailbox.enqueue_user(msg(n)).unwrap();
    }
    let _ = mailbox.enqueue_system(Box::new(9)).unwrap();
    // SAFETY: the first send above won the token for this thread.
    let drained = unsafe {
        // One message taken moves the rest of the queue into the batch.
        assert_eq!(mailbox.next_user().unwrap(), "message 0");
        let _ = mailbox.enqueue_user(msg(4)).unwrap();
        mailbox.close()
    };
    let user: Vec<_> = drained.user.into_iter().collect();
    assert_eq!(
        user,
        ["message 1", "message 2", "message 3", "message 4"],
        "batch first, then shared"
    );
    assert_eq!(
        drained.system.into_iter().map(|s| *s).collect::<Vec<_>>(),
        [9]
    );
    // Closed: every later send gives its message back, and nothing is left.
    assert_eq!(mailbox.enqueue_user(msg(5)).unwrap_err(), "message 5");
    assert_eq!(*mailbox.enqueue_system(Box::new(1)).unwrap_err(), 1);
    // SAFETY: the token was never released after close.
    unsafe {
        assert_eq!(mailbox.next_user(), None);
        assert_eq!(mailbox.next_system(), None);
    }
}

#[test]
fn dropping_a_mailbox_drops_what_it_still_holds() {
    let mailbox = idle();
    for n in 0..3 {
        let _ = mailbox.enqueue_user(msg(n)).unwrap();
    }
    // SAFETY: the first send won the token; half the messages move to the batch.
    unsafe {
        assert!(mailbox.next_user().is_some());
    }
    let _ = mailbox.enqueue_user(msg(3)).unwrap();
    let _ = mailbox.enqueue_system(Box::new(1)).unwrap();
    drop(mailbox); // memcheck: no leak, no double free of batch or queue
}
