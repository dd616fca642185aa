//! The inbox between an actor reference and its stage.
//!
//! # Protocol
//!
//! Producers (any thread, via the reference or the control handle) call
//! [`Inbox::offer`]: under the lock they append the signal and set
//! `scheduled`; the one whose append found `scheduled` clear wakes the
//! stage, after unlocking. The stage, woken, calls [`Inbox::take`]: under
//! the lock it swaps the whole queue out and clears `scheduled`. So:
//!
//! - no lost wake-up: a signal appended after a `take` finds `scheduled`
//!   clear and wakes again; one appended before it is in the batch taken;
//! - one wake-up per burst, not per element;
//! - order: one queue, appended and taken under one lock, is the order
//!   the signals are handled in (per producer, the order it sent them);
//! - after [`Inbox::close`] (the stage stopped) `offer` gives the signal
//!   back, so the caller can make it a dead letter: nothing vanishes.
//!
//! The wake-up itself is an async callback: a message to the island's
//! actor, which waits in its mailbox if the island has not started. The
//! loom models in `inbox/loom_models.rs` check the protocol with a wake
//! that counts.

use std::collections::VecDeque;

use crate::StreamError;
use crate::sync::{AtomicU64, Mutex, Ordering};

/// Wakes the stage that takes from an inbox.
pub(crate) trait Wake: Send + Sync {
    fn wake(&self);
}

/// What travels through an inbox.
pub(crate) enum Signal<T> {
    Element(T),
    /// Complete after the buffered elements.
    Drain,
    /// Complete now, dropping the buffer.
    Now,
    Fail(StreamError),
}

struct State<T> {
    queue: VecDeque<Signal<T>>,
    /// A wake-up is on its way to the stage.
    scheduled: bool,
    /// The stage has stopped: nothing more is taken.
    closed: bool,
}

pub(crate) struct Inbox<T, W> {
    state: Mutex<State<T>>,
    wake: W,
    /// Elements the stage dropped (overflow, completion), for the handle.
    pub(crate) dropped: AtomicU64,
}

impl<T: Send, W: Wake> Inbox<T, W> {
    pub(crate) fn new(wake: W) -> Self {
        Self {
            state: Mutex::new(State {
                queue: VecDeque::new(),
                scheduled: false,
                closed: false,
            }),
            wake,
            dropped: AtomicU64::new(0),
        }
    }

    /// Queue `signal`; gives it back when the stage has stopped.
    pub(crate) fn offer(&self, signal: Signal<T>) -> Result<(), Signal<T>> {
        let wake = {
            let mut state = self.state.lock();
            if state.closed {
                return Err(signal);
            }
            state.queue.push_back(signal);
            !std::mem::replace(&mut state.scheduled, true)
        };
        if wake {
            self.wake.wake();
        }
        Ok(())
    }

    /// Take everything queued into `into` (empty) and clear the wake-up mark.
    pub(crate) fn take(&self, into: &mut VecDeque<Signal<T>>) {
        debug_assert!(into.is_empty());
        let mut state = self.state.lock();
        std::mem::swap(&mut state.queue, into);
        state.scheduled = false;
    }

    /// The stage stopped: refuse new signals; return what was still queued.
    pub(crate) fn close(&self) -> VecDeque<Signal<T>> {
        let mut state = self.state.lock();
        state.closed = true;
        std::mem::take(&mut state.queue)
    }

    pub(crate) fn count_dropped(&self, n: u64) {
        self.dropped.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

#[cfg(loom)]
mod loom_models;
