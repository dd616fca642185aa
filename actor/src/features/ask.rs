//! Ask: send a question with a one-off reply address and get the answer as a
//! future (or by blocking).

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use crate::core::actor_ref::{ActorRef, AnyActor, Control, Delivery, Recipient, SystemMsg};
use crate::core::cell::CellCore;
use crate::core::dead_letters::DeadLetterReason;
use crate::core::instrument::{COMPILED_IN, MessageInfo, MetaOf};
use crate::core::scheduler::Cancellable;
use crate::error::AskError;
use crate::features::watchers::Watchers;
use crate::path::ActorPath;
use crate::sync::Arc;
use crate::system::actor_system::ActorSystem;
use crate::system::promise::Promise;
use std::sync::Weak;

/// Send `target` the message `make(reply_to)` and wait for the first reply
/// sent to `reply_to`.
///
/// `reply_to` is a temporary actor under `/temp`, named after the target
/// (`/temp/<target>$a`, as in Akka, so dead letters and logs say whom the
/// ask was for). It takes one reply; later replies, and a reply after the
/// time-out, go to dead letters.
///
/// # Errors
///
/// Every ask finishes. The handle yields [`AskError::Timeout`] when no reply
/// arrives within `timeout`, [`AskError::TargetStopped`] when the question
/// could not be delivered, and [`AskError::Terminated`] when the system
/// terminates first. A `timeout` too long for the clock (`Duration::MAX`)
/// means no time-out: the ask waits for its reply or for termination. A
/// zero `timeout` yields [`AskError::ZeroTimeout`] at once: the question is
/// neither made nor sent.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use weir_actor::{Actor, ActorRef, ActorSystem, Context, Props, ask};
///
/// struct Doubler;
/// impl Actor for Doubler {
///     type Msg = (u32, ActorRef<u32>);
///     fn receive(&mut self, _: &mut Context<Self>, (n, reply_to): (u32, ActorRef<u32>)) {
///         reply_to.tell(n * 2);
///     }
/// }
///
/// let system = ActorSystem::new("asking").unwrap();
/// let doubler = system.spawn(Props::new(|| Doubler), "doubler").unwrap();
/// let answer = ask(&doubler, |reply_to| (21, reply_to), Duration::from_secs(5));
/// assert_eq!(answer.wait(), Ok(42));
/// // The handle is also a future:
/// let again = futures_executor::block_on(ask(&doubler, |r| (1, r), Duration::from_secs(5)));
/// assert_eq!(again, Ok(2));
/// system.terminate().wait().unwrap();
/// ```
pub fn ask<M, R>(
    target: &ActorRef<M>,
    make: impl FnOnce(ActorRef<R>) -> M,
    timeout: Duration,
) -> AskHandle<R>
where
    M: Send + 'static,
    R: Send + 'static,
{
    ask_with(
        ActorSystem::of(target.inner.system()),
        target.path().name(),
        |reply_to| target.deliver(make(reply_to)) != Delivery::DeadLetter,
        timeout,
    )
}

/// The machinery of [`ask`] for any way of sending the question: `send`
/// gets the reply address and says whether the question was delivered
/// anywhere (routers send it to one routee, or to all of them). The reply
/// address is named after `target`, the name of the actor asked.
pub(crate) fn ask_with<R: Send + 'static>(
    system: &ActorSystem,
    target: &str,
    send: impl FnOnce(ActorRef<R>) -> bool,
    timeout: Duration,
) -> AskHandle<R> {
    let system = system.internal();
    let name = system.next_temp_name(target);
    let path = system
        .inner
        .temp_dir
        .child(Arc::clone(&name), system.next_uid());
    let cell = Arc::new(AskCell {
        path,
        system: system.clone(),
        promise: Promise::new(),
        watchers: Watchers::new(),
        timer: Cancellable::new(),
    });
    if timeout.is_zero() {
        // No reply could be in time: refuse before sending, as
        // `set_receive_timeout` refuses a zero.
        let _ = cell.promise.complete(Err(AskError::ZeroTimeout));
        return AskHandle { cell };
    }
    system.register_temp(name, Arc::downgrade(&cell) as Weak<dyn AnyActor>);
    let reply_to = ActorRef::new(cell.clone() as Arc<dyn Recipient<R>>);
    if !send(reply_to) {
        let _ = cell.finish(Err(AskError::TargetStopped));
    } else {
        let time_out = TimeOut(Arc::downgrade(&cell));
        let timed_out = Box::new(move || time_out.finish(AskError::Timeout(timeout)));
        // Given back when the system has shut down; dropping it fails the
        // ask with `Terminated`.
        let _ = system.scheduler().run_once(timeout, &cell.timer, timed_out);
    }
    AskHandle { cell }
}

/// The pending answer of an [`ask`]: a future, or a blocking
/// [`wait`](Self::wait).
///
/// Cancel safety: dropping it before completion discards the answer; a reply
/// that comes later goes to dead letters.
#[must_use = "an ask's answer is lost unless awaited or waited for"]
pub struct AskHandle<R> {
    cell: Arc<AskCell<R>>,
}

impl<R: Send + 'static> AskHandle<R> {
    /// Block until the reply, the time-out or termination.
    ///
    /// An answer that is already there is returned on any thread. Otherwise
    /// blocking is refused where it could deadlock: on the scheduler's
    /// thread, and on a pool worker when every other worker of its pool is
    /// blocked in a wait already (always, in a pool of one thread), since the
    /// reply may need one of them to be processed. Blocking a pool worker
    /// stalls every actor queued behind it, so prefer awaiting the handle or
    /// having the reply sent to the asking actor as a message.
    ///
    /// # Errors
    ///
    /// As [`ask`], and [`AskError::WouldDeadlock`] when blocking is refused
    /// (the ask goes on; its answer is dropped).
    pub fn wait(self) -> Result<R, AskError> {
        let promise = &self.cell.promise;
        if promise.is_completed() {
            return promise.wait_take();
        }
        let _blocking = self
            .cell
            .system
            .enter_blocking_wait()
            .ok_or(AskError::WouldDeadlock)?;
        promise.wait_take()
    }
}

impl<R: Send + 'static> Future for AskHandle<R> {
    type Output = Result<R, AskError>;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        self.cell.promise.poll_take(cx)
    }
}

impl<R> fmt::Debug for AskHandle<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AskHandle")
            .field("reply_to", &self.cell.path)
            .finish()
    }
}

/// An ask's time-out job. If the scheduler drops it without running it (the
/// system terminated, and pending time-outs are dropped), it fails the ask
/// with [`AskError::Terminated`]: every ask finishes.
struct TimeOut<R: Send + 'static>(Weak<AskCell<R>>);

impl<R: Send + 'static> TimeOut<R> {
    fn finish(&self, error: AskError) {
        if let Some(cell) = self.0.upgrade() {
            // Already finished (replied, or timed out just now): nothing to do.
            let _ = cell.finish(Err(error));
        }
    }
}

impl<R: Send + 'static> Drop for TimeOut<R> {
    fn drop(&mut self) {
        self.finish(AskError::Terminated);
    }
}

/// The temporary actor behind an ask.
struct AskCell<R> {
    path: ActorPath,
    system: ActorSystem,
    promise: Promise<Result<R, AskError>>,
    /// Holding the watchee handles until the ask finishes is fine because
    /// every ask finishes (reply, time-out or termination).
    watchers: Watchers,
    /// The time-out, cancelled when the ask finishes first.
    timer: Cancellable,
}

impl<R: Send + 'static> AskCell<R> {
    /// Complete with `result`; gives it back if already complete.
    fn finish(&self, result: Result<R, AskError>) -> Result<(), Result<R, AskError>> {
        self.promise.complete(result)?;
        self.timer.cancel();
        self.system.unregister_temp(self.path.name());
        self.watchers.end();
        Ok(())
    }
}

impl<R: Send + 'static> AnyActor for AskCell<R> {
    fn path(&self) -> &ActorPath {
        &self.path
    }

    fn system(&self) -> &(dyn Any + Send + Sync) {
        &self.system
    }

    fn type_name(&self) -> &'static str {
        std::any::type_name::<Self>()
    }

    fn enqueue_system(&self, msg: SystemMsg) -> Delivery {
        match self.watchers.on_system(msg) {
            Ok(()) => Delivery::Queued,
            // Stopping a pending ask is not meaningful; it ends on its own.
            Err(SystemMsg::Terminate) => Delivery::Queued,
            Err(_) => Delivery::DeadLetter,
        }
    }

    fn enqueue_control(&self, _: Control) -> Delivery {
        Delivery::DeadLetter
    }

    fn schedule(self: Arc<Self>) {}

    fn is_terminated(&self) -> bool {
        self.promise.is_completed()
    }

    fn core(&self) -> Option<&CellCore> {
        None
    }

    fn downcast_into(self: Arc<Self>, slot: &mut dyn Any) {
        if let Some(slot) = slot.downcast_mut::<Option<ActorRef<R>>>() {
            *slot = Some(ActorRef::new(self));
        }
    }
}

impl<R: Send + 'static> Recipient<R> for AskCell<R> {
    fn enqueue(&self, reply: R) -> Delivery {
        match &self.system.inner.hooks {
            Some(hooks) if COMPILED_IN => {
                let info = MessageInfo {
                    path: &self.path,
                    meta: MetaOf::<Self, R>::ASK_REPLY,
                    stamp: hooks.stamp(&self.path).context_only(),
                };
                hooks.around_handled(&info, || self.complete_with_reply(reply))
            }
            _ => self.complete_with_reply(reply),
        }
    }
}

impl<R: Send + 'static> AskCell<R> {
    /// A reply arrived: the first completes the ask, later ones are dead letters.
    fn complete_with_reply(&self, reply: R) -> Delivery {
        match self.finish(Ok(reply)) {
            Ok(()) => Delivery::Queued,
            Err(Ok(reply)) => {
                self.system.event_stream().publish_dead_letter(
                    &self.path,
                    reply,
                    DeadLetterReason::AskCompleted,
                );
                Delivery::DeadLetter
            }
            Err(Err(_)) => unreachable!("complete gives back the value it was given"),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::{Actor, ActorRef, ActorSystem, Context, Props, ask};

    struct Echo;
    impl Actor for Echo {
        type Msg = ActorRef<()>;
        fn receive(&mut self, _: &mut Context<Self>, reply_to: ActorRef<()>) {
            reply_to.tell(());
        }
    }

    #[test]
    fn answered_asks_do_not_keep_their_time_outs_in_the_scheduler() {
        let system = ActorSystem::new("askTimers").unwrap();
        let echo = system.spawn(Props::new(|| Echo), "echo").unwrap();
        for _ in 0..5_000 {
            assert_eq!(ask(&echo, |r| r, Duration::from_secs(3600)).wait(), Ok(()));
        }
        // The pool's watchdog may hold one entry; the asks hold none for long.
        let pending = system.scheduler().timer().pending();
        assert!(
            pending < 200,
            "{pending} timer entries after 5000 answered asks"
        );
        system.terminate().wait().unwrap();
    }
}
