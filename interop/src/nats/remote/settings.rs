//! [`RemoteSettings`]: the credit window, the outbox and the heartbeats.

use std::time::Duration;

/// How remote tells, credit and heartbeats behave.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use weir_interop::RemoteSettings;
///
/// let settings = RemoteSettings::default()
///     .window(128)
///     .outbox(1_000)
///     .heartbeat(Duration::from_millis(200), Duration::from_secs(2));
/// assert_eq!(settings.window_size(), 128);
/// ```
#[derive(Debug, Clone)]
pub struct RemoteSettings {
    pub(super) window: u32,
    pub(super) outbox: usize,
    pub(super) heartbeat_interval: Duration,
    pub(super) heartbeat_timeout: Duration,
}

impl Default for RemoteSettings {
    /// A window of 256 tells per destination, an outbox of 10,000, a
    /// heartbeat every second, unreachable after 5 s without one.
    fn default() -> Self {
        Self {
            window: 256,
            outbox: 10_000,
            heartbeat_interval: Duration::from_secs(1),
            heartbeat_timeout: Duration::from_secs(5),
        }
    }
}

impl RemoteSettings {
    /// Tells in flight per destination before the sender waits for credit
    /// (at least 1). The receiver returns credit every `window / 4` tells.
    #[must_use]
    pub fn window(mut self, window: u32) -> Self {
        self.window = window.max(1);
        self
    }

    /// Tells a destination may hold waiting for credit before further
    /// tells become dead letters.
    #[must_use]
    pub fn outbox(mut self, outbox: usize) -> Self {
        self.outbox = outbox;
        self
    }

    /// Publish a heartbeat every `interval`; a watched system that sends
    /// none for `timeout` is taken for dead. Both are measured on the
    /// actor system's clock (its scheduler), so a `TestClock` drives them.
    ///
    /// Stream refs made or run on this system keep their streams alive on
    /// the same interval and time-out (see [`StreamRefs`](crate::nats::StreamRefs)).
    #[must_use]
    pub fn heartbeat(mut self, interval: Duration, timeout: Duration) -> Self {
        self.heartbeat_interval = interval;
        self.heartbeat_timeout = timeout;
        self
    }

    /// The window.
    pub fn window_size(&self) -> u32 {
        self.window
    }

    /// How often a system publishes heartbeats.
    pub(in crate::nats) fn heartbeat_interval(&self) -> Duration {
        self.heartbeat_interval
    }

    /// How long a silent peer is taken for alive.
    pub(in crate::nats) fn heartbeat_timeout(&self) -> Duration {
        self.heartbeat_timeout
    }

    pub(super) fn credit_batch(&self) -> u32 {
        (self.window / 4).max(1)
    }
}
