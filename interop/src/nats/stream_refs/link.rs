//! One end of a stream ref, as both its stages share it: the task that
//! carries its frames over NATS ([`run`]) and the [`Endpoint`] that pairs
//! it with the other end and keeps the pair alive.
//!
//! # Pairing
//!
//! The end that made a ref (the origin) listens on the subject the ref
//! names; the end that runs it (the runner) listens on a fresh inbox and
//! sends `Handshake` to the origin every heartbeat interval until the
//! origin answers `Accepted` (the first runner) or `Refused` (any other,
//! or a wrong element type). An origin not run within the subscription
//! time-out fails; a runner that hears nothing for the heartbeat
//! time-out fails.
//!
//! # Liveness
//!
//! Once paired, each end's task says something at least once per
//! heartbeat interval (a keep-alive when the stage had nothing to say: the
//! consumer repeats its cumulative demand, the producer says how many
//! elements it published) and fails the stage when nothing came from the
//! other end for the heartbeat time-out. The task does this on the tokio
//! runtime's clock, away from the stage's island, so user code that keeps
//! an island busy for longer than the time-out never makes its end look
//! dead. This one rule finds a dead process, a connection down for longer
//! than the time-out, and lost frames: a lost demand is repeated, lost
//! elements show up as a gap at the producer's next keep-alive, and a lost
//! last frame is sent again (the task that sent it lingers for the
//! time-out and answers whatever still comes with it).

use std::time::{Duration, Instant};

use async_nats::Subject;
use bytes::Bytes;
use serde::de::DeserializeOwned;
use tokio::sync::mpsc;
use weir_streams::stage::{AsyncCallback, StageContext, TimerKey};

use super::StreamRefError;
use super::wire::{self, Frame, Refusal};
use crate::nats::remote::next;
use crate::nats::{Nats, NatsError};

/// The stage timer of the heartbeat interval.
const TICK: u64 = 1;
/// The stage timer of an origin's subscription time-out.
const SUBSCRIPTION: u64 = 2;

/// What the task hands the stage.
pub(super) enum Inbound<T> {
    /// A frame from the other end (or a stranger's handshake).
    Frame(Frame<T>),
    /// Subscribing failed, or a frame did not decode.
    Failed(StreamRefError),
}

/// What the stage hands the task to publish.
enum Outbound {
    /// A frame for a subject of its own (handshakes and their answers).
    To(Subject, Bytes),
    /// Paired with the end listening on this subject: keep it alive.
    Paired(Subject),
    /// An element for the other end (counted for the producer's
    /// keep-alive).
    Element(Bytes),
    /// The consumer's demand for the other end (repeated as its
    /// keep-alive).
    Demand(Bytes),
    /// The end's last frame for the other end: publish it, then linger.
    Last(Bytes),
}

/// Which way elements go through an end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Side {
    Producer,
    Consumer,
}

/// The times an end keeps.
#[derive(Debug, Clone, Copy)]
pub(super) struct Timing {
    pub(super) interval: Duration,
    pub(super) timeout: Duration,
    pub(super) subscription_timeout: Duration,
}

/// Which end of the ref this is.
pub(super) enum Role {
    /// It made the ref and waits to be run.
    Origin,
    /// It runs a ref made by the origin listening on this subject.
    Runner(Subject),
}

/// What a frame meant, for the stage.
pub(super) enum Heard<T> {
    /// The ends are paired now.
    Paired,
    /// A frame of the stream for the stage.
    Frame(Frame<T>),
    /// Nothing for the stage.
    Nothing,
}

/// One end: its task and its pairing.
pub(super) struct Endpoint {
    own: String,
    role: Role,
    side: Side,
    peer: Option<Subject>,
    timing: Timing,
    type_name: &'static str,
    outbound: Option<mpsc::UnboundedSender<Outbound>>,
    /// The task's end of the channel and the connection, until `start`.
    unstarted: Option<(Nats, mpsc::UnboundedReceiver<Outbound>)>,
    /// When a runner started asking to pair, on the system's clock.
    started: Instant,
    finished: bool,
}

impl Endpoint {
    pub(super) fn new(
        nats: &Nats,
        own: String,
        role: Role,
        side: Side,
        timing: Timing,
        type_name: &'static str,
    ) -> Self {
        let (outbound, receiver) = mpsc::unbounded_channel();
        Self {
            own,
            role,
            side,
            peer: None,
            timing,
            type_name,
            outbound: Some(outbound),
            unstarted: Some((nats.clone(), receiver)),
            started: Instant::now(),
            finished: false,
        }
    }

    /// Start the task (frames go to `inbound`) and the timers: an origin
    /// waits for the subscription time-out, a runner sends its first
    /// handshake and repeats it every heartbeat interval until paired.
    pub(super) fn start<T: DeserializeOwned + Send + 'static>(
        &mut self,
        ctx: &mut StageContext<'_>,
        inbound: AsyncCallback<Inbound<T>>,
    ) {
        let (nats, receiver) = self.unstarted.take().expect("started once");
        nats.handle().spawn(run(
            nats.client().clone(),
            self.own.clone(),
            self.side,
            self.timing,
            receiver,
            inbound,
        ));
        match self.role {
            Role::Origin => ctx.schedule_once(SUBSCRIPTION, self.timing.subscription_timeout),
            Role::Runner(_) => {
                self.started = ctx.now();
                ctx.schedule_periodically(TICK, self.timing.interval, self.timing.interval);
                self.handshake();
            }
        }
    }

    pub(super) fn is_paired(&self) -> bool {
        self.peer.is_some()
    }

    fn handshake(&mut self) {
        if let Role::Runner(origin) = &self.role {
            let frame = Frame::Handshake {
                reply_to: self.own.clone(),
                type_name: self.type_name.to_owned(),
            };
            let origin = origin.clone();
            self.publish(origin, &frame);
        }
    }

    fn publish(&mut self, to: Subject, frame: &Frame<()>) {
        self.hand(Outbound::To(to, Bytes::from(wire::encode(frame))));
    }

    fn hand(&mut self, outbound: Outbound) {
        if let Some(sender) = &self.outbound {
            // Gone only with the task's runtime: then nothing is sent.
            let _ = sender.send(outbound);
        }
    }

    fn pair(&mut self, peer: Subject, ctx: &mut StageContext<'_>) {
        self.peer = Some(peer.clone());
        self.hand(Outbound::Paired(peer));
        ctx.cancel_timer(SUBSCRIPTION);
        ctx.cancel_timer(TICK);
    }

    /// Send an encoded element to the other end (once paired).
    pub(super) fn send_element(&mut self, bytes: Vec<u8>) {
        if self.peer.is_some() {
            self.hand(Outbound::Element(Bytes::from(bytes)));
        }
    }

    /// Send the consumer's cumulative demand to the other end (once
    /// paired).
    pub(super) fn send_demand(&mut self, up_to: u64) {
        if self.peer.is_some() {
            let frame = Frame::Demand { up_to };
            self.hand(Outbound::Demand(Bytes::from(wire::encode(&frame))));
        }
    }

    /// Send this end's last frame (once paired; the task lingers to send it
    /// again if it was lost) and stop.
    pub(super) fn finish(&mut self, frame: &Frame<()>) {
        if self.peer.is_some() {
            self.hand(Outbound::Last(Bytes::from(wire::encode(frame))));
        }
        self.close();
    }

    /// Stop: the task ends and unsubscribes.
    pub(super) fn close(&mut self) {
        self.finished = true;
        self.outbound = None;
    }

    pub(super) fn is_finished(&self) -> bool {
        self.finished
    }

    /// Take in a frame: pair, answer handshakes, or pass it on.
    ///
    /// # Errors
    ///
    /// The origin refused this runner.
    pub(super) fn receive<T>(
        &mut self,
        frame: Frame<T>,
        ctx: &mut StageContext<'_>,
    ) -> Result<Heard<T>, StreamRefError> {
        match (frame, &self.role) {
            (
                Frame::Handshake {
                    reply_to,
                    type_name,
                },
                Role::Origin,
            ) => {
                let reply_to = Subject::from(reply_to);
                let refusal = match &self.peer {
                    Some(peer) if *peer == reply_to => None,
                    Some(_) => Some(Refusal::AlreadyRun),
                    None if type_name != self.type_name => Some(Refusal::WrongType {
                        expected: self.type_name.to_owned(),
                        got: type_name,
                    }),
                    None => None,
                };
                if let Some(refusal) = refusal {
                    self.publish(reply_to, &Frame::Refused(refusal));
                    return Ok(Heard::Nothing);
                }
                self.publish(reply_to.clone(), &Frame::Accepted);
                if self.peer.is_some() {
                    // Our `Accepted` was lost: said again.
                    return Ok(Heard::Nothing);
                }
                self.pair(reply_to, ctx);
                Ok(Heard::Paired)
            }
            (Frame::Accepted, Role::Runner(origin)) => {
                if self.peer.is_some() {
                    return Ok(Heard::Nothing);
                }
                let origin = origin.clone();
                self.pair(origin, ctx);
                Ok(Heard::Paired)
            }
            (Frame::Refused(refusal), Role::Runner(_)) if self.peer.is_none() => {
                Err(refusal.into())
            }
            // Before pairing, only a handshake's answer counts.
            (frame, _) if self.peer.is_some() => Ok(Heard::Frame(frame)),
            _ => Ok(Heard::Nothing),
        }
    }

    /// A runner's heartbeat interval passed before it was paired: ask
    /// again.
    ///
    /// # Errors
    ///
    /// The origin did not answer for the heartbeat time-out.
    fn tick(&mut self, ctx: &mut StageContext<'_>) -> Result<(), StreamRefError> {
        if self.finished || self.peer.is_some() {
            ctx.cancel_timer(TICK);
            return Ok(());
        }
        if ctx.now().saturating_duration_since(self.started) >= self.timing.timeout {
            return Err(StreamRefError::OriginNotFound(self.timing.timeout));
        }
        self.handshake();
        Ok(())
    }

    /// A stage timer of the end's fired.
    ///
    /// # Errors
    ///
    /// A runner's origin did not answer for the heartbeat time-out, or an
    /// origin was not run within the subscription time-out.
    pub(super) fn on_timer(
        &mut self,
        key: TimerKey,
        ctx: &mut StageContext<'_>,
    ) -> Result<(), StreamRefError> {
        match key.0 {
            TICK => self.tick(ctx),
            SUBSCRIPTION if self.peer.is_none() && !self.finished => Err(
                StreamRefError::SubscriptionTimeout(self.timing.subscription_timeout),
            ),
            _ => Ok(()),
        }
    }
}

/// The task of one end: subscribe to its subject, hand what comes to the
/// stage (until the other end's last frame), and publish what the stage
/// sends, in order; once paired, keep the pair alive (see the module
/// docs). After this end's last frame it lingers for the heartbeat
/// time-out, answering whatever still comes with that frame again.
async fn run<T: DeserializeOwned + Send + 'static>(
    client: async_nats::Client,
    own: String,
    side: Side,
    timing: Timing,
    mut outbound: mpsc::UnboundedReceiver<Outbound>,
    inbound: AsyncCallback<Inbound<T>>,
) {
    let mut subscriber = match client.subscribe(own.clone()).await {
        Ok(subscriber) => subscriber,
        Err(error) => {
            inbound.invoke(Inbound::Failed(StreamRefError::Nats(
                NatsError::Subscribe {
                    subject: own,
                    source: Box::new(error),
                },
            )));
            return;
        }
    };
    let mut alive = KeepAlive::new(side);
    let mut ticks = tokio::time::interval(timing.interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut reading = true;
    loop {
        tokio::select! {
            out = outbound.recv() => match out {
                Some(Outbound::To(to, bytes)) => publish(&client, to, bytes).await,
                Some(Outbound::Paired(peer)) => alive.paired(peer),
                Some(Outbound::Element(bytes)) => {
                    alive.elements += 1;
                    alive.said(&client, bytes).await;
                }
                Some(Outbound::Demand(bytes)) => {
                    alive.demand = Some(bytes.clone());
                    alive.said(&client, bytes).await;
                }
                Some(Outbound::Last(bytes)) => {
                    if let Some(peer) = alive.peer.take() {
                        linger(&client, &mut subscriber, peer, bytes, timing.timeout).await;
                    }
                    return;
                }
                None => return,
            },
            message = next(&mut subscriber), if reading => match message {
                Some(message) => {
                    alive.heard = tokio::time::Instant::now();
                    match postcard::from_bytes::<Frame<T>>(&message.payload) {
                        Ok(frame) => {
                            reading = !frame.is_last();
                            inbound.invoke(Inbound::Frame(frame));
                        }
                        Err(error) => {
                            reading = false;
                            let error = StreamRefError::Decode(error.to_string());
                            inbound.invoke(Inbound::Failed(error));
                        }
                    }
                }
                None => reading = false,
            },
            _ = ticks.tick(), if alive.peer.is_some() && reading => {
                if alive.heard.elapsed() >= timing.timeout {
                    reading = false;
                    inbound.invoke(Inbound::Failed(StreamRefError::Unreachable(timing.timeout)));
                } else {
                    alive.tick(&client).await;
                }
            }
        }
    }
}

/// What a paired end's task keeps to keep the pair alive.
struct KeepAlive {
    side: Side,
    peer: Option<Subject>,
    /// When something last came from the other end.
    heard: tokio::time::Instant,
    /// Whether this end said something since the last tick.
    said: bool,
    /// Elements published (a producer's).
    elements: u64,
    /// The last demand published (a consumer's).
    demand: Option<Bytes>,
}

impl KeepAlive {
    fn new(side: Side) -> Self {
        Self {
            side,
            peer: None,
            heard: tokio::time::Instant::now(),
            said: false,
            elements: 0,
            demand: None,
        }
    }

    fn paired(&mut self, peer: Subject) {
        self.peer = Some(peer);
        self.heard = tokio::time::Instant::now();
    }

    async fn said(&mut self, client: &async_nats::Client, bytes: Bytes) {
        if let Some(peer) = &self.peer {
            self.said = true;
            publish(client, peer.clone(), bytes).await;
        }
    }

    /// A heartbeat interval passed: say something if nothing was said.
    async fn tick(&mut self, client: &async_nats::Client) {
        if std::mem::take(&mut self.said) {
            return;
        }
        let keep_alive = match self.side {
            Side::Producer => Some(Bytes::from(wire::encode(&Frame::Sent {
                count: self.elements,
            }))),
            Side::Consumer => self.demand.clone(),
        };
        if let (Some(peer), Some(bytes)) = (&self.peer, keep_alive) {
            publish(client, peer.clone(), bytes).await;
        }
    }
}

async fn publish(client: &async_nats::Client, to: Subject, bytes: Bytes) {
    // Fails only when the client is closed: the other end's silence
    // tells the stage.
    let _ = client.publish(to, bytes).await;
}

/// Publish the last frame, then for `linger` answer whatever still comes
/// from the other end with it again (it was lost, or is on its way).
async fn linger(
    client: &async_nats::Client,
    subscriber: &mut async_nats::Subscriber,
    peer: Subject,
    last: Bytes,
    linger: Duration,
) {
    publish(client, peer.clone(), last.clone()).await;
    let _ = client.flush().await;
    let until = tokio::time::sleep(linger);
    tokio::pin!(until);
    loop {
        tokio::select! {
            () = &mut until => return,
            message = next(subscriber) => {
                if message.is_none() {
                    return;
                }
                publish(client, peer.clone(), last.clone()).await;
            }
        }
    }
}
