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
