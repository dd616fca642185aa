//! Loom models of the queue buffer's protocol (module docs of
//! `queue::buffer`): offer against the stage, a cancelled send's wake-up
//! handed on, completion against pending sends.
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test -p weir-streams --release --lib queue`.
//! The model's main thread is the stage; the others are producers. Each
//! model ends by checking that whatever still waits has a wake-up on its
//! way (no lost wake-up) and that the waiter list holds no entry for a
//! send that is gone.

use std::task::{Context, Poll, Waker};

use loom::sync::Arc;
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::thread;

use super::{Delivery, Ending, QueueBuffer, QueueSendError, Waiting};
use crate::actor::inbox::Wake;

/// Counts wake-ups, as the stage's wake or as a sender's waker.
#[derive(Default)]
struct Count(AtomicUsize);

impl Count {
    fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

impl Wake for Arc<Count> {
    fn wake(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// A waker over a `Count` (std's `Arc`, as `Waker::from` needs; the count is loom's).
struct CountWaker(Arc<Count>);

impl std::task::Wake for CountWaker {
    fn wake(self: std::sync::Arc<Self>) {
        self.0.wake();
    }
}

fn waker(count: &Arc<Count>) -> Waker {
    Waker::from(std::sync::Arc::new(CountWaker(Arc::clone(count))))
}

type Buffer = QueueBuffer<usize, Arc<Count>>;

/// A send driven by hand: its slot, its element, and its wake-ups.
struct Send {
    waiting: Waiting,
    element: Option<usize>,
    woken: Arc<Count>,
}

impl Send {
    fn new(element: usize) -> Self {
        Self {
            waiting: Waiting::default(),
            element: Some(element),
            woken: Arc::new(Count::default()),
        }
    }

    fn poll(&mut self, buffer: &Buffer) -> Poll<Result<(), QueueSendError<usize>>> {
        let waker = waker(&self.woken);
        buffer.poll_send(
            &mut self.waiting,
            &mut self.element,
            &mut Context::from_waker(&waker),
        )
    }

    fn cancel(mut self, buffer: &Buffer) {
        buffer.cancel_send(&mut self.waiting);
    }
}

/// A buffer of `capacity`, filled with `filled` elements (0, 1, ...).
fn buffer(capacity: usize, filled: usize) -> (Arc<Buffer>, Arc<Count>) {
    let stage = Arc::new(Count::default());
    let buffer = Arc::new(QueueBuffer::new(capacity, Arc::clone(&stage)));
    for i in 0..filled {
        buffer.offer(i);
    }
    (buffer, stage)
}

/// An offer racing the stage that finds the queue empty: the element is
/// delivered at once, or the stage is woken for it.
#[test]
fn offer_wakes_a_waiting_stage() {
    loom::model(|| {
        let (buffer, stage) = buffer(2, 0);
        let producer = {
            let buffer = Arc::clone(&buffer);
            thread::spawn(move || buffer.offer(7))
        };
        let first = buffer.take(true);
        producer.join().unwrap();
        match first {
            Delivery::Push { element, .. } => assert_eq!(element, 7),
            Delivery::Idle => {
                assert!(
                    stage.get() >= 1,
                    "queued while the stage waited, and no wake-up"
                );
                assert_eq!(
                    buffer.take(true),
                    Delivery::Push {
                        element: 7,
                        then_complete: false
                    }
                );
            }
            other => panic!("unexpected {other:?}"),
        }
    });
}

/// Capacity 1, full. Send A waits and is cancelled; send B waits; the
/// stage frees one place. Whoever the stage woke, B is not left waiting
/// beside free room without a wake-up, and the list keeps no entry for A.
#[test]
fn a_cancelled_send_passes_its_wake_up_on() {
    loom::model(|| {
        let (buffer, _) = buffer(1, 1);
        let a = {
            let buffer = Arc::clone(&buffer);
            thread::spawn(move || {
                let mut a = Send::new(1);
                let queued = a.poll(&buffer).is_ready();
                a.cancel(&buffer);
                queued
            })
        };
        let b = {
            let buffer = Arc::clone(&buffer);
            thread::spawn(move || {
                let mut b = Send::new(2);
                let first = b.poll(&buffer);
                (b, first)
            })
        };
        assert!(matches!(
            buffer.take(true),
            Delivery::Push { element: 0, .. }
        ));
        let a_queued = a.join().unwrap();
        let (mut b, first) = b.join().unwrap();
        let (queued, _, waiting, _) = buffer.snapshot();
        if first.is_pending() {
            assert!(
                waiting <= 1,
                "entries only for live pending sends: {waiting}"
            );
            if queued == 0 {
                assert!(
                    b.woken.get() >= 1,
                    "room free, B waiting, and no wake-up on its way"
                );
                assert!(matches!(b.poll(&buffer), Poll::Ready(Ok(()))));
            }
        } else {
            assert_eq!(waiting, 0, "entries only for live pending sends");
        }
        assert!(
            !(a_queued && first.is_ready()),
            "two elements in a queue of one"
        );
        b.cancel(&buffer);
        assert_eq!(buffer.snapshot().2, 0, "every entry gone with its send");
    });
}

/// A send waiting on a full queue while the queue is completed: it is
/// woken and gives its element back.
#[test]
fn completion_wakes_pending_sends() {
    loom::model(|| {
        let (buffer, stage) = buffer(1, 1);
        let producer = {
            let buffer = Arc::clone(&buffer);
            thread::spawn(move || {
                let mut send = Send::new(1);
                let first = send.poll(&buffer);
                (send, first)
            })
        };
        buffer.end(Ending::Completing);
        let (mut send, first) = producer.join().unwrap();
        if first.is_pending() {
            assert!(
                send.woken.get() >= 1,
                "waiting when the queue closed, and not woken"
            );
            assert_eq!(
                send.poll(&buffer),
                Poll::Ready(Err(QueueSendError::Closed(1)))
            );
        } else {
            assert_eq!(
                first,
                Poll::Ready(Err(QueueSendError::Closed(1))),
                "full, then closed"
            );
        }
        assert!(stage.get() >= 1, "the stage is woken to complete");
        assert!(matches!(
            buffer.take(true),
            Delivery::Push {
                element: 0,
                then_complete: true
            }
        ));
        send.cancel(&buffer);
        assert_eq!(buffer.snapshot().2, 0);
    });
}
