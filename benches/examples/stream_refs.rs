//! A stream across two processes with a stream ref (feature `nats`): this
//! process makes a `SourceRef` of 10,000 orders and sends it in a remote
//! actor message to a second process (this example again, started with
//! the argument `consumer`), which runs it as a `Source` into a fold and
//! prints what it summed. One command runs both.
//!
//! - `StreamRefs::source_ref` is a `Sink` whose materialized value is the
//!   `SourceRef`: a serde value that names where its stream waits.
//! - The consumer's window (here 64) is the credit the producer gets: a
//!   slow consumer slows the producer in the other process.
//! - Elements carry sequence numbers; completion, failure and
//!   cancellation travel both ways; either side fails typed within the
//!   heartbeat time-out when the other process dies.
//!
//! It uses the server at `$NATS_URL`; without it, it starts a throwaway
//! `nats-server` on a free loopback port (the binary is `$NATS_SERVER`,
//! `nats-server` on the `PATH` or `/usr/sbin/nats-server`).
//!
//! Run with `cargo run --release -p weir-benches --features nats --example stream_refs`.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use weir_actor::{Actor, ActorSystem, Context, Props};
use weir_benches::nats_server::NatsServer;
use weir_interop::{Nats, RemoteActorSystem, RemoteSettings, SourceRef, StreamRefs};
use weir_streams::prelude::*;

const ORDERS: u64 = 10_000;

/// What travels through the stream.
#[derive(Debug, Serialize, Deserialize)]
struct Order {
    id: u64,
    quantity: u32,
}

type Error = Box<dyn std::error::Error + Send + Sync>;

fn settings() -> RemoteSettings {
    RemoteSettings::default().heartbeat(Duration::from_millis(200), Duration::from_secs(2))
}

fn connect(
    url: &str,
    name: &str,
) -> Result<(tokio::runtime::Runtime, ActorSystem, RemoteActorSystem), Error> {
    let runtime = tokio::runtime::Runtime::new()?;
    let nats = Nats::connect(runtime.handle(), url)?;
    let system = ActorSystem::new(name)?;
    let remote = RemoteActorSystem::start(&system, &nats, settings())?;
    Ok((runtime, system, remote))
}

fn main() -> Result<(), Error> {
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
    let (_runtime, system, remote) = connect(&url, "orders")?;

    // The second process: this example again, as the consumer.
    let mut child = Command::new(std::env::current_exe()?)
        .args(["consumer", &url])
        .stdout(Stdio::piped())
        .spawn()?;
    let mut lines = BufReader::new(child.stdout.take().expect("piped")).lines();
    let ready = lines.next().ok_or("the consumer exited")??;
    let inbox_uri = ready
        .strip_prefix("ready ")
        .ok_or("the consumer said no uri")?;

    // The stream starts here and waits for the consumer's credit.
    let refs = StreamRefs::new(&remote);
    let orders = Source::range(1..=ORDERS)
        .map(|id| Order {
            id,
            quantity: (id % 7) as u32 + 1,
        })
        .run_with(refs.source_ref(), &Materializer::new(&system));
    println!("made a stream ref in {}: {orders:?}", orders.system());
    remote
        .resolve::<SourceRef<Order>>(inbox_uri)?
        .tell(orders)?;

    let total = lines.next().ok_or("the consumer exited")??;
    println!("the consumer says: {total}");
    let expected: u64 = (1..=ORDERS).map(|id| id % 7 + 1).sum();
    assert_eq!(
        total,
        format!("total quantity {expected} of {ORDERS} orders")
    );
    child.wait()?;
    system.terminate().wait()?;
    Ok(())
}

/// The second process: expose an inbox for the ref, run it, print the sum.
fn consumer(url: &str) -> Result<(), Error> {
    let (_runtime, system, remote) = connect(url, "warehouse")?;
    let refs = StreamRefs::new(&remote).window(64);
    let materializer = Materializer::new(&system);
    let (refs_tx, refs_rx) = std::sync::mpsc::channel();
    let refs_tx = std::sync::Mutex::new(refs_tx);
    let inbox = system.spawn(
        Props::new(move || Inbox(refs_tx.lock().expect("not poisoned").clone())),
        "inbox",
    )?;
    println!("ready {}", remote.expose(&inbox, "inbox")?);
    let orders: SourceRef<Order> = refs_rx.recv_timeout(Duration::from_secs(30))?;
    let (count, quantity) = orders
        .source(&refs)
        .run_with(
            Sink::fold((0u64, 0u64), |(n, q), order: Order| {
                (n + 1, q + u64::from(order.quantity))
            }),
            &materializer,
        )
        .wait()?;
    println!("total quantity {quantity} of {count} orders");
    system.terminate().wait()?;
    Ok(())
}

/// Hands the refs it is told to the consumer's main thread.
struct Inbox(std::sync::mpsc::Sender<SourceRef<Order>>);

impl Actor for Inbox {
    type Msg = SourceRef<Order>;
    fn receive(&mut self, _: &mut Context<Self>, orders: SourceRef<Order>) {
        let _ = self.0.send(orders);
    }
}
