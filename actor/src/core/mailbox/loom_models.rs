//! Loom models of the mailbox state machine (module docs of `mailbox`).
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test -p weir-actor --release --lib`.
//! Each model names the property it proves. The "dispatcher" here is the
//! simplest legal one: whoever wins the run token runs the actor inline, which
//! lets any thread become the consumer and so covers every hand-over.

use loom::sync::Arc;
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::thread;

use super::{Enqueued, Mailbox, Offered};
use crate::sync::Mutex;

type Msg = (usize, usize); // (sender, sequence)

struct Actor {
    mailbox: Mailbox<Msg, usize>,
    processed: Mutex<Vec<Msg>>,
    system_seen: Mutex<Vec<usize>>,
    inside: AtomicUsize,
    throughput: usize,
}

impl Actor {
    fn new(throughput: usize) -> Arc<Self> {
        Self::bounded(throughput, usize::MAX)
    }

    fn bounded(throughput: usize, capacity: usize) -> Arc<Self> {
        Self::with_mailbox(throughput, Mailbox::new_claimed_bounded(capacity, false))
    }

    /// A priority mailbox whose key is the sender: sender 0 goes first.
    fn priority(throughput: usize) -> Arc<Self> {
        let key = Box::new(|m: &Msg| i64::try_from(m.0).unwrap());
        Self::with_mailbox(throughput, Mailbox::new_claimed().with_priority(key))
    }

    fn with_mailbox(throughput: usize, mailbox: Mailbox<Msg, usize>) -> Arc<Self> {
        let actor = Arc::new(Self {
            mailbox,
            processed: Mutex::new(Vec::new()),
            system_seen: Mutex::new(Vec::new()),
            inside: AtomicUsize::new(0),
            throughput,
        });
        // The spawner owns the token from `new_claimed`; hand it back as a
        // dispatcher would after the start signal.
        // SAFETY: we own the token and the batch is empty.
        let again = unsafe { actor.mailbox.release(true) };
        assert!(!again);
        actor
    }

    /// The run loop a dispatcher would execute, with rule 2 and 3.
    fn run(&self) {
        loop {
            assert_eq!(
                self.inside.fetch_add(1, Ordering::SeqCst),
                0,
                "two threads inside one actor"
            );
            let mut left = self.throughput;
            loop {
                // SAFETY: this thread owns the run token.
                while let Some(s) = unsafe { self.mailbox.next_system() } {
                    self.system_seen.lock().push(s);
                }
                if left == 0 {
                    break;
                }
                // SAFETY: this thread owns the run token.
                match unsafe { self.mailbox.next_user() } {
                    Some(m) => {
                        self.processed.lock().push(m);
                        left -= 1;
                    }
                    None => break,
                }
            }
            self.inside.fetch_sub(1, Ordering::SeqCst);
            // SAFETY: this thread owns the run token.
            if !unsafe { self.mailbox.batch_is_empty() } {
                continue; // throughput hit: keep the token, "resubmit"
            }
            // SAFETY: token owned, batch empty.
            if !unsafe { self.mailbox.release(true) } {
                return;
            }
        }
    }

    fn send(&self, msg: Msg) {
        if self.mailbox.enqueue_user(msg).expect("open mailbox") == Enqueued::MustSchedule {
            self.run();
        }
    }

    /// Offer to a bounded mailbox without eviction; `false` when refused.
    fn offer(&self, msg: Msg) -> bool {
        match self.mailbox.offer_user(msg, None, None) {
            Offered::Queued(Enqueued::MustSchedule) => {
                self.run();
                true
            }
            Offered::Queued(Enqueued::Queued) => true,
            Offered::Full(_) => false,
            other => panic!("unexpected {other:?}"),
        }
    }

    fn queued(&self) -> usize {
        self.mailbox.shared.lock().user.len() + self.mailbox.batched.load(Ordering::SeqCst)
    }
}

fn assert_per_sender_order(processed: &[Msg], senders: usize, per_sender: usize) {
    assert_eq!(
        processed.len(),
        senders * per_sender,
        "lost or duplicated: {processed:?}"
    );
    for s in 0..senders {
        let seqs: Vec<usize> = processed.iter().filter(|m| m.0 == s).map(|m| m.1).collect();
        assert_eq!(
            seqs,
            (0..per_sender).collect::<Vec<_>>(),
            "sender {s} reordered"
        );
    }
}

/// (a) Two senders and the actor's runs interleaved: every message is
/// processed exactly once, in per-sender order. Throughput 1 forces a yield
/// after every message, so token hand-overs happen mid-stream.
#[test]
fn two_senders_exactly_once_in_order() {
    loom::model(|| {
        let actor = Actor::new(1);
        let handles: Vec<_> = (0..2)
            .map(|s| {
                let actor = actor.clone();
                thread::spawn(move || {
                    actor.send((s, 0));
                    actor.send((s, 1));
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert_per_sender_order(&actor.processed.lock(), 2, 2);
    });
}

/// (a') As (a) on a priority mailbox, where the consumer takes one
/// message at a time and a sender inserts by key: every message processed
/// exactly once (no lost wake-up), equal keys (one sender's) in send order.
#[test]
fn priority_two_senders_exactly_once_stable() {
    loom::model(|| {
        let actor = Actor::priority(1);
        let handles: Vec<_> = (0..2)
            .map(|s| {
                let actor = actor.clone();
                thread::spawn(move || {
                    actor.send((s, 0));
                    actor.send((s, 1));
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert_per_sender_order(&actor.processed.lock(), 2, 2);
        let shared = actor.mailbox.shared.lock();
        assert!(
            shared.user.is_empty() && shared.keys.is_empty(),
            "keys out of step"
        );
    });
}

/// (a'') Rule 6: routees of a balancing pool share a queue; each sender
/// pushes a message and starts the first idle routee, racing the routees'
/// runs and releases. Every message is processed exactly once (none waits
/// in the shared queue while every routee is idle), never by two threads
/// inside one routee. One routee is the sharp case: a sender that finds it
/// running relies on its release to look at the shared queue.
fn balancing_model(routees: usize, sender_count: usize) {
    loom::model(move || {
        let queue = std::sync::Arc::new(super::BalanceQueue::default());
        let routees: Vec<Arc<Actor>> = (0..routees)
            .map(|_| Actor::with_mailbox(1, Mailbox::new_claimed().with_balance(queue.clone())))
            .collect();
        let senders: Vec<_> = (0..sender_count)
            .map(|s| {
                let (queue, routees) = (queue.clone(), routees.clone());
                thread::spawn(move || {
                    queue.push((s, 0));
                    for routee in &routees {
                        if routee.mailbox.nudge() == Enqueued::MustSchedule {
                            routee.run();
                            break;
                        }
                    }
                })
            })
            .collect();
        for sender in senders {
            sender.join().unwrap();
        }
        let processed: usize = routees.iter().map(|r| r.processed.lock().len()).sum();
        assert_eq!(
            processed, sender_count,
            "a message was lost or handled twice"
        );
        assert!(queue.is_empty());
    });
}

#[test]
fn balancing_one_routee_no_lost_wake_up() {
    balancing_model(1, 2);
}

#[test]
fn balancing_two_routees_no_lost_wake_up() {
    balancing_model(2, 2);
}

/// (b) A message sent while a run is ending is not left unprocessed: the
/// consumer releases while the producer enqueues, and after both finish the
/// message has been processed (no lost wake-up).
#[test]
fn send_during_release_is_not_lost() {
    loom::model(|| {
        let actor = Actor::new(8);
        // Put one message in and claim, so a consumer run is in flight.
        assert_eq!(
            actor.mailbox.enqueue_user((0, 0)),
            Ok(Enqueued::MustSchedule)
        );
        let consumer = {
            let actor = actor.clone();
            thread::spawn(move || actor.run())
        };
        let producer = {
            let actor = actor.clone();
            thread::spawn(move || actor.send((1, 0)))
        };
        consumer.join().unwrap();
        producer.join().unwrap();
        let processed = actor.processed.lock();
        assert_eq!(processed.len(), 2, "a wake-up was lost: {processed:?}");
    });
}

/// (c) Never two threads inside one actor, with system and user messages
/// racing. `inside` asserts it directly, and loom's `UnsafeCell` tracking of
/// the consumer batch would report any concurrent access. System messages are
/// all seen.
#[test]
fn never_two_threads_inside() {
    loom::model(|| {
        let actor = Actor::new(1);
        let user = {
            let actor = actor.clone();
            thread::spawn(move || actor.send((0, 0)))
        };
        let system = {
            let actor = actor.clone();
            thread::spawn(move || {
                if actor.mailbox.enqueue_system(7).unwrap() == Enqueued::MustSchedule {
                    actor.run();
                }
            })
        };
        actor.send((1, 0));
        user.join().unwrap();
        system.join().unwrap();
        assert_eq!(actor.processed.lock().len(), 2);
        assert_eq!(*actor.system_seen.lock(), vec![7]);
    });
}

/// (d) Close racing with send: each message is processed, or returned by
/// `close` for dead letters, or handed back to its sender. None vanishes and
/// none is counted twice.
#[test]
fn close_racing_with_send_loses_nothing() {
    loom::model(|| {
        let mailbox: Arc<Mailbox<usize, usize>> = Arc::new(Mailbox::new_claimed());
        let returned = Arc::new(AtomicUsize::new(0));
        let producer = {
            let mailbox = mailbox.clone();
            let returned = returned.clone();
            thread::spawn(move || {
                let mut must_schedule = 0;
                for i in 0..2 {
                    match mailbox.enqueue_user(i) {
                        Ok(Enqueued::MustSchedule) => must_schedule += 1,
                        Ok(Enqueued::Queued) => {}
                        Err(_) => {
                            returned.fetch_add(1, Ordering::SeqCst);
                        }
                    }
                }
                must_schedule
            })
        };
        // The consumer owns the token from `new_claimed`: process one message,
        // then close.
        // SAFETY: this thread owns the run token.
        let processed = usize::from(unsafe { mailbox.next_user() }.is_some());
        // SAFETY: this thread still owns the run token.
        let drained = unsafe { mailbox.close() };
        let must_schedule = producer.join().unwrap();
        assert_eq!(must_schedule, 0, "a closed mailbox was scheduled again");
        assert_eq!(
            processed + drained.user.len() + returned.load(Ordering::SeqCst),
            2,
            "a message vanished or was counted twice"
        );
        assert!(mailbox.is_closed());
    });
}

/// A waker that records that it was woken.
#[derive(Default)]
struct Flag(loom::sync::atomic::AtomicBool);

impl std::task::Wake for Flag {
    fn wake(self: std::sync::Arc<Self>) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// (e) Bounded, capacity 1, two senders racing the runs: every message is
/// processed exactly once or refused to its sender, the processed ones keep
/// per-sender order, and the queue never holds more than the capacity.
#[test]
fn bounded_exactly_once_or_refused() {
    loom::model(|| {
        let actor = Actor::bounded(1, 1);
        let handles: Vec<_> = (0..2)
            .map(|s| {
                let actor = actor.clone();
                thread::spawn(move || {
                    let refused = (0..2).filter(|&i| !actor.offer((s, i))).count();
                    assert!(actor.queued() <= 1, "over capacity");
                    refused
                })
            })
            .collect();
        let refused: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
        let processed = actor.processed.lock();
        assert_eq!(
            processed.len() + refused,
            4,
            "lost or duplicated: {processed:?}"
        );
        for s in 0..2 {
            let seqs: Vec<usize> = processed.iter().filter(|m| m.0 == s).map(|m| m.1).collect();
            assert!(
                seqs.windows(2).all(|w| w[0] < w[1]),
                "sender {s} reordered: {seqs:?}"
            );
        }
    });
}

/// (f) A sender that finds the mailbox full and leaves a waker is woken
/// once the consumer takes a message out (rule 5): no lost wake-up for
/// `send`, in both the batching and the evicting (one-at-a-time) mode.
#[test]
fn bounded_full_sender_is_woken() {
    for evicting in [false, true] {
        loom::model(move || {
            let mailbox: Arc<Mailbox<usize, usize>> =
                Arc::new(Mailbox::new_claimed_bounded(1, evicting));
            assert!(matches!(
                mailbox.offer_user(0, None, None),
                Offered::Queued(_)
            ));
            let flag = std::sync::Arc::new(Flag::default());
            let producer = {
                let mailbox = mailbox.clone();
                let waker = std::task::Waker::from(flag.clone());
                thread::spawn(move || {
                    matches!(mailbox.offer_user(1, None, Some(&waker)), Offered::Full(_))
                })
            };
            // The consumer owns the token from `new_claimed_bounded`.
            // SAFETY: this thread owns the run token.
            assert_eq!(unsafe { mailbox.next_user() }, Some(0));
            let refused = producer.join().unwrap();
            assert!(
                !refused || flag.0.load(Ordering::SeqCst),
                "a full sender was never woken"
            );
        });
    }
}

/// (g) Drop-head racing the consumer: each message is processed or evicted
/// exactly once, never both, never neither.
#[test]
fn bounded_drop_head_evicts_exactly_once() {
    loom::model(|| {
        let mailbox: Arc<Mailbox<usize, usize>> = Arc::new(Mailbox::new_claimed_bounded(1, true));
        assert!(matches!(
            mailbox.offer_user(0, None, None),
            Offered::Queued(_)
        ));
        let producer = {
            let mailbox = mailbox.clone();
            thread::spawn(move || match mailbox.offer_user(1, Some(|_| true), None) {
                Offered::Queued(_) => None,
                Offered::QueuedEvicting(_, old) => Some(old),
                other => panic!("unexpected {other:?}"),
            })
        };
        // SAFETY: this thread owns the run token.
        let first = unsafe { mailbox.next_user() };
        let evicted = producer.join().unwrap();
        // SAFETY: this thread still owns the run token.
        let rest = unsafe { mailbox.close() }.user;
        let mut seen: Vec<usize> = first.into_iter().chain(evicted).chain(rest).collect();
        seen.sort_unstable();
        assert_eq!(seen, vec![0, 1], "a message vanished or was seen twice");
    });
}

/// An actor whose handler awaits a future (`cell::awaited`): while it
/// awaits it takes system messages only, and the future's waker sends a
/// `WAKE` system message, at most one queued (the `queued` flag).
struct Awaiting {
    mailbox: Mailbox<Msg, usize>,
    /// Token owner only: a handler's future is pending.
    awaiting: Mutex<bool>,
    /// The future's state: its waker sets it, then wakes.
    ready: loom::sync::atomic::AtomicBool,
    /// `AwaitWake::queued`.
    queued: loom::sync::atomic::AtomicBool,
    /// User messages handled, and `None` where the future completed.
    log: Mutex<Vec<Option<Msg>>>,
    inside: AtomicUsize,
}

const WAKE: usize = 1;

impl Awaiting {
    /// The cell's run loop for this case: system messages first (a `WAKE`
    /// clears `queued`, then polls), user messages only when not awaiting;
    /// the first user message starts awaiting.
    fn run(&self) {
        loop {
            assert_eq!(self.inside.fetch_add(1, Ordering::SeqCst), 0);
            loop {
                // SAFETY: this thread owns the run token.
                while let Some(s) = unsafe { self.mailbox.next_system() } {
                    assert_eq!(s, WAKE);
                    self.queued.swap(false, Ordering::AcqRel);
                    let mut awaiting = self.awaiting.lock();
                    if *awaiting && self.ready.load(Ordering::Acquire) {
                        *awaiting = false;
                        self.log.lock().push(None);
                    }
                }
                if *self.awaiting.lock() {
                    break;
                }
                // SAFETY: this thread owns the run token.
                match unsafe { self.mailbox.next_user() } {
                    Some(m) => {
                        let first = self.log.lock().is_empty();
                        self.log.lock().push(Some(m));
                        if first {
                            *self.awaiting.lock() = true; // polled: pending
                        }
                    }
                    None => break,
                }
            }
            self.inside.fetch_sub(1, Ordering::SeqCst);
            let with_user = !*self.awaiting.lock();
            // SAFETY: token owned; a suspended run leaves its batch.
            if with_user && !unsafe { self.mailbox.batch_is_empty() } {
                continue;
            }
            // SAFETY: token owned.
            if !unsafe { self.mailbox.release(with_user) } {
                return;
            }
        }
    }

    fn send(&self, msg: Msg) {
        if self.mailbox.enqueue_user(msg).expect("open mailbox") == Enqueued::MustSchedule {
            self.run();
        }
    }

    /// The future's waker (`AwaitWake::wake_by_ref`).
    fn wake(&self) {
        if !self.queued.swap(true, Ordering::AcqRel)
            && self.mailbox.enqueue_system(WAKE).expect("open mailbox") == Enqueued::MustSchedule
        {
            self.run();
        }
    }
}

/// (h) The suspend/resume protocol of async handlers: a future completing
/// (set, then wake) while a user message arrives and the actor releases
/// its token. The wake-up is never lost (the future completes), the user
/// message waits for it and is then handled (never lost either), and no
/// user message runs while the future is pending.
#[test]
fn suspended_wakes_for_system_message() {
    loom::model(|| {
        let actor = Arc::new(Awaiting {
            mailbox: Mailbox::new_claimed(),
            awaiting: Mutex::new(false),
            ready: loom::sync::atomic::AtomicBool::new(false),
            queued: loom::sync::atomic::AtomicBool::new(false),
            log: Mutex::new(Vec::new()),
            inside: AtomicUsize::new(0),
        });
        // The first message's handler suspends the actor.
        actor.mailbox.enqueue_user((0, 0)).unwrap();
        actor.run();
        assert!(*actor.awaiting.lock());
        let waker = {
            let actor = actor.clone();
            thread::spawn(move || {
                actor.ready.store(true, Ordering::Release);
                actor.wake();
            })
        };
        let sender = {
            let actor = actor.clone();
            thread::spawn(move || actor.send((1, 0)))
        };
        // A spurious wake-up, as a future may cause.
        actor.wake();
        waker.join().unwrap();
        sender.join().unwrap();
        assert_eq!(
            *actor.log.lock(),
            vec![Some((0, 0)), None, Some((1, 0))],
            "lost wake-up or a message run while awaiting"
        );
    });
}
