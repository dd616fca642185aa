//! The one place cross-thread primitives come from (STYLE.md rule 7),
//! mirroring `weir-streams`' `sync` module: `std` normally, loom under
//! `--cfg loom`. `Arc` stays `std`'s. (This crate builds on the streams
//! runtime, which loom builds leave out, so it has no loom models yet; the
//! switch is here so a future one sees every primitive.)

#![allow(unused_imports)] // each build uses a different subset

pub(crate) use std::sync::atomic::Ordering;
pub(crate) use std::sync::{Arc, OnceLock, Weak};

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
#[cfg(not(loom))]
pub(crate) use std::thread;

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
#[cfg(loom)]
pub(crate) use loom::thread;

/// A mutex whose `lock` never reports poisoning: no user code runs while
/// one of these locks is held, and every critical section leaves the data
/// consistent.
#[derive(Debug, Default)]
pub(crate) struct Mutex<T> {
    #[cfg(not(loom))]
    inner: std::sync::Mutex<T>,
    #[cfg(loom)]
    inner: loom::sync::Mutex<T>,
}

#[cfg(not(loom))]
pub(crate) type MutexGuard<'a, T> = std::sync::MutexGuard<'a, T>;
#[cfg(loom)]
pub(crate) type MutexGuard<'a, T> = loom::sync::MutexGuard<'a, T>;

impl<T> Mutex<T> {
    pub(crate) fn new(value: T) -> Self {
        Self {
            #[cfg(not(loom))]
            inner: std::sync::Mutex::new(value),
            #[cfg(loom)]
            inner: loom::sync::Mutex::new(value),
        }
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
