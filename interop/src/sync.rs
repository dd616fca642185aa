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

/// The non-poisoning mutex the Weir crates share (defined in weir-actor).
pub(crate) use weir_actor::{Mutex, MutexGuard};
