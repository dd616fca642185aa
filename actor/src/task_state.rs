//! The state machine of a piped future's task (see [`crate::pipe`]): who
//! polls it and who queues it, so that it is queued at most once, polled
//! by one thread at a time, and never misses a wake-up.
//!
//! # States and rules
//!
//! `IDLE` (waiting for a wake-up), `SCHEDULED` (queued on the pool),
//! `RUNNING` (being polled), `NOTIFIED` (woken while being polled), `DONE`.
//!
//! 1. **Wake** (any thread), always a read-modify-write: `IDLE` ->
//!    `SCHEDULED`, and the waker queues the task; `RUNNING` -> `NOTIFIED`;
//!    `SCHEDULED` and `NOTIFIED` are written again unchanged; `DONE`:
//!    nothing to do.
//! 2. **Run** (the thread the pool gave the task): swap in `RUNNING`, then
//!    poll.
//! 3. **Pending**: `RUNNING` -> `IDLE` by compare-and-swap; if that fails
//!    the task was `NOTIFIED` during the poll: swap in `SCHEDULED` and the
//!    runner queues the task again (behind what waits: a future that wakes
//!    itself yields its worker).
//! 4. **Ready** (or the future panicked): `DONE`, for good.
//! 5. **Abort** (`TaskHandle::abort`, any thread): set the task's abort
//!    flag, then wake it (rule 1). A run reads the flag right after its
//!    swap (rule 2) and, if set, drops the future and goes to `DONE`. The
//!    wake-up is ordered on the state word against that swap: either it
//!    comes first (and the run sees the flag), or it finds the task
//!    `RUNNING` and rule 3 queues another run, which sees it.
//!
//! Every transition a waker or the runner makes before it looks at the
//! future's state is a read-modify-write (`AcqRel`), so they are totally
//! ordered on the state word: a wake-up that comes before the runner's
//! swap (rule 2) is seen by the poll that follows, and one that comes
//! after it finds `RUNNING` and leaves `NOTIFIED`, which makes rule 3
//! queue the task for another poll. A wake-up is never lost. (An earlier version
//! let a waker that found `SCHEDULED` or `NOTIFIED` only *load* the state
//! and the runner *store* `RUNNING`: a waker's write to the future and the
//! runner's store could then each miss the other, the store-buffer
//! pattern, and the loom model below lost the wake-up.)
//!
//! The loom models at the end check rules 1-3 with a waker on another
//! thread, and rule 5 with an abort racing the first poll.

use crate::sync::{AtomicU8, Ordering};

const IDLE: u8 = 0;
const SCHEDULED: u8 = 1;
const RUNNING: u8 = 2;
const NOTIFIED: u8 = 3;
const DONE: u8 = 4;

/// A piped task's state word (module docs).
#[derive(Debug)]
pub(crate) struct TaskState(AtomicU8);

impl TaskState {
    /// A task about to be queued for its first poll.
    pub(crate) fn scheduled() -> Self {
        Self(AtomicU8::new(SCHEDULED))
    }

    /// Rule 1: whether the caller must queue the task.
    pub(crate) fn wake(&self) -> bool {
        let mut state = self.0.load(Ordering::Acquire);
        loop {
            let next = match state {
                IDLE => SCHEDULED,
                RUNNING | NOTIFIED => NOTIFIED,
                SCHEDULED => SCHEDULED,
                _ => return false,
            };
            match self
                .0
                .compare_exchange(state, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return state == IDLE,
                Err(actual) => state = actual,
            }
        }
    }

    /// Rule 2: the runner starts polling.
    pub(crate) fn start(&self) {
        self.0.swap(RUNNING, Ordering::AcqRel);
    }

    /// Rule 3: a poll returned `Pending`; whether the caller must queue
    /// the task again (it was woken meanwhile) instead of letting it idle.
    pub(crate) fn pending(&self) -> bool {
        match self
            .0
            .compare_exchange(RUNNING, IDLE, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => false,
            Err(_) => {
                self.0.swap(SCHEDULED, Ordering::AcqRel);
                true
            }
        }
    }

    /// Rule 4: the future is gone. A read-modify-write like every other
    /// transition, so a racing wake-up is ordered against it: it finds
    /// `DONE` (and does nothing), or comes first and is overwritten.
    pub(crate) fn done(&self) {
        self.0.swap(DONE, Ordering::AcqRel);
    }

    /// The raw state, for `Debug`.
    pub(crate) fn get(&self) -> u8 {
        self.0.load(Ordering::Relaxed)
    }
}

#[cfg(all(test, loom))]
mod loom_models {
    use loom::sync::Arc;
    use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use loom::thread;

    use super::TaskState;

    /// A task whose "future" is ready once `ready` is set; the "pool" runs
    /// a queued task at once, on the thread that queued it. `aborted` is
    /// `TaskHandle::abort`'s flag (`crate::features::pipe`): a run that sees it drops
    /// the future instead of polling it.
    #[derive(Debug)]
    struct Task {
        state: TaskState,
        ready: AtomicBool,
        inside: AtomicUsize,
        polls_after_ready: AtomicUsize,
        queued: AtomicUsize,
        aborted: AtomicBool,
        dropped: AtomicUsize,
    }

    impl Task {
        fn run(&self) {
            loop {
                self.state.start();
                if self.aborted.load(Ordering::Acquire) {
                    self.dropped.fetch_add(1, Ordering::SeqCst);
                    self.state.done();
                    return;
                }
                assert_eq!(
                    self.inside.fetch_add(1, Ordering::SeqCst),
                    0,
                    "two pollers at once"
                );
                let ready = self.ready.load(Ordering::SeqCst);
                self.inside.fetch_sub(1, Ordering::SeqCst);
                if ready {
                    self.polls_after_ready.fetch_add(1, Ordering::SeqCst);
                    self.state.done();
                    return;
                }
                if !self.state.pending() {
                    return;
                }
                // Queued again by the runner: this pool runs it at once.
                self.queued.fetch_add(1, Ordering::SeqCst);
            }
        }

        fn wake(&self) {
            if self.state.wake() {
                self.queued.fetch_add(1, Ordering::SeqCst);
                self.run();
            }
        }
    }

    fn task() -> Arc<Task> {
        Arc::new(Task {
            state: TaskState::scheduled(),
            ready: AtomicBool::new(false),
            inside: AtomicUsize::new(0),
            polls_after_ready: AtomicUsize::new(0),
            queued: AtomicUsize::new(0),
            aborted: AtomicBool::new(false),
            dropped: AtomicUsize::new(0),
        })
    }

    /// An abort (flag, then a wake-up) racing the task's first poll, which
    /// finds the future pending: the abort is never lost, so the future is
    /// dropped, exactly once, and the task ends.
    #[test]
    fn an_abort_racing_a_poll_is_not_lost() {
        loom::model(|| {
            let task = task();
            let aborter = {
                let task = task.clone();
                thread::spawn(move || {
                    task.aborted.store(true, Ordering::Release);
                    task.wake();
                })
            };
            task.run();
            aborter.join().unwrap();
            assert_eq!(task.dropped.load(Ordering::SeqCst), 1, "{task:?}");
            assert_eq!(task.state.get(), super::DONE, "{task:?}");
        });
    }

    /// A future made ready and woken on another thread while its first
    /// poll runs: it is polled to completion exactly once after it became
    /// ready (no lost wake-up), never by two threads at once.
    #[test]
    fn wake_during_poll_is_not_lost() {
        loom::model(|| {
            let task = task();
            let waker = {
                let task = task.clone();
                thread::spawn(move || {
                    task.ready.store(true, Ordering::SeqCst);
                    task.wake();
                })
            };
            task.run();
            waker.join().unwrap();
            assert_eq!(
                task.polls_after_ready.load(Ordering::SeqCst),
                1,
                "lost or doubled: {task:?}"
            );
        });
    }

    /// Two wakers racing (one makes it ready): the task is queued at most
    /// once per idle period and completes exactly once.
    #[test]
    fn racing_wakes_queue_once_and_complete_once() {
        loom::model(|| {
            let task = task();
            let wakers: Vec<_> = (0..2)
                .map(|i| {
                    let task = task.clone();
                    thread::spawn(move || {
                        if i == 0 {
                            task.ready.store(true, Ordering::SeqCst);
                        }
                        task.wake();
                    })
                })
                .collect();
            task.run();
            for waker in wakers {
                waker.join().unwrap();
            }
            assert_eq!(task.polls_after_ready.load(Ordering::SeqCst), 1, "{task:?}");
            assert!(task.queued.load(Ordering::SeqCst) <= 2);
        });
    }
}
