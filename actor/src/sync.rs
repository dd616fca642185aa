//! The one place cross-thread primitives come from.
//!
//! Normally this re-exports `std`; under `--cfg loom` the atomics, locks,
//! `UnsafeCell`, fences and parking come from loom so that the models in
//! [`crate::core::mailbox`] and [`crate::core::dispatcher`] explore every interleaving. Code elsewhere in the crate imports from here, never from
//! `std::sync::atomic` directly (STYLE.md rule 7).
//!
//! `Arc` stays `std`'s in both builds: loom's `Arc` has no `Weak`, and reference
//! counts are not what the models check.

#![allow(unused_imports)] // each build uses a different subset

pub(crate) use std::sync::Arc;
pub(crate) use std::sync::atomic::Ordering;

#[cfg(loom)]
pub(crate) use loom::sync::atomic::fence;
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::fence;

#[cfg(not(loom))]
pub(crate) use std::sync::Condvar;
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize};

#[cfg(loom)]
pub(crate) use loom::sync::Condvar;
#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize};

/// A read-write lock (std's, poisoning and all): the router's routee
/// table, read on every send. Not built under loom (the routers are not).
#[cfg(not(loom))]
pub(crate) use std::sync::RwLock;

/// Set-once cells and weak references: std's in both builds (loom has
/// neither; what they guard is set up before the protocols loom checks).
pub(crate) use std::sync::{OnceLock, Weak};

#[cfg(loom)]
pub(crate) use loom::hint::spin_loop;
/// Parking and spinning, for the pool's idle workers
/// ([`crate::core::dispatcher::idle`]).
#[cfg(not(loom))]
pub(crate) use std::hint::spin_loop;

/// Threads that park and are unparked: the pool's sleeping workers.
#[cfg(not(loom))]
pub(crate) mod thread {
    pub(crate) use std::thread::{Thread, current, park};
}

/// Under loom, std's park token built from a loom mutex and condvar, one
/// per thread: loom 0.7's own `unpark` also wakes a thread that is blocked
/// on a mutex (and then panics in `lock`), where std would keep the token
/// for the next `park`.
#[cfg(loom)]
pub(crate) mod thread {
    use std::sync::Arc;

    #[derive(Default)]
    struct Parker {
        token: loom::sync::Mutex<bool>,
        unparked: loom::sync::Condvar,
    }

    loom::thread_local! {
        static PARKER: Arc<Parker> = Arc::new(Parker::default());
    }

    /// A handle to unpark a thread, as `std::thread::Thread`.
    #[derive(Clone)]
    pub(crate) struct Thread {
        parker: Arc<Parker>,
        id: loom::thread::ThreadId,
    }

    impl Thread {
        pub(crate) fn id(&self) -> loom::thread::ThreadId {
            self.id
        }

        /// Give the thread its token (kept if it does not park yet).
        pub(crate) fn unpark(&self) {
            *self.parker.token.lock().unwrap() = true;
            self.parker.unparked.notify_one();
        }
    }

    pub(crate) fn current() -> Thread {
        Thread {
            parker: PARKER.with(Arc::clone),
            id: loom::thread::current().id(),
        }
    }

    /// Block until the token is there, and take it.
    pub(crate) fn park() {
        PARKER.with(|parker| {
            let mut token = parker.token.lock().unwrap();
            while !*token {
                token = parker.unparked.wait(token).unwrap();
            }
            *token = false;
        });
    }
}

/// A mutex whose `lock` never reports poisoning, shared by the Weir crates
/// (weir-actor, weir-streams and weir-interop all lock through this one).
///
/// Weir never runs user code while holding one of its own locks, so a poisoned
/// lock can only mean a bug in Weir itself; the data is still consistent
/// because every critical section is a few plain collection operations.
/// Under `--cfg loom` it is loom's mutex, so the models see every lock.
///
/// # Examples
///
/// ```
/// use weir_actor::Mutex;
///
/// let counts = Mutex::new(vec![1, 2]);
/// counts.lock().push(3);
/// assert_eq!(*counts.lock(), [1, 2, 3]);
/// ```
#[derive(Debug, Default)]
pub struct Mutex<T> {
    #[cfg(not(loom))]
    inner: std::sync::Mutex<T>,
    #[cfg(loom)]
    inner: loom::sync::Mutex<T>,
}

/// The guard [`Mutex::lock`] returns: the lock is held until it is dropped.
#[cfg(not(loom))]
pub type MutexGuard<'a, T> = std::sync::MutexGuard<'a, T>;
/// The guard [`Mutex::lock`] returns: the lock is held until it is dropped.
#[cfg(loom)]
pub type MutexGuard<'a, T> = loom::sync::MutexGuard<'a, T>;

impl<T> Mutex<T> {
    /// A mutex holding `value`.
    pub fn new(value: T) -> Self {
        Self {
            #[cfg(not(loom))]
            inner: std::sync::Mutex::new(value),
            #[cfg(loom)]
            inner: loom::sync::Mutex::new(value),
        }
    }

    /// Lock, blocking until the lock is free; a lock poisoned by a panic
    /// elsewhere is taken as it is.
    pub fn lock(&self) -> MutexGuard<'_, T> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Wait on `condvar`, ignoring poisoning like [`Mutex::lock`].
    #[cfg(not(loom))]
    pub(crate) fn wait<'a>(
        &self,
        condvar: &Condvar,
        guard: MutexGuard<'a, T>,
    ) -> MutexGuard<'a, T> {
        condvar
            .wait(guard)
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Wait on `condvar` for at most `timeout`, ignoring poisoning.
    #[cfg(not(loom))]
    pub(crate) fn wait_timeout<'a>(
        &self,
        condvar: &Condvar,
        guard: MutexGuard<'a, T>,
        timeout: std::time::Duration,
    ) -> MutexGuard<'a, T> {
        condvar
            .wait_timeout(guard, timeout)
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .0
    }
}

/// An `UnsafeCell` with loom's closure-based API, so loom can check that no two
/// threads touch the contents at once.
#[derive(Debug, Default)]
pub(crate) struct UnsafeCell<T> {
    #[cfg(not(loom))]
    inner: std::cell::UnsafeCell<T>,
    #[cfg(loom)]
    inner: loom::cell::UnsafeCell<T>,
}

impl<T> UnsafeCell<T> {
    pub(crate) fn new(value: T) -> Self {
        Self {
            #[cfg(not(loom))]
            inner: std::cell::UnsafeCell::new(value),
            #[cfg(loom)]
            inner: loom::cell::UnsafeCell::new(value),
        }
    }

    /// Run `f` with a mutable pointer to the contents.
    ///
    /// The caller must guarantee exclusive access for the duration of `f`;
    /// under loom a violation is reported as a data race.
    #[inline]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        #[cfg(not(loom))]
        {
            f(self.inner.get())
        }
        #[cfg(loom)]
        {
            self.inner.with_mut(f)
        }
    }
}
