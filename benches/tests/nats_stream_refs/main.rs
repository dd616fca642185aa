//! Stream refs over core NATS on a real `nats-server`: elements in order
//! through the credit window (and the producer never further ahead than
//! the window), completion, failure and cancellation both ways, the
//! subscription time-out (on a `TestClock`), a ref that runs once, a
//! server restart, and, with a second OS process (`weir-nats-peer-refs`,
//! in `processes`), refs sent in remote actor messages and either process
//! killed mid-stream. Runs with `--features nats` (CI: the NATS step).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use weir_actor::ActorSystem;
use weir_actor::testkit::TestClock;
use weir_benches::nats_server::NatsServer;
use weir_interop::{
    Nats, RemoteActorSystem, RemoteSettings, SinkRef, SourceRef, StreamRefError, StreamRefs,
};
use weir_streams::prelude::*;
use weir_streams::{Completion, ErrorKind, StreamError};

mod processes;

const PATIENCE: Duration = Duration::from_secs(20);
const INTERVAL: Duration = Duration::from_millis(100);
const TIMEOUT: Duration = Duration::from_secs(1);

fn settings() -> RemoteSettings {
    RemoteSettings::default().heartbeat(INTERVAL, TIMEOUT)
}

struct Setup {
    server: NatsServer,
    runtime: tokio::runtime::Runtime,
}

impl Setup {
    fn new() -> Self {
        let server = NatsServer::start().expect("nats-server starts (is it installed?)");
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a runtime");
        Self { server, runtime }
    }

    fn node(&self, name: &str) -> Node {
        self.node_on(ActorSystem::new(name).expect("a valid name"))
    }

    fn node_on(&self, system: ActorSystem) -> Node {
        let nats = Nats::connect(self.runtime.handle(), &self.server.url()).expect("connects");
        let remote = RemoteActorSystem::start(&system, &nats, settings()).expect("serves");
        let refs = StreamRefs::new(&remote);
        Node {
            materializer: Materializer::new(&system),
            system,
            remote: Some(remote),
            refs,
        }
    }
}

struct Node {
    system: ActorSystem,
    remote: Option<RemoteActorSystem>,
    materializer: Materializer,
    refs: StreamRefs,
}

impl Node {
    fn remote(&self) -> &RemoteActorSystem {
        self.remote.as_ref().expect("running")
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.remote = None;
        let _ = self.system.terminate().wait();
    }
}

/// The stream ref error a stream failed with.
fn ref_error(error: &StreamError) -> Option<&StreamRefError> {
    match error.kind() {
        ErrorKind::Custom(custom) => custom.downcast_ref::<StreamRefError>(),
        _ => None,
    }
}

fn wait<T>(completion: Completion<T>) -> Result<T, StreamError> {
    completion
        .wait_timeout(PATIENCE)
        .unwrap_or_else(|_| panic!("the stream did not finish in {PATIENCE:?}"))
}

#[test]
fn a_source_ref_delivers_in_order_and_the_producer_stays_within_the_window() {
    let s = Setup::new();
    let made = s.node("made");
    let runs = s.node("runs");
    let window = 8u32;
    let produced = Arc::new(AtomicU64::new(0));
    let ahead = Arc::new(AtomicU64::new(0));
    let counted = produced.clone();
    let source_ref = Source::range(0u64..2_000)
        .map(move |x| {
            counted.fetch_add(1, Ordering::SeqCst);
            x
        })
        .run_with(made.refs.source_ref(), &made.materializer);
    let (produced_seen, ahead_seen) = (produced.clone(), ahead.clone());
    let mut consumed = 0u64;
    let got = source_ref
        .source(&runs.refs.clone().window(window))
        .map(move |x| {
            consumed += 1;
            let p = produced_seen.load(Ordering::SeqCst);
            ahead_seen.fetch_max(p.saturating_sub(consumed), Ordering::SeqCst);
            // A slow consumer: the producer waits on its credit.
            std::thread::sleep(Duration::from_micros(200));
            x
        })
        .run_with(Sink::collect(), &runs.materializer);
    let got = wait(got).expect("completes");
    assert_eq!(got, (0..2_000).collect::<Vec<_>>());
    let ahead = ahead.load(Ordering::SeqCst);
    // Credit is the consumer's window past what it pushed downstream,
    // and one pushed element may not have been counted yet.
    assert!(
        ahead <= u64::from(window) + 1,
        "the producer ran {ahead} ahead"
    );
    assert!(
        ahead >= u64::from(window) / 2,
        "never ahead ({ahead}): nothing measured"
    );
}

#[test]
fn a_sink_ref_takes_every_element_in_order_and_completes_both_ends() {
    let s = Setup::new();
    let made = s.node("made");
    let runs = s.node("runs");
    let (sink_ref, got) = made
        .refs
        .clone()
        .window(4)
        .sink_ref::<String>()
        .to_mat(Sink::collect(), Keep::both)
        .run(&made.materializer);
    let done = Source::range(0u32..500)
        .map(|n| format!("element {n}"))
        .run_with(sink_ref.sink(&runs.refs), &runs.materializer);
    assert_eq!(wait(done), Ok(()));
    let got = wait(got).expect("completes");
    assert_eq!(
        got,
        (0..500).map(|n| format!("element {n}")).collect::<Vec<_>>()
    );
}

#[test]
fn failure_propagates_with_its_message_both_ways() {
    let s = Setup::new();
    let made = s.node("made");
    let runs = s.node("runs");
    // Fails on pulling its sixth element (a panic in user code fails the
    // stream with its message).
    let failing = || {
        Source::range(0u64..10).map(|x| {
            assert!(x < 5, "the oven caught fire");
            x
        })
    };

    // Made as a source ref: the running source fails, after the elements.
    let source_ref = failing().run_with(made.refs.source_ref(), &made.materializer);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let result = source_ref
        .source(&runs.refs)
        .map(move |x| {
            log.lock().unwrap().push(x);
            x
        })
        .run_with(Sink::ignore(), &runs.materializer);
    let error = wait(result).expect_err("fails");
    match ref_error(&error) {
        Some(StreamRefError::RemoteFailed(message)) => {
            assert!(message.contains("the oven caught fire"), "{message}");
        }
        other => panic!("not a remote failure: {other:?} ({error})"),
    }
    assert_eq!(*seen.lock().unwrap(), vec![0, 1, 2, 3, 4]);

    // Made as a sink ref: the origin's source fails with the runner's
    // upstream failure.
    let (sink_ref, result) = made
        .refs
        .sink_ref::<u64>()
        .to_mat(Sink::ignore(), Keep::both)
        .run(&made.materializer);
    let done = failing().run_with(sink_ref.sink(&runs.refs), &runs.materializer);
    assert!(
        wait(done).is_err(),
        "the runner's completion reports the failure"
    );
    let error = wait(result).expect_err("fails");
    assert!(
        matches!(ref_error(&error), Some(StreamRefError::RemoteFailed(m)) if m.contains("the oven caught fire")),
        "{error}"
    );
}

#[test]
fn cancellation_propagates_both_ways_with_its_cause() {
    let s = Setup::new();
    let made = s.node("made");
    let runs = s.node("runs");

    // The running source takes 3 and cancels: the origin's upstream is
    // cancelled normally.
    let (watched, source_ref) = Source::repeat(7u64)
        .via_mat(Flow::watch_termination(), Keep::right)
        .to_mat(made.refs.source_ref(), Keep::both)
        .run(&made.materializer);
    let got = source_ref
        .source(&runs.refs)
        .take(3)
        .run_with(Sink::collect(), &runs.materializer);
    assert_eq!(wait(got), Ok(vec![7, 7, 7]));
    assert_eq!(wait(watched), Ok(()));

    // A failure downstream of the running source cancels the origin's
    // upstream with its message.
    let (watched, source_ref) = Source::repeat(7u64)
        .via_mat(Flow::watch_termination(), Keep::right)
        .to_mat(made.refs.source_ref(), Keep::both)
        .run(&made.materializer);
    let mut n = 0;
    let failed = source_ref
        .source(&runs.refs)
        .map(move |x| {
            n += 1;
            assert!(n < 3, "the sink broke");
            x
        })
        .run_with(Sink::ignore(), &runs.materializer);
    assert!(wait(failed).is_err());
    let error = wait(watched).expect_err("cancelled with a failure");
    assert!(
        matches!(ref_error(&error), Some(StreamRefError::RemoteCancelled(m)) if m.contains("the sink broke")),
        "{error}"
    );

    // Made as a sink ref: the origin's source is taken 3 from; the
    // running sink's upstream is cancelled and its completion completes.
    let (sink_ref, got) = made
        .refs
        .sink_ref::<u64>()
        .take(3)
        .to_mat(Sink::collect(), Keep::both)
        .run(&made.materializer);
    let (watched, done) = Source::repeat(9u64)
        .via_mat(Flow::watch_termination(), Keep::right)
        .to_mat(sink_ref.sink(&runs.refs), Keep::both)
        .run(&runs.materializer);
    assert_eq!(wait(got), Ok(vec![9, 9, 9]));
    assert_eq!(wait(watched), Ok(()));
    assert_eq!(wait(done), Ok(()));
}

#[test]
fn a_ref_not_run_in_time_fails_the_side_that_made_it() {
    let s = Setup::new();
    let clock = TestClock::new();
    let system = ActorSystem::builder()
        .name("made")
        .clock(clock.clone())
        .build()
        .expect("a valid name");
    let made = s.node_on(system);
    let refs = made
        .refs
        .clone()
        .subscription_timeout(Duration::from_secs(30));
    let (watched, _source_ref) = Source::repeat(1u64)
        .via_mat(Flow::watch_termination(), Keep::right)
        .to_mat(refs.source_ref(), Keep::both)
        .run(&made.materializer);
    let (_sink_ref, result) = refs
        .sink_ref::<u64>()
        .to_mat(Sink::ignore(), Keep::both)
        .run(&made.materializer);
    // The stages arm their timers as they start, on their own threads, at
    // some clock time of 0 or later: advance a second at a time until both
    // fail; not before 30 s of clock time.
    let mut advanced = Duration::ZERO;
    while !(watched.is_completed() && result.is_completed()) {
        assert!(
            advanced < Duration::from_secs(120),
            "no time-out in {advanced:?}"
        );
        clock.advance(Duration::from_secs(1));
        advanced += Duration::from_secs(1);
        eventually(Duration::from_millis(50), || {
            watched.is_completed() && result.is_completed()
        });
    }
    assert!(
        advanced >= Duration::from_secs(30),
        "timed out after {advanced:?}"
    );
    for completion in [
        wait(watched).expect_err("times out"),
        wait(result).expect_err("times out"),
    ] {
        assert!(
            matches!(ref_error(&completion), Some(StreamRefError::SubscriptionTimeout(after)) if *after == Duration::from_secs(30)),
            "{completion}"
        );
    }
}

#[test]
fn a_ref_runs_once_and_with_its_own_element_type() {
    let s = Setup::new();
    let made = s.node("made");
    let runs = s.node("runs");
    let source_ref = Source::repeat(1u64).run_with(made.refs.source_ref(), &made.materializer);
    // A ref travels as bytes: decoded with another element type, the
    // origin refuses it.
    let bytes = postcard::to_allocvec(&source_ref).expect("encodes");
    let wrong: SourceRef<String> = postcard::from_bytes(&bytes).expect("decodes");
    let refused = wrong
        .source(&runs.refs)
        .run_with(Sink::ignore(), &runs.materializer);
    let error = wait(refused).expect_err("refused");
    assert!(
        matches!(ref_error(&error), Some(StreamRefError::WrongType { .. })),
        "{error}"
    );

    // The first run pairs (its elements flow) and runs on; a second run
    // of a copy is refused.
    let copy: SourceRef<u64> = postcard::from_bytes(&bytes).expect("decodes");
    let flowing = Arc::new(AtomicU64::new(0));
    let count = flowing.clone();
    let first = source_ref
        .source(&runs.refs)
        .map(move |x| count.fetch_add(x, Ordering::SeqCst))
        .run_with(Sink::ignore(), &runs.materializer);
    assert!(eventually(PATIENCE, || flowing.load(Ordering::SeqCst) > 0));
    let second = copy
        .source(&runs.refs)
        .run_with(Sink::ignore(), &runs.materializer);
    let error = wait(second).expect_err("refused");
    assert!(
        matches!(ref_error(&error), Some(StreamRefError::AlreadyRun)),
        "{error}"
    );
    assert!(!first.is_completed(), "the first run goes on");

    // The same for a sink ref.
    let (sink_ref, got) = made
        .refs
        .sink_ref::<u64>()
        .to_mat(Sink::collect(), Keep::both)
        .run(&made.materializer);
    let first = Source::range(0u64..3).run_with(sink_ref.sink(&runs.refs), &runs.materializer);
    assert_eq!(wait(got), Ok(vec![0, 1, 2]));
    assert_eq!(wait(first), Ok(()));
    let again: SinkRef<u64> = sink_ref.clone();
    let second = Source::range(0u64..3).run_with(again.sink(&runs.refs), &runs.materializer);
    let error = wait(second).expect_err("no origin any more");
    assert!(
        matches!(
            ref_error(&error),
            Some(StreamRefError::AlreadyRun | StreamRefError::OriginNotFound(_))
        ),
        "{error}"
    );
}

#[test]
fn a_server_restart_within_the_time_out_is_survived_or_fails_typed() {
    let mut s = Setup::new();
    let made = s.node("made");
    let runs = s.node("runs");
    let source_ref = Source::from_iter(0u64..).run_with(made.refs.source_ref(), &made.materializer);
    let received = Arc::new(AtomicU64::new(0));
    let count = received.clone();
    let result = source_ref
        .source(&runs.refs)
        .map(move |x| {
            // In order, every one: the consumer checks the numbers, this
            // checks the consumer.
            assert_eq!(x, count.fetch_add(1, Ordering::SeqCst), "out of order");
            std::thread::sleep(Duration::from_micros(100));
        })
        .run_with(Sink::ignore(), &runs.materializer);
    assert!(eventually(PATIENCE, || received.load(Ordering::SeqCst) >= 500));
    s.server.restart().expect("restarts on the same port");
    let at_restart = received.load(Ordering::SeqCst);
    // Either the stream goes on past the restart, or it fails typed: never
    // stuck.
    let settled = eventually(PATIENCE, || {
        result.is_completed() || received.load(Ordering::SeqCst) >= at_restart + 2_000
    });
    assert!(settled, "neither went on nor failed: stuck at {at_restart}");
    if result.is_completed() {
        let error = wait(result).expect_err("an endless stream only fails");
        assert!(
            matches!(
                ref_error(&error),
                Some(StreamRefError::SequenceGap { .. } | StreamRefError::Unreachable(_))
            ),
            "{error}"
        );
        eprintln!("the restart failed the stream: {error}");
    } else {
        eprintln!("the stream survived the restart");
    }
}

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

#[test]
fn a_lost_element_fails_the_consumer_with_a_sequence_gap() {
    let s = Setup::new();
    let made = s.node("made");
    let runs = s.node("runs");
    let (sink_ref, result) = made
        .refs
        .sink_ref::<u64>()
        .to_mat(Sink::ignore(), Keep::both)
        .run(&made.materializer);
    let produced = Arc::new(AtomicU64::new(0));
    let count = produced.clone();
    let _done = Source::from_iter(0u64..)
        .map(move |x| {
            count.fetch_add(1, Ordering::SeqCst);
            x
        })
        .run_with(sink_ref.sink(&runs.refs), &runs.materializer);
    assert!(eventually(PATIENCE, || produced.load(Ordering::SeqCst) >= 1_000));
    // An element numbered far ahead of the stream, as if those before it
    // were lost, on the subject the ref names (postcard: a ref is its
    // subject and its system; a frame is its variant index, `Element` is
    // 3, then the number and the element, as varints).
    let (subject, _system): (String, String) =
        postcard::from_bytes(&postcard::to_allocvec(&sink_ref).expect("encodes"))
            .expect("a subject and a system");
    let far = 1u64 << 40;
    let mut frame = vec![3u8];
    frame.extend(postcard::to_allocvec(&far).expect("encodes"));
    frame.push(0);
    let client = s
        .runtime
        .block_on(async_nats::connect(s.server.url()))
        .expect("connects");
    s.runtime
        .block_on(async {
            client
                .publish(subject, frame.into())
                .await
                .expect("published");
            client.flush().await
        })
        .expect("flushed");
    let error = wait(result).expect_err("a gap fails");
    assert!(
        matches!(ref_error(&error), Some(StreamRefError::SequenceGap { got, .. }) if *got == far),
        "{error}"
    );
}

#[test]
fn refs_and_their_errors_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<StreamRefs>();
    send_sync::<SourceRef<String>>();
    send_sync::<SinkRef<std::rc::Rc<u8>>>();
    send_sync::<StreamRefError>();
}

#[test]
fn a_consumer_busier_than_the_time_out_is_not_taken_for_dead() {
    let s = Setup::new();
    let made = s.node("made");
    let runs = s.node("runs");
    let source_ref = Source::range(0u64..100).run_with(made.refs.source_ref(), &made.materializer);
    // User code that blocks the consuming end's island for two time-outs
    // (and the producing end's, in the other direction, below): the other
    // end hears from the blocked one all the same.
    let got = source_ref
        .source(&runs.refs)
        .map(|x| {
            if x == 10 {
                std::thread::sleep(TIMEOUT * 2);
            }
            x
        })
        .run_with(Sink::collect(), &runs.materializer);
    assert_eq!(wait(got), Ok((0..100).collect::<Vec<_>>()));

    let (sink_ref, got) = made
        .refs
        .sink_ref::<u64>()
        .to_mat(Sink::collect(), Keep::both)
        .run(&made.materializer);
    let done = Source::range(0u64..100)
        .map(|x| {
            if x == 10 {
                std::thread::sleep(TIMEOUT * 2);
            }
            x
        })
        .run_with(sink_ref.sink(&runs.refs), &runs.materializer);
    assert_eq!(wait(done), Ok(()));
    assert_eq!(wait(got), Ok((0..100).collect::<Vec<_>>()));
}
