//! Shared helpers for Weir's cross-crate integration tests.

pub mod clocked;

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

/// A fresh actor system whose timers read a test clock: nothing time-based
/// happens until the test calls `clock.advance(..)`.
pub fn clocked_system(name: &str) -> (weir_actor::ActorSystem, weir_actor::testkit::TestClock) {
    let clock = weir_actor::testkit::TestClock::new();
    let system = weir_actor::ActorSystem::builder()
        .name(name)
        .clock(clock.clone())
        .build()
        .expect("a valid system name");
    (system, clock)
}

/// [`stream_system`] on a test clock (see [`clocked_system`]).
pub fn clocked_stream_system(
    name: &str,
) -> (
    weir_actor::ActorSystem,
    weir_streams::Materializer,
    weir_actor::testkit::TestClock,
) {
    let (system, clock) = clocked_system(name);
    let materializer = weir_streams::Materializer::new(&system);
    (system, materializer, clock)
}

/// Holds a stream's island inside an operator on the first element it
/// sees, so a test can queue signals behind it: put [`hold_first`] in a
/// `map`, wait for [`entered`], queue, then [`open`].
///
/// [`hold_first`]: IslandGate::hold_first
/// [`entered`]: IslandGate::entered
/// [`open`]: IslandGate::open
#[derive(Debug)]
pub struct IslandGate {
    entered: Receiver<()>,
    open: Sender<()>,
    gate: Gate,
}

/// The operator's side: tell "entered", wait for "open"; taken once.
type Gate = std::sync::Arc<std::sync::Mutex<Option<(Sender<()>, Receiver<()>)>>>;

impl IslandGate {
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        let (entered_tx, entered) = channel();
        let (open, opened) = channel();
        Self {
            entered,
            open,
            gate: std::sync::Arc::new(std::sync::Mutex::new(Some((entered_tx, opened)))),
        }
    }

    /// The operator: passes elements through, holding on the first one
    /// until [`open`](Self::open).
    pub fn hold_first<T>(&self) -> impl Fn(T) -> T + Clone + Send + Sync + 'static {
        let gate = std::sync::Arc::clone(&self.gate);
        move |x| {
            if let Some((entered, opened)) = gate.lock().unwrap().take() {
                entered.send(()).unwrap();
                opened.recv().unwrap();
            }
            x
        }
    }

    /// Whether the island is held, waiting up to `timeout`.
    pub fn entered(&self, timeout: Duration) -> bool {
        self.entered.recv_timeout(timeout).is_ok()
    }

    /// Let the island go on.
    pub fn open(&self) {
        self.open.send(()).unwrap();
    }
}

/// The README's Rust example, compiled and run as a doctest by
/// `cargo test --workspace` so that it keeps working.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// The example of `docs/observing.md`, compiled and run as a doctest the
/// same way.
#[cfg(doctest)]
#[doc = include_str!("../../docs/observing.md")]
pub struct ObservingDoctests;
