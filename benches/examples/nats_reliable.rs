//! Reliable delivery between two processes (feature `nats`): this process
//! produces orders through a `ReliableProducer`; a second process (this
//! example run again with the argument `consumer`) handles them through a
//! `ReliableConsumer`. Midway the consumer process is killed and started
//! again: nothing is lost, because the producer keeps every order until
//! the consumer confirms it and resends what is unconfirmed to the new
//! consumer.
//!
//! - The producing actor sends one order per `RequestNext`: it is asked
//!   only while the consumer's window has room (flow control).
//! - The consuming actor confirms each `Delivery` once handled; an order
//!   it already had is dropped by its sequence number.
//!
//! It uses the server at `$NATS_URL`; without it, it starts a throwaway
//! `nats-server` on a free loopback port (the binary is `$NATS_SERVER`,
//! `nats-server` on the `PATH` or `/usr/sbin/nats-server`).
//!
//! Run with `cargo run --release -p weir-benches --features nats --example nats_reliable`.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use weir_actor::{Actor, ActorSystem, Context, Props};
use weir_benches::nats_server::NatsServer;
use weir_interop::{
    Delivery, Nats, ReliableConsumer, ReliableProducer, ReliableSettings, RemoteActorSystem,
    RemoteSettings, RequestNext,
};

const ORDERS: u64 = 2_000;
const PRODUCER: &str = "weir+nats://shop/user/orders";
const CONSUMER: &str = "weir+nats://warehouse/user/orders";

#[derive(Debug, Serialize, Deserialize)]
struct Order {
    id: u64,
    item: String,
}

/// Sends order after order, one per `RequestNext`, until `ORDERS`.
struct Shop;

impl Actor for Shop {
    type Msg = RequestNext<Order>;
    fn receive(&mut self, _: &mut Context<Self>, next: RequestNext<Order>) {
        let id = next.next_seq();
        if id <= ORDERS {
            next.send(Order {
                id,
                item: format!("item-{}", id % 7),
            });
        }
    }
}

/// Handles an order, then confirms it.
struct Warehouse {
    handled: u64,
}

impl Actor for Warehouse {
    type Msg = Delivery<Order>;
    fn receive(&mut self, _: &mut Context<Self>, delivery: Delivery<Order>) {
        self.handled += 1;
        if delivery.message.id.is_multiple_of(500) {
            println!(
                "  warehouse: order {} ({})",
                delivery.message.id, delivery.message.item
            );
        }
        delivery.confirm();
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime")
}

/// Short heartbeats: a killed peer holds the credit window shut briefly.
fn remote_settings() -> RemoteSettings {
    RemoteSettings::default().heartbeat(Duration::from_millis(200), Duration::from_secs(1))
}

fn settings() -> ReliableSettings {
    ReliableSettings::default()
        .window(256)
        .resend_after(Duration::from_millis(500))
}

/// The consumer process: handle orders until standard input closes.
fn consumer(url: &str) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let rt = runtime();
    let nats = Nats::connect(rt.handle(), url)?;
    let system = ActorSystem::new("warehouse")?;
    let remote = RemoteActorSystem::start(&system, &nats, remote_settings())?;
    let warehouse = system.spawn(Props::new(|| Warehouse { handled: 0 }), "warehouse")?;
    let consumer = ReliableConsumer::start(&remote, "orders", PRODUCER, &warehouse, settings())?;
    println!("ready");
    std::io::stdout().flush()?;
    let mut line = String::new();
    while std::io::stdin().lock().read_line(&mut line)? > 0 {}
    println!(
        "  warehouse: {} deliveries, {} duplicates dropped",
        consumer.delivered(),
        consumer.duplicates()
    );
    drop(remote);
    system.terminate().wait()?;
    Ok(())
}

/// Start this example again as the consumer process; the thread passes on
/// what it says.
fn spawn_consumer(url: &str) -> std::io::Result<(Child, JoinHandle<()>)> {
    let mut child = Command::new(std::env::current_exe()?)
        .args(["consumer", url])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    let mut stdout = BufReader::new(child.stdout.take().expect("piped"));
    let mut ready = String::new();
    stdout.read_line(&mut ready)?;
    let echo = std::thread::spawn(move || {
        for line in stdout.lines().map_while(Result::ok) {
            println!("{line}");
        }
    });
    Ok((child, echo))
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        if Instant::now() > deadline {
            return Err(format!("timed out waiting for {what}"));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [role, url] = args.as_slice()
        && role == "consumer"
    {
        return consumer(url);
    }
    // Your server, or a throwaway one (kept alive until the end of main).
    let (url, _server) = match std::env::var("NATS_URL") {
        Ok(url) => (url, None),
        Err(_) => {
            let server = NatsServer::start()?;
            (server.url(), Some(server))
        }
    };
    let rt = runtime();
    let nats = Nats::connect(rt.handle(), &url)?;
    let system = ActorSystem::new("shop")?;
    let remote = RemoteActorSystem::start(&system, &nats, remote_settings())?;
    let shop = system.spawn(Props::new(|| Shop), "shop")?;
    let producer = ReliableProducer::start(&remote, "orders", CONSUMER, &shop, settings())?;

    let (mut warehouse, echo) = spawn_consumer(&url)?;
    wait_until("700 confirmed orders", || producer.confirmed() >= 700)?;
    warehouse.kill()?;
    warehouse.wait()?;
    let _ = echo.join();
    println!(
        "shop: killed the warehouse process with {} orders confirmed and {} produced",
        producer.confirmed(),
        producer.produced()
    );
    let (mut warehouse, echo) = spawn_consumer(&url)?;
    wait_until("every order confirmed", || producer.confirmed() == ORDERS)?;
    drop(warehouse.stdin.take());
    warehouse.wait()?;
    let _ = echo.join();
    println!(
        "shop: all {ORDERS} orders confirmed ({} sent again after the restart)",
        producer.resent()
    );
    drop(remote);
    system.terminate().wait()?;
    Ok(())
}
