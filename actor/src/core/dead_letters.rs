//! Dead letters: messages that could not be delivered, counted and
//! published to subscribers and to the instrumentation.
//!
//! Part of the core: a cell publishes its undeliverable messages here
//! (reaching it through [`Runtime::dead_letters`](crate::core::runtime::Runtime::dead_letters)),
//! without knowing the system or its [`EventStream`](crate::EventStream),
//! the public face that adds user events on top.

use std::any::Any;
use std::fmt;

use crate::core::instrument::{COMPILED_IN, Hooks};
use crate::path::ActorPath;
use crate::sync::{Arc, AtomicU64, Mutex, Ordering};

/// An event published on the system's [`EventStream`](crate::EventStream).
#[derive(Debug)]
#[non_exhaustive]
pub enum Event {
    /// A message that could not be delivered.
    DeadLetter(DeadLetter),
    /// A user event published with
    /// [`EventStream::publish`](crate::EventStream::publish).
    User(UserEvent),
}

/// A user event as a callback subscriber sees it (see
/// [`EventStream::subscribe`](crate::EventStream::subscribe)): a copy of
/// what was published, by type.
///
/// # Examples
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use weir_actor::{ActorSystem, Event};
///
/// let system = ActorSystem::new("userEvents").unwrap();
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let log = Arc::clone(&seen);
/// let _subscription = system.event_stream().subscribe(move |event| {
///     if let Event::User(user) = event {
///         log.lock().unwrap().extend(user.downcast_ref::<u32>().copied());
///     }
/// });
/// system.event_stream().publish(7u32);
/// assert_eq!(*seen.lock().unwrap(), [7]);
/// system.terminate().wait().unwrap();
/// ```
pub struct UserEvent {
    message_type: &'static str,
    event: Box<dyn Any + Send>,
}

impl UserEvent {
    /// The Rust type name of the event.
    pub fn message_type(&self) -> &'static str {
        self.message_type
    }

    /// The event, if it is an `E`.
    pub fn downcast_ref<E: Any>(&self) -> Option<&E> {
        self.event.downcast_ref()
    }
}

impl fmt::Debug for UserEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UserEvent")
            .field("message_type", &self.message_type)
            .finish_non_exhaustive()
    }
}

/// A message that could not be delivered, with the reason.
pub struct DeadLetter {
    recipient: ActorPath,
    message_type: &'static str,
    message: Box<dyn Any + Send>,
    reason: DeadLetterReason,
    level: LogLevel,
}

/// How loudly a dead letter asks to be logged (Akka's log levels). Whoever
/// publishes it chooses: [`EventStream::publish_dead_letter`](crate::EventStream::publish_dead_letter) uses
/// [`LogLevel::Info`], as Akka logs dead letters; a stream stage that drops
/// elements uses the level set on it (weir-streams'
/// `Attributes::with_drop_log_level`, [`LogLevel::Debug`] by default).
/// Subscribers and hooks log each letter at its level (the `tracing` hook
/// does).
///
/// # Examples
///
/// ```
/// use weir_actor::LogLevel;
///
/// assert!(LogLevel::Warning > LogLevel::Debug, "ordered by severity");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogLevel {
    /// Detail for whoever debugs.
    Debug,
    /// Worth knowing in normal operation.
    Info,
    /// Something is likely wrong.
    Warning,
    /// Something is wrong.
    Error,
}

/// Why a message became a dead letter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DeadLetterReason {
    /// The recipient had stopped (or stopped with the message still queued).
    RecipientStopped,
    /// A reply to an `ask` that had already completed (answered or timed out).
    AskCompleted,
    /// An [`ActorSelection`](crate::ActorSelection) matched no actor.
    NoMatch,
    /// The stream stage it was meant for has stopped (weir-streams).
    StageStopped,
    /// A lifecycle signal (stop, poison pill) sent to a reference that is
    /// not a real actor, such as a [`FunctionRef`](crate::FunctionRef): ignored.
    LifecycleIgnored,
    /// A bounded buffer had no room for it and its overflow strategy dropped it.
    Dropped,
    /// A router had no routee to send it to (see
    /// [`routing`](crate::routing)).
    NoRoutee,
    /// A message from another system (a remote tell) that could not be
    /// decoded into the recipient's message type.
    Undeliverable,
    /// The actor takes another message type.
    WrongMessageType {
        /// The type of the actor that was matched.
        actor_type: &'static str,
    },
}

impl DeadLetter {
    /// Where the message was sent.
    pub fn recipient(&self) -> &ActorPath {
        &self.recipient
    }

    /// The Rust type name of the message.
    pub fn message_type(&self) -> &'static str {
        self.message_type
    }

    /// Why it was not delivered.
    pub fn reason(&self) -> DeadLetterReason {
        self.reason
    }

    /// The level its publisher asks it to be logged at.
    pub fn level(&self) -> LogLevel {
        self.level
    }

    /// The message, if it is a `T`.
    pub fn downcast_ref<T: Any>(&self) -> Option<&T> {
        self.message.downcast_ref()
    }
}

impl fmt::Debug for DeadLetter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeadLetter")
            .field("recipient", &self.recipient)
            .field("message_type", &self.message_type)
            .field("reason", &self.reason)
            .field("level", &self.level)
            .finish_non_exhaustive()
    }
}

type Subscriber = Arc<dyn Fn(&Event) + Send + Sync>;

/// The dead letters of one system: the count, the subscribers and the
/// hooks they are published to. A letter nobody listens to is counted and
/// dropped, allocating nothing.
pub(crate) struct DeadLetters {
    inner: Arc<Inner>,
    hooks: Option<Hooks>,
}

struct Inner {
    subscribers: Mutex<Vec<(u64, Subscriber)>>,
    /// How many subscribers there are, read without the lock: a dead
    /// letter nobody listens to is counted and dropped, allocating nothing.
    listening: AtomicU64,
    next_id: AtomicU64,
    dead_letters: AtomicU64,
}

impl DeadLetters {
    pub(crate) fn new(hooks: Option<Hooks>) -> Self {
        Self {
            hooks,
            inner: Arc::new(Inner {
                subscribers: Mutex::new(Vec::new()),
                listening: AtomicU64::new(0),
                next_id: AtomicU64::new(0),
                dead_letters: AtomicU64::new(0),
            }),
        }
    }

    /// Call `subscriber` for every event until the subscription is dropped.
    pub(crate) fn subscribe(
        &self,
        subscriber: impl Fn(&Event) + Send + Sync + 'static,
    ) -> Subscription {
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let mut subscribers = self.inner.subscribers.lock();
        subscribers.push((id, Arc::new(subscriber)));
        self.inner
            .listening
            .store(subscribers.len() as u64, Ordering::Release);
        drop(subscribers);
        Subscription {
            inner: self.inner.clone(),
            id,
        }
    }

    /// How many dead letters have been published so far.
    pub(crate) fn count(&self) -> u64 {
        self.inner.dead_letters.load(Ordering::Relaxed)
    }

    /// How many subscribers there are.
    pub(crate) fn subscriber_count(&self) -> usize {
        self.inner.subscribers.lock().len()
    }

    /// Whether a dead letter would reach anyone: a subscriber or a hook.
    pub(crate) fn has_listeners(&self) -> bool {
        (self.hooks.is_some() && COMPILED_IN) || self.inner.listening.load(Ordering::Acquire) > 0
    }

    /// Count `n` dead letters that nobody listens to.
    pub(crate) fn add_count(&self, n: u64) {
        self.inner.dead_letters.fetch_add(n, Ordering::Relaxed);
    }

    /// Publish `message` as a dead letter for `recipient` at [`LogLevel::Info`].
    pub(crate) fn publish<M: Send + 'static>(
        &self,
        recipient: &ActorPath,
        message: M,
        reason: DeadLetterReason,
    ) {
        self.publish_at(recipient, message, reason, LogLevel::Info);
    }

    /// Publish `message` as a dead letter for `recipient`, to be logged at `level`.
    pub(crate) fn publish_at<M: Send + 'static>(
        &self,
        recipient: &ActorPath,
        message: M,
        reason: DeadLetterReason,
        level: LogLevel,
    ) {
        self.inner.dead_letters.fetch_add(1, Ordering::Relaxed);
        let hooked = self.hooks.is_some() && COMPILED_IN;
        if !hooked && self.inner.listening.load(Ordering::Acquire) == 0 {
            return;
        }
        // A letter caused by a subscriber or hook while it handles another
        // (it told a stopped actor) is counted, not published: published on
        // this same stack it would reach that subscriber again, and one that
        // tells on every letter would recurse until the stack overflows.
        let Some(_publishing) = Publishing::enter(&self.inner) else {
            return;
        };
        let event = Event::DeadLetter(DeadLetter {
            recipient: recipient.clone(),
            message_type: std::any::type_name::<M>(),
            message: Box::new(message),
            reason,
            level,
        });
        if let (Some(hooks), Event::DeadLetter(letter)) = (&self.hooks, &event)
            && COMPILED_IN
        {
            hooks.dead_letter(letter);
        }
        self.publish_event(&event);
    }

    /// Whether any callback subscriber listens (hooks aside).
    pub(crate) fn has_subscribers(&self) -> bool {
        self.inner.listening.load(Ordering::Acquire) > 0
    }

    /// Show a user event to the callback subscribers. Not from inside one's
    /// callback on this stream (as for dead letters): a subscriber cannot
    /// feed itself.
    pub(crate) fn publish_user<E: Send + 'static>(&self, event: E) {
        let Some(_publishing) = Publishing::enter(&self.inner) else {
            return;
        };
        self.publish_event(&Event::User(UserEvent {
            message_type: std::any::type_name::<E>(),
            event: Box::new(event),
        }));
    }

    fn publish_event(&self, event: &Event) {
        // Call subscribers outside the lock, so one may subscribe or drop its
        // subscription from inside its callback.
        let subscribers: Vec<Subscriber> = self
            .inner
            .subscribers
            .lock()
            .iter()
            .map(|(_, s)| s.clone())
            .collect();
        for subscriber in subscribers {
            // Publishing happens inside `tell`, which must never panic: a
            // panicking subscriber is reported by the panic hook and skipped.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| subscriber(event)));
        }
    }
}

impl fmt::Debug for DeadLetters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeadLetters")
            .field("subscribers", &self.subscriber_count())
            .field("count", &self.count())
            .finish()
    }
}

/// Marks this thread as inside one event stream's
/// [`DeadLetters::publish_at`] fan-out, for as long as it lives.
/// Streams are told apart, so publishing on another system's stream from
/// inside a subscriber still reaches its subscribers.
struct Publishing(usize);

thread_local! {
    /// The streams this thread is publishing on, innermost last.
    static PUBLISHING: std::cell::RefCell<Vec<usize>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Publishing {
    /// `None` when this thread is already publishing on `stream`.
    fn enter(stream: &Arc<Inner>) -> Option<Self> {
        let id = Arc::as_ptr(stream) as usize;
        PUBLISHING.with_borrow_mut(|streams| {
            (!streams.contains(&id)).then(|| {
                streams.push(id);
                Self(id)
            })
        })
    }
}

impl Drop for Publishing {
    fn drop(&mut self) {
        PUBLISHING.with_borrow_mut(|streams| streams.retain(|&id| id != self.0));
    }
}

/// Keeps a subscription alive; dropping it unsubscribes.
pub struct Subscription {
    inner: Arc<Inner>,
    id: u64,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let mut subscribers = self.inner.subscribers.lock();
        subscribers.retain(|(id, _)| *id != self.id);
        self.inner
            .listening
            .store(subscribers.len() as u64, Ordering::Release);
    }
}

impl fmt::Debug for Subscription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Subscription")
            .field("id", &self.id)
            .finish()
    }
}
