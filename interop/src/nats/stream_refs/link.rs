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
//! Once paired, each end sends something at least once per heartbeat
//! interval (a keep-alive when it had nothing else to say: the consumer
//! repeats its cumulative demand, the producer says how many elements it
//! sent) and fails when nothing came from the other end for the heartbeat
//! time-out. This one rule finds a dead process, a connection down for
//! longer than the time-out, and lost frames: a lost demand is repeated,
//! lost elements show up as a gap at the producer's next keep-alive, and
//! a lost last frame is sent again (the task that sent it lingers for the
//! time-out and answers whatever still comes with it).

use std::time::{Duration, Instant};

use async_nats::Subject;
use bytes::Bytes;
use serde::de::DeserializeOwned;
use tokio::sync::mpsc;
use weir_streams::stage::{AsyncCallback, StageContext};

use super::StreamRefError;
use super::wire::{self, Frame, Refusal};
use crate::nats::remote::next;
use crate::nats::{Nats, NatsError};

/// The stage timer of the heartbeat interval.
pub(super) const TICK: u64 = 1;
/// The stage timer of an origin's subscription time-out.
pub(super) const SUBSCRIPTION: u64 = 2;

/// What the task hands the stage.
pub(super) enum Inbound<T> {
    /// A frame from the other end (or a stranger's handshake).
    Frame(Frame<T>),
    /// Subscribing failed, or a frame did not decode.
    Failed(StreamRefError),
}

/// What the stage hands the task to publish.
enum Outbound {
    Frame(Subject, Bytes),
    /// The end's last frame: publish it, then linger.
    Last(Subject, Bytes),
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

/// One end: its task, its pairing and its liveness.
pub(super) struct Endpoint {
    own: String,
    role: Role,
    peer: Option<Subject>,
    timing: Timing,
    type_name: &'static str,
    outbound: Option<mpsc::UnboundedSender<Outbound>>,
    /// The task's end of the channel and the connection, until `start`.
    unstarted: Option<(Nats, mpsc::UnboundedReceiver<Outbound>)>,
    last_heard: Instant,
    sent_lately: bool,
    finished: bool,
}

impl Endpoint {
    pub(super) fn new(
        nats: &Nats,
        own: String,
        role: Role,
        timing: Timing,
        type_name: &'static str,
    ) -> Self {
        let (outbound, receiver) = mpsc::unbounded_channel();
        Self {
            own,
            role,
            peer: None,
            timing,
            type_name,
            outbound: Some(outbound),
            unstarted: Some((nats.clone(), receiver)),
            last_heard: Instant::now(),
            sent_lately: false,
            finished: false,
        }
    }

    /// Start the task (frames go to `inbound`) and the timers; a runner
    /// sends its first handshake.
    pub(super) fn start<T: DeserializeOwned + Send + 'static>(
        &mut self,
        ctx: &mut StageContext<'_>,
        inbound: AsyncCallback<Inbound<T>>,
    ) {
        let (nats, receiver) = self.unstarted.take().expect("started once");
        nats.handle().spawn(run(
            nats.client().clone(),
            self.own.clone(),
            receiver,
            inbound,
            self.timing.timeout,
        ));
        self.last_heard = ctx.now();
        ctx.schedule_periodically(TICK, self.timing.interval, self.timing.interval);
        match self.role {
            Role::Origin => ctx.schedule_once(SUBSCRIPTION, self.timing.subscription_timeout),
            Role::Runner(_) => self.handshake(),
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
        self.publish_bytes(to, wire::encode(frame));
    }

    fn publish_bytes(&mut self, to: Subject, bytes: Vec<u8>) {
        if let Some(outbound) = &self.outbound {
            // Gone only with the task's runtime: the time-out tells.
            let _ = outbound.send(Outbound::Frame(to, Bytes::from(bytes)));
        }
    }

    /// Send `frame` to the other end (once paired).
    pub(super) fn send(&mut self, frame: &Frame<()>) {
        self.send_bytes(wire::encode(frame));
    }

    /// Send an encoded frame to the other end (once paired).
    pub(super) fn send_bytes(&mut self, bytes: Vec<u8>) {
        if let Some(peer) = self.peer.clone() {
            self.sent_lately = true;
            self.publish_bytes(peer, bytes);
        }
    }

    /// Send this end's last frame (once paired; the task lingers to send it
    /// again if it was lost) and stop.
    pub(super) fn finish(&mut self, frame: &Frame<()>) {
        if let (Some(peer), Some(outbound)) = (self.peer.clone(), self.outbound.take()) {
            let _ = outbound.send(Outbound::Last(peer, Bytes::from(wire::encode(frame))));
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
                self.last_heard = ctx.now();
                self.publish(reply_to.clone(), &Frame::Accepted);
                if self.peer.is_some() {
                    // Our `Accepted` was lost: said again.
                    return Ok(Heard::Nothing);
                }
                self.peer = Some(reply_to);
                ctx.cancel_timer(SUBSCRIPTION);
                Ok(Heard::Paired)
            }
            (Frame::Accepted, Role::Runner(origin)) => {
                self.last_heard = ctx.now();
                if self.peer.is_some() {
                    return Ok(Heard::Nothing);
                }
                self.peer = Some(origin.clone());
                Ok(Heard::Paired)
            }
            (Frame::Refused(refusal), Role::Runner(_)) if self.peer.is_none() => {
                Err(refusal.into())
            }
            // Before pairing, only a handshake's answer counts.
            (frame, _) if self.peer.is_some() => {
                self.last_heard = ctx.now();
                Ok(Heard::Frame(frame))
            }
            _ => Ok(Heard::Nothing),
        }
    }

    /// The heartbeat interval passed: `Ok(true)` when this end said
    /// nothing since the last tick and owes the other end a keep-alive.
    ///
    /// # Errors
    ///
    /// The other end was silent for the heartbeat time-out.
    pub(super) fn tick(&mut self, ctx: &mut StageContext<'_>) -> Result<bool, StreamRefError> {
        if self.finished {
            ctx.cancel_timer(TICK);
            return Ok(false);
        }
        let silent = ctx.now().saturating_duration_since(self.last_heard) >= self.timing.timeout;
        match (&self.role, &self.peer) {
            (Role::Origin, None) => Ok(false),
            (Role::Runner(_), None) if silent => {
                Err(StreamRefError::OriginNotFound(self.timing.timeout))
            }
            (Role::Runner(_), None) => {
                self.handshake();
                Ok(false)
            }
            (_, Some(_)) if silent => Err(StreamRefError::Unreachable(self.timing.timeout)),
            (_, Some(_)) => Ok(!std::mem::take(&mut self.sent_lately)),
        }
    }

    /// The subscription time-out passed.
    ///
    /// # Errors
    ///
    /// When nobody ran the ref meanwhile.
    pub(super) fn subscription_timer(&self) -> Result<(), StreamRefError> {
        if self.peer.is_none() && !self.finished {
            return Err(StreamRefError::SubscriptionTimeout(
                self.timing.subscription_timeout,
            ));
        }
        Ok(())
    }
}

/// The task of one end: subscribe to its subject, hand what comes to the
/// stage (until the other end's last frame), and publish what the stage
/// sends, in order. After this end's last frame it lingers for `linger`,
/// answering whatever still comes with that frame again.
async fn run<T: DeserializeOwned + Send + 'static>(
    client: async_nats::Client,
    own: String,
    mut outbound: mpsc::UnboundedReceiver<Outbound>,
    inbound: AsyncCallback<Inbound<T>>,
    linger: Duration,
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
    let mut reading = true;
    loop {
        tokio::select! {
            out = outbound.recv() => match out {
                Some(Outbound::Frame(to, bytes)) => {
                    // Fails only when the client is closed: the other end's
                    // silence tells the stage.
                    let _ = client.publish(to, bytes).await;
                }
                Some(Outbound::Last(to, bytes)) => {
                    let _ = client.publish(to.clone(), bytes.clone()).await;
                    let _ = client.flush().await;
                    let until = tokio::time::sleep(linger);
                    tokio::pin!(until);
                    loop {
                        tokio::select! {
                            () = &mut until => return,
                            message = next(&mut subscriber) => {
                                if message.is_none() {
                                    return;
                                }
                                let _ = client.publish(to.clone(), bytes.clone()).await;
                            }
                        }
                    }
                }
                None => return,
            },
            message = next(&mut subscriber), if reading => match message {
                Some(message) => match postcard::from_bytes::<Frame<T>>(&message.payload) {
                    Ok(frame) => {
                        reading = !frame.is_last();
                        inbound.invoke(Inbound::Frame(frame));
                    }
                    Err(error) => {
                        reading = false;
                        inbound.invoke(Inbound::Failed(StreamRefError::Decode(error.to_string())));
                    }
                },
                None => reading = false,
            },
        }
    }
}
