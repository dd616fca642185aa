//! Stream refs with the other end in a second OS process
//! (`weir-nats-peer-refs`): refs sent in remote actor messages, a whole
//! stream into a fold, and either process killed mid-stream.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use weir_actor::{Actor, ActorRef, ActorSystem, Context, Props};
use weir_interop::{SourceRef, StreamRefError};
use weir_streams::StreamError;
use weir_streams::prelude::*;

use super::{INTERVAL, PATIENCE, Setup, TIMEOUT, eventually, ref_error, wait};

/// The other process, killed when dropped.
struct Peer {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Peer {
    fn start(url: &str, args: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_weir-nats-peer-refs"))
            .arg(url)
            .arg(INTERVAL.as_millis().to_string())
            .arg(TIMEOUT.as_millis().to_string())
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the peer starts");
        let stdout = child.stdout.take().expect("piped");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        Self { child, lines }
    }

    fn line(&self) -> String {
        self.lines.recv_timeout(PATIENCE).expect("the peer says")
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Forwards the source refs it is told to a channel.
struct Inbox(mpsc::Sender<SourceRef<u64>>);

impl Actor for Inbox {
    type Msg = SourceRef<u64>;
    fn receive(&mut self, _: &mut Context<Self>, msg: SourceRef<u64>) {
        let _ = self.0.send(msg);
    }
}

fn inbox(system: &ActorSystem) -> (ActorRef<SourceRef<u64>>, mpsc::Receiver<SourceRef<u64>>) {
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    let actor = system
        .spawn(
            Props::new(move || Inbox(tx.lock().unwrap().clone())),
            "inbox",
        )
        .expect("spawned");
    (actor, rx)
}

/// Assert `error` is the other end's silence, found within the time-out
/// (and a tick, and some slack for a busy machine) of `killed`.
fn assert_unreachable_in_time(error: &StreamError, killed: Instant) {
    let after = killed.elapsed();
    assert!(
        matches!(ref_error(error), Some(StreamRefError::Unreachable(t)) if *t == TIMEOUT),
        "{error}"
    );
    assert!(
        after <= TIMEOUT + INTERVAL + Duration::from_millis(900),
        "found after {after:?}"
    );
}

#[test]
fn a_stream_from_another_process_arrives_whole_and_in_order_in_a_fold() {
    let s = Setup::new();
    let here = s.node("here");
    let (actor, refs_in) = inbox(&here.system);
    let uri = here.remote().expose(&actor, "inbox").expect("exposed");
    let producer = Peer::start(&s.server.url(), &["produce", &uri, "50000"]);
    assert_eq!(producer.line(), "sent");
    let source_ref = refs_in.recv_timeout(PATIENCE).expect("a ref arrives");
    let folded = source_ref.source(&here.refs.clone().window(16)).run_with(
        Sink::fold((0u64, true), |(next, in_order), x: u64| {
            (next + 1, in_order && x == next)
        }),
        &here.materializer,
    );
    assert_eq!(wait(folded), Ok((50_000, true)));
}

#[test]
fn a_ref_from_another_process_arrives_in_order_and_its_death_fails_the_consumer_in_time() {
    let s = Setup::new();
    let here = s.node("here");
    let (actor, refs_in) = inbox(&here.system);
    let uri = here.remote().expose(&actor, "inbox").expect("exposed");
    let mut producer = Peer::start(&s.server.url(), &["produce", &uri]);
    assert_eq!(producer.line(), "sent");
    let source_ref = refs_in.recv_timeout(PATIENCE).expect("a ref arrives");
    assert_eq!(source_ref.system(), "refs-peer-produce");
    let received = Arc::new(AtomicU64::new(0));
    let count = received.clone();
    let result = source_ref
        .source(&here.refs)
        .map(move |x| assert_eq!(x, count.fetch_add(1, Ordering::SeqCst), "out of order"))
        .run_with(Sink::ignore(), &here.materializer);
    assert!(eventually(PATIENCE, || received.load(Ordering::SeqCst) >= 10_000));
    producer.kill();
    let killed = Instant::now();
    let error = wait(result).expect_err("the producer is gone");
    assert_unreachable_in_time(&error, killed);
}

#[test]
fn a_consumer_in_another_process_dies_and_fails_the_producer_in_time() {
    let s = Setup::new();
    let here = s.node("here");
    let mut consumer = Peer::start(&s.server.url(), &["consume"]);
    let ready = consumer.line();
    let uri = ready.strip_prefix("ready ").expect("ready <uri>");
    let inbox = here
        .remote()
        .resolve::<SourceRef<u64>>(uri)
        .expect("resolves");
    let produced = Arc::new(AtomicU64::new(0));
    let count = produced.clone();
    let (watched, source_ref) = Source::from_iter(0u64..)
        .map(move |x| {
            count.fetch_add(1, Ordering::SeqCst);
            x
        })
        .via_mat(Flow::watch_termination(), Keep::right)
        .to_mat(here.refs.source_ref(), Keep::both)
        .run(&here.materializer);
    inbox.tell(source_ref).expect("encodes");
    assert!(eventually(PATIENCE, || produced.load(Ordering::SeqCst) >= 10_000));
    consumer.kill();
    let killed = Instant::now();
    let error = wait(watched).expect_err("the consumer is gone");
    assert_unreachable_in_time(&error, killed);
}
