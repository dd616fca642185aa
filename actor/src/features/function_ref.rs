//! [`FunctionRef`]: an actor reference without a mailbox.

use std::any::Any;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::core::actor::Terminated;
use crate::core::actor_ref::{
    ActorHandle, ActorRef, AnyActor, Control, Delivery, Recipient, SystemMsg,
};
use crate::core::cell::CellCore;
use crate::core::dead_letters::DeadLetterReason;
use crate::features::watchers::Watchers;
use crate::name::NameError;
use crate::name::validate_name;
use crate::path::ActorPath;
use crate::sync::Arc;
use crate::system::actor_system::ActorSystem;

type Handler<M> = Box<dyn Fn(M) -> Result<(), M> + Send + Sync>;
type OnTerminated = Box<dyn Fn(Terminated) + Send + Sync>;

/// An [`ActorRef`] with no mailbox and no actor behind it: a `tell` runs a
/// handler on the sender's thread (Akka's `FunctionRef`). Libraries build
/// on it to receive messages straight into their own queues — weir-streams'
/// `Source::actor_ref` hands one out.
///
/// The reference has a path (under `/system`, not resolvable) and can be
/// watched; it terminates when its owner calls [`stop`](Self::stop) or
/// drops the `FunctionRef`. Messages sent after that, and messages the
/// handler gives back, become dead letters. Lifecycle signals meant for
/// real actors (`stop`, `poison_pill`) are ignored and published as dead
/// letters with [`DeadLetterReason::LifecycleIgnored`].
///
/// Both callbacks run on the sender's stack: a caller's thread, a pool
/// worker in the middle of another actor's stop sequence, the scheduler's
/// timer thread. A panic in one is caught where it runs (and reported by
/// the panic hook), so it never unwinds into the sender: the reference
/// keeps working, and a message whose handler panicked is counted as a
/// dead letter (it was moved into the handler, so it cannot be published).
///
/// # Examples
///
/// ```
/// use std::sync::mpsc;
/// use weir_actor::{ActorSystem, FunctionRef};
///
/// let system = ActorSystem::new("function-ref").unwrap();
/// let (tx, rx) = mpsc::channel();
/// let inbox = FunctionRef::new(&system, "inbox", move |n: u32| tx.send(n).map_err(|e| e.0)).unwrap();
/// inbox.actor_ref().tell(7u32);
/// assert_eq!(rx.recv().unwrap(), 7);
/// inbox.stop();
/// assert!(inbox.actor_ref().is_terminated());
/// system.terminate().wait().unwrap();
/// ```
pub struct FunctionRef<M: Send + 'static> {
    cell: Arc<FunctionCell<M>>,
}

struct FunctionCell<M> {
    path: ActorPath,
    system: ActorSystem,
    handler: Handler<M>,
    /// Death-watch notices for actors this reference watches.
    on_terminated: Option<OnTerminated>,
    /// Who watches this reference; ended by `stop`.
    watchers: Watchers,
}

impl<M: Send + 'static> FunctionRef<M> {
    /// A reference named `/system/<name>` whose messages go to `handler`.
    /// The handler gives a message back (`Err`) to turn it into a dead letter.
    ///
    /// # Errors
    ///
    /// A [`NameError`] for an invalid name.
    pub fn new(
        system: &ActorSystem,
        name: &str,
        handler: impl Fn(M) -> Result<(), M> + Send + Sync + 'static,
    ) -> Result<Self, NameError> {
        validate_name(name)?;
        let path = ActorPath::root(system.inner.name.clone(), 0)
            .child("system", 0)
            .child(name, system.next_uid());
        Ok(Self {
            cell: Arc::new(FunctionCell {
                path,
                system: system.internal(),
                handler: Box::new(handler),
                on_terminated: None,
                watchers: Watchers::new(),
            }),
        })
    }

    /// Like [`new`](Self::new), and the reference can watch actors:
    /// `on_terminated` gets their [`Terminated`] notices (see
    /// [`watch`](Self::watch)).
    ///
    /// # Errors
    ///
    /// A [`NameError`] for an invalid name.
    pub fn with_death_watch(
        system: &ActorSystem,
        name: &str,
        handler: impl Fn(M) -> Result<(), M> + Send + Sync + 'static,
        on_terminated: impl Fn(Terminated) + Send + Sync + 'static,
    ) -> Result<Self, NameError> {
        let mut function = Self::new(system, name, handler)?;
        Arc::get_mut(&mut function.cell)
            .expect("not shared yet")
            .on_terminated = Some(Box::new(on_terminated));
        Ok(function)
    }

    /// Watch `target`: its [`Terminated`] notice goes to the
    /// `on_terminated` handler (at once if it has already terminated).
    /// Without one (a reference made with [`new`](Self::new)) the notice
    /// is dropped.
    pub fn watch(&self, target: impl Into<ActorHandle>) {
        let target = target.into();
        target.send_system(SystemMsg::Watch {
            watchee: target.clone(),
            watcher: ActorHandle {
                inner: self.cell.clone(),
            },
        });
    }

    /// Stop watching `target`.
    pub fn unwatch(&self, target: impl Into<ActorHandle>) {
        let target = target.into();
        target.send_system(SystemMsg::Unwatch(ActorHandle {
            inner: self.cell.clone(),
        }));
    }

    /// The reference to hand out.
    pub fn actor_ref(&self) -> ActorRef<M> {
        ActorRef::new(self.cell.clone() as Arc<dyn Recipient<M>>)
    }

    /// Terminate the reference: watchers get their `Terminated` notice,
    /// later messages become dead letters. Idempotent.
    pub fn stop(&self) {
        self.cell.watchers.end();
    }

    /// Whether [`stop`](Self::stop) has run.
    pub fn is_stopped(&self) -> bool {
        self.cell.watchers.is_ended()
    }
}

impl<M: Send + 'static> Drop for FunctionRef<M> {
    fn drop(&mut self) {
        self.stop();
    }
}

impl<M: Send + 'static> fmt::Debug for FunctionRef<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FunctionRef")
            .field("path", &self.cell.path)
            .finish()
    }
}

impl<M: Send + 'static> FunctionCell<M> {
    fn ignore(&self, signal: &'static str) {
        self.system.event_stream().publish_dead_letter(
            &self.path,
            signal,
            DeadLetterReason::LifecycleIgnored,
        );
    }
}

impl<M: Send + 'static> AnyActor for FunctionCell<M> {
    fn path(&self) -> &ActorPath {
        &self.path
    }

    fn system(&self) -> &(dyn Any + Send + Sync) {
        &self.system
    }

    fn type_name(&self) -> &'static str {
        std::any::type_name::<FunctionRef<M>>()
    }

    fn enqueue_system(&self, msg: SystemMsg) -> Delivery {
        match self.watchers.on_system(msg) {
            Ok(()) => Delivery::Queued,
            Err(SystemMsg::Terminate) => {
                self.ignore("weir::Stop");
                Delivery::Queued
            }
            Err(_) => Delivery::DeadLetter,
        }
    }

    fn enqueue_control(&self, msg: Control) -> Delivery {
        match msg {
            Control::PoisonPill => {
                self.ignore("weir::PoisonPill");
                Delivery::Queued
            }
            Control::Terminated(actor) => match &self.on_terminated {
                Some(on_terminated) if !self.is_terminated() => {
                    // Runs inside the watched actor's stop sequence: a panic
                    // here would leave its parent waiting forever.
                    let _ = catch_unwind(AssertUnwindSafe(|| on_terminated(Terminated { actor })));
                    Delivery::Queued
                }
                _ => Delivery::DeadLetter,
            },
            _ => Delivery::DeadLetter,
        }
    }

    fn schedule(self: Arc<Self>) {}

    fn is_terminated(&self) -> bool {
        self.watchers.is_ended()
    }

    fn core(&self) -> Option<&CellCore> {
        None
    }

    fn downcast_into(self: Arc<Self>, slot: &mut dyn Any) {
        if let Some(slot) = slot.downcast_mut::<Option<ActorRef<M>>>() {
            *slot = Some(ActorRef::new(self));
        }
    }
}

impl<M: Send + 'static> Recipient<M> for FunctionCell<M> {
    fn enqueue(&self, msg: M) -> Delivery {
        let result = if self.is_terminated() {
            Err(msg)
        } else {
            match catch_unwind(AssertUnwindSafe(|| (self.handler)(msg))) {
                Ok(result) => result,
                Err(_) => {
                    self.system.event_stream().count_dead_letters(1);
                    return Delivery::DeadLetter;
                }
            }
        };
        match result {
            Ok(()) => Delivery::Queued,
            Err(msg) => {
                self.system.event_stream().publish_dead_letter(
                    &self.path,
                    msg,
                    DeadLetterReason::RecipientStopped,
                );
                Delivery::DeadLetter
            }
        }
    }
}
