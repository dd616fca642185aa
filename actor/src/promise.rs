//! A one-shot value that can be awaited as a future or waited for blocking.
//!
//! [`Promise`] is the completion cell behind `ask` and termination, and the
//! one other crates (weir-streams' sink completions) build their futures on.

use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use crate::sync::{Condvar, Mutex};

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
}

struct State<T> {
    value: Option<T>,
    completed: bool,
    wakers: Vec<Waker>,
}

impl<T> Promise<T> {
    /// An empty promise.
    pub fn new() -> Self {
        Self {
            state: Mutex::new(State {
                value: None,
                completed: false,
                wakers: Vec::new(),
            }),
            ready: Condvar::new(),
        }
    }

    /// Complete with `value`; gives it back if already completed.
    pub fn complete(&self, value: T) -> Result<(), T> {
        let wakers = {
            let mut state = self.state.lock();
            if state.completed {
                return Err(value);
            }
            state.completed = true;
            state.value = Some(value);
            std::mem::take(&mut state.wakers)
        };
        self.ready.notify_all();
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
        let mut state = self.state.lock();
        while !state.completed {
            state = self.state.wait(&self.ready, state);
        }
    }

    /// Block until completed or `timeout` has passed; whether it completed.
    pub fn wait_completed_for(&self, timeout: Duration) -> bool {
        // Saturating: `Duration::MAX` waits for ever instead of panicking.
        let deadline = crate::scheduler::deadline::after(timeout);
        let mut state = self.state.lock();
        while !state.completed {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            state = self.state.wait_timeout(&self.ready, state, deadline - now);
        }
        true
    }

    /// Block until completed, then take the value.
    ///
    /// # Panics
    ///
    /// If the value was already taken.
    pub fn wait_take(&self) -> T {
        let mut state = self.state.lock();
        loop {
            if let Some(value) = state.value.take() {
                return value;
            }
            assert!(
                !state.completed,
                "promise value waited for after it was taken"
            );
            state = self.state.wait(&self.ready, state);
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
