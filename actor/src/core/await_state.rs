//! The wake state of a cell's awaited futures (see `cell::awaited`):
//! whether a wake-up must send the cell a `Wake` system message, or can
//! leave a note for the thread that is polling right now.
//!
//! # States and rules
//!
//! Three bits: `QUEUED` (a `Wake` is in the cell's system queue, not
//! handled yet), `POLLING` (the holder of the run token is polling the
//! cell's awaited future) and `NOTIFIED` (woken while `POLLING`).
//!
//! 1. **Wake** (any thread, a read-modify-write): while `POLLING`, set
//!    `NOTIFIED` and send nothing; else, if not `QUEUED`, set `QUEUED`
//!    and the waker sends one `Wake`; else nothing (one is queued).
//! 2. **Handled** (the run-token holder, on a `Wake`): clear `QUEUED`,
//!    before it polls: a wake-up after that sends another.
//! 3. **Poll** (the run-token holder): set `POLLING`, poll, then clear
//!    `POLLING` and `NOTIFIED` together and read `NOTIFIED`: when set, the
//!    holder polls the future again itself, still holding the token (the
//!    run loop's `repoll`), so the wake-up sent nothing and is not lost.
//!
//! Every transition is a read-modify-write on the one word, so they are
//! totally ordered: a wake-up before rule 3's set is seen by that poll (the
//! future's own state is written before the wake), one during the poll
//! leaves `NOTIFIED` for the clear, one after the clear finds neither bit
//! and sends a `Wake`. The mailbox is not involved beyond that `Wake`,
//! which follows its rules 1 and 3 like any system message.
//!
//! What it saves: a future that wakes itself during its poll (a yield, a
//! ready channel) or is woken by another thread mid-poll costs no system
//! message, no release and no re-scheduling of the cell: the run that
//! polled it polls it again.
//!
//! The loom models at the end check rules 1-3 with a waker on another
//! thread.

use crate::sync::{AtomicU8, Ordering};

const QUEUED: u8 = 1;
const POLLING: u8 = 2;
const NOTIFIED: u8 = 4;

/// The wake state word (module docs).
#[derive(Debug)]
pub(crate) struct AwaitState(AtomicU8);

impl AwaitState {
    pub(crate) fn new() -> Self {
        Self(AtomicU8::new(0))
    }

    /// Rule 1: whether the caller must send the cell a `Wake`.
    pub(crate) fn wake(&self) -> bool {
        let mut state = self.0.load(Ordering::Acquire);
        loop {
            let next = if state & POLLING != 0 {
                state | NOTIFIED
            } else {
                state | QUEUED
            };
            match self
                .0
                .compare_exchange(state, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return state & (POLLING | QUEUED) == 0,
                Err(actual) => state = actual,
            }
        }
    }

    /// Rule 2: the queued `Wake` is being handled.
    pub(crate) fn handled(&self) {
        self.0.fetch_and(!QUEUED, Ordering::AcqRel);
    }

    /// Rule 3: a poll starts.
    pub(crate) fn polling(&self) {
        self.0.fetch_or(POLLING, Ordering::AcqRel);
    }

    /// Rule 3: the poll is over; whether the future was woken during it
    /// (the caller must poll it again).
    pub(crate) fn polled(&self) -> bool {
        self.0.fetch_and(!(POLLING | NOTIFIED), Ordering::AcqRel) & NOTIFIED != 0
    }
}

#[cfg(all(test, loom))]
mod loom_models {
    use loom::sync::Arc;
    use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use loom::thread;

    use super::AwaitState;

    /// A cell awaiting a "future" that is ready once `ready` is set. The
    /// run-token holder is the main thread; a sent `Wake` is counted and
    /// handled by it after the waker is done (the mailbox delivers it: its
    /// own models prove that).
    struct Cell {
        state: AwaitState,
        ready: AtomicBool,
        /// `Wake`s sent and not handled yet.
        queued: AtomicUsize,
        /// Most `Wake`s queued at once.
        most_queued: AtomicUsize,
    }

    impl Cell {
        fn new() -> Arc<Self> {
            Arc::new(Self {
                state: AwaitState::new(),
                ready: AtomicBool::new(false),
                queued: AtomicUsize::new(0),
                most_queued: AtomicUsize::new(0),
            })
        }

        /// A waker: the future's state first, then the wake-up.
        fn complete_and_wake(&self) {
            self.ready.store(true, Ordering::Release);
            self.wake();
        }

        fn wake(&self) {
            if self.state.wake() {
                let now = self.queued.fetch_add(1, Ordering::SeqCst) + 1;
                self.most_queued.fetch_max(now, Ordering::SeqCst);
            }
        }

        /// Poll (rule 3), again while notified; whether it saw `ready`.
        /// The first poll of a `self_wake` future wakes it (a yield).
        fn poll(&self, self_wake: bool) -> bool {
            let mut yield_once = self_wake;
            loop {
                self.state.polling();
                let ready = self.ready.load(Ordering::Acquire);
                if std::mem::take(&mut yield_once) {
                    self.wake();
                }
                let notified = self.state.polled();
                if ready || !notified {
                    return ready;
                }
            }
        }

        /// Handle the queued `Wake`s (rule 2, then poll).
        fn handle_wakes(&self) -> bool {
            let mut ready = false;
            while self.queued.load(Ordering::SeqCst) > 0 {
                self.queued.fetch_sub(1, Ordering::SeqCst);
                self.state.handled();
                ready |= self.poll(false);
            }
            ready
        }
    }

    /// A completion on another thread racing the first poll: some poll
    /// sees it (during the run, or on the `Wake` it sent), never lost;
    /// at most one `Wake` is queued.
    #[test]
    fn a_wake_racing_a_poll_is_not_lost() {
        loom::model(|| {
            let cell = Cell::new();
            let waker = {
                let cell = cell.clone();
                thread::spawn(move || cell.complete_and_wake())
            };
            let mut ready = cell.poll(false);
            waker.join().unwrap();
            ready |= cell.handle_wakes();
            assert!(ready, "the wake-up was lost");
            assert!(cell.most_queued.load(Ordering::SeqCst) <= 1);
        });
    }

    /// A future that wakes itself once while another thread completes it:
    /// the self-wake sends no `Wake` (it is polled again at once), the
    /// completion is seen, and at most one `Wake` is queued.
    #[test]
    fn a_self_wake_sends_nothing_and_a_racing_wake_is_not_lost() {
        loom::model(|| {
            let cell = Cell::new();
            let waker = {
                let cell = cell.clone();
                thread::spawn(move || cell.complete_and_wake())
            };
            let mut ready = cell.poll(true);
            waker.join().unwrap();
            ready |= cell.handle_wakes();
            assert!(ready, "the wake-up was lost");
            assert!(cell.most_queued.load(Ordering::SeqCst) <= 1);
        });
    }

    /// Two wakers while a `Wake` is being handled: whatever the order,
    /// the completion is seen and never more than one `Wake` is queued.
    #[test]
    fn two_wakers_queue_one_wake_at_a_time() {
        loom::model(|| {
            let cell = Cell::new();
            cell.wake(); // a first `Wake` is queued
            let wakers: Vec<_> = (0..2)
                .map(|i| {
                    let cell = cell.clone();
                    thread::spawn(move || {
                        if i == 0 {
                            cell.complete_and_wake();
                        } else {
                            cell.wake();
                        }
                    })
                })
                .collect();
            let mut ready = cell.handle_wakes();
            for waker in wakers {
                waker.join().unwrap();
            }
            ready |= cell.handle_wakes();
            assert!(ready, "the wake-up was lost");
            assert!(cell.most_queued.load(Ordering::SeqCst) <= 1);
        });
    }
}
