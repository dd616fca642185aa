//! Akka.NET's PingPong (see [`akka_pingpong`](crate::akka_pingpong)) with
//! every `Ping` and `Pong` handled by an async handler: on Weir through
//! [`Context::run_async_then`], on kameo and ractor (`weir-bench peers`,
//! feature `peers`) by their `async fn handle`.
//!
//! Each handler first awaits a [`Pause`], then does what the sync handler
//! does (count, send the next message) with the actor's state: on Weir in
//! the continuation of `run_async_then`, which gets `&mut self` back; on
//! the peers after the `.await`, in the handler that holds `&mut self`
//! across it. The `Run` message that starts a client's burst is handled
//! synchronously everywhere (it is one message per run).

use std::future::Future;
use std::pin::Pin;
use std::sync::mpsc::{Sender, channel};
use std::task::{Context as TaskContext, Poll};
use std::time::{Duration, Instant};

use weir_actor::{Actor, ActorRef, ActorSystem, Context, Props};

use crate::akka_pingpong::{BURST, Load};

/// What a handler awaits before it answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Await {
    /// A future ready at its first poll: the cost of the async handler
    /// itself (Weir polls it once inline; no suspension).
    Ready,
    /// A future that returns `Pending` once, waking itself first: every
    /// message suspends its actor once and resumes it (on Weir, the run
    /// that polled polls again: a wake during the poll sends the actor no
    /// message; on tokio, a task wake).
    YieldOnce,
}

impl Await {
    /// The future a handler awaits.
    pub fn pause(self) -> Pause {
        Pause {
            pending_once: self == Await::YieldOnce,
        }
    }

    /// A name for the report.
    pub fn label(self) -> &'static str {
        match self {
            Await::Ready => "a ready future",
            Await::YieldOnce => "a future pending once (self-wake)",
        }
    }
}

/// The future of [`Await::pause`]: the same type for every framework, so
/// they all await the same work.
#[derive(Debug)]
#[must_use = "a future does nothing until awaited"]
pub struct Pause {
    pending_once: bool,
}

impl Future for Pause {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<()> {
        if self.pending_once {
            self.pending_once = false;
            cx.waker().wake_by_ref();
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    }
}

enum ClientMsg {
    Run(ActorRef<EchoMsg>),
    Reply,
}

enum EchoMsg {
    Client(ActorRef<ClientMsg>),
    Msg,
}

struct Client {
    echo: Option<ActorRef<EchoMsg>>,
    wait: Await,
    share: u64,
    sent: u64,
    received: u64,
    done: Sender<()>,
}

impl Client {
    /// What the sync client does per reply, run after the pause.
    fn on_reply(&mut self) {
        self.received += 1;
        if self.sent < self.share {
            self.sent += 1;
            self.echo.as_ref().expect("running").tell(EchoMsg::Msg);
        }
        if self.received == self.share {
            self.done.send(()).expect("the runner waits");
        }
    }
}

impl Actor for Client {
    type Msg = ClientMsg;
    fn receive(&mut self, ctx: &mut Context<Self>, msg: ClientMsg) {
        match msg {
            ClientMsg::Run(echo) => {
                self.sent = BURST.min(self.share);
                for _ in 0..self.sent {
                    echo.tell(EchoMsg::Msg);
                }
                self.echo = Some(echo);
            }
            ClientMsg::Reply => {
                ctx.run_async_then(self.wait.pause(), |client: &mut Client, _, ()| {
                    client.on_reply();
                });
            }
        }
    }
}

struct Echo {
    client: Option<ActorRef<ClientMsg>>,
    wait: Await,
}

impl Actor for Echo {
    type Msg = EchoMsg;
    fn receive(&mut self, ctx: &mut Context<Self>, msg: EchoMsg) {
        match msg {
            EchoMsg::Client(c) => self.client = Some(c),
            EchoMsg::Msg => ctx.run_async_then(self.wait.pause(), |echo: &mut Echo, _, ()| {
                echo.client.as_ref().expect("paired").tell(ClientMsg::Reply);
            }),
        }
    }
}

/// One run on a new system (`threads`, or the default pool), timed from the
/// first `Run` until every client is done.
pub fn weir(load: Load, wait: Await, threads: Option<usize>) -> Duration {
    let mut builder = ActorSystem::builder().name("async-pingpong");
    if let Some(n) = threads {
        builder = builder.threads(n);
    }
    let system = builder.build().expect("valid settings");
    let share = load.share();
    let (done, finished) = channel();
    let mut pairs = Vec::new();
    for i in 0..load.pairs {
        let d = done.clone();
        let client = system
            .spawn(
                Props::new(move || Client {
                    echo: None,
                    wait,
                    share,
                    sent: 0,
                    received: 0,
                    done: d.clone(),
                }),
                &format!("client-{i}"),
            )
            .expect("valid name");
        let echo = system
            .spawn(
                Props::new(move || Echo { client: None, wait }),
                &format!("echo-{i}"),
            )
            .expect("valid name");
        echo.tell(EchoMsg::Client(client.clone()));
        pairs.push((client, echo));
    }
    let start = Instant::now();
    for (client, echo) in &pairs {
        client.tell(ClientMsg::Run(echo.clone()));
    }
    for _ in 0..load.pairs {
        finished
            .recv_timeout(Duration::from_secs(120))
            .expect("every client finishes");
    }
    let elapsed = start.elapsed();
    system
        .terminate()
        .wait()
        .expect("called from outside the system");
    elapsed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_pauses_finish_every_client() {
        for wait in [Await::Ready, Await::YieldOnce] {
            for threads in [None, Some(1)] {
                let load = Load {
                    pairs: 2,
                    messages: 10_000,
                };
                // Returns only once every client has had its whole share back.
                let _ = weir(load, wait, threads);
            }
        }
    }
}
