//! The event stream: dead letters (see [`crate::core::dead_letters`]) and user
//! events delivered by type to subscribed actors (`user`), a layer on top
//! of the core's dead letters. Callback subscribers see both.

use crate::core::dead_letters::{DeadLetterReason, DeadLetters, Event, LogLevel, Subscription};
use crate::core::instrument::Hooks;
use crate::path::ActorPath;

mod user;

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
    letters: DeadLetters,
    /// User events, by type.
    channels: user::Channels,
}

impl EventStream {
    pub(crate) fn new(hooks: Option<Hooks>) -> Self {
        Self {
            letters: DeadLetters::new(hooks),
            channels: user::Channels::default(),
        }
    }

    /// The dead letters this stream publishes, for the core.
    pub(crate) fn dead_letters(&self) -> &DeadLetters {
        &self.letters
    }

    /// Call `subscriber` for every event until the returned [`Subscription`]
    /// is dropped: every dead letter ([`Event::DeadLetter`]) and every user
    /// event published with [`publish`](Self::publish) ([`Event::User`]),
    /// whether or not an actor subscribed to its type.
    #[must_use = "dropping the subscription unsubscribes at once"]
    pub fn subscribe(&self, subscriber: impl Fn(&Event) + Send + Sync + 'static) -> Subscription {
        self.letters.subscribe(subscriber)
    }

    /// How many dead letters have been published so far.
    pub fn dead_letter_count(&self) -> u64 {
        self.letters.count()
    }

    /// Whether a dead letter would reach anyone: a subscriber or an
    /// instrumentation hook. Libraries that drop many messages at once can
    /// then [`count_dead_letters`](Self::count_dead_letters) instead of
    /// publishing each.
    pub fn has_listeners(&self) -> bool {
        self.letters.has_listeners()
    }

    /// Count `n` dead letters that nobody listens to (see
    /// [`has_listeners`](Self::has_listeners)).
    pub fn count_dead_letters(&self, n: u64) {
        self.letters.add_count(n);
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
        self.letters.publish(recipient, message, reason);
    }

    /// [`publish_dead_letter`](Self::publish_dead_letter), asking to be
    /// logged at `level` ([`DeadLetter::level`](crate::DeadLetter::level)).
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
        self.letters.publish_at(recipient, message, reason, level);
    }
}

impl std::fmt::Debug for EventStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventStream")
            .field("subscribers", &self.letters.subscriber_count())
            .field("dead_letters", &self.dead_letter_count())
            .finish()
    }
}
