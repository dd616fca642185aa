//! Per-actor keyed timers: `ctx.timers()`.
//!
//! The actor's table maps each key to the id of its current timer and each
//! id to the message to deliver. The scheduler only ever sends the id (a
//! `Control::Timer` in the user queue, in order with other messages); the
//! message is taken from the table when the id arrives. A timer that was
//! replaced or cancelled has left the table, so its id finds nothing and
//! nothing is delivered, even if the id was already queued. Restart and stop
//! cancel every timer.

use std::any::Any;
use std::collections::HashMap;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::time::Duration;

use crate::core::actor::Actor;
use crate::core::actor_ref::{ActorHandle, Control};
use crate::core::scheduler::{Cancellable, Scheduler};
use crate::error::ScheduleError;
use crate::sync::Arc;

/// What can key a timer: any `Hash + Eq + Clone + Debug + Send` type
/// (strings, enums, ids). Keys of different types never match.
pub trait TimerKey: Hash + Eq + Clone + fmt::Debug + Send + 'static {}

impl<K: Hash + Eq + Clone + fmt::Debug + Send + 'static> TimerKey for K {}

/// A timer key of any [`TimerKey`] type, compared by type and value.
trait DynKey: Send + fmt::Debug {
    fn as_any(&self) -> &dyn Any;
    fn dyn_eq(&self, other: &dyn DynKey) -> bool;
    fn dyn_hash(&self, state: &mut dyn Hasher);
    fn clone_box(&self) -> Box<dyn DynKey>;
}

impl<K: TimerKey> DynKey for K {
    fn clone_box(&self) -> Box<dyn DynKey> {
        Box::new(self.clone())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn dyn_eq(&self, other: &dyn DynKey) -> bool {
        other.as_any().downcast_ref::<K>() == Some(self)
    }
    fn dyn_hash(&self, mut state: &mut dyn Hasher) {
        std::any::TypeId::of::<K>().hash(&mut state);
        self.hash(&mut state);
    }
}

impl PartialEq for dyn DynKey {
    fn eq(&self, other: &Self) -> bool {
        self.dyn_eq(other)
    }
}
impl Eq for dyn DynKey {}
impl Hash for dyn DynKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.dyn_hash(state);
    }
}

/// An owned key; borrows as `dyn DynKey` so lookups need no box.
#[derive(Debug)]
struct Key(Box<dyn DynKey>);

impl Clone for Key {
    fn clone(&self) -> Self {
        Key(self.0.clone_box())
    }
}

impl PartialEq for Key {
    fn eq(&self, other: &Self) -> bool {
        *self.0 == *other.0
    }
}
impl Eq for Key {}
impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (*self.0).hash(state);
    }
}
impl std::borrow::Borrow<dyn DynKey> for Key {
    fn borrow(&self) -> &(dyn DynKey + 'static) {
        &*self.0
    }
}

/// How a periodic timer copies its message for each firing.
type Copy<M> = fn(&M) -> M;

struct Entry<M> {
    key: Key,
    msg: M,
    /// `Some` for periodic timers.
    repeat: Option<Copy<M>>,
    cancellable: Cancellable,
}

/// The timers of one actor (lives in its context, so it survives nothing
/// but is reset by restart and dropped at stop).
pub(crate) struct TimerTable<M> {
    by_key: HashMap<Key, u64>,
    by_id: HashMap<u64, Entry<M>>,
    next_id: u64,
}

impl<M> Default for TimerTable<M> {
    fn default() -> Self {
        Self {
            by_key: HashMap::new(),
            by_id: HashMap::new(),
            next_id: 0,
        }
    }
}

impl<M> TimerTable<M> {
    /// The message of timer `id`, if it is still current; a single timer
    /// leaves the table.
    pub(crate) fn take_due(&mut self, id: u64) -> Option<M> {
        let entry = self.by_id.get(&id)?;
        if let Some(copy) = entry.repeat {
            return Some(copy(&entry.msg));
        }
        let entry = self.by_id.remove(&id)?;
        self.by_key.remove(&entry.key);
        Some(entry.msg)
    }

    fn remove_key(&mut self, key: &(dyn DynKey + 'static)) -> bool {
        match self.by_key.remove(key) {
            Some(id) => {
                if let Some(old) = self.by_id.remove(&id) {
                    old.cancellable.cancel();
                }
                true
            }
            None => false,
        }
    }

    pub(crate) fn cancel_all(&mut self) {
        for (_, entry) in self.by_id.drain() {
            entry.cancellable.cancel();
        }
        self.by_key.clear();
    }
}

/// The keyed timers of an actor, from [`Context::timers`](crate::Context::timers).
///
/// Starting a timer with a key that is in use replaces the old timer; a
/// message from a replaced or cancelled timer is never delivered, even if it
/// was already on its way. Restart and stop cancel all timers, before
/// `pre_restart` and `post_stop`. Keys can be of any `Hash + Eq + Debug +
/// Send` type; keys of different types never match.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use weir_actor::{Actor, ActorSystem, Context, Props};
///
/// #[derive(Clone)]
/// enum Msg {
///     Tick,
///     Stop,
/// }
///
/// struct Poller {
///     ticks: u32,
///     done: std::sync::mpsc::Sender<u32>,
/// }
///
/// impl Actor for Poller {
///     type Msg = Msg;
///     fn pre_start(&mut self, ctx: &mut Context<Self>) {
///         let ms = Duration::from_millis;
///         ctx.timers().start_timer_with_fixed_delay("poll", Msg::Tick, ms(2)).unwrap();
///         ctx.timers().start_single_timer("stop", Msg::Stop, ms(50));
///     }
///     fn receive(&mut self, ctx: &mut Context<Self>, msg: Msg) {
///         match msg {
///             Msg::Tick => self.ticks += 1,
///             Msg::Stop => {
///                 ctx.timers().cancel(&"poll");
///                 assert!(!ctx.timers().is_timer_active(&"poll"));
///                 self.done.send(self.ticks).unwrap();
///             }
///         }
///     }
/// }
///
/// let system = ActorSystem::new("timers").unwrap();
/// let (tx, rx) = std::sync::mpsc::channel();
/// system.spawn(Props::new(move || Poller { ticks: 0, done: tx.clone() }), "poller").unwrap();
/// assert!(rx.recv_timeout(Duration::from_secs(5)).unwrap() > 0);
/// system.terminate().wait().unwrap();
/// ```
pub struct Timers<'a, A: Actor> {
    pub(crate) table: &'a mut TimerTable<A::Msg>,
    pub(crate) me: &'a ActorHandle,
    pub(crate) scheduler: &'a Scheduler,
}

impl<A: Actor> Timers<'_, A> {
    /// Deliver `msg` once, after `delay`.
    pub fn start_single_timer<K: TimerKey>(&mut self, key: K, msg: A::Msg, delay: Duration) {
        let (id, cancellable) = self.insert(key, msg, None);
        let me = Arc::downgrade(&self.me.inner);
        let fire = Box::new(move || {
            if let Some(me) = me.upgrade() {
                ActorHandle { inner: me }.send_control(Control::Timer(id));
            }
        });
        // After termination the actor is stopped too: nothing to deliver to.
        let _ = self.scheduler.run_once(delay, &cancellable, fire);
    }

    /// Deliver a clone of `msg` after `delay`, then again `delay` after each
    /// delivery was sent.
    ///
    /// # Errors
    ///
    /// [`ScheduleError::ZeroInterval`] when `delay` is zero.
    pub fn start_timer_with_fixed_delay<K: TimerKey>(
        &mut self,
        key: K,
        msg: A::Msg,
        delay: Duration,
    ) -> Result<(), ScheduleError>
    where
        A::Msg: Clone,
    {
        self.start_periodic(key, msg, delay, false)
    }

    /// Deliver a clone of `msg` every `interval`, measured from the start:
    /// after a delay, deliveries catch up.
    ///
    /// # Errors
    ///
    /// [`ScheduleError::ZeroInterval`] when `interval` is zero.
    pub fn start_timer_at_fixed_rate<K: TimerKey>(
        &mut self,
        key: K,
        msg: A::Msg,
        interval: Duration,
    ) -> Result<(), ScheduleError>
    where
        A::Msg: Clone,
    {
        self.start_periodic(key, msg, interval, true)
    }

    fn start_periodic<K: TimerKey>(
        &mut self,
        key: K,
        msg: A::Msg,
        interval: Duration,
        fixed_rate: bool,
    ) -> Result<(), ScheduleError>
    where
        A::Msg: Clone,
    {
        if interval.is_zero() {
            return Err(ScheduleError::ZeroInterval);
        }
        let (id, cancellable) = self.insert(key, msg, Some(<A::Msg as Clone>::clone));
        let me = Arc::downgrade(&self.me.inner);
        let fire = Box::new(move || match me.upgrade() {
            Some(me) if !me.is_terminated() => {
                ActorHandle { inner: me }.send_control(Control::Timer(id));
                true
            }
            _ => false,
        });
        self.scheduler
            .run_repeatedly(interval, interval, fixed_rate, &cancellable, fire)?;
        Ok(())
    }

    fn insert<K: TimerKey>(
        &mut self,
        key: K,
        msg: A::Msg,
        repeat: Option<Copy<A::Msg>>,
    ) -> (u64, Cancellable) {
        self.table.remove_key(&key);
        let id = self.table.next_id;
        self.table.next_id += 1;
        let cancellable = Cancellable::new();
        let key = Key(Box::new(key));
        self.table.by_id.insert(
            id,
            Entry {
                key: key.clone(),
                msg,
                repeat,
                cancellable: cancellable.clone(),
            },
        );
        self.table.by_key.insert(key, id);
        (id, cancellable)
    }

    /// Cancel the timer with `key`; `true` if there was one.
    pub fn cancel<K: TimerKey>(&mut self, key: &K) -> bool {
        self.table.remove_key(key)
    }

    /// Cancel every timer of this actor.
    pub fn cancel_all(&mut self) {
        self.table.cancel_all();
    }

    /// Whether a timer with `key` is active (a single timer stops being
    /// active once its message has been delivered).
    pub fn is_timer_active<K: TimerKey>(&self, key: &K) -> bool {
        self.table
            .by_key
            .contains_key(key as &(dyn DynKey + 'static))
    }
}

impl<A: Actor> fmt::Debug for Timers<'_, A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Timers")
            .field("active", &self.table.by_key.len())
            .finish()
    }
}
