//! JetStream connectors against a real `nats-server -js` (started per test
//! on a random loopback port): publish with acks, demand-driven pulls,
//! at-least-once redelivery after AckWait, at-most-once auto-ack, a
//! rejected publish, and a server restart mid-stream. Runs with
//! `--features nats` (CI: its own step).
//!
//! AckWait is the server's own timer (real time), so the redelivery test
//! uses a 3 s AckWait and waits for the redelivered messages: long enough
//! that a first run slowed by a loaded machine still acks its even messages
//! before the server would redeliver them (with 1 s the test failed now and
//! then on a loaded machine).

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_nats::jetstream::{self, consumer::pull, stream};
use weir_benches::nats_server::NatsServer;
use weir_interop::{Committable, JetStreamSettings, Nats, NatsError, NatsSink, NatsSource};
use weir_streams::prelude::*;
use weir_streams::{ErrorKind, StreamError};

const PATIENCE: Duration = Duration::from_secs(30);

fn eventually(timeout: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

struct Setup {
    server: NatsServer,
    runtime: tokio::runtime::Runtime,
    nats: Nats,
    system: weir_actor::ActorSystem,
    materializer: Materializer,
}

impl Setup {
    /// A server, a client, and a file-backed stream `ORDERS` on `orders.>`.
    fn new(name: &str) -> Self {
        let server = NatsServer::start().expect("nats-server starts (is it installed?)");
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a runtime");
        let client = runtime
            .block_on(
                async_nats::ConnectOptions::new()
                    .retry_on_initial_connect()
                    .connect(server.url()),
            )
            .expect("connects");
        let nats = Nats::new(runtime.handle(), client);
        runtime
            .block_on(nats.jetstream().create_stream(stream::Config {
                name: "ORDERS".into(),
                subjects: vec!["orders.>".into()],
                storage: stream::StorageType::File,
                ..Default::default()
            }))
            .expect("a stream");
        let system = weir_actor::ActorSystem::new(name).expect("a valid name");
        let materializer = Materializer::new(&system);
        Self {
            server,
            runtime,
            nats,
            system,
            materializer,
        }
    }

    fn publish(&self, range: std::ops::Range<u32>) {
        let sink = NatsSink::jetstream_publish(&self.nats, |n: &String| format!("orders.{n}"), 32)
            .expect("a valid window");
        let published = Source::from_iter(range.clone().map(|n| n.to_string()))
            .run_with(sink, &self.materializer);
        assert_eq!(
            published.wait_timeout(PATIENCE).expect("published in time"),
            Ok(u64::from(range.end - range.start))
        );
    }

    fn consumer_info(&self, durable: &str) -> jetstream::consumer::Info {
        self.runtime
            .block_on(async {
                let stream = self.nats.jetstream().get_stream("ORDERS").await?;
                let mut consumer: jetstream::consumer::PullConsumer =
                    stream.get_consumer(durable).await?;
                Ok::<_, async_nats::Error>(consumer.info().await?.clone())
            })
            .expect("consumer info")
    }

    fn settings(&self, batch: usize) -> JetStreamSettings {
        JetStreamSettings::new(&self.nats, "ORDERS")
            .batch(batch)
            .expires(Duration::from_millis(500))
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        let _ = self.system.terminate().wait();
    }
}

fn durable(name: &str, ack_wait: Duration) -> pull::Config {
    pull::Config {
        durable_name: Some(name.into()),
        ack_wait,
        ..Default::default()
    }
}

fn number(message: &async_nats::Message) -> u32 {
    std::str::from_utf8(&message.payload)
        .expect("utf-8")
        .parse()
        .expect("a number")
}

fn nats_error(error: &StreamError) -> Option<&NatsError> {
    match error.kind() {
        ErrorKind::Custom(custom) => custom.downcast_ref::<NatsError>(),
        _ => None,
    }
}

#[test]
fn published_messages_are_consumed_in_order_and_acked() {
    let s = Setup::new("js-roundtrip");
    s.publish(0..500);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let acked = NatsSource::jetstream(
        &durable("roundtrip", Duration::from_secs(30)),
        &s.settings(64),
    )
    .take(500)
    .map(move |c: Committable<async_nats::Message>| {
        record.lock().unwrap().push(number(c.value()));
        c
    })
    .run_with(NatsSink::ack(16).unwrap(), &s.materializer);
    assert_eq!(acked.wait_timeout(PATIENCE).expect("in time"), Ok(500));
    assert_eq!(*seen.lock().unwrap(), (0..500).collect::<Vec<_>>());
    assert!(eventually(PATIENCE, || {
        let info = s.consumer_info("roundtrip");
        info.num_ack_pending == 0 && info.ack_floor.stream_sequence == 500
    }));
}

#[test]
fn the_source_pulls_only_what_downstream_asked_for() {
    let s = Setup::new("js-demand");
    s.publish(0..100);
    // Batch 1: every pull request is for the one element downstream asked for.
    let got = NatsSource::jetstream(
        &durable("one-by-one", Duration::from_secs(30)),
        &s.settings(1),
    )
    .take(3)
    .run_with(Sink::collect(), &s.materializer);
    assert_eq!(
        got.wait_timeout(PATIENCE).expect("in time").unwrap().len(),
        3
    );
    let info = s.consumer_info("one-by-one");
    assert_eq!(info.delivered.consumer_sequence, 3, "{info:?}");

    // Batch 10: at most one batch beyond what was taken.
    let got = NatsSource::jetstream(&durable("by-ten", Duration::from_secs(30)), &s.settings(10))
        .take(3)
        .run_with(Sink::collect(), &s.materializer);
    assert_eq!(
        got.wait_timeout(PATIENCE).expect("in time").unwrap().len(),
        3
    );
    // The server delivers the pull's batch of 10 on its own time, and
    // stops when the ended stream's subscription goes (which may come
    // first: an island is a pool task and ends at once). Wait until the
    // count settles, then check that nothing went beyond one batch.
    let delivered = settled(PATIENCE, || {
        s.consumer_info("by-ten").delivered.consumer_sequence
    });
    assert!(
        (3..=10).contains(&delivered),
        "one batch at most: {:?}",
        s.consumer_info("by-ten")
    );
}

/// The value `read` gives once two reads 200 ms apart agree (the server's
/// own bookkeeping, on real time), or the last one after `patience`.
fn settled(patience: Duration, read: impl Fn() -> u64) -> u64 {
    let deadline = std::time::Instant::now() + patience;
    let mut last = read();
    loop {
        std::thread::sleep(Duration::from_millis(200));
        let now = read();
        if now == last || std::time::Instant::now() > deadline {
            return now;
        }
        last = now;
    }
}

#[test]
fn messages_not_acked_are_redelivered_after_ack_wait() {
    let s = Setup::new("js-redeliver");
    s.publish(0..10);
    let config = durable("at-least-once", Duration::from_secs(3));
    // Ack the even ones only; the odd ones "fail" and are dropped un-acked.
    let acked = NatsSource::jetstream(&config, &s.settings(10))
        .take(10)
        .filter(|c: &Committable<async_nats::Message>| number(c.value()).is_multiple_of(2))
        .run_with(NatsSink::ack(4).unwrap(), &s.materializer);
    assert_eq!(acked.wait_timeout(PATIENCE).expect("in time"), Ok(5));

    // A new run of the same durable consumer gets the odd ones again.
    let again = NatsSource::jetstream(&config, &s.settings(10))
        .take(5)
        .map(|c: Committable<async_nats::Message>| (number(c.value()), c.delivered()))
        .run_with(Sink::collect(), &s.materializer);
    let again = again.wait_timeout(PATIENCE).expect("in time").unwrap();
    assert_eq!(again, vec![(1, 2), (3, 2), (5, 2), (7, 2), (9, 2)]);
}

#[test]
fn auto_ack_is_at_most_once() {
    let s = Setup::new("js-auto-ack");
    s.publish(0..6);
    let config = durable("at-most-once", Duration::from_secs(1));
    let first = NatsSource::jetstream_auto_ack(&config, &s.settings(1))
        .take(3)
        .map(|m| number(&m))
        .run_with(Sink::collect(), &s.materializer);
    assert_eq!(
        first.wait_timeout(PATIENCE).expect("in time").unwrap(),
        vec![0, 1, 2]
    );
    // Even after AckWait, the next run starts after them.
    std::thread::sleep(Duration::from_millis(1200));
    let second = NatsSource::jetstream_auto_ack(&config, &s.settings(1))
        .take(3)
        .map(|m| number(&m))
        .run_with(Sink::collect(), &s.materializer);
    assert_eq!(
        second.wait_timeout(PATIENCE).expect("in time").unwrap(),
        vec![3, 4, 5]
    );
}

#[test]
fn a_rejected_publish_fails_with_its_subject() {
    let s = Setup::new("js-reject");
    let sink = NatsSink::jetstream_publish(
        &s.nats,
        |n: &String| {
            if n == "2" {
                "nowhere.2".to_string()
            } else {
                format!("orders.{n}")
            }
        },
        1,
    )
    .unwrap();
    let result = Source::from_iter((0..5).map(|n: u32| n.to_string()))
        .run_with(sink, &s.materializer)
        .wait_timeout(PATIENCE)
        .expect("in time");
    let error = result.expect_err("no stream listens on nowhere.>");
    let nats = nats_error(&error).expect("a NatsError");
    assert!(matches!(nats, NatsError::Publish { .. }), "{nats:?}");
    assert_eq!(nats.subject(), Some("nowhere.2"));
    // The two before it were stored.
    let info = s
        .runtime
        .block_on(async {
            let mut stream = s.nats.jetstream().get_stream("ORDERS").await?;
            Ok::<_, async_nats::Error>(stream.info().await?.clone())
        })
        .expect("stream info");
    assert_eq!(info.state.messages, 2);
}

#[test]
fn an_unknown_stream_fails_the_source() {
    let s = Setup::new("js-unknown");
    let result = NatsSource::jetstream(
        &durable("x", Duration::from_secs(1)),
        &JetStreamSettings::new(&s.nats, "NO_SUCH_STREAM"),
    )
    .run_with(Sink::ignore(), &s.materializer)
    .wait_timeout(PATIENCE)
    .expect("in time");
    let error = result.expect_err("no such stream");
    assert!(
        matches!(nats_error(&error), Some(NatsError::Consumer { stream, .. }) if stream == "NO_SUCH_STREAM"),
        "{error:?}"
    );
}

#[test]
fn a_server_restart_mid_stream_loses_no_acked_message() {
    let mut s = Setup::new("js-restart");
    s.publish(0..300);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let throttle = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let slow = throttle.clone();
    let acked = NatsSource::jetstream(
        &durable("survivor", Duration::from_secs(2)),
        &s.settings(20),
    )
    .map(move |c: Committable<async_nats::Message>| {
        if slow.load(std::sync::atomic::Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(2));
        }
        record.lock().unwrap().push(number(c.value()));
        c
    })
    .run_with(NatsSink::ack(8).unwrap(), &s.materializer);
    assert!(eventually(PATIENCE, || seen.lock().unwrap().len() >= 50));
    s.server
        .restart()
        .expect("restarts on the same port and store");
    let before = seen.lock().unwrap().len();
    assert!(before < 300, "the restart came mid-stream ({before} seen)");
    throttle.store(false, std::sync::atomic::Ordering::Relaxed);
    // Every message arrives at least once, and ends up acked.
    assert!(
        eventually(Duration::from_secs(60), || {
            seen.lock()
                .unwrap()
                .iter()
                .copied()
                .collect::<BTreeSet<_>>()
                .len()
                == 300
        }),
        "saw {} distinct",
        seen.lock()
            .unwrap()
            .iter()
            .copied()
            .collect::<BTreeSet<_>>()
            .len()
    );
    assert!(eventually(Duration::from_secs(60), || {
        let info = s.consumer_info("survivor");
        info.num_ack_pending == 0 && info.ack_floor.stream_sequence == 300
    }));
    // Duplicates only for what was in flight across the restart: two
    // pulls of 20, and in the ack sink one batch of 8 gathering and one
    // being confirmed, and one element between the stages.
    let seen = seen.lock().unwrap().clone();
    eprintln!(
        "{before} before the restart, {} deliveries in all",
        seen.len()
    );
    assert!(
        seen.len() <= 300 + 2 * 20 + 2 * 8 + 1,
        "{} deliveries",
        seen.len()
    );
    assert!(
        !acked.is_completed(),
        "the source keeps going after the restart"
    );
}

/// Consume 500 messages into `NatsSink::ack` while a second connection
/// counts the acks on the wire; return the acks seen and the consumer's
/// state read (on that other connection) right after the sink completed.
fn ack_and_watch_the_wire(s: &Setup, config: pull::Config) -> (usize, jetstream::consumer::Info) {
    let durable = config.durable_name.clone().expect("durable");
    let observer = Nats::connect(s.runtime.handle(), &s.server.url()).expect("connects");
    let mut acks = s
        .runtime
        .block_on(async {
            let acks = observer
                .client()
                .subscribe(format!("$JS.ACK.ORDERS.{durable}.>"))
                .await?;
            observer.client().flush().await?;
            Ok::<_, async_nats::Error>(acks)
        })
        .expect("subscribed");
    let acked = NatsSource::jetstream(&config, &s.settings(64))
        .take(500)
        .run_with(NatsSink::ack(16).expect("a valid window"), &s.materializer);
    assert_eq!(acked.wait_timeout(PATIENCE).expect("in time"), Ok(500));
    // No waiting: the sink's completion means the server has every ack.
    let info = s
        .runtime
        .block_on(async {
            let stream = observer.jetstream().get_stream("ORDERS").await?;
            let mut consumer: jetstream::consumer::PullConsumer =
                stream.get_consumer(&durable).await?;
            Ok::<_, async_nats::Error>(consumer.info().await?.clone())
        })
        .expect("consumer info");
    // The server forwarded every ack before answering the confirmed last.
    let seen = s.runtime.block_on(async {
        use futures_util::StreamExt;
        let mut seen = 0;
        while let Ok(Some(_)) = tokio::time::timeout(Duration::from_millis(200), acks.next()).await
        {
            seen += 1;
        }
        seen
    });
    (seen, info)
}

#[test]
fn ack_sink_completion_means_the_server_has_every_ack() {
    let s = Setup::new("js-ack-confirmed");
    s.publish(0..500);
    let (seen, info) = ack_and_watch_the_wire(&s, durable("explicit", Duration::from_secs(30)));
    assert_eq!(info.ack_floor.consumer_sequence, 500, "{info:?}");
    assert_eq!(info.ack_floor.stream_sequence, 500, "{info:?}");
    assert_eq!(info.num_ack_pending, 0, "{info:?}");
    // AckPolicy::Explicit: every message is acked on its own.
    assert_eq!(seen, 500);
}

#[test]
fn ack_sink_acks_only_the_highest_of_a_run_under_ack_policy_all() {
    let s = Setup::new("js-ack-all");
    s.publish(0..500);
    let config = pull::Config {
        ack_policy: jetstream::consumer::AckPolicy::All,
        ..durable("all", Duration::from_secs(30))
    };
    let (seen, info) = ack_and_watch_the_wire(&s, config);
    assert_eq!(info.ack_floor.consumer_sequence, 500, "{info:?}");
    assert_eq!(info.num_ack_pending, 0, "{info:?}");
    // Batches of at most 16: at least 500 / 16 acks, far fewer than 500.
    assert!((32..500).contains(&seen), "{seen} acks on the wire");
}

/// `jetstream_with_context` carries each ack handle beside its message
/// through `ContextOps`; `ack_with_context` acks what reaches it. A
/// message the `filter` drops goes with its handle: it stays un-acked.
#[test]
fn messages_with_their_ack_handle_as_context_are_acked_unless_dropped() {
    use weir_streams::ContextOps;
    let s = Setup::new("js-context");
    s.publish(0..20);
    let acked = NatsSource::jetstream_with_context(
        &durable("context", Duration::from_secs(30)),
        &s.settings(64),
    )
    .via_tuples(Flow::new().take(20))
    .map(|message| number(&message))
    .filter(|n| n % 2 == 0)
    .as_source()
    .run_with(NatsSink::ack_with_context(4).unwrap(), &s.materializer);
    assert_eq!(acked.wait_timeout(PATIENCE).expect("in time"), Ok(10));
    assert!(eventually(PATIENCE, || {
        let info = s.consumer_info("context");
        info.num_ack_pending == 10 && info.num_pending == 0
    }));
}
