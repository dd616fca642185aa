//! Bounded mailboxes, from the sender's side: the overflow strategy of
//! [`tell`](crate::ActorRef::tell), and the future of
//! [`send`](crate::ActorRef::send), which waits for room.
//!
//! A bounded mailbox is a [`Props`](crate::Props) option
//! ([`with_bounded_mailbox`](crate::Props::with_bounded_mailbox)). When it
//! is full, each way of sending does what its signature promises:
//!
//! | sender | full mailbox |
//! |---|---|
//! | `tell` (never blocks, never fails) | applies the [`MailboxOverflow`]: drops the new message or the oldest queued one, as a dead letter |
//! | `try_tell` | gives the message back: [`TellError::MailboxFull`](crate::TellError::MailboxFull) (with `DropHead`, makes room instead) |
//! | `send().await` | waits until the actor has taken a message out (with `DropHead`, makes room instead) |
//!
//! On an unbounded mailbox all three queue the message at once.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll, Waker};

use crate::actor_ref::ActorRef;

/// What [`tell`](crate::ActorRef::tell) does when a bounded mailbox is full.
/// Either way the dropped message is published as a dead letter with reason
/// [`Dropped`](crate::DeadLetterReason::Dropped) and counted in
/// [`dead_letter_count`](crate::EventStream::dead_letter_count).
///
/// To fail the sender instead, send with
/// [`try_tell`](crate::ActorRef::try_tell); to make it wait, with
/// [`send`](crate::ActorRef::send).
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

/// The future of [`ActorRef::send`]: completes once the message is queued
/// (or, if the actor has stopped, published as a dead letter).
///
/// Cancel safety: dropping it before it completes drops the message, which
/// then was never queued (and is not a dead letter: the sender gave up).
#[must_use = "a send does nothing unless awaited"]
pub struct SendFuture<'a, M: Send + 'static> {
    target: &'a ActorRef<M>,
    msg: Option<M>,
    /// The waker last left in the mailbox, while the message waits.
    waiting: Option<Waker>,
}

impl<'a, M: Send + 'static> SendFuture<'a, M> {
    pub(crate) fn new(target: &'a ActorRef<M>, msg: M) -> Self {
        Self {
            target,
            msg: Some(msg),
            waiting: None,
        }
    }
}

// The message is only moved, never pinned.
impl<M: Send + 'static> Unpin for SendFuture<'_, M> {}

impl<M: Send + 'static> Future for SendFuture<'_, M> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<()> {
        let Some(msg) = self.msg.take() else {
            return Poll::Ready(());
        };
        match self.target.offer(msg, Some(cx.waker())) {
            Ok(()) => {
                self.waiting = None;
                Poll::Ready(())
            }
            Err(msg) => {
                self.msg = Some(msg);
                if !self.waiting.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                    // Moved to another task: the old waker must not take a
                    // wake-up meant for a sender that is still waiting.
                    if let Some(old) = self.waiting.replace(cx.waker().clone()) {
                        self.target.inner.cancel_waiting(&old);
                    }
                }
                Poll::Pending
            }
        }
    }
}

impl<M: Send + 'static> Drop for SendFuture<'_, M> {
    fn drop(&mut self) {
        if let Some(waker) = self.waiting.take()
            && self.msg.is_some()
        {
            // Its waker must not take a wake-up the next sender needs.
            self.target.inner.cancel_waiting(&waker);
        }
    }
}

impl<M: Send + 'static> fmt::Debug for SendFuture<'_, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SendFuture")
            .field("target", self.target.path())
            .field("sent", &self.msg.is_none())
            .finish()
    }
}
