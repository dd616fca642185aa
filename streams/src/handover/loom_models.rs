//! Loom models of the hand-over protocol (module docs of `handover`).
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test -p weir-streams --release --lib handover`.
//! Each side waits on a `loom::sync::Notify` (a stored permit), so a lost
//! wake-up leaves a side blocked for ever and loom reports the deadlock.
//! Credit conservation (`credit + taken in + handed over and not given
//! back == capacity`) is asserted inside `Producer::hand_over` under loom.

use loom::sync::Arc;
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::thread;

use super::{Notify, Order, Refill, Wait, channel};
use crate::StreamError;

/// A side's wake-up: a loom `Notify` (permit) and a count of notifications.
#[derive(Clone, Default)]
struct Side(Arc<(loom::sync::Notify, AtomicUsize)>);

impl Side {
    fn wait(&self) {
        self.0.0.wait();
    }

    fn count(&self) -> usize {
        self.0.1.load(Ordering::SeqCst)
    }
}

impl Notify for Side {
    fn notify(&self) {
        self.0.1.fetch_add(1, Ordering::SeqCst);
        self.0.0.notify();
    }
}

/// The producer sends `n` elements through a channel of `capacity`,
/// waiting for credit; the consumer takes them all in order and sees the
/// completion exactly once.
fn flow(capacity: usize, n: usize, order: Order) {
    loom::model(move || {
        let (mut producer, mut consumer) = channel::<usize, Side, Side>(capacity, order);
        let up = Side::default();
        let down = Side::default();
        producer.set_notify(up.clone());
        consumer.set_notify(down.clone());
        let feeder = thread::spawn(move || {
            for i in 0..n {
                while producer.credit() == 0 {
                    assert!(!producer.hand_over(), "nobody cancelled");
                    if producer.credit() == 0 {
                        up.wait();
                    }
                }
                assert!(producer.credit() <= capacity);
                if producer.push(i) {
                    producer.hand_over();
                }
            }
            assert!(producer.finish(Ok(())));
        });
        let mut received = Vec::new();
        let mut ends = 0;
        loop {
            match consumer.refill(Wait::Yes) {
                Refill::Ready => match order {
                    Order::Pop => {
                        while let Some(x) = consumer.pop() {
                            received.push(x);
                        }
                    }
                    Order::Drain => {
                        let taken = consumer.batch_mut().len();
                        received.append(consumer.batch_mut());
                        consumer.consumed(taken);
                    }
                },
                Refill::Empty => down.wait(),
                Refill::End(outcome) => {
                    assert_eq!(outcome, Ok(()));
                    ends += 1;
                    break;
                }
                Refill::Done => panic!("the end is delivered once, then Done"),
            }
        }
        assert_eq!(ends, 1);
        assert_eq!(consumer.refill(Wait::Yes), Refill::Done);
        assert_eq!(received, (0..n).collect::<Vec<_>>());
        feeder.join().unwrap();
    });
}

#[test]
fn credit_and_wake_ups_capacity_1() {
    flow(1, 3, Order::Pop);
}

#[test]
fn credit_and_wake_ups_capacity_2_drain() {
    flow(2, 3, Order::Drain);
}

/// The consumer cancels while the producer hands over and finishes:
/// exactly one of them wins; a cancellation notifies the producer once
/// and the producer learns it; the end is never delivered after a cancel.
#[test]
fn cancel_against_finish() {
    loom::model(|| {
        let (mut producer, mut consumer) = channel::<usize, Side, Side>(2, Order::Pop);
        let up = Side::default();
        let down = Side::default();
        producer.set_notify(up.clone());
        consumer.set_notify(down.clone());
        let feeder = thread::spawn(move || {
            producer.push(1);
            let cancelled = producer.hand_over();
            let finished = producer.finish(Err(StreamError::msg("boom")));
            (cancelled, finished)
        });
        let cancelled = consumer.cancel();
        let (saw_cancel, finished) = feeder.join().unwrap();
        // Exactly one ending took effect.
        assert_ne!(cancelled, finished);
        assert!(!saw_cancel || cancelled);
        // The cancellation notified the producer once, and only if it won.
        assert_eq!(up.count(), usize::from(cancelled));
        // Nothing reaches a cancelled consumer; a consumer whose cancel
        // lost to the finish is closed too.
        assert_eq!(consumer.refill(Wait::No), Refill::Done);
        assert!(down.count() <= 1);
    });
}

/// A consumer waiting on an empty channel is woken by the end, which it
/// then sees once; a producer dropped without finishing ends the channel.
#[test]
fn end_wakes_a_waiting_consumer() {
    loom::model(|| {
        let (mut producer, mut consumer) = channel::<usize, Side, Side>(2, Order::Pop);
        let down = Side::default();
        consumer.set_notify(down.clone());
        let feeder = thread::spawn(move || {
            producer.push(7);
            producer.hand_over();
            drop(producer); // never finished: abrupt termination
        });
        let mut received = Vec::new();
        let end = loop {
            match consumer.refill(Wait::Yes) {
                Refill::Ready => received.extend(std::iter::from_fn(|| consumer.pop())),
                Refill::Empty => down.wait(),
                Refill::End(outcome) => break outcome,
                Refill::Done => panic!("the end is delivered once"),
            }
        };
        assert_eq!(received, vec![7]);
        assert!(matches!(
            end.as_ref().map_err(|e| e.kind()),
            Err(crate::ErrorKind::AbruptTermination)
        ));
        feeder.join().unwrap();
    });
}
