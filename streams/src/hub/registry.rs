//! How producers (`MergeHub`) and consumers (`BroadcastHub`,
//! `PartitionHub`) attach to a running hub: each brings its end of a
//! hand-over and leaves it here; the hub takes what arrived when notified.
//!
//! One lock guards the list and the hub's ending. `register` either leaves
//! the entry for the hub or, once the hub has closed, gives it back with
//! the hub's outcome; `close` returns what was left and not taken. So an
//! entry is always owned by exactly one of: the registrant (rejected), the
//! hub (taken or returned by `close`). The loom model in
//! `registry/loom_models.rs` checks that against a concurrent close.

use crate::error::StreamError;
use crate::handover::Notify;
use crate::sync::Mutex;

struct PendingEntries<E> {
    pending: Vec<E>,
    closed: Option<Result<(), StreamError>>,
}

/// Entries waiting for the hub, and how the hub ended.
pub(crate) struct Registry<E, N> {
    state: Mutex<PendingEntries<E>>,
    /// Wakes the hub (its async callback).
    hub: N,
}

impl<E, N: Notify> Registry<E, N> {
    pub(crate) fn new(hub: N) -> Self {
        Self {
            state: Mutex::new(PendingEntries {
                pending: Vec::new(),
                closed: None,
            }),
            hub,
        }
    }

    /// Leave `entry` for the hub and wake it; once the hub has closed,
    /// `entry` comes back with the hub's outcome.
    pub(crate) fn register(&self, entry: E) -> Result<(), (E, Result<(), StreamError>)> {
        {
            let mut state = self.state.lock();
            if let Some(outcome) = &state.closed {
                return Err((entry, outcome.clone()));
            }
            state.pending.push(entry);
        }
        self.hub.notify();
        Ok(())
    }

    /// Move what arrived into `into`.
    pub(crate) fn take(&self, into: &mut Vec<E>) {
        let mut state = self.state.lock();
        into.append(&mut state.pending);
    }

    /// Refuse later entries with `outcome` (the first close wins) and
    /// return what arrived and was not taken.
    pub(crate) fn close(&self, outcome: Result<(), StreamError>) -> Vec<E> {
        let mut state = self.state.lock();
        if state.closed.is_none() {
            state.closed = Some(outcome);
        }
        std::mem::take(&mut state.pending)
    }

    /// Refuse later entries with `outcome` (the first close wins), leaving
    /// what arrived for the hub to take.
    pub(crate) fn refuse(&self, outcome: Result<(), StreamError>) {
        let mut state = self.state.lock();
        if state.closed.is_none() {
            state.closed = Some(outcome);
        }
    }

    /// Wake the hub (for a request that is not a registration).
    pub(crate) fn notify(&self) {
        self.hub.notify();
    }
}

#[cfg(loom)]
mod loom_models;
