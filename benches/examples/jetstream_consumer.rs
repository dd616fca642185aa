//! A JetStream consumer with acks (feature `nats`): orders are published
//! to a stream, a durable pull consumer reads them as a Weir `Source`, each
//! is handled, and a sink acks it, so a message is acknowledged only after
//! it was handled (at-least-once: what is not acked is redelivered).
//!
//! - `NatsSink::jetstream_publish` publishes and waits for JetStream's
//!   acks, with a bounded number in flight.
//! - `NatsSource::jetstream` pulls only when downstream asks (at most one
//!   batch waits), emitting `Committable` messages; `Committable::map`
//!   keeps the ack handle while the payload is parsed.
//! - `NatsSink::ack` acks in batches and completes once the server has
//!   confirmed every ack; the consumer's info then shows nothing pending.
//!
//! It uses the server at `$NATS_URL` (JetStream on); without it, it starts
//! a throwaway `nats-server -js` on a free loopback port (the binary is
//! `$NATS_SERVER`, `nats-server` on the `PATH` or `/usr/sbin/nats-server`).
//! It creates the stream `WEIR_EXAMPLE_ORDERS` and deletes it at the end.
//!
//! Run with `cargo run --release -p weir-benches --features nats --example jetstream_consumer`.

use std::time::Duration;

use async_nats::jetstream::{consumer::pull, stream};
use weir_benches::nats_server::NatsServer;
use weir_interop::{Committable, JetStreamSettings, Nats, NatsSink, NatsSource};
use weir_streams::prelude::*;

const STREAM: &str = "WEIR_EXAMPLE_ORDERS";
const ORDERS: u32 = 20;

/// An order as it travels: `<id>:<quantity>`.
#[derive(Debug)]
struct Order {
    id: u32,
    quantity: u32,
}

impl Order {
    fn encode(&self) -> String {
        format!("{}:{}", self.id, self.quantity)
    }

    fn decode(payload: &[u8]) -> Option<Order> {
        let text = std::str::from_utf8(payload).ok()?;
        let (id, quantity) = text.split_once(':')?;
        Some(Order {
            id: id.parse().ok()?,
            quantity: quantity.parse().ok()?,
        })
    }
}

fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    // Your server, or a throwaway one (kept alive until the end of main).
    let (url, _server) = match std::env::var("NATS_URL") {
        Ok(url) => (url, None),
        Err(_) => {
            let server = NatsServer::start()?;
            (server.url(), Some(server))
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let nats = Nats::connect(runtime.handle(), &url)?;
    runtime.block_on(nats.jetstream().get_or_create_stream(stream::Config {
        name: STREAM.into(),
        subjects: vec!["weir-example.orders.>".into()],
        ..Default::default()
    }))?;
    println!("connected to {url}; stream {STREAM} ready");

    let system = weir_actor::ActorSystem::new("jetstream-consumer")?;
    let materializer = Materializer::new(&system);

    // Publish the orders; the completion counts the publishes JetStream acked.
    let publish = NatsSink::jetstream_publish(
        &nats,
        |order: &String| {
            format!(
                "weir-example.orders.{}",
                order.split(':').next().unwrap_or("?")
            )
        },
        16,
    )?;
    let published = Source::range(1..=ORDERS)
        .map(|id| {
            Order {
                id,
                quantity: 1 + id % 4,
            }
            .encode()
        })
        .run_with(publish, &materializer)
        .wait()?;
    println!("published {published} orders");

    // Consume: pull, decode (keeping the ack handle), handle, ack.
    let consumer = pull::Config {
        durable_name: Some("order-handler".into()),
        ack_wait: Duration::from_secs(30),
        ..Default::default()
    };
    let settings = JetStreamSettings::new(&nats, STREAM)
        .batch(8)
        .expires(Duration::from_millis(500));
    let acked = NatsSource::jetstream(&consumer, &settings)
        .take(u64::from(ORDERS))
        .map(|message: Committable<async_nats::Message>| {
            let delivered = message.delivered();
            let order = message.map(|m| Order::decode(&m.payload));
            match order.value() {
                Some(o) => println!(
                    "handling order {:>2}: {} items (delivery {delivered})",
                    o.id, o.quantity
                ),
                None => println!("skipping a payload that is not an order"),
            }
            order // acked by the sink, after this handling
        })
        .run_with(NatsSink::ack(8)?, &materializer)
        .wait()?;
    println!("acked {acked} orders");

    // Every ack is confirmed by now: the consumer has nothing pending.
    let info = runtime.block_on(async {
        let stream = nats.jetstream().get_stream(STREAM).await?;
        let mut consumer: async_nats::jetstream::consumer::PullConsumer =
            stream.get_consumer("order-handler").await?;
        Ok::<_, async_nats::Error>(consumer.info().await?.clone())
    })?;
    println!(
        "consumer order-handler: acked up to stream sequence {}, {} acks pending",
        info.ack_floor.stream_sequence, info.num_ack_pending
    );

    runtime.block_on(nats.jetstream().delete_stream(STREAM))?;
    system.terminate().wait()?;
    Ok(())
}
