//! Shared helpers for Weir's cross-crate integration tests.

use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::{Duration, Instant};

/// How long a test waits for something that should happen.
pub const PATIENCE: Duration = Duration::from_secs(10);

/// How long a test waits to be confident something does not happen.
pub const QUIET: Duration = Duration::from_millis(200);

/// Poll `cond` until it holds or `timeout` passes; returns whether it held.
pub fn eventually(timeout: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// A recorder that actors write into and the test reads from.
#[derive(Debug)]
pub struct Probe<T> {
    tx: Sender<T>,
    rx: Receiver<T>,
}

impl<T> Default for Probe<T> {
    fn default() -> Self {
        let (tx, rx) = channel();
        Self { tx, rx }
    }
}

impl<T> Probe<T> {
    /// A new, empty probe.
    pub fn new() -> Self {
        Self::default()
    }

    /// A sender to hand to actors.
    pub fn sender(&self) -> Sender<T> {
        self.tx.clone()
    }

    /// The next value, waiting up to [`PATIENCE`]; panics when none comes.
    pub fn expect(&self) -> T {
        match self.rx.recv_timeout(PATIENCE) {
            Ok(v) => v,
            Err(RecvTimeoutError::Timeout) => panic!("probe: nothing arrived within {PATIENCE:?}"),
            Err(RecvTimeoutError::Disconnected) => unreachable!("the probe holds a sender"),
        }
    }

    /// The next `n` values.
    pub fn expect_n(&self, n: usize) -> Vec<T> {
        (0..n).map(|_| self.expect()).collect()
    }

    /// Everything that has arrived so far, without waiting.
    pub fn drain(&self) -> Vec<T> {
        self.rx.try_iter().collect()
    }

    /// Asserts nothing arrives within [`QUIET`].
    pub fn expect_nothing(&self)
    where
        T: std::fmt::Debug,
    {
        if let Ok(v) = self.rx.recv_timeout(QUIET) {
            panic!("probe: expected nothing, got {v:?}");
        }
    }
}

/// Terminate `system` and wait for it, failing the test (instead of hanging
/// it) when termination takes longer than [`PATIENCE`].
pub fn shutdown(system: &weir_actor::ActorSystem) {
    system
        .terminate()
        .wait_timeout(PATIENCE)
        .expect("the system terminates in time");
}

/// A fresh actor system and a materializer on it, for one stream test.
pub fn stream_system(name: &str) -> (weir_actor::ActorSystem, weir_streams::Materializer) {
    let system = weir_actor::ActorSystem::new(name).expect("a valid system name");
    let materializer = weir_streams::Materializer::new(&system);
    (system, materializer)
}
