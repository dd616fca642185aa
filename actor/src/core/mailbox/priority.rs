//! The key of a priority mailbox (see the mailbox's module docs, "Priority
//! mailboxes").

/// The key function of a priority mailbox: lower first.
pub(crate) type PriorityKey<U> = Box<dyn Fn(&U) -> i64 + Send + Sync>;

/// A [`PriorityKey`], `Debug`.
pub(super) struct Priority<U>(pub(super) PriorityKey<U>);

impl<U> std::fmt::Debug for Priority<U> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Priority")
    }
}
