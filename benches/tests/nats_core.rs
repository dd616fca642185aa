//! Core NATS connectors against a real `nats-server` (started per test on a
//! random loopback port): subscribe and publish, counted drops when
//! downstream is slower than the publisher, an invalid subject. Runs with
//! `--features nats` (CI: its own step).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use weir_benches::nats_server::NatsServer;
use weir_interop::{Nats, NatsError, NatsSink, NatsSource, Subscription};
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
    fn new(name: &str) -> Self {
        let server = NatsServer::start().expect("nats-server starts (is it installed?)");
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a runtime");
        let nats = Nats::connect(runtime.handle(), &server.url()).expect("connects");
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
}

impl Drop for Setup {
    fn drop(&mut self) {
        let _ = self.system.terminate().wait();
    }
}

fn nats_error(error: &StreamError) -> Option<&NatsError> {
    match error.kind() {
        ErrorKind::Custom(custom) => custom.downcast_ref::<NatsError>(),
        _ => None,
    }
}

#[test]
fn what_is_published_is_received_in_order() {
    let s = Setup::new("core-roundtrip");
    let (subscription, got) = NatsSource::subscribe(&s.nats, "events.*", 1024)
        .take(200)
        .map(|m: async_nats::Message| (m.subject.to_string(), m.payload.to_vec()))
        .to_mat(Sink::collect(), Keep::both)
        .run(&s.materializer);
    let Subscription {
        dropped,
        subscribed,
        ..
    } = subscription;
    subscribed
        .wait_timeout(PATIENCE)
        .expect("in time")
        .expect("subscribed");
    let published = Source::from_iter(0..200u32)
        .map(|n| n.to_string())
        .run_with(
            NatsSink::publish(&s.nats, |n: &String| format!("events.{}", n.len())),
            &s.materializer,
        );
    assert_eq!(published.wait_timeout(PATIENCE).expect("in time"), Ok(200));
    let got = got
        .wait_timeout(PATIENCE)
        .expect("in time")
        .expect("received");
    let expected: Vec<_> = (0..200u32)
        .map(|n| {
            (
                format!("events.{}", n.to_string().len()),
                n.to_string().into_bytes(),
            )
        })
        .collect();
    assert_eq!(got, expected);
    assert_eq!(dropped.get(), 0);
}

#[test]
fn a_slow_downstream_drops_are_counted_not_silent() {
    let s = Setup::new("core-slow");
    let gate = Arc::new(AtomicBool::new(false));
    let received = Arc::new(AtomicU64::new(0));
    let (held, count) = (gate.clone(), received.clone());
    let (subscription, _done) = NatsSource::subscribe(&s.nats, "burst", 8)
        .map(move |_m: async_nats::Message| {
            while !held.load(Ordering::Acquire) {
                std::thread::sleep(Duration::from_millis(1));
            }
            count.fetch_add(1, Ordering::Relaxed);
        })
        .to_mat(Sink::ignore(), Keep::both)
        .run(&s.materializer);
    let Subscription {
        dropped,
        subscribed,
        ..
    } = subscription;
    subscribed
        .wait_timeout(PATIENCE)
        .expect("in time")
        .expect("subscribed");
    let published = Source::from_iter(0..500u32)
        .map(|n| n.to_string())
        .run_with(
            NatsSink::publish(&s.nats, |_: &String| "burst".into()),
            &s.materializer,
        );
    assert_eq!(published.wait_timeout(PATIENCE).expect("in time"), Ok(500));
    // Downstream holds the first message: the buffer fills, the rest drop.
    assert!(
        eventually(PATIENCE, || dropped.get() >= 480),
        "dropped {}",
        dropped.get()
    );
    gate.store(true, Ordering::Release);
    assert!(
        eventually(PATIENCE, || received.load(Ordering::Relaxed)
            + dropped.get()
            == 500),
        "received {} + dropped {}",
        received.load(Ordering::Relaxed),
        dropped.get()
    );
}

#[test]
fn the_clients_own_slow_consumer_drops_are_counted() {
    let s = Setup::new("core-client-slow");
    // A client whose subscription channel holds 4 messages: a burst read
    // in one go overflows it before the source's task can drain it.
    let options = async_nats::ConnectOptions::new().subscription_capacity(4);
    let small = Nats::connect_with(s.runtime.handle(), &s.server.url(), options).expect("connects");
    let received = Arc::new(AtomicU64::new(0));
    let count = received.clone();
    // The source's own buffer holds everything: any drop is the client's.
    let (subscription, _done) = NatsSource::subscribe(&small, "flood", 100_000)
        .map(move |_m: async_nats::Message| {
            count.fetch_add(1, Ordering::Relaxed);
        })
        .to_mat(Sink::ignore(), Keep::both)
        .run(&s.materializer);
    let Subscription {
        dropped,
        subscribed,
        ..
    } = subscription;
    subscribed
        .wait_timeout(PATIENCE)
        .expect("in time")
        .expect("subscribed");
    let published = Source::from_iter(0..20_000u32)
        .map(|n| n.to_string())
        .run_with(
            NatsSink::publish(&s.nats, |_: &String| "flood".into()),
            &s.materializer,
        );
    assert_eq!(
        published.wait_timeout(PATIENCE).expect("in time"),
        Ok(20_000)
    );
    assert!(
        eventually(PATIENCE, || dropped.get() > 0),
        "the client dropped nothing? received {}",
        received.load(Ordering::Relaxed)
    );
    // Each message is counted at most once, received or dropped.
    assert!(received.load(Ordering::Relaxed) + dropped.get() <= 20_000);
}

#[test]
fn an_invalid_subject_fails_the_publish_with_it() {
    let s = Setup::new("core-invalid");
    let result = Source::from_iter(["a", "b"])
        .run_with(
            NatsSink::publish(&s.nats, |x: &&str| {
                if *x == "b" {
                    "bad subject".into()
                } else {
                    "ok".into()
                }
            }),
            &s.materializer,
        )
        .wait_timeout(PATIENCE)
        .expect("in time");
    let error = result.expect_err("a space is not allowed in a subject");
    let nats = nats_error(&error).expect("a NatsError");
    assert_eq!(nats.subject(), Some("bad subject"), "{nats:?}");
}

/// A client for a server that is not there: a closed loopback port, with
/// the client retrying in the background (it connects "successfully").
fn unreachable(runtime: &tokio::runtime::Runtime, options: async_nats::ConnectOptions) -> Nats {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free loopback port")
        .port(); // closed again when the listener drops
    let options = options.retry_on_initial_connect();
    Nats::connect_with(
        runtime.handle(),
        &format!("nats://127.0.0.1:{port}"),
        options,
    )
    .expect("retries in the background")
}

#[test]
fn an_unreachable_server_fails_the_publish_at_its_time_out() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime");
    let nats = unreachable(&runtime, async_nats::ConnectOptions::new());
    let system = weir_actor::ActorSystem::new("core-unreachable").expect("a valid name");
    let materializer = Materializer::new(&system);
    let started = Instant::now();
    let result = Source::from_iter(["a", "b"])
        .run_with(
            NatsSink::publish_within(&nats, Duration::from_millis(300), |_: &&str| {
                "events.x".to_string()
            }),
            &materializer,
        )
        .wait_timeout(PATIENCE)
        .expect("the flush is bounded");
    let error = result.expect_err("nothing reached a server");
    // The two publishes wait in the client's buffer; the flush times out.
    assert!(
        matches!(
            nats_error(&error),
            Some(NatsError::TimedOut { subject: None, after }) if *after == Duration::from_millis(300)
        ),
        "{error:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    system.terminate().wait().unwrap();
}

#[test]
fn an_unreachable_server_fails_a_publish_waiting_for_room_at_its_time_out() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime");
    // Room for two commands: the third publish waits for room that never comes.
    let nats = unreachable(
        &runtime,
        async_nats::ConnectOptions::new().client_capacity(2),
    );
    let system = weir_actor::ActorSystem::new("core-unreachable-full").expect("a valid name");
    let materializer = Materializer::new(&system);
    let result = Source::from_iter(0..100u32)
        .map(|n| n.to_string())
        .run_with(
            NatsSink::publish_within(&nats, Duration::from_millis(300), |_: &String| {
                "events.full".to_string()
            }),
            &materializer,
        )
        .wait_timeout(PATIENCE)
        .expect("the publish is bounded");
    let error = result.expect_err("nothing reached a server");
    let nats_error = nats_error(&error).expect("a NatsError");
    assert!(
        matches!(
            nats_error,
            NatsError::TimedOut {
                subject: Some(_),
                ..
            }
        ),
        "{nats_error:?}"
    );
    assert_eq!(nats_error.subject(), Some("events.full"));
    system.terminate().wait().unwrap();
}
