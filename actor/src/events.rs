//! The event stream: dead letters published to subscribers, and user
//! events delivered by type to subscribed actors (`user`).

use std::any::Any;
use std::fmt;

use crate::instrument::{COMPILED_IN, Hooks};
use crate::path::ActorPath;
use crate::sync::{Arc, AtomicU64, Mutex, Ordering};

mod user;

/// An event published on the system's [`EventStream`].
#[derive(Debug)]
#[non_exhaustive]
pub enum Event {
    /// A message that could not be delivered.
    DeadLetter(DeadLetter),
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
/// publishes it chooses: [`EventStream::publish_dead_letter`] uses
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

/// Publishes system events to subscribers and counts dead letters.
///
/// Subscribers run on the thread that publishes (often a dispatcher thread,
/// or the thread calling `tell`): keep them short, e.g. forward to a channel
/// or an actor. A subscriber that panics is skipped for that event; the
/// publisher never sees the panic. A dead letter that a subscriber (or an
/// instrumentation hook) causes while it handles an event, by telling a
/// stopped actor from inside the callback, is counted but not published:
/// a subscriber cannot feed itself.
///
/// # Examples
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use weir_actor::{Actor, ActorSystem, Context, Event, Props};
///
/// struct Sink;
/// impl Actor for Sink {
///     type Msg = u32;
///     fn receive(&mut self, _: &mut Context<Self>, _: u32) {}
/// }
///
/// let system = ActorSystem::new("events").unwrap();
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let seen2 = seen.clone();
/// let _subscription = system.event_stream().subscribe(move |event| {
///     let Event::DeadLetter(letter) = event else { return };
///     seen2.lock().unwrap().push(*letter.downcast_ref::<u32>().unwrap());
/// });
/// let sink = system.spawn(Props::new(|| Sink), "sink").unwrap();
/// let terminated = system.terminate();
/// terminated.wait().unwrap();
/// sink.tell(7u32); // stopped: a dead letter, never a panic
/// assert_eq!(*seen.lock().unwrap(), vec![7]);
/// assert_eq!(system.event_stream().dead_letter_count(), 1);
/// ```
pub struct EventStream {
    inner: Arc<Inner>,
    hooks: Option<Hooks>,
    /// User events, by type.
    channels: user::Channels,
}

struct Inner {
    subscribers: Mutex<Vec<(u64, Subscriber)>>,
    /// How many subscribers there are, read without the lock: a dead
    /// letter nobody listens to is counted and dropped, allocating nothing.
    listening: AtomicU64,
    next_id: AtomicU64,
    dead_letters: AtomicU64,
}

impl EventStream {
    pub(crate) fn new(hooks: Option<Hooks>) -> Self {
        Self {
            hooks,
            channels: user::Channels::default(),
            inner: Arc::new(Inner {
                subscribers: Mutex::new(Vec::new()),
                listening: AtomicU64::new(0),
                next_id: AtomicU64::new(0),
                dead_letters: AtomicU64::new(0),
            }),
        }
    }

    /// Call `subscriber` for every event until the returned [`Subscription`]
    /// is dropped.
    #[must_use = "dropping the subscription unsubscribes at once"]
    pub fn subscribe(&self, subscriber: impl Fn(&Event) + Send + Sync + 'static) -> Subscription {
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let mut subscribers = self.inner.subscribers.lock();
        subscribers.push((id, Arc::new(subscriber)));
        self.inner.listening.store(subscribers.len() as u64, Ordering::Release);
        drop(subscribers);
        Subscription {
            inner: self.inner.clone(),
            id,
        }
    }

    /// How many dead letters have been published so far.
    pub fn dead_letter_count(&self) -> u64 {
        self.inner.dead_letters.load(Ordering::Relaxed)
    }

    /// Whether a dead letter would reach anyone: a subscriber or an
    /// instrumentation hook. Libraries that drop many messages at once can
    /// then [`count_dead_letters`](Self::count_dead_letters) instead of
    /// publishing each.
    pub fn has_listeners(&self) -> bool {
        (self.hooks.is_some() && COMPILED_IN) || self.inner.listening.load(Ordering::Acquire) > 0
    }

    /// Count `n` dead letters that nobody listens to (see
    /// [`has_listeners`](Self::has_listeners)).
    pub fn count_dead_letters(&self, n: u64) {
        self.inner.dead_letters.fetch_add(n, Ordering::Relaxed);
    }

    /// Publish `message` as a dead letter for `recipient` (for libraries
    /// built on the runtime, such as stream stages that received a message
    /// after they stopped).
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_actor::{ActorSystem, DeadLetterReason};
    ///
    /// let system = ActorSystem::new("letters").unwrap();
    /// let path = "weir://letters/user/gone".parse().unwrap();
    /// system.event_stream().publish_dead_letter(&path, 7u32, DeadLetterReason::StageStopped);
    /// assert_eq!(system.event_stream().dead_letter_count(), 1);
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn publish_dead_letter<M: Send + 'static>(
        &self,
        recipient: &ActorPath,
        message: M,
        reason: DeadLetterReason,
    ) {
        self.publish_dead_letter_at(recipient, message, reason, LogLevel::Info);
    }

    /// [`publish_dead_letter`](Self::publish_dead_letter), asking to be
    /// logged at `level` ([`DeadLetter::level`]).
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use weir_actor::{ActorSystem, DeadLetterReason, Event, LogLevel};
    ///
    /// let system = ActorSystem::new("levels").unwrap();
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let log = Arc::clone(&seen);
    /// let _subscription = system.event_stream().subscribe(move |event| {
    ///     let Event::DeadLetter(letter) = event else { return };
    ///     log.lock().unwrap().push(letter.level());
    /// });
    /// let path = "weir://levels/user/gone".parse().unwrap();
    /// system.event_stream().publish_dead_letter_at(&path, 7u32, DeadLetterReason::Dropped, LogLevel::Warning);
    /// assert_eq!(*seen.lock().unwrap(), [LogLevel::Warning]);
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn publish_dead_letter_at<M: Send + 'static>(
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
        let Some(_publishing) = Publishing::enter(&self.inner) else { return };
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

    fn publish_event(&self, event: &Event) {
        // Call subscribers outside the lock, so one may subscribe or drop its
        // subscription from inside its callback.
        let subscribers: Vec<Subscriber> = self.inner.subscribers.lock().iter().map(|(_, s)| s.clone()).collect();
        for subscriber in subscribers {
            // Publishing happens inside `tell`, which must never panic: a
            // panicking subscriber is reported by the panic hook and skipped.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| subscriber(event)));
        }
    }
}

impl fmt::Debug for EventStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventStream")
            .field("subscribers", &self.inner.subscribers.lock().len())
            .field("dead_letters", &self.dead_letter_count())
            .finish()
    }
}

/// Marks this thread as inside one event stream's
/// [`EventStream::publish_dead_letter_at`] fan-out, for as long as it lives.
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
        self.inner.listening.store(subscribers.len() as u64, Ordering::Release);
    }
}

impl fmt::Debug for Subscription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Subscription").field("id", &self.id).finish()
    }
}
