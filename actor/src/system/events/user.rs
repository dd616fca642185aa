//! User events on the event stream: any `Clone + Send` type, published by
//! anyone and delivered by type to the actors that subscribed to it (Akka's
//! `eventStream.subscribe(ref, classOf[E])` / `publish(e)`).
//!
//! Callback subscribers ([`EventStream::subscribe`]) see every event too,
//! as [`Event::User`](crate::Event::User).
//!
//! Each event type has its own channel: a copy-on-write list of subscriber
//! refs, so `publish` takes the lock only to clone one `Arc` and tells
//! outside it (a subscriber run on the calling thread may publish or
//! subscribe again without deadlock). Delivery is a `tell`: a subscriber
//! that panics is supervised like any actor, and a subscriber that
//! publishes from its `receive` queues a message instead of recursing.

use std::any::{Any, TypeId};
use std::collections::HashMap;

use crate::core::actor_ref::ActorRef;
use crate::sync::{Arc, Mutex};

use super::EventStream;

/// The channels, one per event type (`Channel<E>` behind `Any`).
#[derive(Default)]
pub(super) struct Channels(Mutex<HashMap<TypeId, Box<dyn Any + Send>>>);

/// The subscribers of one event type.
struct Channel<E: Send + 'static>(Arc<[ActorRef<E>]>);

impl Channels {
    /// The current subscribers of `E` (an `Arc` clone, no allocation).
    fn subscribers<E: Send + 'static>(&self) -> Option<Arc<[ActorRef<E>]>> {
        let channels = self.0.lock();
        let channel = channels.get(&TypeId::of::<E>())?;
        Some(
            channel
                .downcast_ref::<Channel<E>>()
                .expect("keyed by its type")
                .0
                .clone(),
        )
    }

    /// Replace `E`'s subscribers by `edit` of them; dead refs go in any case.
    fn edit<E: Send + 'static>(&self, edit: impl FnOnce(&mut Vec<ActorRef<E>>)) -> usize {
        let mut channels = self.0.lock();
        let slot = channels
            .entry(TypeId::of::<E>())
            .or_insert_with(|| Box::new(Channel::<E>(Arc::from(Vec::new()))));
        let channel = slot
            .downcast_mut::<Channel<E>>()
            .expect("keyed by its type");
        let mut refs: Vec<ActorRef<E>> = channel
            .0
            .iter()
            .filter(|r| !r.is_terminated())
            .cloned()
            .collect();
        edit(&mut refs);
        let count = refs.len();
        if count == 0 {
            channels.remove(&TypeId::of::<E>());
        } else {
            channel.0 = Arc::from(refs);
        }
        count
    }
}

impl EventStream {
    /// Deliver every event of type `E` published on this stream to
    /// `subscriber`, until it stops or [`unsubscribe`](Self::unsubscribe)
    /// is called. Subscribing twice delivers once. Returns whether the
    /// subscription is new.
    ///
    /// A subscriber that stops is dropped from the channel at the next
    /// publish or subscription of `E`; nothing is sent to it after
    /// the stream sees it stopped.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::mpsc;
    /// use weir_actor::{Actor, ActorSystem, Context, Props};
    ///
    /// #[derive(Clone, Debug, PartialEq)]
    /// struct PriceChanged(u32);
    ///
    /// struct Watcher(mpsc::Sender<u32>);
    /// impl Actor for Watcher {
    ///     type Msg = PriceChanged;
    ///     fn receive(&mut self, _: &mut Context<Self>, PriceChanged(p): PriceChanged) {
    ///         self.0.send(p).unwrap();
    ///     }
    /// }
    ///
    /// let system = ActorSystem::new("prices").unwrap();
    /// let (tx, rx) = mpsc::channel();
    /// let watcher = system.spawn(Props::new(move || Watcher(tx.clone())), "watcher").unwrap();
    /// assert!(system.event_stream().subscribe_actor(&watcher));
    /// assert_eq!(system.event_stream().publish(PriceChanged(42)), 1);
    /// assert_eq!(rx.recv().unwrap(), 42);
    /// assert_eq!(system.event_stream().publish(7u64), 0); // nobody listens to u64
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn subscribe_actor<E: Clone + Send + 'static>(&self, subscriber: &ActorRef<E>) -> bool {
        let mut added = false;
        self.channels.edit::<E>(|refs| {
            if !refs.iter().any(|r| r.path() == subscriber.path()) {
                refs.push(subscriber.clone());
                added = true;
            }
        });
        added
    }

    /// Stop delivering `E` events to `subscriber`. Returns whether it was
    /// subscribed (and still running).
    ///
    /// ```
    /// use weir_actor::{Actor, ActorSystem, Context, Props};
    ///
    /// struct Quiet;
    /// impl Actor for Quiet {
    ///     type Msg = String;
    ///     fn receive(&mut self, _: &mut Context<Self>, _: String) {}
    /// }
    ///
    /// let system = ActorSystem::new("unsubscribe").unwrap();
    /// let quiet = system.spawn(Props::new(|| Quiet), "quiet").unwrap();
    /// let events = system.event_stream();
    /// events.subscribe_actor(&quiet);
    /// assert!(events.unsubscribe(&quiet));
    /// assert_eq!(events.publish(String::from("hello?")), 0);
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn unsubscribe<E: Clone + Send + 'static>(&self, subscriber: &ActorRef<E>) -> bool {
        let mut removed = false;
        self.channels.edit::<E>(|refs| {
            let before = refs.len();
            refs.retain(|r| r.path() != subscriber.path());
            removed = refs.len() != before;
        });
        removed
    }

    /// Tell `event` to every running subscriber of its type, and show a
    /// copy to every callback subscriber ([`subscribe`](Self::subscribe), as
    /// [`Event::User`](crate::Event::User)); returns how many actors it was
    /// told to. With no subscriber the event is dropped (it is not a dead
    /// letter: nobody was addressed). Never blocks on a subscriber and never
    /// panics; a subscriber's bounded mailbox applies its overflow strategy
    /// as for any `tell`.
    pub fn publish<E: Clone + Send + 'static>(&self, event: E) -> usize {
        if self.dead_letters().has_subscribers() {
            self.dead_letters().publish_user(event.clone());
        }
        let Some(subscribers) = self.channels.subscribers::<E>() else {
            return 0;
        };
        let mut told = 0;
        let mut dead = false;
        let mut event = Some(event);
        for (i, subscriber) in subscribers.iter().enumerate() {
            if subscriber.is_terminated() {
                dead = true;
                continue;
            }
            let last = i + 1 == subscribers.len();
            let message = if last { event.take() } else { event.clone() };
            subscriber.tell(message.expect("taken only by the last subscriber"));
            told += 1;
        }
        if dead {
            self.channels.edit::<E>(|_| {});
        }
        told
    }
}
