//! The stream-ref row of `weir-bench remote` (feature `nats`): a
//! `SourceRef` stream of 1 KiB elements from one actor system to another
//! (each with its own NATS connection), against raw async-nats
//! publish/subscribe of the same payloads with the same window of
//! messages in flight (the subscriber returns credit every `window / 4`
//! messages, as the consuming end of a stream ref does).

use std::fmt;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::StreamExt;
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use weir_actor::ActorSystem;
use weir_interop::{Nats, RemoteActorSystem, RemoteSettings, StreamRefs};
use weir_streams::prelude::*;

/// Elements (and messages) of this many bytes.
pub const PAYLOAD: usize = 1024;

/// A payload that serializes as bytes (postcard: a length and the bytes),
/// as a user sending blobs would write it.
#[derive(Clone)]
struct Payload(Bytes);

impl Serialize for Payload {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(&self.0)
    }
}

impl<'de> Deserialize<'de> for Payload {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Bytes1;
        impl Visitor<'_> for Bytes1 {
            type Value = Payload;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("bytes")
            }
            fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Payload, E> {
                Ok(Payload(Bytes::copy_from_slice(v)))
            }
        }
        deserializer.deserialize_bytes(Bytes1)
    }
}

fn arg(args: &[String], name: &str) -> Option<u64> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
}

fn median(mut rates: Vec<f64>) -> f64 {
    rates.sort_by(f64::total_cmp);
    rates[rates.len() / 2]
}

/// Run the row: `--ref-messages N` (default 100,000) elements per run,
/// `--ref-window N` (default 128) in flight, on the server at `url`;
/// `rt` drives both connections.
pub fn run(args: &[String], rt: &tokio::runtime::Runtime, url: &str, runs: usize) {
    let n = arg(args, "--ref-messages").unwrap_or(100_000);
    let window = u32::try_from(arg(args, "--ref-window").unwrap_or(128))
        .expect("a window that fits u32")
        .max(1);
    let node = |name: &str| {
        let system = ActorSystem::new(name).expect("a valid name");
        let nats = Nats::connect(rt.handle(), url).expect("connects");
        let remote =
            RemoteActorSystem::start(&system, &nats, RemoteSettings::default()).expect("serves");
        (system, nats, remote)
    };
    let (made_system, made_nats, made_remote) = node("refs-made");
    let (runs_system, runs_nats, runs_remote) = node("refs-runs");
    let made = StreamRefs::new(&made_remote);
    let runner = StreamRefs::new(&runs_remote).window(window);
    let (made_mat, runs_mat) = (
        Materializer::new(&made_system),
        Materializer::new(&runs_system),
    );
    let payload = Bytes::from(vec![7u8; PAYLOAD]);

    let weir_run = || {
        let element = Payload(payload.clone());
        let start = Instant::now();
        let source_ref = Source::repeat(element)
            .take(n)
            .run_with(made.source_ref(), &made_mat);
        let got = source_ref
            .source(&runner)
            .run_with(Sink::fold(0u64, |count, _: Payload| count + 1), &runs_mat)
            .wait()
            .expect("the stream completes");
        assert_eq!(got, n);
        n as f64 / start.elapsed().as_secs_f64()
    };
    let raw_run = || {
        let (publisher, subscriber) = (made_nats.client().clone(), runs_nats.client().clone());
        let payload = payload.clone();
        let batch = u64::from((window / 4).max(1));
        rt.block_on(async move {
            let mut data = subscriber
                .subscribe("bench.refs.data")
                .await
                .expect("subscribed");
            let mut credit = publisher
                .subscribe("bench.refs.credit")
                .await
                .expect("subscribed");
            subscriber.flush().await.expect("flushed");
            publisher.flush().await.expect("flushed");
            let start = Instant::now();
            let consumer = tokio::spawn(async move {
                let (mut got, mut owed) = (0u64, 0u64);
                while got < n {
                    data.next().await.expect("a message");
                    got += 1;
                    owed += 1;
                    if owed >= batch || got == n {
                        let back = Bytes::copy_from_slice(&owed.to_le_bytes());
                        subscriber
                            .publish("bench.refs.credit", back)
                            .await
                            .expect("sent");
                        owed = 0;
                    }
                }
            });
            let (mut sent, mut in_flight) = (0u64, 0u64);
            while sent < n {
                while sent < n && in_flight < u64::from(window) {
                    publisher
                        .publish("bench.refs.data", payload.clone())
                        .await
                        .expect("sent");
                    sent += 1;
                    in_flight += 1;
                }
                let back = credit.next().await.expect("credit");
                let back = u64::from_le_bytes(back.payload[..8].try_into().expect("8 bytes"));
                in_flight = in_flight.saturating_sub(back);
            }
            consumer.await.expect("the consumer finishes");
            n as f64 / start.elapsed().as_secs_f64()
        })
    };

    println!(
        "Stream ref vs raw pub/sub: {n} elements of {PAYLOAD} B, window {window}, two connections, median of {runs} runs"
    );
    println!("{:<52} {:>12} {:>7}", "variant", "elems/s", "ratio");
    let mut weir = Vec::new();
    let mut raw = Vec::new();
    for _ in 0..runs {
        raw.push(raw_run());
        weir.push(weir_run());
    }
    let (weir, raw) = (median(weir), median(raw));
    println!(
        "{:<52} {raw:>12.0} {:>6.2}x",
        "raw publish/subscribe, credit every window/4", 1.0
    );
    println!(
        "{:<52} {weir:>12.0} {:>6.2}x",
        "weir SourceRef -> Source (fold)",
        weir / raw
    );
    drop((made_remote, runs_remote));
    for system in [made_system, runs_system] {
        let _ = system.terminate().wait_timeout(Duration::from_secs(10));
    }
}
