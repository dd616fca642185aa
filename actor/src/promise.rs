//! A one-shot value that can be awaited as a future or waited for blocking.

use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use crate::sync::{Condvar, Mutex};

pub(crate) struct Promise<T> {
    state: Mutex<State<T>>,
    ready: Condvar,
}

struct State<T> {
    value: Option<T>,
    completed: bool,
    wakers: Vec<Waker>,
}

impl<T> Promise<T> {
    pub(crate) fn new() -> Self {
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
    pub(crate) fn complete(&self, value: T) -> Result<(), T> {
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

    pub(crate) fn is_completed(&self) -> bool {
        self.state.lock().completed
    }

    /// Poll for completion without taking the value (for many waiters).
    pub(crate) fn poll_completed(&self, cx: &mut Context<'_>) -> Poll<()> {
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
    pub(crate) fn poll_take(&self, cx: &mut Context<'_>) -> Poll<T> {
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
    pub(crate) fn wait_completed(&self) {
        let mut state = self.state.lock();
        while !state.completed {
            state = self.state.wait(&self.ready, state);
        }
    }

    /// Block until completed or `timeout` has passed; whether it completed.
    pub(crate) fn wait_completed_for(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
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
    pub(crate) fn wait_take(&self) -> T {
        let mut state = self.state.lock();
        loop {
            if let Some(value) = state.value.take() {
                return value;
            }
            assert!(!state.completed, "promise value waited for after it was taken");
            state = self.state.wait(&self.ready, state);
        }
    }
}
