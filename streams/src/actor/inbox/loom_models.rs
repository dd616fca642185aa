//! Loom models of the inbox protocol (module docs of `actor::inbox`) with
//! the element handling of `actor::buffered`.
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test -p weir-streams --release --lib`.
//! The "island" is the model's main thread: it starts (takes what the
//! wake-ups it has seen announce) at any point of the senders' run, and
//! at the end the model checks that every offered element is accounted
//! for — delivered in order, dropped and counted, or handed back.

use std::collections::VecDeque;

use loom::sync::Arc;
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::thread;

use super::{Inbox, Signal, Wake};
use crate::actor::buffered::{Arrival, ElementBuffer};
use crate::overflow::OverflowStrategy;

/// A wake that counts: the tokens the island has yet to handle.
#[derive(Default)]
struct Tokens(AtomicUsize);

impl Wake for Arc<Tokens> {
    fn wake(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// The island side: the stage's element handling over a demand flag.
struct Island {
    buffer: ElementBuffer<usize>,
    demand: bool,
    delivered: Vec<usize>,
    dropped: usize,
    completed: bool,
    handled: usize,
}

impl Island {
    fn new(capacity: usize, strategy: OverflowStrategy, demand: bool) -> Self {
        Self {
            buffer: ElementBuffer::new(capacity, strategy),
            demand,
            delivered: Vec::new(),
            dropped: 0,
            completed: false,
            handled: 0,
        }
    }

    /// Handle one wake-up if one is pending (an island message).
    fn step(&mut self, inbox: &Inbox<usize, Arc<Tokens>>, tokens: &Tokens) {
        if tokens.0.load(Ordering::SeqCst) > self.handled {
            self.handled += 1;
            let mut batch = VecDeque::new();
            inbox.take(&mut batch);
            for signal in batch {
                self.handle(signal);
            }
        }
    }

    fn handle(&mut self, signal: Signal<usize>) {
        if self.completed {
            if let Signal::Element(_) = signal {
                self.dropped += 1;
            }
            return;
        }
        match signal {
            Signal::Element(x) => {
                let mut dropped = 0;
                match self.buffer.on_element(x, self.demand, |_| dropped += 1) {
                    Arrival::Push(x) => {
                        self.delivered.push(x);
                        // One pull per push: demand stays as configured.
                    }
                    Arrival::Handled => {}
                    Arrival::Failed(_) => panic!("no Fail strategy in these models"),
                }
                self.dropped += dropped;
            }
            Signal::Drain => self.completed = self.buffer.on_drain(),
            Signal::Now => {
                self.dropped += self.buffer.discard().count();
                self.completed = true;
            }
            Signal::Fail(_) => self.completed = true,
        }
    }

    /// Downstream pulls until the buffer is empty.
    fn pull_all(&mut self) {
        loop {
            let (next, complete) = self.buffer.on_pull();
            match next {
                Some(x) => self.delivered.push(x),
                None => break,
            }
            if complete {
                self.completed = true;
            }
        }
    }
}

/// (a) k elements sent from another thread while the island starts: each
/// arrives exactly once, in order (or is dropped and counted where the
/// buffer has no room and there is no demand), and no wake-up is lost.
fn startup_race(k: usize, capacity: usize, demand: bool) {
    loom::model(move || {
        let tokens = Arc::new(Tokens::default());
        let inbox = Arc::new(Inbox::new(Arc::clone(&tokens)));
        let sender = {
            let inbox = Arc::clone(&inbox);
            thread::spawn(move || {
                for i in 0..k {
                    assert!(inbox.offer(Signal::Element(i)).is_ok());
                }
            })
        };
        let mut island = Island::new(capacity, OverflowStrategy::DropNew, demand);
        island.step(&inbox, &tokens); // the island starts at any point
        sender.join().unwrap();
        // No lost wake-up: every queued signal has a token still to handle.
        while tokens.0.load(Ordering::SeqCst) > island.handled {
            island.step(&inbox, &tokens);
        }
        let mut rest = VecDeque::new();
        inbox.take(&mut rest);
        assert!(
            rest.is_empty(),
            "a signal was queued with no wake-up on its way"
        );
        island.pull_all();
        assert_eq!(
            island.delivered.len() + island.dropped,
            k,
            "each element once"
        );
        assert!(island.delivered.windows(2).all(|w| w[0] < w[1]), "in order");
        if demand || capacity >= k {
            assert_eq!(
                island.delivered,
                (0..k).collect::<Vec<_>>(),
                "kept where the strategy keeps them"
            );
        }
    });
}

#[test]
fn startup_race_buffer_0_with_demand() {
    startup_race(2, 0, true);
}

#[test]
fn startup_race_buffer_0_without_demand_drops_and_counts() {
    startup_race(2, 0, false);
}

#[test]
fn startup_race_buffer_1() {
    startup_race(2, 1, false);
    startup_race(2, 1, true);
}

#[test]
fn startup_race_buffer_2() {
    startup_race(3, 2, false);
}

/// (b) Two senders and a draining completion race: nothing after the
/// completion is delivered; nothing before it is lost (the buffer has room).
#[test]
fn two_senders_and_a_completion() {
    loom::model(|| {
        let tokens = Arc::new(Tokens::default());
        let inbox = Arc::new(Inbox::new(Arc::clone(&tokens)));
        let senders: Vec<_> = (0..2)
            .map(|s| {
                let inbox = Arc::clone(&inbox);
                thread::spawn(move || {
                    let _ = inbox.offer(Signal::Element(s));
                })
            })
            .collect();
        let completer = {
            let inbox = Arc::clone(&inbox);
            thread::spawn(move || {
                let _ = inbox.offer(Signal::Drain);
            })
        };
        let mut island = Island::new(4, OverflowStrategy::DropNew, false);
        island.step(&inbox, &tokens);
        for s in senders {
            s.join().unwrap();
        }
        completer.join().unwrap();
        while tokens.0.load(Ordering::SeqCst) > island.handled {
            island.step(&inbox, &tokens);
        }
        // Which elements came before the completion is decided by the
        // inbox order; the island must deliver exactly those.
        let before_completion = 2 - island.dropped;
        island.pull_all();
        assert!(island.completed);
        assert_eq!(
            island.delivered.len(),
            before_completion,
            "none lost before, none after"
        );
    });
}

/// (c) Signals offered before the island starts are handled after it
/// starts; a signal offered as the stage stops is delivered, returned by
/// `close`, handed back to the sender (a dead letter) or, when it raced
/// past the closing, reported when the inbox is dropped: it never
/// vanishes and nothing panics.
#[test]
fn before_start_and_after_stop() {
    loom::model(|| {
        let tokens = Arc::new(Tokens::default());
        let lost = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&lost);
        let inbox = Arc::new(Inbox::new(Arc::clone(&tokens)).with_on_lost(move |_| {
            counter.fetch_add(1, Ordering::SeqCst);
        }));
        assert!(inbox.offer(Signal::Element(0)).is_ok()); // before start
        let late = {
            let inbox = Arc::clone(&inbox);
            thread::spawn(move || match inbox.offer(Signal::Element(1)) {
                Ok(()) => 0,
                Err(_) => 1, // handed back: a dead letter
            })
        };
        let mut island = Island::new(2, OverflowStrategy::DropNew, true);
        island.step(&inbox, &tokens);
        let leftover = inbox.close(); // the stage stops
        let handed_back = late.join().unwrap();
        let leftover_elements = leftover
            .iter()
            .filter(|s| matches!(s, Signal::Element(_)))
            .count();
        assert_eq!(
            island.delivered.first(),
            Some(&0),
            "the element sent before start arrives"
        );
        drop(inbox); // the last reference: late arrivals are reported
        assert_eq!(
            island.delivered.len() + leftover_elements + handed_back + lost.load(Ordering::SeqCst),
            2,
            "every element delivered, returned by close, handed back, or reported lost"
        );
    });
}

/// (e) Holding (the fused `actor_ref` into a folding sink): while the
/// island holds the inbox, senders do not wake it; when it lets go, what
/// was counted meanwhile is either taken at once (`release` says so) or
/// has a wake-up on its way. Two senders race a holding island: every
/// element is taken exactly once, each sender's in order, and nothing is
/// left queued without a wake-up.
#[test]
fn holding_loses_no_wake_up() {
    loom::model(|| {
        let tokens = Arc::new(Tokens::default());
        let inbox = Arc::new(Inbox::new(Arc::clone(&tokens)));
        let senders: Vec<_> = [0usize, 10]
            .into_iter()
            .map(|base| {
                let inbox = Arc::clone(&inbox);
                thread::spawn(move || {
                    for i in base..base + 2 {
                        assert!(inbox.offer(Signal::Element(i)).is_ok());
                    }
                })
            })
            .collect();
        let mut got = Vec::new();
        // One island turn: hold, take until a take comes back with nothing
        // counted behind it, let go.
        let turn = |got: &mut Vec<usize>| {
            inbox.hold();
            loop {
                let mut batch = VecDeque::new();
                inbox.take_held(&mut batch);
                got.extend(batch.into_iter().map(|s| match s {
                    Signal::Element(x) => x,
                    _ => unreachable!("only elements are sent"),
                }));
                if !inbox.release() {
                    break;
                }
                inbox.hold();
            }
        };
        turn(&mut got); // the island runs at any point of the senders' run
        for sender in senders {
            sender.join().unwrap();
        }
        let mut handled = 0;
        while tokens.0.load(Ordering::SeqCst) > handled {
            handled += 1;
            turn(&mut got);
        }
        let mut rest = VecDeque::new();
        inbox.take(&mut rest);
        assert!(
            rest.is_empty(),
            "a signal was queued with no wake-up on its way"
        );
        let (mut low, mut high): (Vec<usize>, Vec<usize>) = got.into_iter().partition(|&x| x < 10);
        assert_eq!(low, vec![0, 1], "sender 0: once each, in order");
        assert_eq!(high, vec![10, 11], "sender 1: once each, in order");
        low.clear();
        high.clear();
    });
}

/// (f) Growth and shrinking: a sender spills past the ring (capacity 1
/// here) while the island drains at any points; a drain that finds the
/// overflow unused frees its storage (the calm count is 1 under loom), and
/// that races the sender's next spill. Every element arrives once, in
/// order, and none is left queued without a wake-up.
#[test]
fn shrinking_races_a_spilling_sender() {
    loom::model(|| {
        let tokens = Arc::new(Tokens::default());
        let inbox = Arc::new(Inbox::new(Arc::clone(&tokens)));
        let sender = {
            let inbox = Arc::clone(&inbox);
            thread::spawn(move || {
                for i in 0..3 {
                    assert!(inbox.offer(Signal::Element(i)).is_ok());
                }
            })
        };
        let mut got = Vec::new();
        let mut handled = 0;
        let take = |got: &mut Vec<usize>| {
            let mut batch = VecDeque::new();
            inbox.take(&mut batch);
            got.extend(batch.into_iter().map(|s| match s {
                Signal::Element(x) => x,
                _ => unreachable!("only elements are sent"),
            }));
        };
        // Two island turns at any points of the sender's run: the second
        // can find the overflow unused and free it as the sender spills.
        for _ in 0..2 {
            if tokens.0.load(Ordering::SeqCst) > handled {
                handled += 1;
                take(&mut got);
            }
        }
        sender.join().unwrap();
        while tokens.0.load(Ordering::SeqCst) > handled {
            handled += 1;
            take(&mut got);
        }
        let mut rest = VecDeque::new();
        inbox.take(&mut rest);
        assert!(
            rest.is_empty(),
            "a signal was queued with no wake-up on its way"
        );
        assert_eq!(got, vec![0, 1, 2], "once each, in order");
    });
}
