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
//! | `tell` (never blocks, never fails) | applies the [`MailboxOverflow`](crate::MailboxOverflow): drops the new message or the oldest queued one, as a dead letter |
//! | `try_tell` | gives the message back: [`TellError::MailboxFull`](crate::TellError::MailboxFull) (with `DropHead`, makes room instead) |
//! | `send().await` | waits until the actor has taken a message out (with `DropHead`, makes room instead) |
//!
//! On an unbounded mailbox all three queue the message at once.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll, Waker};

use crate::core::actor_ref::ActorRef;

impl<M: Send + 'static> ActorRef<M> {
    /// Send a message, waiting while the recipient's bounded mailbox is full
    /// (back-pressure). On an unbounded mailbox it completes at once. See
    /// [`SendFuture`] for cancel safety.
    ///
    /// ```
    /// use weir_actor::{Actor, ActorSystem, Context, MailboxOverflow, Props};
    ///
    /// struct Count(u32);
    /// impl Actor for Count {
    ///     type Msg = u32;
    ///     fn receive(&mut self, _: &mut Context<Self>, n: u32) {
    ///         self.0 += n;
    ///     }
    /// }
    ///
    /// let system = ActorSystem::new("send").unwrap();
    /// let props = Props::new(|| Count(0)).with_bounded_mailbox(1, MailboxOverflow::DropNew);
    /// let count = system.spawn(props, "count").unwrap();
    /// futures_executor::block_on(async {
    ///     for n in 0..100 {
    ///         count.send(n).await; // none dropped: each waits for room
    ///     }
    /// });
    /// assert_eq!(system.event_stream().dead_letter_count(), 0);
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn send(&self, msg: M) -> SendFuture<'_, M> {
        SendFuture::new(self, msg)
    }
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
                if !self
                    .waiting
                    .as_ref()
                    .is_some_and(|w| w.will_wake(cx.waker()))
                {
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
