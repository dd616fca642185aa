//! The policy of a bounded mailbox when it is full (the sender's side is
//! `crate::core::bounded`).

/// What [`tell`](crate::ActorRef::tell) does when a bounded mailbox is full.
/// Either way the dropped message is published as a dead letter with reason
/// [`Dropped`](crate::DeadLetterReason::Dropped) and counted in
/// [`dead_letter_count`](crate::EventStream::dead_letter_count).
///
/// To fail the sender instead, send with
/// [`try_tell`](crate::ActorRef::try_tell); to make it wait, with
/// [`send`](crate::ActorRef::send).
///
/// # Examples
///
/// ```
/// use weir_actor::{Actor, Context, MailboxOverflow, Props};
///
/// struct Latest;
/// impl Actor for Latest {
///     type Msg = u64;
///     fn receive(&mut self, _: &mut Context<Self>, _: u64) {}
/// }
///
/// // Keep the 16 newest readings: an older one makes room for a new one.
/// let props = Props::new(|| Latest).with_bounded_mailbox(16, MailboxOverflow::DropHead);
/// # let _ = props;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MailboxOverflow {
    /// Drop the message being sent (Akka's `BoundedMailbox` with a zero
    /// push time-out). `try_tell` gives it back, `send` waits.
    DropNew,
    /// Drop the oldest queued message to make room for the new one, for
    /// every way of sending (the newest data wins).
    DropHead,
}
