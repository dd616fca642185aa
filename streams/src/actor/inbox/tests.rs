//! Single-threaded tests of the inbox's memory handling: the lock-free
//! ring (crossbeam's `ArrayQueue`, unsafe inside), the spill into the
//! overflow, `close`, and the drop that reports what is left. Elements are
//! boxed so that a lost, doubled or freed-twice element shows up under
//! valgrind, which CI runs over these tests and `actor::buffered`'s:
//!
//! ```text
//! valgrind --tool=memcheck --error-exitcode=1 --leak-check=full \
//!     --errors-for-leak-kinds=definite <weir_streams lib test binary> \
//!     actor::inbox:: actor::buffered:: --test-threads=1
//! ```

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use super::{Inbox, Signal, Wake};
use crate::sync::{AtomicUsize, Ordering};
use crate::tuning::{INBOX_CALM_DRAINS as CALM_DRAINS, INBOX_RING as RING};

/// Counts wake-ups.
#[derive(Default)]
struct Wakes(AtomicUsize);

impl Wake for Arc<Wakes> {
    fn wake(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn inbox() -> (Inbox<Box<usize>, Arc<Wakes>>, Arc<Wakes>) {
    let wakes = Arc::new(Wakes::default());
    (Inbox::new(Arc::clone(&wakes)), wakes)
}

fn elements(signals: VecDeque<Signal<Box<usize>>>) -> Vec<usize> {
    signals
        .into_iter()
        .map(|signal| match signal {
            Signal::Element(x) => *x,
            _ => panic!("only elements were offered"),
        })
        .collect()
}

#[test]
fn a_burst_past_the_ring_spills_into_the_overflow_in_order_with_one_wake_up() {
    let (inbox, wakes) = inbox();
    let n = RING + RING / 2;
    for i in 0..n {
        assert!(inbox.offer(Signal::Element(Box::new(i))).is_ok());
    }
    assert_eq!(wakes.0.load(Ordering::SeqCst), 1, "one wake-up per burst");
    let mut taken = VecDeque::new();
    inbox.take(&mut taken);
    assert_eq!(elements(taken), (0..n).collect::<Vec<_>>());
    // Taken to the end: the next signal wakes the stage again.
    assert!(inbox.offer(Signal::Drain).is_ok());
    assert_eq!(wakes.0.load(Ordering::SeqCst), 2);
}

#[test]
fn holding_takes_without_wake_ups_and_release_reports_what_is_left() {
    let (inbox, wakes) = inbox();
    inbox.hold();
    for i in 0..3 {
        assert!(inbox.offer(Signal::Element(Box::new(i))).is_ok());
    }
    assert_eq!(wakes.0.load(Ordering::SeqCst), 0, "held: nobody is woken");
    let mut taken = VecDeque::new();
    assert_eq!(inbox.take_held(&mut taken), 3);
    assert!(inbox.offer(Signal::Element(Box::new(3))).is_ok());
    assert!(inbox.release(), "one counted and not taken");
    inbox.take(&mut taken);
    assert_eq!(elements(taken), [0, 1, 2, 3]);
}

#[test]
fn close_returns_what_is_queued_and_gives_back_later_signals() {
    let (inbox, _wakes) = inbox();
    for i in 0..RING + 5 {
        assert!(inbox.offer(Signal::Element(Box::new(i))).is_ok());
    }
    let rest = inbox.close();
    assert_eq!(elements(rest), (0..RING + 5).collect::<Vec<_>>());
    match inbox.offer(Signal::Element(Box::new(7))) {
        Err(Signal::Element(x)) => assert_eq!(*x, 7, "given back to the sender"),
        _ => panic!("a closed inbox refuses"),
    }
}

#[test]
fn dropping_the_inbox_reports_every_element_left_once() {
    let lost = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&lost);
    let inbox = Inbox::new(Arc::new(Wakes::default()))
        .with_on_lost(move |x: Box<usize>| log.lock().unwrap().push(*x));
    for i in 0..RING + 5 {
        assert!(inbox.offer(Signal::Element(Box::new(i))).is_ok());
    }
    assert!(inbox.offer(Signal::Drain).is_ok());
    drop(inbox);
    assert_eq!(*lost.lock().unwrap(), (0..RING + 5).collect::<Vec<_>>());
}

#[test]
fn dropping_an_inbox_without_a_reporter_frees_what_is_left() {
    let (inbox, _wakes) = inbox();
    for i in 0..RING + 5 {
        assert!(inbox.offer(Signal::Element(Box::new(i))).is_ok());
    }
    // Valgrind's leak check fails this test if the boxes are not freed.
    drop(inbox);
}

#[test]
fn an_idle_inbox_holds_no_overflow_storage() {
    let (inbox, _wakes) = inbox();
    assert_eq!(inbox.overflow_capacity(), 0);
    assert!(!inbox.ring_allocated(), "no signal yet, no ring");
    for i in 0..RING {
        assert!(inbox.offer(Signal::Element(Box::new(i))).is_ok());
    }
    assert_eq!(
        inbox.overflow_capacity(),
        0,
        "the ring alone holds a small burst"
    );
    assert!(
        inbox.ring_allocated(),
        "the first signal allocated the ring"
    );
}

#[test]
fn a_burst_grows_the_overflow_and_calm_drains_shrink_it_back() {
    let (inbox, _wakes) = inbox();
    let burst = |inbox: &Inbox<Box<usize>, Arc<Wakes>>| {
        for i in 0..RING * 4 {
            assert!(inbox.offer(Signal::Element(Box::new(i))).is_ok());
        }
        let mut taken = VecDeque::new();
        inbox.take(&mut taken);
        assert_eq!(elements(taken), (0..RING * 4).collect::<Vec<_>>());
    };
    burst(&inbox);
    let grown = inbox.overflow_capacity();
    assert!(grown >= RING * 3, "the overflow grew with the burst");
    // Bursts of the same size reuse the storage: no allocation per element.
    for _ in 0..10 {
        burst(&inbox);
        assert_eq!(inbox.overflow_capacity(), grown);
    }
    // Traffic the ring holds: the storage stays until the calm lasts.
    let calm = |inbox: &Inbox<Box<usize>, Arc<Wakes>>| {
        assert!(inbox.offer(Signal::Element(Box::new(0))).is_ok());
        let mut taken = VecDeque::new();
        inbox.take(&mut taken);
        assert_eq!(elements(taken), [0]);
    };
    for _ in 0..CALM_DRAINS - 1 {
        calm(&inbox);
    }
    assert_eq!(inbox.overflow_capacity(), grown, "a short lull keeps it");
    calm(&inbox);
    assert_eq!(inbox.overflow_capacity(), 0, "freed after the burst");
    // And it grows again with the next burst.
    burst(&inbox);
    assert!(inbox.overflow_capacity() >= RING * 3);
}
