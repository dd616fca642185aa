//! A one-shot value that can be awaited as a future or waited for blocking.
//!
//! [`Promise`] is the completion cell behind `ask` and termination, and the
//! one other crates (weir-streams' sink completions) build their futures on.

use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use crate::sync::{AtomicBool, Condvar, Mutex, MutexGuard, Ordering, spin_loop};

/// Spin rounds of a blocking wait before it sleeps (each round doubles its
/// pauses, up to 64): a few microseconds, enough for a value that is about
/// to arrive from another core, so the waiter does not pay a sleep and a
/// wake-up. One under loom.
const SPIN_ROUNDS: u32 = if cfg!(loom) { 1 } else { 12 };

/// A value that is completed once and read by blocking or by polling.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use weir_actor::Promise;
///
/// let promise = Arc::new(Promise::new());
/// let writer = Arc::clone(&promise);
/// std::thread::spawn(move || writer.complete(7).unwrap());
/// assert_eq!(promise.wait_take(), 7);
/// ```
pub struct Promise<T> {
    state: Mutex<State<T>>,
    ready: Condvar,
    /// Set once completed, after the value is in place: what a spinning
    /// waiter watches (the lock still decides).
    done: AtomicBool,
}

struct State<T> {
    value: Option<T>,
    completed: bool,
    wakers: Vec<Waker>,
    /// Threads asleep on `ready`: `complete` signals the condvar only when
    /// there are some (a signal is a system call even with no one waiting).
    sleepers: u32,
}

impl<T> Promise<T> {
    /// An empty promise.
    pub fn new() -> Self {
        Self {
            state: Mutex::new(State {
                value: None,
                completed: false,
                wakers: Vec::new(),
                sleepers: 0,
            }),
            ready: Condvar::new(),
            done: AtomicBool::new(false),
        }
    }

    /// Complete with `value`; gives it back if already completed.
    pub fn complete(&self, value: T) -> Result<(), T> {
        let (wakers, sleepers) = {
            let mut state = self.state.lock();
            if state.completed {
                return Err(value);
            }
            state.completed = true;
            state.value = Some(value);
            self.done.store(true, Ordering::Release);
            (std::mem::take(&mut state.wakers), state.sleepers)
        };
        if sleepers > 0 {
            self.ready.notify_all();
        }
        for waker in wakers {
            waker.wake();
        }
        Ok(())
    }

    /// Whether a value has been set (even if it was taken since).
    pub fn is_completed(&self) -> bool {
        self.state.lock().completed
    }

    /// Poll for completion without taking the value (for many waiters).
    ///
    /// # Panics
    ///
    /// Never.
    pub fn poll_completed(&self, cx: &mut Context<'_>) -> Poll<()> {
        let mut state = self.state.lock();
        if state.completed {
            return Poll::Ready(());
        }
        if !state.wakers.iter().any(|w| w.will_wake(cx.waker())) {
            state.wakers.push(cx.waker().clone());
        }
        Poll::Pending
    }

    /// Poll and take the value (for the one owner of the result).
    ///
    /// # Panics
    ///
    /// If the value was already taken.
    pub fn poll_take(&self, cx: &mut Context<'_>) -> Poll<T> {
        let mut state = self.state.lock();
        if let Some(value) = state.value.take() {
            return Poll::Ready(value);
        }
        assert!(!state.completed, "promise value polled after it was taken");
        state.wakers.clear();
        state.wakers.push(cx.waker().clone());
        Poll::Pending
    }

    /// Block until completed.
    pub fn wait_completed(&self) {
        self.spin();
        self.simulated(None);
        let mut state = self.state.lock();
        while !state.completed {
            state = self.sleep(state);
        }
    }

    /// Spin a little while the value is not there yet (see [`SPIN_ROUNDS`]).
    fn spin(&self) {
        for round in 0..SPIN_ROUNDS {
            if self.done.load(Ordering::Acquire) {
                return;
            }
            for _ in 0..(1u32 << round.min(6)) {
                spin_loop();
            }
        }
    }

    /// Before blocking: on a simulation's thread, drive the simulation
    /// until completed (or `timeout` of its time has passed) instead;
    /// whether completed, or `None` outside a simulation (see
    /// `crate::sim`, which panics where the wait would block for
    /// ever).
    #[inline]
    fn simulated(&self, timeout: Option<Duration>) -> Option<bool> {
        #[cfg(feature = "testkit")]
        if !self.done.load(Ordering::Acquire) {
            return crate::core::dispatcher::simulated::block_on(
                &|| self.done.load(Ordering::Acquire),
                timeout,
            );
        }
        #[cfg(not(feature = "testkit"))]
        let _ = timeout;
        None
    }

    /// Sleep on the condvar once, counted as a sleeper.
    fn sleep<'a>(&self, mut state: MutexGuard<'a, State<T>>) -> MutexGuard<'a, State<T>> {
        state.sleepers += 1;
        let mut state = self.state.wait(&self.ready, state);
        state.sleepers -= 1;
        state
    }

    /// Block until completed or `timeout` has passed; whether it completed.
    pub fn wait_completed_for(&self, timeout: Duration) -> bool {
        if let Some(completed) = self.simulated(Some(timeout)) {
            return completed;
        }
        // Saturating: `Duration::MAX` waits for ever instead of panicking.
        let deadline = crate::core::scheduler::deadline::after(timeout);
        let mut state = self.state.lock();
        while !state.completed {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            state.sleepers += 1;
            state = self.state.wait_timeout(&self.ready, state, deadline - now);
            state.sleepers -= 1;
        }
        true
    }

    /// Block until completed, then take the value.
    ///
    /// # Panics
    ///
    /// If the value was already taken.
    pub fn wait_take(&self) -> T {
        self.spin();
        self.simulated(None);
        let mut state = self.state.lock();
        loop {
            if let Some(value) = state.value.take() {
                return value;
            }
            assert!(
                !state.completed,
                "promise value waited for after it was taken"
            );
            state = self.sleep(state);
        }
    }
}

impl<T> Default for Promise<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> std::fmt::Debug for Promise<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Promise")
            .field("completed", &self.is_completed())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::Promise;

    /// Completions racing every kind of wait, with and without sleeping:
    /// a lost wake-up (a waiter asleep that `complete` did not signal)
    /// hangs this test.
    #[test]
    fn every_wait_sees_a_racing_completion() {
        for round in 0..3_000u32 {
            let promise = Arc::new(Promise::new());
            let writer = Arc::clone(&promise);
            let pause = round % 4;
            let completer = std::thread::spawn(move || {
                if pause == 1 {
                    std::thread::yield_now();
                } else if pause == 2 {
                    std::thread::sleep(Duration::from_micros(50));
                }
                writer.complete(round).unwrap();
            });
            match round % 3 {
                0 => assert_eq!(promise.wait_take(), round),
                1 => promise.wait_completed(),
                _ => assert!(promise.wait_completed_for(Duration::from_secs(60))),
            }
            completer.join().unwrap();
        }
    }

    #[test]
    fn a_wait_that_times_out_leaves_no_sleeper_behind() {
        let promise = Promise::<u32>::new();
        assert!(!promise.wait_completed_for(Duration::from_millis(1)));
        assert_eq!(promise.state.lock().sleepers, 0);
        promise.complete(1).unwrap();
        assert_eq!(promise.wait_take(), 1);
    }
}
