//! The `weir-bench` report.
//!
//! ```sh
//! cargo run --release -p weir-benches --bin weir-bench -- pingpong [--messages N] [--pairs N]
//! cargo run --release -p weir-benches --bin weir-bench -- idle [--actors N] [--seconds S]
//! ```
//!
//! `pingpong` is Akka.NET's PingPong: `pairs` client/echo pairs (default: one
//! per core), each client sends a burst of 1000, then one more per reply until
//! its share of `messages` (default 10,000,000, counting both directions) is
//! done. One row per dispatcher throughput setting, each on a new system.
//!
//! `idle` spawns `actors` actors (default 10,000), sends each one message,
//! then measures the CPU time the process uses over `seconds` (default 5) of
//! idleness, and its thread count.

use std::sync::mpsc::{Sender, channel};
use std::time::{Duration, Instant};

use weir_actor::{Actor, ActorRef, ActorSystem, Context, Props};

const BURST: u64 = 1000;
const THROUGHPUTS: [usize; 8] = [1, 5, 10, 20, 50, 100, 200, 500];

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
                for _ in 0..BURST.min(self.share) {
                    echo.tell(EchoMsg::Msg);
                }
                self.sent = BURST.min(self.share);
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

fn threads_now() -> usize {
    std::fs::read_dir("/proc/self/task").map_or(0, |d| d.count())
}

/// One row: a new system with this throughput. Returns (msgs/s, total ms,
/// threads at start, threads at end).
fn pingpong_row(throughput: usize, pairs: usize, messages: u64) -> (u64, u128, usize, usize) {
    let system = ActorSystem::builder().name("pingpong").throughput(throughput).build().expect("valid settings");
    let threads_start = threads_now();
    let share = messages / 2 / pairs as u64;
    let (done, finished) = channel();
    let mut runs = Vec::new();
    for i in 0..pairs {
        let d = done.clone();
        let client = system
            .spawn(
                Props::new(move || Client { echo: None, share, sent: 0, received: 0, done: d.clone() }),
                &format!("client-{i}"),
            )
            .expect("valid name");
        let echo = system.spawn(Props::new(|| Echo { client: None }), &format!("echo-{i}")).expect("valid name");
        echo.tell(EchoMsg::Client(client.clone()));
        runs.push((client, echo));
    }
    let start = Instant::now();
    for (client, echo) in &runs {
        client.tell(ClientMsg::Run(echo.clone()));
    }
    for _ in 0..pairs {
        finished.recv().expect("every client finishes");
    }
    let elapsed = start.elapsed();
    let threads_end = threads_now();
    system.terminate().wait().expect("called from outside the system");
    let total = share * 2 * pairs as u64;
    let ms = elapsed.as_millis().max(1);
    ((total as f64 / elapsed.as_secs_f64()) as u64, ms, threads_start, threads_end)
}

fn pingpong(args: &Args) {
    let pairs = args.get("--pairs").unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from) as u64);
    let messages = args.get("--messages").unwrap_or(10_000_000);
    println!("PingPong: {pairs} pairs ({} actors), {messages} messages, burst {BURST}", pairs * 2);
    println!("{:>10} {:>14} {:>10} {:>14} {:>12}", "throughput", "msgs/s", "total ms", "threads start", "threads end");
    for throughput in THROUGHPUTS {
        let (rate, ms, start, end) = pingpong_row(throughput, pairs as usize, messages);
        println!("{throughput:>10} {rate:>14} {ms:>10} {start:>14} {end:>12}");
    }
}

/// CPU seconds (user + system) this process has used so far.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat.rsplit(')').next().unwrap_or("").split_whitespace().collect();
    // After the command name: state is field 0, utime 11, stime 12 (clock ticks).
    let ticks: f64 = fields.get(11..13).map_or(0.0, |f| f.iter().filter_map(|v| v.parse::<f64>().ok()).sum());
    ticks / 100.0 // USER_HZ is 100 on Linux
}

struct Quiet;
impl Actor for Quiet {
    type Msg = ();
    fn receive(&mut self, _: &mut Context<Self>, _: ()) {}
}

fn idle(args: &Args) {
    let actors = args.get("--actors").unwrap_or(10_000);
    let seconds = args.get("--seconds").unwrap_or(5);
    let system = ActorSystem::new("idle").expect("valid name");
    let refs: Vec<_> = (0..actors).map(|i| system.spawn(Props::new(|| Quiet), &format!("q{i}")).expect("valid name")).collect();
    for r in &refs {
        r.tell(());
    }
    std::thread::sleep(Duration::from_millis(500)); // let them all process and go idle
    let (cpu_before, wall) = (cpu_seconds(), Instant::now());
    std::thread::sleep(Duration::from_secs(seconds));
    let (cpu, wall) = (cpu_seconds() - cpu_before, wall.elapsed().as_secs_f64());
    println!("idle: {actors} actors, {seconds} s");
    println!("  CPU used      {cpu:.3} s ({:.2}% of one core)", cpu / wall * 100.0);
    println!("  threads       {} (process total, main thread included)", threads_now());
    system.terminate().wait().expect("called from outside the system");
}

struct Args(Vec<String>);

impl Args {
    fn get(&self, flag: &str) -> Option<u64> {
        let i = self.0.iter().position(|a| a == flag)?;
        self.0.get(i + 1)?.replace('_', "").parse().ok()
    }
}

fn main() {
    let args = Args(std::env::args().skip(1).collect());
    match args.0.first().map(String::as_str) {
        Some("pingpong") => pingpong(&args),
        Some("idle") => idle(&args),
        Some("peers") => weir_benches::peers::run(&args.0[1..]),
        _ => {
            eprintln!("usage: weir-bench pingpong [--messages N] [--pairs N] | idle [--actors N] [--seconds S] | peers");
            std::process::exit(2);
        }
    }
}
