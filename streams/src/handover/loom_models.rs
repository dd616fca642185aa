//! Loom models of the hand-over protocol (module docs of `handover`).
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test -p weir-streams --release --lib handover`
//! (the shared producer side's models are the `shared_*` ones).
//! Each side waits on a `loom::sync::Notify` (a stored permit), so a lost
//! wake-up leaves a side blocked for ever and loom reports the deadlock.
//! Credit conservation (`credit + taken in + handed over and not given
//! back == capacity`) is asserted inside `Producer::hand_over` under loom.

use loom::sync::Arc;
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::thread;

use super::{Notify, Order, Refill, Wait, channel};
use crate::error::StreamError;

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
            Err(crate::error::ErrorKind::AbruptTermination)
        ));
        feeder.join().unwrap();
    });
}

/// A consumer cancels keeping what it did not pass on while the producer
/// still hands over: the producer learns of it, and what the consumer
/// passed on followed by what the producer takes back is every element,
/// in order, once (the `BroadcastHub`'s next consumer gets the rest).
#[test]
fn cancel_keeping_gives_every_unpassed_element_back_once() {
    loom::model(|| {
        let (mut producer, mut consumer) = channel::<usize, Side, Side>(4, Order::Pop);
        let up = Side::default();
        producer.set_notify(up.clone());
        let feeder = thread::spawn(move || {
            for i in 0..4 {
                if producer.push(i) {
                    producer.hand_over();
                }
            }
            while !producer.hand_over() {
                up.wait();
            }
            let back = producer.take_back();
            assert!(producer.take_back().is_empty(), "taken back once");
            back
        });
        let mut passed = Vec::new();
        if consumer.refill(Wait::No) == Refill::Ready {
            passed.extend(consumer.pop());
        }
        assert!(consumer.cancel_keeping());
        passed.extend(feeder.join().unwrap());
        assert_eq!(passed, vec![0, 1, 2, 3]);
    });
}

/// A single producer's failure overtakes what is queued: a consumer that
/// took a batch hears of it once through `take_abort` (woken by it), one
/// that did not sees it once from `refill`.
#[test]
fn abort_overtakes_the_batch_once() {
    loom::model(|| {
        let (mut producer, mut consumer) = channel::<usize, Side, Side>(4, Order::Pop);
        let down = Side::default();
        consumer.set_notify(down.clone());
        producer.push(0);
        producer.push(1);
        producer.hand_over();
        let failer = thread::spawn(move || assert!(producer.abort(StreamError::msg("boom"))));
        match consumer.refill(Wait::No) {
            Refill::Ready => {
                assert_eq!(consumer.pop(), Some(0));
                while consumer.take_abort().is_none() {
                    down.wait();
                }
                assert!(consumer.is_empty(), "the batch is dropped");
            }
            Refill::End(outcome) => assert!(outcome.is_err()),
            other => panic!("an element or the failure: {other:?}"),
        }
        assert!(consumer.take_abort().is_none(), "taken once");
        assert_eq!(consumer.refill(Wait::No), Refill::Done);
        failer.join().unwrap();
    });
}

// The shared producer side (`handover/shared.rs`): several producers, the
// consumer on the model's main thread. Credit conservation is asserted
// inside `SharedProducer::{offer, send}` under loom (credit left plus
// handed over and not given back equals the capacity, so credit never
// exceeds it); a waiting send waits on its own `Side`, so a lost wake-up
// is a deadlock loom reports.

use super::{Refused, SendSlot, SharedProducer, shared_channel};

type Shared = SharedProducer<usize, Side, Side>;

/// `send` until it puts `element` in or the channel ends, waiting on `me`
/// while there is no credit.
fn send_blocking(producer: &Shared, element: usize, me: &Side) -> Result<(), Refused<usize>> {
    let mut slot = SendSlot::default();
    let mut element = element;
    loop {
        match producer.send(&mut slot, element, me) {
            Err(Refused::Full(back)) => {
                element = back;
                me.wait();
            }
            done => {
                producer.cancel_send(&mut slot); // a no-op once done
                return done;
            }
        }
    }
}

/// Receive until `n` elements came (waiting on `down`), in arrival order.
fn receive(consumer: &mut super::Consumer<usize, Side, Side>, down: &Side, n: usize) -> Vec<usize> {
    let mut received = Vec::new();
    while received.len() < n {
        match consumer.refill(Wait::Yes) {
            Refill::Ready => received.extend(std::iter::from_fn(|| consumer.pop())),
            Refill::Empty => down.wait(),
            Refill::End(_) | Refill::Done => panic!("nobody ended the channel"),
        }
    }
    received
}

/// Two producers send through a buffer of 1: both elements arrive once,
/// each waiting send is woken for the place freed (no lost wake-up), and
/// credit is conserved throughout.
#[test]
fn shared_two_producers_share_the_credit() {
    loom::model(|| {
        let (producer, mut consumer) = shared_channel::<usize, Side, Side>(1, Order::Pop);
        let down = Side::default();
        consumer.set_notify(down.clone());
        let senders: Vec<_> = [1, 2]
            .into_iter()
            .map(|x| {
                let producer = producer.clone();
                thread::spawn(move || send_blocking(&producer, x, &Side::default()))
            })
            .collect();
        let mut received = receive(&mut consumer, &down, 2);
        for sender in senders {
            assert_eq!(sender.join().unwrap(), Ok(()));
        }
        received.sort_unstable();
        assert_eq!(received, vec![1, 2]);
        assert_eq!(producer.snapshot().2, 0, "nobody left in line");
    });
}

/// Two sends wait in line (A first) on a full buffer of 1, B blocked on
/// its own thread; A is dropped while the consumer frees the place, before
/// or after A was woken for it: B still gets the place (A's wake-up is
/// passed on, never lost).
#[test]
fn shared_cancelled_send_passes_its_wake_up_on() {
    loom::model(|| {
        let (producer, mut consumer) = shared_channel::<usize, Side, Side>(1, Order::Pop);
        let down = Side::default();
        consumer.set_notify(down.clone());
        assert_eq!(producer.offer(0), Ok(()));
        let (a, b) = (Side::default(), Side::default());
        let (mut slot_a, mut slot_b) = (SendSlot::default(), SendSlot::default());
        assert_eq!(producer.send(&mut slot_a, 1, &a), Err(Refused::Full(1)));
        assert_eq!(producer.send(&mut slot_b, 2, &b), Err(Refused::Full(2)));
        let live = {
            let producer = producer.clone();
            thread::spawn(move || {
                loop {
                    b.wait(); // only a wake-up (or loom's one spurious one) gets it going
                    match producer.send(&mut slot_b, 2, &b) {
                        Ok(()) => break,
                        Err(Refused::Full(_)) => {}
                        Err(other) => panic!("nobody ended the channel: {other:?}"),
                    }
                }
            })
        };
        let taker = thread::spawn(move || receive(&mut consumer, &down, 2));
        producer.cancel_send(&mut slot_a); // A gives up, woken or not
        live.join().unwrap();
        assert_eq!(taker.join().unwrap(), vec![0, 2]);
        assert_eq!(
            producer.snapshot().2,
            0,
            "no entry left for a send that is gone"
        );
    });
}

/// A send waits on a full buffer while the consumer frees the place and
/// the queue completes: the send either gets in before the completion or
/// hears of it (woken once); the consumer gets every element put in, then
/// the end exactly once.
#[test]
fn shared_completion_against_a_waiting_send() {
    loom::model(|| {
        let (producer, mut consumer) = shared_channel::<usize, Side, Side>(1, Order::Pop);
        let down = Side::default();
        consumer.set_notify(down.clone());
        assert_eq!(producer.offer(0), Ok(()));
        let me = Side::default();
        let sender = {
            let (producer, me) = (producer.clone(), me.clone());
            thread::spawn(move || send_blocking(&producer, 1, &me))
        };
        assert_eq!(consumer.refill(Wait::No), Refill::Ready);
        assert_eq!(consumer.pop(), Some(0)); // frees the place
        assert!(producer.complete());
        assert!(!producer.complete(), "the first end wins");
        let mut received = Vec::new();
        let mut ends = 0;
        loop {
            match consumer.refill(Wait::Yes) {
                Refill::Ready => received.extend(std::iter::from_fn(|| consumer.pop())),
                Refill::Empty => down.wait(),
                Refill::End(outcome) => {
                    assert_eq!(outcome, Ok(()));
                    ends += 1;
                }
                Refill::Done => break,
            }
        }
        assert_eq!(ends, 1, "the end is delivered once");
        match sender.join().unwrap() {
            Ok(()) => assert_eq!(received, vec![1]),
            Err(refused) => {
                assert_eq!(refused, Refused::Closed(1));
                assert!(received.is_empty());
            }
        }
        assert!(me.count() <= 1, "woken at most once");
    });
}

/// The consumer cancels while a send waits on a full buffer: the send
/// hears of it (woken once at most) and gets its element back; later
/// offers are refused.
#[test]
fn shared_cancel_against_a_waiting_send() {
    loom::model(|| {
        let (producer, mut consumer) = shared_channel::<usize, Side, Side>(1, Order::Pop);
        assert_eq!(producer.offer(0), Ok(()));
        let me = Side::default();
        let sender = {
            let (producer, me) = (producer.clone(), me.clone());
            thread::spawn(move || send_blocking(&producer, 1, &me))
        };
        assert!(consumer.cancel());
        assert_eq!(sender.join().unwrap(), Err(Refused::Closed(1)));
        assert!(me.count() <= 1, "woken at most once");
        assert!(producer.is_closed());
        assert_eq!(producer.offer(2), Err(Refused::Closed(2)));
        assert!(!consumer.cancel(), "the cancellation takes effect once");
    });
}

/// A failure overtakes what is queued: a consumer that took a batch
/// before it hears of it once through `take_abort` (woken by it), one that
/// did not sees it once from `refill`; nothing queued after it arrives.
#[test]
fn shared_failure_overtakes_the_batch_once() {
    loom::model(|| {
        let (producer, mut consumer) = shared_channel::<usize, Side, Side>(4, Order::Pop);
        let down = Side::default();
        consumer.set_notify(down.clone());
        assert_eq!(producer.offer(0), Ok(()));
        assert_eq!(producer.offer(1), Ok(()));
        let failer = {
            let producer = producer.clone();
            thread::spawn(move || assert!(producer.fail(StreamError::msg("boom"))))
        };
        let mut failures = 0;
        match consumer.refill(Wait::No) {
            Refill::Ready => {
                assert_eq!(consumer.pop(), Some(0));
                // The failure notifies the consumer (loom's `Notify` may
                // also wake it spuriously: look again until it came).
                while consumer.take_abort().is_none() {
                    down.wait();
                }
                failures += 1;
                assert!(consumer.is_empty(), "the batch is dropped");
            }
            Refill::End(outcome) => {
                assert!(outcome.is_err());
                failures += 1;
            }
            other => panic!("an element or the failure: {other:?}"),
        }
        assert!(consumer.take_abort().is_none(), "taken once");
        assert_eq!(consumer.refill(Wait::No), Refill::Done);
        assert_eq!(failures, 1);
        failer.join().unwrap();
        assert!(matches!(producer.offer(2), Err(Refused::Failed(_, 2))));
    });
}

/// Every element the consumer passes on frees its place at once: an
/// offer made after the consumer popped (a flag orders the two) is taken,
/// so a shared channel refuses an offer only while it holds `capacity`
/// elements (`Source::queue`'s promise). Given back in batches, the offer
/// after the pop was refused with half the buffer free.
#[test]
fn shared_a_popped_place_is_offered_again() {
    loom::model(|| {
        // A capacity of 4: batches (of 2) would hold the place back.
        let (producer, mut consumer) = shared_channel::<usize, Side, Side>(4, Order::Pop);
        for x in 0..4 {
            assert_eq!(producer.offer(x), Ok(()));
        }
        assert_eq!(producer.offer(9), Err(Refused::Full(9)), "full");
        let popped = Arc::new(loom::sync::atomic::AtomicBool::new(false));
        let taker = {
            let popped = Arc::clone(&popped);
            thread::spawn(move || {
                assert_eq!(consumer.refill(Wait::No), Refill::Ready);
                assert_eq!(consumer.pop(), Some(0));
                popped.store(true, Ordering::Release);
                consumer
            })
        };
        let after_pop = popped.load(Ordering::Acquire);
        let offered = producer.offer(4);
        if after_pop {
            assert_eq!(offered, Ok(()), "the popped place is free");
        }
        let mut consumer = taker.join().unwrap();
        match offered {
            // Taken: the channel holds its capacity again.
            Ok(()) => assert_eq!(producer.offer(9), Err(Refused::Full(9))),
            // Refused before the pop: the place is free now.
            Err(refused) => {
                assert_eq!(refused, Refused::Full(4));
                assert_eq!(producer.offer(4), Ok(()));
            }
        }
        assert_eq!(
            std::iter::from_fn(|| consumer.pop()).collect::<Vec<_>>(),
            vec![1, 2, 3]
        );
        assert_eq!(consumer.refill(Wait::No), Refill::Ready);
        assert_eq!(consumer.pop(), Some(4));
    });
}

/// Exact credit, batched wake-ups: a send waits on a full buffer of 4
/// (waiting senders are woken two places at a time) while the consumer
/// pops one place at a time: the send is woken, never lost, and the
/// credit is conserved.
#[test]
fn shared_batched_wake_of_a_waiting_send() {
    loom::model(|| {
        let (producer, mut consumer) = shared_channel::<usize, Side, Side>(4, Order::Pop);
        let down = Side::default();
        consumer.set_notify(down.clone());
        for x in 0..4 {
            assert_eq!(producer.offer(x), Ok(()));
        }
        let sender = {
            let producer = producer.clone();
            thread::spawn(move || send_blocking(&producer, 4, &Side::default()))
        };
        let received = receive(&mut consumer, &down, 5);
        assert_eq!(sender.join().unwrap(), Ok(()));
        assert_eq!(received, vec![0, 1, 2, 3, 4]);
        assert_eq!(producer.snapshot().2, 0, "nobody left in line");
    });
}

/// Exact credit, batched wake-ups: two sends wait on a full buffer of 4;
/// both get in, and nobody is left in line.
#[test]
fn shared_batched_wake_two_waiting_sends() {
    loom::model(|| {
        let (producer, mut consumer) = shared_channel::<usize, Side, Side>(4, Order::Pop);
        let down = Side::default();
        consumer.set_notify(down.clone());
        for x in 0..4 {
            assert_eq!(producer.offer(x), Ok(()));
        }
        let senders: Vec<_> = [4, 5]
            .into_iter()
            .map(|x| {
                let producer = producer.clone();
                thread::spawn(move || send_blocking(&producer, x, &Side::default()))
            })
            .collect();
        let mut received = receive(&mut consumer, &down, 6);
        for sender in senders {
            assert_eq!(sender.join().unwrap(), Ok(()));
        }
        received.sort_unstable();
        assert_eq!(received, vec![0, 1, 2, 3, 4, 5]);
        assert_eq!(producer.snapshot().2, 0, "nobody left in line");
    });
}
