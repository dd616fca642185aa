//! [`ReliableProducer`]: the producer's controller. It numbers the messages
//! of the producing actor, keeps them until the consumer confirms them,
//! sends no further than the consumer's demand, and resends what is
//! unconfirmed when no confirmation came for the resend time-out or when a
//! new consumer incarnation asks (see the `nats` module docs, "Reliable
//! delivery").

use std::collections::VecDeque;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;
use serde::de::DeserializeOwned;
use weir_actor::{Actor, ActorRef, Context, Props};

use super::store::{Loaded, Store, StoreEvent};
use super::wire::{ConsumerMsg, Demand, ProducerMsg, Sequenced};
use super::{ReliableError, ReliableSettings};
use crate::nats::{RemoteActorSystem, RemoteRef};

/// Told to the producing actor when it may send one more message: it
/// sends it with [`send`](Self::send) (or to
/// [`send_next_to`](Self::send_next_to)). One message per `RequestNext`:
/// more are kept (without bound) and sent as the consumer's demand allows.
///
/// # Examples
///
/// ```
/// use std::collections::VecDeque;
/// use weir_actor::{Actor, Context};
/// use weir_interop::nats::RequestNext;
///
/// /// Sends the jobs it was given, one per request.
/// struct Jobs(VecDeque<String>);
///
/// impl Actor for Jobs {
///     type Msg = RequestNext<String>;
///     fn receive(&mut self, _: &mut Context<Self>, next: RequestNext<String>) {
///         if let Some(job) = self.0.pop_front() {
///             next.send(job);
///         }
///     }
/// }
/// ```
pub struct RequestNext<M: Send + 'static> {
    send_next_to: ActorRef<M>,
    next_seq: u64,
    confirmed: u64,
}

impl<M: Send + 'static> fmt::Debug for RequestNext<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestNext")
            .field("next_seq", &self.next_seq)
            .field("confirmed", &self.confirmed)
            .finish_non_exhaustive()
    }
}

impl<M: Send + 'static> RequestNext<M> {
    /// Send the next message (the one numbered [`next_seq`](Self::next_seq)).
    pub fn send(&self, msg: M) {
        self.send_next_to.tell(msg);
    }

    /// Where the next message goes (the controller).
    pub fn send_next_to(&self) -> &ActorRef<M> {
        &self.send_next_to
    }

    /// The sequence number the next message will get. A durable producer
    /// continues its numbering across restarts, so a producing actor can
    /// tell from it where it is.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// Every message up to this sequence number is confirmed.
    pub fn confirmed(&self) -> u64 {
        self.confirmed
    }
}

/// What the controller shares with its handle.
#[derive(Default)]
struct Progress {
    confirmed: AtomicU64,
    produced: AtomicU64,
    resent: AtomicU64,
    failure: Mutex<Option<String>>,
}

/// The producing side of a reliable pair: a controller actor, exposed to
/// remote tells at a path, that delivers the messages of a producing actor
/// to a [`ReliableConsumer`](super::ReliableConsumer) at least once (see
/// the [`nats` module docs](crate::nats#reliable-delivery)).
///
/// # Examples
///
/// ```no_run
/// use weir_actor::{Actor, ActorSystem, Context, Props};
/// use weir_interop::nats::{Nats, ReliableProducer, ReliableSettings, RemoteActorSystem, RemoteSettings, RequestNext};
///
/// /// Sends 1, 2, 3, ... as fast as the consumer asks.
/// struct Counter;
/// impl Actor for Counter {
///     type Msg = RequestNext<u64>;
///     fn receive(&mut self, _: &mut Context<Self>, next: RequestNext<u64>) {
///         next.send(next.next_seq());
///     }
/// }
///
/// let runtime = tokio::runtime::Runtime::new().unwrap();
/// let nats = Nats::connect(runtime.handle(), "nats://127.0.0.1:4222").unwrap();
/// let system = ActorSystem::new("producer").unwrap();
/// let remote = RemoteActorSystem::start(&system, &nats, RemoteSettings::default()).unwrap();
/// let counter = system.spawn(Props::new(|| Counter), "counter").unwrap();
/// let producer = ReliableProducer::start(
///     &remote,
///     "numbers",
///     "weir+nats://consumer/user/numbers",
///     &counter,
///     ReliableSettings::default(),
/// )
/// .unwrap();
/// assert_eq!(producer.uri(), "weir+nats://producer/user/numbers");
/// ```
pub struct ReliableProducer<M: Send + 'static> {
    controller: ActorRef<ProducerMsg<M>>,
    uri: String,
    progress: Arc<Progress>,
}

impl<M: Send + 'static> fmt::Debug for ReliableProducer<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReliableProducer")
            .field("uri", &self.uri)
            .field("confirmed", &self.confirmed())
            .finish_non_exhaustive()
    }
}

impl<M> ReliableProducer<M>
where
    M: Serialize + DeserializeOwned + Send + 'static,
{
    /// Start a controller for `producer` that sends to the reliable
    /// consumer at `consumer_uri`, and expose it at `/user/<path>` of
    /// `remote` (the consumer is started with the URI this returns in
    /// [`uri`](Self::uri)). Unconfirmed messages live in this process: a
    /// restart of it starts a new numbering, and what was unconfirmed is
    /// lost (see [`start_durable`](Self::start_durable)).
    ///
    /// # Errors
    ///
    /// [`ReliableError::Remote`] for an invalid path or URI or a path
    /// already taken, [`ReliableError::System`] when the controller cannot
    /// be spawned, [`ReliableError::InvalidSettings`] for a zero resend
    /// time-out.
    pub fn start(
        remote: &RemoteActorSystem,
        path: &str,
        consumer_uri: &str,
        producer: &ActorRef<RequestNext<M>>,
        settings: ReliableSettings,
    ) -> Result<Self, ReliableError> {
        Self::spawn(
            remote,
            path,
            consumer_uri,
            producer,
            settings,
            Loaded::fresh(),
            None,
        )
    }

    /// [`start`](Self::start) with the unconfirmed messages kept in the
    /// JetStream stream `stream` (created if missing; its subject is
    /// `weir-reliable.<stream>`, and nothing else may publish there): a
    /// message is sent once JetStream has stored it and removed once
    /// confirmed, so a producer that restarts on the same stream resends
    /// what was unconfirmed and continues the numbering. Blocks while it
    /// reads the stream (call it outside the runtime).
    ///
    /// # Errors
    ///
    /// As [`start`](Self::start), and [`ReliableError::Store`] when the
    /// stream cannot be created or read.
    pub fn start_durable(
        remote: &RemoteActorSystem,
        path: &str,
        consumer_uri: &str,
        producer: &ActorRef<RequestNext<M>>,
        settings: ReliableSettings,
        stream: &str,
    ) -> Result<Self, ReliableError> {
        settings.check()?;
        let (store, loaded) = Store::open(remote.nats(), stream)?;
        Self::spawn(
            remote,
            path,
            consumer_uri,
            producer,
            settings,
            loaded,
            Some(store),
        )
    }

    fn spawn(
        remote: &RemoteActorSystem,
        path: &str,
        consumer_uri: &str,
        producer: &ActorRef<RequestNext<M>>,
        settings: ReliableSettings,
        loaded: Loaded,
        store: Option<Store>,
    ) -> Result<Self, ReliableError> {
        settings.check()?;
        let consumer = remote.resolve::<ConsumerMsg<M>>(consumer_uri)?;
        let progress = Arc::new(Progress::default());
        progress
            .confirmed
            .store(loaded.confirmed, Ordering::Relaxed);
        let produced = loaded.confirmed + loaded.unconfirmed.len() as u64;
        progress.produced.store(produced, Ordering::Relaxed);
        let shared = progress.clone();
        let producer = producer.clone();
        let slot = Mutex::new(Some((loaded, store)));
        let props = Props::new(move || {
            // A restart (after a panic here) starts over from what
            // the durable queue held; an in-memory one from scratch.
            let (loaded, store) = slot
                .lock()
                .expect("not poisoned")
                .take()
                .unwrap_or((Loaded::fresh(), None));
            Controller::new(
                loaded,
                store,
                producer.clone(),
                consumer.clone(),
                settings.clone(),
                shared.clone(),
            )
        });
        let (controller, uri) = super::spawn_exposed(remote, "producer", path, props)?;
        Ok(Self {
            controller,
            uri,
            progress,
        })
    }
}

impl<M: Send + 'static> ReliableProducer<M> {
    /// The controller's URI (the consumer is started with it).
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Every message up to this sequence number is confirmed.
    pub fn confirmed(&self) -> u64 {
        self.progress.confirmed.load(Ordering::Relaxed)
    }

    /// The sequence number of the last message the producing actor sent.
    pub fn produced(&self) -> u64 {
        self.progress.produced.load(Ordering::Relaxed)
    }

    /// Messages sent again (after a time-out, a gap the consumer reported,
    /// or for a new consumer incarnation).
    pub fn resent(&self) -> u64 {
        self.progress.resent.load(Ordering::Relaxed)
    }

    /// Why the durable queue failed, if it did (the controller stopped).
    pub fn failure(&self) -> Option<String> {
        self.progress.failure.lock().expect("not poisoned").clone()
    }

    /// Stop the controller (and withdraw it from remote tells).
    pub fn stop(&self) {
        self.controller.stop();
    }

    /// Whether the controller has stopped.
    pub fn is_terminated(&self) -> bool {
        self.controller.is_terminated()
    }
}

/// A message kept until it is confirmed.
pub(super) struct Unconfirmed {
    pub(super) body: Vec<u8>,
    /// In the durable queue (always, without one).
    pub(super) stored: bool,
}

struct Controller<M: Send + 'static> {
    incarnation: u64,
    producer: ActorRef<RequestNext<M>>,
    consumer: RemoteRef<ConsumerMsg<M>>,
    settings: ReliableSettings,
    send_next_to: Option<ActorRef<M>>,
    store: Option<Store>,
    progress: Arc<Progress>,
    /// The consumer incarnation heard last (0: none yet).
    consumer_id: u64,
    window: u64,
    /// Every message up to here is confirmed; `unconfirmed` starts after it.
    confirmed: u64,
    unconfirmed: VecDeque<Unconfirmed>,
    /// Sent (in this round) up to here.
    sent: u64,
    /// A `RequestNext` is out and not answered.
    requested: bool,
    confirmed_at_tick: u64,
    purged: u64,
}

impl<M: Serialize + Send + 'static> Controller<M> {
    fn new(
        loaded: Loaded,
        store: Option<Store>,
        producer: ActorRef<RequestNext<M>>,
        consumer: RemoteRef<ConsumerMsg<M>>,
        settings: ReliableSettings,
        progress: Arc<Progress>,
    ) -> Self {
        Self {
            incarnation: loaded.incarnation,
            producer,
            consumer,
            settings,
            send_next_to: None,
            store,
            progress,
            consumer_id: 0,
            window: 0,
            confirmed: loaded.confirmed,
            unconfirmed: loaded.unconfirmed,
            sent: loaded.confirmed,
            requested: false,
            confirmed_at_tick: loaded.confirmed,
            purged: loaded.confirmed,
        }
    }

    fn next_seq(&self) -> u64 {
        self.confirmed + self.unconfirmed.len() as u64 + 1
    }

    /// What the consumer lets us send up to.
    fn limit(&self) -> u64 {
        if self.consumer_id == 0 {
            0
        } else {
            self.confirmed + self.window
        }
    }

    /// Send what the demand allows and is stored, then ask the producing
    /// actor for more if the demand allows that.
    fn pump(&mut self) {
        let limit = self.limit();
        while self.sent < limit {
            let seq = self.sent + 1;
            let index = (seq - self.confirmed - 1) as usize;
            let Some(entry) = self.unconfirmed.get(index) else {
                break;
            };
            if !entry.stored {
                break;
            }
            let sequenced = Sequenced {
                producer: self.incarnation,
                seq,
                confirmed: self.confirmed,
                body: entry.body.clone(),
                _message: PhantomData,
            };
            // An encoding failure cannot happen for bytes and numbers.
            let _ = self.consumer.tell(ConsumerMsg::Sequenced(sequenced));
            self.sent = seq;
        }
        if !self.requested
            && self.next_seq() <= limit
            && let Some(send_next_to) = &self.send_next_to
        {
            self.requested = true;
            self.producer.tell(RequestNext {
                send_next_to: send_next_to.clone(),
                next_seq: self.next_seq(),
                confirmed: self.confirmed,
            });
        }
    }

    fn confirm(&mut self, upto: u64) {
        let upto = upto.min(self.next_seq() - 1);
        while self.confirmed < upto {
            self.unconfirmed.pop_front();
            self.confirmed += 1;
        }
        self.sent = self.sent.max(self.confirmed);
        self.progress
            .confirmed
            .store(self.confirmed, Ordering::Relaxed);
        if let Some(store) = &self.store
            && self.confirmed - self.purged >= self.settings.report_every()
        {
            store.purge_below(self.confirmed + 1);
            self.purged = self.confirmed;
        }
    }

    /// Send again from `from` (at the earliest the first unconfirmed).
    fn rewind(&mut self, from: u64) {
        let to = from.saturating_sub(1).max(self.confirmed);
        if to < self.sent {
            self.progress
                .resent
                .fetch_add(self.sent - to, Ordering::Relaxed);
            self.sent = to;
        }
    }

    fn on_demand(&mut self, demand: Demand) {
        self.window = u64::from(demand.window.max(1));
        if demand.producer == self.incarnation {
            self.confirm(demand.confirmed);
        }
        if demand.consumer != self.consumer_id {
            // A new consumer (or a restarted one): all that is unconfirmed
            // goes again.
            self.consumer_id = demand.consumer;
            self.rewind(0);
        }
        if let Some(from) = demand.resend_from {
            self.rewind(from);
        }
        self.pump();
    }
}

impl<M: Serialize + Send + 'static> Actor for Controller<M> {
    type Msg = ProducerMsg<M>;

    fn pre_start(&mut self, ctx: &mut Context<Self>) {
        self.send_next_to = Some(ctx.message_adapter(ProducerMsg::Next));
        if let Some(store) = &self.store {
            store.attach(ctx.message_adapter(|event: StoreEvent| match event {
                Ok(seq) => ProducerMsg::Stored(seq),
                Err(why) => ProducerMsg::StoreFailed(why),
            }));
        }
        ctx.timers()
            .start_single_timer("tick", ProducerMsg::Tick, self.settings.resend_after);
    }

    fn receive(&mut self, ctx: &mut Context<Self>, msg: ProducerMsg<M>) {
        match msg {
            ProducerMsg::Demand(demand) => self.on_demand(demand),
            ProducerMsg::Next(msg) => {
                self.requested = false;
                let seq = self.next_seq();
                // A message that does not encode cannot be sent: it is
                // dropped here, as a tell of it would fail.
                let Ok(body) = postcard::to_allocvec(&msg) else {
                    return self.pump();
                };
                let stored = match &self.store {
                    Some(store) => {
                        store.store(seq, body.clone());
                        false
                    }
                    None => true,
                };
                self.unconfirmed.push_back(Unconfirmed { body, stored });
                self.progress.produced.store(seq, Ordering::Relaxed);
                self.pump();
            }
            ProducerMsg::Stored(seq) => {
                if let Some(index) = seq.checked_sub(self.confirmed + 1)
                    && let Some(entry) = self.unconfirmed.get_mut(index as usize)
                {
                    entry.stored = true;
                }
                self.pump();
            }
            ProducerMsg::StoreFailed(why) => {
                *self.progress.failure.lock().expect("not poisoned") = Some(why);
                ctx.stop_self();
            }
            ProducerMsg::Tick => {
                // No confirmation for a whole interval while messages are
                // out: send them again, unless the transport still holds
                // earlier ones (the consumer is away).
                if self.sent > self.confirmed
                    && self.confirmed == self.confirmed_at_tick
                    && self.consumer.queued() == 0
                {
                    self.rewind(0);
                    self.pump();
                }
                self.confirmed_at_tick = self.confirmed;
                ctx.timers().start_single_timer(
                    "tick",
                    ProducerMsg::Tick,
                    self.settings.resend_after,
                );
            }
        }
    }
}
