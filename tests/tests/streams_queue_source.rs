//! `Source::queue`: offer answers at once, send waits for room, completion and failure, a closed queue.

use std::time::Duration;

use weir_streams::prelude::*;
use weir_streams::testkit::TestSink;
use weir_streams::{ArgumentError, QueueOfferResult, QueueSendError};
use weir_tests::{PATIENCE, QUIET, eventually, shutdown, stream_system};

#[test]
fn offer_enqueues_drops_when_full_and_refuses_when_closed() {
    let (system, mat) = stream_system("queue-offer");
    let (queue, mut down) = Source::queue(2)
        .unwrap()
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    assert_eq!(queue.offer(1), QueueOfferResult::Enqueued);
    assert_eq!(queue.offer(2), QueueOfferResult::Enqueued);
    assert_eq!(
        queue.offer(3),
        QueueOfferResult::Dropped(3),
        "full: given back at once"
    );
    down.request(1);
    assert_eq!(down.expect_next(), 1);
    assert!(
        eventually(PATIENCE, || queue.offer(4) == QueueOfferResult::Enqueued),
        "room again"
    );
    queue.complete();
    assert!(queue.is_closed());
    assert_eq!(queue.offer(5), QueueOfferResult::QueueClosed(5));
    down.request(5);
    assert_eq!(down.expect_next_n(2), vec![2, 4]);
    down.expect_complete();
    assert_eq!(
        Source::<u8, _>::queue(0).map(|_| ()).unwrap_err(),
        ArgumentError::Zero {
            argument: "buffer_size"
        }
    );
    shutdown(&system);
}

#[test]
fn send_waits_for_room() {
    let (system, mat) = stream_system("queue-send");
    let (queue, mut down) = Source::queue(1)
        .unwrap()
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    futures_executor::block_on(queue.send(1)).unwrap();
    let sender = {
        let queue = queue.clone();
        std::thread::spawn(move || futures_executor::block_on(queue.send(2)))
    };
    std::thread::sleep(QUIET);
    assert!(!sender.is_finished(), "no room: the send waits");
    down.request(1);
    assert_eq!(down.expect_next(), 1);
    assert_eq!(
        sender.join().unwrap(),
        Ok(()),
        "room made: the send completes"
    );
    down.request(1);
    assert_eq!(down.expect_next(), 2);
    shutdown(&system);
}

#[test]
fn fail_fails_at_once_and_cancel_closes_the_queue() {
    let (system, mat) = stream_system("queue-end");
    let (queue, mut down) = Source::queue(4)
        .unwrap()
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    queue.offer(1);
    queue.fail(StreamError::msg("stop"));
    assert!(down.expect_error().to_string().ends_with("stop"));
    assert!(matches!(queue.offer(2), QueueOfferResult::Failure(_, 2)));
    assert!(matches!(
        futures_executor::block_on(queue.send(3)),
        Err(QueueSendError::Failed(_, 3))
    ));

    let (queue, mut down) = Source::queue(1)
        .unwrap()
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    queue.offer(1);
    let blocked = {
        let queue = queue.clone();
        std::thread::spawn(move || futures_executor::block_on(queue.send(2)))
    };
    down.cancel();
    assert!(
        eventually(PATIENCE, || queue.is_closed()),
        "cancelling downstream closes the queue"
    );
    assert_eq!(
        blocked.join().unwrap(),
        Err(QueueSendError::Closed(2)),
        "a waiting send hears of it"
    );
    assert_eq!(queue.offer(9), QueueOfferResult::QueueClosed(9));
    shutdown(&system);
}

#[test]
fn many_threads_offer_and_send_into_one_stream() {
    let (system, mat) = stream_system("queue-threads");
    let (queue, done) = Source::queue(64)
        .unwrap()
        .to_mat(Sink::fold(0u64, |a, x| a + x), Keep::both)
        .run(&mat);
    let senders: Vec<_> = (0..4u64)
        .map(|t| {
            let queue = queue.clone();
            std::thread::spawn(move || {
                for i in 0..5000u64 {
                    futures_executor::block_on(queue.send(t * 10_000 + i)).unwrap();
                }
            })
        })
        .collect();
    for sender in senders {
        sender.join().unwrap();
    }
    queue.complete();
    let expected: u64 = (0..4u64)
        .map(|t| (0..5000u64).map(|i| t * 10_000 + i).sum::<u64>())
        .sum();
    assert_eq!(
        done.wait_timeout(Duration::from_secs(30))
            .expect("completes"),
        Ok(expected)
    );
    shutdown(&system);
}

/// Poll `send` once with a waker that does nothing: pending or done.
fn poll_once<T: Send + 'static>(send: &mut weir_streams::SendFuture<T>) -> bool {
    use std::future::Future;
    use std::task::{Context, Waker};
    std::pin::Pin::new(send)
        .poll(&mut Context::from_waker(Waker::noop()))
        .is_pending()
}

fn waiting_sends<T: Send + 'static>(queue: &weir_streams::SourceQueue<T>) -> String {
    let debug = format!("{queue:?}");
    let from = debug
        .find("waiting_sends: ")
        .expect("Debug shows the waiting sends");
    debug[from..].split(',').next().unwrap().to_owned()
}

/// Capacity 1 and full; a send that waited is cancelled (before or after
/// the stream frees a place); a live send waiting behind it still
/// completes when the place is freed.
#[test]
fn a_cancelled_send_does_not_take_a_live_senders_wake_up() {
    for cancel_after_the_wake_up in [false, true] {
        let (system, mat) = stream_system("queue-cancel");
        let (queue, mut down) = Source::queue(1)
            .unwrap()
            .to_mat(TestSink::probe(), Keep::both)
            .run(&mat);
        assert_eq!(queue.offer(0), QueueOfferResult::Enqueued);
        let mut cancelled = queue.send(1);
        assert!(poll_once(&mut cancelled), "full: the first send waits");
        let live = {
            let queue = queue.clone();
            std::thread::spawn(move || futures_executor::block_on(queue.send(2)))
        };
        assert!(
            eventually(PATIENCE, || waiting_sends(&queue) == "waiting_sends: 2"),
            "both sends wait: {queue:?}"
        );
        if !cancel_after_the_wake_up {
            drop(cancelled);
            down.request(1);
        } else {
            down.request(1);
            // The place freed woke the first in line; it gives up without using it.
            assert!(eventually(PATIENCE, || waiting_sends(&queue) == "waiting_sends: 1"));
            drop(cancelled);
        }
        assert_eq!(down.expect_next(), 0);
        assert!(
            eventually(PATIENCE, || live.is_finished()),
            "the live send is woken for the freed place (cancelled after its wake-up: {cancel_after_the_wake_up})"
        );
        assert_eq!(live.join().unwrap(), Ok(()));
        down.request(1);
        assert_eq!(down.expect_next(), 2);
        shutdown(&system);
    }
}

#[test]
fn waiting_sends_keep_one_place_each_and_give_it_up_when_dropped() {
    let (system, mat) = stream_system("queue-waiters");
    let (queue, mut down) = Source::queue(1)
        .unwrap()
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    assert_eq!(queue.offer(0), QueueOfferResult::Enqueued);
    let mut send = queue.send(1);
    for _ in 0..100 {
        assert!(poll_once(&mut send));
    }
    assert_eq!(
        waiting_sends(&queue),
        "waiting_sends: 1",
        "polled 100 times, one place"
    );
    for i in 0..100 {
        let mut cancelled = queue.send(10 + i);
        assert!(poll_once(&mut cancelled));
    }
    assert_eq!(
        waiting_sends(&queue),
        "waiting_sends: 1",
        "100 cancelled sends left no place behind"
    );
    down.request(2);
    assert_eq!(down.expect_next(), 0);
    assert!(
        eventually(PATIENCE, || !poll_once(&mut send)),
        "woken or not, the freed place is there for the send"
    );
    assert_eq!(down.expect_next(), 1);
    drop(send);
    assert_eq!(waiting_sends(&queue), "waiting_sends: 0");
    shutdown(&system);
}

#[test]
fn queue_send_errors_display_and_give_the_element_back() {
    let closed = QueueSendError::Closed(3u8);
    assert_eq!(closed.to_string(), "the queue is closed");
    let failed = QueueSendError::Failed(StreamError::msg("boom"), 4u8);
    assert_eq!(failed.to_string(), "the queue's stream failed: boom");
    let as_error: &dyn std::error::Error = &failed;
    assert_eq!(
        as_error.source().map(ToString::to_string),
        Some("boom".to_owned())
    );
    assert_eq!(failed.into_inner(), 4);
    assert_eq!(closed.into_inner(), 3);
}

/// An offer is dropped only when the queue holds its capacity: every
/// element emitted frees its place at once (places used to come back half
/// the buffer at a time, so offers were dropped with half of it free).
#[test]
fn offer_is_dropped_only_when_the_queue_holds_its_capacity() {
    let (system, mat) = stream_system("queue-offer-capacity");
    let (queue, mut down) = Source::queue(8)
        .unwrap()
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    for x in 0..8 {
        assert_eq!(queue.offer(x), QueueOfferResult::Enqueued);
    }
    assert_eq!(queue.offer(8), QueueOfferResult::Dropped(8));
    for x in 0..20 {
        down.request(1);
        assert_eq!(down.expect_next(), x);
        // One emitted: one place free, taken at once; then full again.
        assert_eq!(queue.offer(x + 8), QueueOfferResult::Enqueued, "after {x}");
        assert_eq!(queue.offer(100), QueueOfferResult::Dropped(100));
    }
    shutdown(&system);
}

/// Completion needs no demand (Reactive Streams rule 1.4/Pekko): a queue
/// completed while the stage holds a batch it already took completes right
/// after the batch's last element, without another request.
#[test]
fn a_queue_completed_behind_a_taken_batch_completes_after_its_last_element() {
    let (system, mat) = stream_system("queue-complete-behind-batch");
    let (queue, mut down) = Source::queue(4)
        .unwrap()
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    assert_eq!(queue.offer(1), QueueOfferResult::Enqueued);
    assert_eq!(queue.offer(2), QueueOfferResult::Enqueued);
    // The stage takes both as one batch when it pushes the first.
    down.request(1);
    assert_eq!(down.expect_next(), 1);
    queue.complete();
    down.request(1);
    assert_eq!(down.expect_next(), 2);
    // No more demand: the completion must still come.
    down.expect_complete();
    shutdown(&system);
}
