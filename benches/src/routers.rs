//! `weir-bench routers`: request/reply through a round-robin pool.
//!
//! One client actor sends `requests` requests through a pool of
//! [`ROUTEES`] routees, each request carrying the client's reference; a
//! routee answers the client directly. The client keeps [`WINDOW`]
//! requests in flight (one more per answer) and the run ends with the last
//! answer. The same workload runs on Weir's [`Pool`] (routing on the
//! client's thread, and once more through the router actor for
//! comparison, and with four clients routing through one router at once),
//! on ractor's factory (round-robin routing, default queue)
//! and on kameo's `ActorPool` (kameo_actors; it routes to the least busy
//! worker, it has no round-robin), interleaved in one process; the report
//! gives the median of each and Weir's ratio to it.
//!
//! The peers are built only with `--features peers`.

use std::sync::mpsc::{SyncSender, sync_channel};
use std::time::{Duration, Instant};

use weir_actor::routing::{Pool, Router, RouterMsg, Routing};
use weir_actor::{Actor, ActorRef, ActorSystem, Context, Props};

/// Routees in every pool.
pub const ROUTEES: usize = 8;
/// Requests in flight.
pub const WINDOW: u64 = 1000;

#[cfg(feature = "peers")]
mod peers;

/// One request: a number and where to answer.
struct Req {
    n: u64,
    reply_to: ActorRef<ClientMsg>,
}

/// What the client gets.
enum ClientMsg {
    /// Send the first window.
    Start,
    /// An answer.
    Reply(u64),
}

struct Routee;
impl Actor for Routee {
    type Msg = Req;
    fn receive(&mut self, _: &mut Context<Self>, req: Req) {
        req.reply_to.tell(ClientMsg::Reply(req.n + 1));
    }
}

/// How the client reaches the pool.
#[derive(Clone)]
enum Via {
    /// `Router::tell`: routed on the client's thread.
    Sender(Router<Req>),
    /// Through the router actor (`RouterMsg::route`): one hop more.
    RouterActor(ActorRef<RouterMsg<Req>>),
}

struct Client {
    via: Via,
    /// Requests in flight.
    window: u64,
    total: u64,
    sent: u64,
    received: u64,
    checksum: u64,
    done: SyncSender<u64>,
}

impl Client {
    fn send(&mut self, me: &ActorRef<ClientMsg>) {
        let req = Req {
            n: self.sent,
            reply_to: me.clone(),
        };
        self.sent += 1;
        match &self.via {
            Via::Sender(router) => router.tell(req),
            Via::RouterActor(router) => router.tell(RouterMsg::route(req)),
        }
    }
}

impl Actor for Client {
    type Msg = ClientMsg;
    fn receive(&mut self, ctx: &mut Context<Self>, msg: ClientMsg) {
        let me = ctx.myself();
        match msg {
            ClientMsg::Start => {
                while self.sent < self.window.min(self.total) {
                    self.send(&me);
                }
            }
            ClientMsg::Reply(n) => {
                self.received += 1;
                self.checksum = self.checksum.wrapping_add(n);
                if self.sent < self.total {
                    self.send(&me);
                }
                if self.received == self.total {
                    let _ = self.done.send(self.checksum);
                }
            }
        }
    }
}

/// The sum of the answers to `requests` requests (`n + 1` for `n` in
/// `0..requests`), which every run checks.
pub fn checksum(requests: u64) -> u64 {
    requests * (requests + 1) / 2
}

/// Run the workload on Weir: through the router handle (`via_actor ==
/// false`) or through the router actor.
pub fn weir(requests: u64, via_actor: bool) -> Duration {
    weir_clients(requests, via_actor, 1)
}

/// The workload with `clients` clients routing through one router at once
/// (each with its share of the requests and of the window): the routee
/// table is read by every client's thread.
pub fn weir_clients(requests: u64, via_actor: bool, clients: u64) -> Duration {
    let system = ActorSystem::new("routers").expect("system");
    let router = Pool::new(ROUTEES, Props::new(|| Routee))
        .with_routing(Routing::round_robin())
        .spawn(&system, "pool")
        .expect("pool");
    let via = if via_actor {
        Via::RouterActor(router.actor_ref().clone())
    } else {
        Via::Sender(router.clone())
    };
    let (done, finished) = sync_channel(clients as usize);
    let share = requests / clients;
    // The last client takes the remainder.
    let total_of = |i: u64| {
        if i + 1 == clients {
            requests - share * i
        } else {
            share
        }
    };
    let spawned: Vec<ActorRef<ClientMsg>> = (0..clients)
        .map(|i| {
            let (via, done, total) = (via.clone(), done.clone(), total_of(i));
            let props = Props::new(move || Client {
                via: via.clone(),
                window: (WINDOW / clients).max(1),
                total,
                sent: 0,
                received: 0,
                checksum: 0,
                done: done.clone(),
            });
            system.spawn(props, &format!("client-{i}")).expect("client")
        })
        .collect();
    let start = Instant::now();
    for client in &spawned {
        client.tell(ClientMsg::Start);
    }
    let sum: u64 = (0..clients)
        .map(|_| finished.recv().expect("every client finishes"))
        .fold(0, u64::wrapping_add);
    let elapsed = start.elapsed();
    // Client `i` numbers its requests from 0 too: the sum of its answers
    // is `checksum(total)`.
    let expected = (0..clients)
        .map(|i| checksum(total_of(i)))
        .fold(0, u64::wrapping_add);
    assert_eq!(sum, expected, "every request answered once");
    system.terminate().wait().expect("terminate");
    elapsed
}

type Runner = Box<dyn Fn(u64) -> Duration>;

fn runners() -> Vec<(&'static str, Runner)> {
    #[allow(unused_mut)]
    let mut runners: Vec<(&'static str, Runner)> = vec![
        (
            "weir Pool, routed by the sender",
            Box::new(|n| weir(n, false)),
        ),
        (
            "weir Pool, through the router actor",
            Box::new(|n| weir(n, true)),
        ),
        (
            "weir Pool, routed by 4 senders at once",
            Box::new(|n| weir_clients(n, false, 4)),
        ),
    ];
    #[cfg(feature = "peers")]
    runners.extend(peers::runners());
    runners
}

fn arg(args: &[String], flag: &str) -> Option<u64> {
    let i = args.iter().position(|a| a == flag)?;
    args.get(i + 1)?.replace('_', "").parse().ok()
}

/// `weir-bench routers [--requests N] [--runs N] [--only TEXT]`.
pub fn run(args: &[String]) {
    let requests = arg(args, "--requests").unwrap_or(1_000_000);
    let runs = arg(args, "--runs").unwrap_or(5).max(1) as usize;
    let mut runners = runners();
    // `--only TEXT`: the runners whose name contains TEXT (for callgrind).
    if let Some(i) = args.iter().position(|a| a == "--only")
        && let Some(only) = args.get(i + 1)
    {
        runners.retain(|(name, _)| name.contains(only.as_str()));
    }
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); runners.len()];
    for round in 0..runs {
        // Rotate the order each round: no framework always runs first.
        for k in 0..runners.len() {
            let i = (k + round) % runners.len();
            let elapsed = (runners[i].1)(requests);
            rates[i].push(requests as f64 / elapsed.as_secs_f64());
        }
    }
    let medians: Vec<f64> = rates
        .into_iter()
        .map(|mut r| {
            r.sort_by(f64::total_cmp);
            r[r.len() / 2]
        })
        .collect();
    println!(
        "\nrequest/reply through a pool of {ROUTEES} routees, {requests} requests, {WINDOW} in flight, median of {runs} interleaved runs:"
    );
    println!("{:<44} {:>14} {:>12}", "pool", "requests/s", "weir / this");
    for (i, (name, _)) in runners.iter().enumerate() {
        println!(
            "{name:<44} {:>14.0} {:>12.2}",
            medians[i],
            medians[0] / medians[i]
        );
    }
    #[cfg(not(feature = "peers"))]
    println!("(ractor and kameo need --features peers)");
}
