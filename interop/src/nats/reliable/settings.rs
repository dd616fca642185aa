//! [`ReliableSettings`]: the consumer's window and the resend time-out.

use std::time::Duration;

use super::ReliableError;

/// How a reliable producer and consumer pace and repair delivery.
///
/// Both sides of a pair should use the same settings: the consumer's
/// window is what it asks for, the producer's resend time-out is when it
/// resends.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use weir_interop::nats::ReliableSettings;
///
/// let settings = ReliableSettings::default()
///     .window(512)
///     .resend_after(Duration::from_millis(500));
/// assert_eq!(settings.window_size(), 512);
/// ```
#[derive(Debug, Clone)]
pub struct ReliableSettings {
    pub(super) window: u32,
    pub(super) resend_after: Duration,
}

impl Default for ReliableSettings {
    /// A window of 1,024 unconfirmed messages, resent after 1 s without a
    /// confirmation.
    fn default() -> Self {
        Self {
            window: 1024,
            resend_after: Duration::from_secs(1),
        }
    }
}

impl ReliableSettings {
    /// Messages the consumer lets the producer send beyond what it has
    /// confirmed (at least 1). The consumer reports its confirmations every
    /// `window / 4` of them.
    #[must_use]
    pub fn window(mut self, window: u32) -> Self {
        self.window = window.max(1);
        self
    }

    /// The producer resends its unconfirmed messages when no confirmation
    /// came for this long, and the consumer repeats its demand (and asks
    /// again for what it is missing) at this interval. It should exceed the
    /// time the consumer takes for one message: a consumer that confirms
    /// nothing for a whole interval is sent its unconfirmed messages again.
    /// Measured on the actor system's clock.
    #[must_use]
    pub fn resend_after(mut self, after: Duration) -> Self {
        self.resend_after = after;
        self
    }

    /// The window.
    pub fn window_size(&self) -> u32 {
        self.window
    }

    /// The resend time-out.
    pub fn resend_interval(&self) -> Duration {
        self.resend_after
    }

    pub(super) fn report_every(&self) -> u64 {
        u64::from((self.window / 4).max(1))
    }

    pub(super) fn check(&self) -> Result<(), ReliableError> {
        if self.resend_after.is_zero() {
            return Err(ReliableError::InvalidSettings(
                "resend_after must be more than zero".into(),
            ));
        }
        Ok(())
    }
}
