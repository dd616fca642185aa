//! The one place cross-thread primitives come from (STYLE.md rule 7):
//! `std` normally, loom under `--cfg loom` so the models in
//! `actor::inbox` explore every interleaving. `Arc` stays `std`'s.

#![allow(unused_imports)] // each build uses a different subset

pub(crate) use std::sync::Arc;
/// `std`'s in both builds: it only memoizes a value made once (a
/// graph's plan); no model runs across it.
pub(crate) use std::sync::OnceLock;
/// `std`'s in both builds, as `Arc` is.
pub(crate) use std::sync::Weak;
pub(crate) use std::sync::atomic::Ordering;

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};

/// A process-wide counter held in a `static`: `std`'s in both builds,
/// since loom's atomics cannot be made in a `const` and no model runs
/// across such counters (they only hand out unique numbers).
pub(crate) use std::sync::atomic::AtomicU64 as StaticAtomicU64;

/// A bounded lock-free queue (crossbeam's `ArrayQueue`); under loom, a
/// locked `VecDeque` with the same contract, so the models explore the
/// protocol around it (crossbeam is not loom-aware).
#[cfg(not(loom))]
pub(crate) use crossbeam_queue::ArrayQueue;

#[cfg(loom)]
#[derive(Debug)]
pub(crate) struct ArrayQueue<T> {
    inner: Mutex<std::collections::VecDeque<T>>,
    capacity: usize,
}

#[cfg(loom)]
impl<T> ArrayQueue<T> {
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            inner: Mutex::new(std::collections::VecDeque::new()),
            capacity,
        }
    }

    pub(crate) fn push(&self, value: T) -> Result<(), T> {
        let mut queue = self.inner.lock();
        if queue.len() >= self.capacity {
            return Err(value);
        }
        queue.push_back(value);
        Ok(())
    }

    pub(crate) fn pop(&self) -> Option<T> {
        self.inner.lock().pop_front()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.inner.lock().is_empty()
    }
}

/// The non-poisoning mutex the Weir crates share (defined in weir-actor).
pub(crate) use weir_actor::{Mutex, MutexGuard};
