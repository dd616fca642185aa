//! [`ReliableConsumer`]: the consumer's controller. It hands the producer's
//! messages to the consuming actor in sequence order, each once, drops
//! duplicates by sequence number, asks again for what it misses, and tells
//! the producer its confirmations and its demand (see the `nats` module
//! docs, "Reliable delivery").

use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;
use serde::de::DeserializeOwned;
use weir_actor::{Actor, ActorRef, ActorSystem, Context, DeadLetterReason, Props};

use super::wire::{Confirmed, ConsumerMsg, Demand, ProducerMsg, Sequenced, incarnation};
use super::{ReliableError, ReliableSettings};
use crate::nats::{RemoteActorSystem, RemoteRef};

/// A message handed to the consuming actor, to be confirmed once handled.
///
/// Confirm every delivery, in order: a delivery left unconfirmed holds
/// back the confirmation of the ones after it, and after the resend
/// time-out it is delivered again, with the ones after it.
///
/// # Examples
///
/// ```
/// use weir_actor::{Actor, Context};
/// use weir_interop::nats::Delivery;
///
/// /// Keeps the orders; confirms each once it is kept.
/// struct Ledger(Vec<String>);
///
/// impl Actor for Ledger {
///     type Msg = Delivery<String>;
///     fn receive(&mut self, _: &mut Context<Self>, delivery: Delivery<String>) {
///         let Delivery { message, confirm_to, .. } = delivery;
///         self.0.push(message);
///         confirm_to.confirm();
///     }
/// }
/// ```
#[derive(Debug)]
pub struct Delivery<M> {
    /// The message.
    pub message: M,
    /// Its sequence number in the producer's numbering.
    pub seq: u64,
    /// Where to confirm it.
    pub confirm_to: ConfirmTo,
}

impl<M> Delivery<M> {
    /// Confirm this delivery: the producer may forget the message.
    pub fn confirm(&self) {
        self.confirm_to.confirm();
    }
}

/// Confirms one [`Delivery`] (kept apart from the message, so that the
/// message can be moved out first).
#[derive(Clone)]
pub struct ConfirmTo {
    controller: ActorRef<Confirmed>,
    confirmed: Confirmed,
}

impl fmt::Debug for ConfirmTo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConfirmTo")
            .field("seq", &self.confirmed.seq)
            .finish_non_exhaustive()
    }
}

impl ConfirmTo {
    /// Confirm the delivery.
    pub fn confirm(&self) {
        self.controller.tell(self.confirmed);
    }
}

#[derive(Default)]
struct Progress {
    delivered: AtomicU64,
    confirmed: AtomicU64,
    duplicates: AtomicU64,
}

/// The consuming side of a reliable pair: a controller actor, exposed to
/// remote tells at a path, that hands the messages of a
/// [`ReliableProducer`](super::ReliableProducer) to a consuming actor as
/// [`Delivery`]s (see the [`nats` module docs](crate::nats#reliable-delivery)).
///
/// # Examples
///
/// ```no_run
/// use weir_actor::{Actor, ActorSystem, Context, Props};
/// use weir_interop::nats::{Delivery, Nats, ReliableConsumer, ReliableSettings, RemoteActorSystem, RemoteSettings};
///
/// struct Printer;
/// impl Actor for Printer {
///     type Msg = Delivery<u64>;
///     fn receive(&mut self, _: &mut Context<Self>, delivery: Delivery<u64>) {
///         println!("{}", delivery.message);
///         delivery.confirm();
///     }
/// }
///
/// let runtime = tokio::runtime::Runtime::new().unwrap();
/// let nats = Nats::connect(runtime.handle(), "nats://127.0.0.1:4222").unwrap();
/// let system = ActorSystem::new("consumer").unwrap();
/// let remote = RemoteActorSystem::start(&system, &nats, RemoteSettings::default()).unwrap();
/// let printer = system.spawn(Props::new(|| Printer), "printer").unwrap();
/// let consumer = ReliableConsumer::start(
///     &remote,
///     "numbers",
///     "weir+nats://producer/user/numbers",
///     &printer,
///     ReliableSettings::default(),
/// )
/// .unwrap();
/// assert_eq!(consumer.uri(), "weir+nats://consumer/user/numbers");
/// ```
pub struct ReliableConsumer<M: Send + 'static> {
    controller: ActorRef<ConsumerMsg<M>>,
    uri: String,
    progress: Arc<Progress>,
}

impl<M: Send + 'static> fmt::Debug for ReliableConsumer<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReliableConsumer")
            .field("uri", &self.uri)
            .field("delivered", &self.delivered())
            .finish_non_exhaustive()
    }
}

impl<M> ReliableConsumer<M>
where
    M: Serialize + DeserializeOwned + Send + 'static,
{
    /// Start a controller that takes the messages of the reliable producer
    /// at `producer_uri` and hands them to `deliver_to`, and expose it at
    /// `/user/<path>` of `remote` (the producer is started with the URI
    /// this returns in [`uri`](Self::uri)). It asks for messages at once
    /// and then every resend interval, so the producer finds it whichever
    /// starts first, and finds it again when it restarts.
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
        producer_uri: &str,
        deliver_to: &ActorRef<Delivery<M>>,
        settings: ReliableSettings,
    ) -> Result<Self, ReliableError> {
        settings.check()?;
        let producer = remote.resolve::<ProducerMsg<M>>(producer_uri)?;
        let progress = Arc::new(Progress::default());
        let shared = progress.clone();
        let deliver_to = deliver_to.clone();
        let system = remote.system().clone();
        let props = Props::new(move || Controller {
            incarnation: incarnation(),
            producer: producer.clone(),
            deliver_to: deliver_to.clone(),
            confirm_to: None,
            settings: settings.clone(),
            progress: shared.clone(),
            system: system.clone(),
            producer_id: 0,
            delivered: 0,
            confirmed: 0,
            reported: 0,
            confirmed_at_tick: 0,
            resend_asked: None,
            skipped: VecDeque::new(),
        });
        let (controller, uri) = super::spawn_exposed(remote, "consumer", path, props)?;
        Ok(Self {
            controller,
            uri,
            progress,
        })
    }
}

impl<M: Send + 'static> ReliableConsumer<M> {
    /// The controller's URI (the producer is started with it).
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Messages handed to the consuming actor.
    pub fn delivered(&self) -> u64 {
        self.progress.delivered.load(Ordering::Relaxed)
    }

    /// The sequence number up to which the consuming actor confirmed.
    pub fn confirmed(&self) -> u64 {
        self.progress.confirmed.load(Ordering::Relaxed)
    }

    /// Messages that came again and were dropped (their sequence number
    /// was delivered already).
    pub fn duplicates(&self) -> u64 {
        self.progress.duplicates.load(Ordering::Relaxed)
    }

    /// Stop the controller (and withdraw it from remote tells).
    pub fn stop(&self) {
        self.controller.stop();
    }
}

struct Controller<M: Send + 'static> {
    incarnation: u64,
    producer: RemoteRef<ProducerMsg<M>>,
    deliver_to: ActorRef<Delivery<M>>,
    confirm_to: Option<ActorRef<Confirmed>>,
    settings: ReliableSettings,
    progress: Arc<Progress>,
    system: ActorSystem,
    /// The producer incarnation the numbers below count in (0: none yet).
    producer_id: u64,
    /// Handed to the consuming actor up to here; the next one to hand over
    /// is `delivered + 1`.
    delivered: u64,
    /// Confirmed up to here, in order.
    confirmed: u64,
    /// `confirmed` when the producer was last told.
    reported: u64,
    confirmed_at_tick: u64,
    /// The gap already reported (asked once per gap and interval).
    resend_asked: Option<u64>,
    /// Messages that did not decode: confirmed as soon as their turn comes.
    skipped: VecDeque<u64>,
}

impl<M: DeserializeOwned + Serialize + Send + 'static> Controller<M> {
    fn demand(&mut self, resend_from: Option<u64>) {
        let _ = self.producer.tell(ProducerMsg::Demand(Demand {
            consumer: self.incarnation,
            producer: self.producer_id,
            confirmed: self.confirmed,
            window: self.settings.window,
            resend_from,
        }));
        self.reported = self.confirmed;
    }

    fn advance(&mut self, seq: u64) {
        if seq != self.confirmed + 1 {
            // Out of order (or already confirmed): the time-out repairs a
            // delivery that was never confirmed.
            return;
        }
        self.confirmed = seq;
        while self.skipped.front() == Some(&(self.confirmed + 1)) {
            self.skipped.pop_front();
            self.confirmed += 1;
        }
        self.progress
            .confirmed
            .store(self.confirmed, Ordering::Relaxed);
        if self.confirmed - self.reported >= self.settings.report_every() {
            self.demand(None);
        }
    }

    fn on_sequenced(&mut self, ctx: &mut Context<Self>, sequenced: Sequenced<M>) {
        if sequenced.producer != self.producer_id {
            // A new producer, or a producer that restarted without a
            // durable queue: its numbering starts over.
            self.producer_id = sequenced.producer;
            self.delivered = 0;
            self.confirmed = 0;
            self.reported = 0;
            self.confirmed_at_tick = 0;
            self.resend_asked = None;
            self.skipped.clear();
        }
        // What the producer had confirmed when it sent this is done: a
        // fresh consumer starts after it.
        if sequenced.confirmed > self.confirmed {
            self.confirmed = sequenced.confirmed;
            self.delivered = self.delivered.max(self.confirmed);
            self.skipped.retain(|&seq| seq > sequenced.confirmed);
        }
        let seq = sequenced.seq;
        if seq <= self.delivered {
            self.progress.duplicates.fetch_add(1, Ordering::Relaxed);
            return;
        }
        if seq > self.delivered + 1 {
            let from = self.delivered + 1;
            if self.resend_asked != Some(from) {
                self.resend_asked = Some(from);
                self.demand(Some(from));
            }
            return;
        }
        self.delivered = seq;
        self.progress.delivered.fetch_add(1, Ordering::Relaxed);
        match postcard::from_bytes::<M>(&sequenced.body) {
            Ok(message) => {
                let controller = match &self.confirm_to {
                    Some(confirm_to) => confirm_to.clone(),
                    None => return,
                };
                self.deliver_to.tell(Delivery {
                    message,
                    seq,
                    confirm_to: ConfirmTo {
                        controller,
                        confirmed: Confirmed {
                            producer: self.producer_id,
                            seq,
                        },
                    },
                });
            }
            Err(error) => {
                // It would not decode the next time either: a dead letter
                // here, confirmed in its turn.
                self.system.event_stream().publish_dead_letter(
                    ctx.path(),
                    error.to_string(),
                    DeadLetterReason::Undeliverable,
                );
                self.skipped.push_back(seq);
                if seq == self.confirmed + 1 {
                    self.skipped.pop_back();
                    self.advance(seq);
                }
            }
        }
    }
}

impl<M: DeserializeOwned + Serialize + Send + 'static> Actor for Controller<M> {
    type Msg = ConsumerMsg<M>;

    fn pre_start(&mut self, ctx: &mut Context<Self>) {
        self.confirm_to = Some(ctx.message_adapter(ConsumerMsg::Confirmed));
        self.demand(None);
        ctx.timers()
            .start_single_timer("tick", ConsumerMsg::Tick, self.settings.resend_after);
    }

    fn receive(&mut self, ctx: &mut Context<Self>, msg: ConsumerMsg<M>) {
        match msg {
            ConsumerMsg::Sequenced(sequenced) => self.on_sequenced(ctx, sequenced),
            ConsumerMsg::Confirmed(confirmed) => {
                if confirmed.producer == self.producer_id {
                    self.advance(confirmed.seq);
                }
            }
            ConsumerMsg::Tick => {
                let mut resend_from = None;
                if self.delivered > self.confirmed && self.confirmed == self.confirmed_at_tick {
                    // Nothing confirmed for a whole interval: a delivery
                    // was lost (the consuming actor restarted): hand over
                    // again from the first unconfirmed.
                    self.delivered = self.confirmed;
                    self.skipped.clear();
                    resend_from = Some(self.confirmed + 1);
                } else if let Some(from) = self.resend_asked.take() {
                    // A gap still open: ask again.
                    if from == self.delivered + 1 {
                        resend_from = Some(from);
                    }
                }
                self.confirmed_at_tick = self.confirmed;
                self.demand(resend_from);
                ctx.timers().start_single_timer(
                    "tick",
                    ConsumerMsg::Tick,
                    self.settings.resend_after,
                );
            }
        }
    }
}
