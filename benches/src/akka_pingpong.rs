//! Akka.NET's PingPong workload, on Weir: `pairs` client/echo pairs, each
//! client sends a burst of 1000, then one more per reply until its share of
//! `messages` (both directions counted) is done.

use std::sync::mpsc::{Sender, channel};
use std::time::{Duration, Instant};

use weir_actor::{Actor, ActorRef, ActorSystem, Context, Props};

/// Messages a client sends before waiting for replies.
pub const BURST: u64 = 1000;

/// The size of one run.
#[derive(Clone, Copy, Debug)]
pub struct Load {
    /// Client/echo pairs.
    pub pairs: usize,
    /// Messages in both directions, all pairs together.
    pub messages: u64,
}

impl Load {
    /// Messages each client sends (and receives back).
    pub fn share(self) -> u64 {
        self.messages / 2 / self.pairs as u64
    }

    /// Messages actually exchanged (`messages` rounded down to a multiple).
    pub fn total(self) -> u64 {
        self.share() * 2 * self.pairs as u64
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
    share: u64,
    sent: u64,
    received: u64,
    done: Sender<()>,
}

impl Actor for Client {
    type Msg = ClientMsg;
    fn receive(&mut self, _: &mut Context<Self>, msg: ClientMsg) {
        match msg {
            ClientMsg::Run(echo) => {
                self.sent = BURST.min(self.share);
                for _ in 0..self.sent {
                    echo.tell(EchoMsg::Msg);
                }
                self.echo = Some(echo);
            }
            ClientMsg::Reply => {
                self.received += 1;
                if self.sent < self.share {
                    self.sent += 1;
                    self.echo.as_ref().expect("running").tell(EchoMsg::Msg);
                }
                if self.received == self.share {
                    self.done.send(()).unwrap();
                }
            }
        }
    }
}

struct Echo {
    client: Option<ActorRef<ClientMsg>>,
}

impl Actor for Echo {
    type Msg = EchoMsg;
    fn receive(&mut self, _: &mut Context<Self>, msg: EchoMsg) {
        match msg {
            EchoMsg::Client(c) => self.client = Some(c),
            EchoMsg::Msg => self.client.as_ref().expect("paired").tell(ClientMsg::Reply),
        }
    }
}

/// The process's thread count.
pub fn threads_now() -> usize {
    std::fs::read_dir("/proc/self/task").map_or(0, |d| d.count())
}

/// What one run measured.
#[derive(Clone, Copy, Debug)]
pub struct Measured {
    /// From the first `Run` until every client is done.
    pub elapsed: Duration,
    /// Process threads once the system was up.
    pub threads_start: usize,
    /// Process threads at the end, before terminate.
    pub threads_end: usize,
}

/// One run on a new system (with `throughput` and `threads`, or the defaults).
pub fn weir(load: Load, throughput: Option<usize>, threads: Option<usize>) -> Measured {
    let mut builder = ActorSystem::builder().name("pingpong");
    if let Some(t) = throughput {
        builder = builder.throughput(t);
    }
    if let Some(n) = threads {
        builder = builder.threads(n);
    }
    let system = builder.build().expect("valid settings");
    let threads_start = threads_now();
    let share = load.share();
    let (done, finished) = channel();
    let mut runs = Vec::new();
    for i in 0..load.pairs {
        let d = done.clone();
        let client = system
            .spawn(
                Props::new(move || Client {
                    echo: None,
                    share,
                    sent: 0,
                    received: 0,
                    done: d.clone(),
                }),
                &format!("client-{i}"),
            )
            .expect("valid name");
        let echo = system
            .spawn(Props::new(|| Echo { client: None }), &format!("echo-{i}"))
            .expect("valid name");
        echo.tell(EchoMsg::Client(client.clone()));
        runs.push((client, echo));
    }
    let start = Instant::now();
    for (client, echo) in &runs {
        client.tell(ClientMsg::Run(echo.clone()));
    }
    for _ in 0..load.pairs {
        finished.recv().expect("every client finishes");
    }
    let elapsed = start.elapsed();
    let threads_end = threads_now();
    system
        .terminate()
        .wait()
        .expect("called from outside the system");
    Measured {
        elapsed,
        threads_start,
        threads_end,
    }
}
