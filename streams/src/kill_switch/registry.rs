//! The streams under one `SharedKillSwitch`.
//!
//! # Protocol
//!
//! One lock guards the firing and the members. A stream joins when it is
//! materialized: if the switch has fired it gets the kill at once and is
//! not kept, else it is kept under a key. It leaves under that key when
//! it stops, so the registry holds only streams that are running. Firing
//! (the first one wins) records the kill and takes every member out
//! under the lock; the kills are delivered after it is released. So every
//! stream gets the kill exactly once whether it joins before or after the
//! switch fires, and one that left before it fired gets none.
//!
//! The loom models in `registry/loom_models.rs` check joining, leaving
//! and firing against each other.

use std::collections::HashMap;

use crate::sync::Mutex;

/// The members of a switch (`C`: how to reach a stream) and how it fired (`K`).
pub(crate) struct Registry<C, K> {
    state: Mutex<Members<C, K>>,
}

struct Members<C, K> {
    fired: Option<K>,
    members: HashMap<u64, C>,
    next_key: u64,
}

/// What [`Registry::join`] did.
#[derive(Debug, PartialEq)]
pub(crate) enum Joined<K> {
    /// Kept under this key: leave with it.
    Member(u64),
    /// The switch has fired: apply this kill now.
    Fired(K),
}

impl<C, K: Clone> Registry<C, K> {
    pub(crate) fn new() -> Self {
        Self {
            state: Mutex::new(Members {
                fired: None,
                members: HashMap::new(),
                next_key: 0,
            }),
        }
    }

    /// Put `stream` under the switch, or hand back the kill if it has fired.
    pub(crate) fn join(&self, stream: C) -> Joined<K> {
        let mut state = self.state.lock();
        if let Some(kill) = &state.fired {
            return Joined::Fired(kill.clone());
        }
        let key = state.next_key;
        state.next_key = state.next_key.wrapping_add(1);
        state.members.insert(key, stream);
        Joined::Member(key)
    }

    /// The stream under `key` has stopped: forget it.
    pub(crate) fn leave(&self, key: u64) {
        // Dropped after the lock is released.
        let _gone = self.state.lock().members.remove(&key);
    }

    /// Fire with `kill` unless fired already: the members to deliver it to.
    pub(crate) fn fire(&self, kill: &K) -> Vec<C> {
        let mut state = self.state.lock();
        if state.fired.is_some() {
            return Vec::new();
        }
        state.fired = Some(kill.clone());
        state.members.drain().map(|(_, stream)| stream).collect()
    }

    /// How many running streams are under the switch.
    pub(crate) fn len(&self) -> usize {
        self.state.lock().members.len()
    }

    /// Whether the switch has fired.
    pub(crate) fn has_fired(&self) -> bool {
        self.state.lock().fired.is_some()
    }
}

#[cfg(loom)]
mod loom_models;
