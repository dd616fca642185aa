//! Saturating deadlines: the one place a duration becomes an `Instant`.
//!
//! `Instant + Duration` panics when the sum does not fit (`Duration::MAX`
//! always overflows). Every time-out, delay and interval in Weir goes
//! through [`after`] or [`add`] instead, which saturate at [`far_future`]:
//! a deadline about thirty years ahead, which is "never" for any program
//! (the same choice tokio makes). A timer at that deadline just waits in the
//! heap until the system terminates.

use std::time::{Duration, Instant};

/// How far ahead "never" is: thirty years, as tokio's `far_future`.
const NEVER: Duration = Duration::from_secs(86_400 * 365 * 30);

/// `at + d`, or the far future when that does not fit in an `Instant`.
pub(crate) fn add(at: Instant, d: Duration) -> Instant {
    at.checked_add(d).unwrap_or_else(|| far_future(at))
}

/// The deadline `d` from now, saturating as [`add`].
pub(crate) fn after(d: Duration) -> Instant {
    add(Instant::now(), d)
}

/// A deadline that never comes in practice, counted from `from` (and no
/// earlier than `from` on a platform whose clock cannot go that far).
fn far_future(from: Instant) -> Instant {
    [NEVER, NEVER / 1000, Duration::from_secs(86_400)]
        .into_iter()
        .find_map(|d| from.checked_add(d))
        .unwrap_or(from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saturates_instead_of_panicking() {
        let now = Instant::now();
        let never = add(now, Duration::MAX);
        assert!(never > now + Duration::from_secs(86_400 * 365));
        assert_eq!(
            add(now, Duration::from_secs(1)),
            now + Duration::from_secs(1)
        );
        assert!(after(Duration::MAX) >= never);
    }
}
