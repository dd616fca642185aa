//! The ack protocols: `Source::actor_ref_with_backpressure` (after Pekko's ActorRefBackpressureSourceSpec), `Source::actor_ref_with_sender_ack` (each message carries its ack target: several producers, back-pressure, completion, failure) and `Sink::actor_ref_with_backpressure`.

use std::sync::mpsc;

use weir_actor::{Actor, ActorRef, Context, Props};
use weir_streams::ErrorKind;
use weir_streams::prelude::*;
use weir_streams::testkit::{TestSink, TestSource};
use weir_tests::{PATIENCE, QUIET, shutdown, stream_system};

/// Forwards what it receives to a channel.
struct Forward<M>(mpsc::Sender<M>);
impl<M: Send + 'static> Actor for Forward<M> {
    type Msg = M;
    fn receive(&mut self, _: &mut Context<Self>, msg: M) {
        let _ = self.0.send(msg);
    }
}

fn forwarder<M: Send + 'static>(
    system: &weir_actor::ActorSystem,
    name: &str,
) -> (ActorRef<M>, mpsc::Receiver<M>) {
    let (tx, rx) = mpsc::channel();
    let actor = system
        .spawn(Props::new(move || Forward(tx.clone())), name)
        .unwrap();
    (actor, rx)
}

#[test]
fn emits_and_acks_each_element_after_it_is_consumed() {
    let (system, mat) = stream_system("bp-acks");
    let (acks, ack_rx) = forwarder::<&'static str>(&system, "acks");
    let (src, mut down) = Source::<u32, _>::actor_ref_with_backpressure(acks, "ack")
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    src.tell(1);
    assert!(
        ack_rx.recv_timeout(QUIET).is_err(),
        "no ack before the element is consumed"
    );
    down.request(1);
    assert_eq!(down.expect_next(), 1);
    assert_eq!(ack_rx.recv_timeout(PATIENCE).unwrap(), "ack");
    src.tell(2);
    down.request(1);
    assert_eq!(down.expect_next(), 2);
    assert_eq!(ack_rx.recv_timeout(PATIENCE).unwrap(), "ack");
    shutdown(&system);
}

#[test]
fn fails_when_the_producer_does_not_await_the_ack() {
    let (system, mat) = stream_system("bp-no-await");
    let (acks, _ack_rx) = forwarder::<()>(&system, "acks");
    let (src, mut down) = Source::<u32, _>::actor_ref_with_backpressure(acks, ())
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    src.tell(1);
    src.tell(2);
    let error = down.expect_error();
    assert!(
        matches!(error.kind(), ErrorKind::Protocol(m) if m.contains("before the ack")),
        "{error}"
    );
    shutdown(&system);
}

#[test]
fn completes_fails_and_takes_nothing_after_completion() {
    let (system, mat) = stream_system("bp-end");
    let (acks, ack_rx) = forwarder::<()>(&system, "acks");
    let (src, mut down) = Source::<u32, _>::actor_ref_with_backpressure(acks.clone(), ())
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    src.tell(1);
    src.complete();
    src.tell(2); // after the completion: dropped
    down.request(5);
    assert_eq!(down.expect_next(), 1);
    down.expect_complete();
    assert_eq!(ack_rx.recv_timeout(PATIENCE).unwrap(), ());
    assert!(weir_tests::eventually(PATIENCE, || src.dropped() == 1));

    let (src, mut down) = Source::<u32, _>::actor_ref_with_backpressure(acks, ())
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    src.fail(StreamError::msg("producer failed"));
    assert!(down.expect_error().to_string().ends_with("producer failed"));
    shutdown(&system);
}

#[derive(Debug, Clone, PartialEq)]
enum ToTarget {
    Init(ActorRef<()>),
    Element(u32, ActorRef<()>),
    Done,
    Failed(String),
}

#[test]
fn the_sink_waits_for_an_ack_before_each_message() {
    let (system, mat) = stream_system("bp-sink");
    let (target, rx) = forwarder::<ToTarget>(&system, "target");
    let mut up = TestSource::probe::<u32>()
        .to_mat(
            Sink::actor_ref_with_backpressure(
                target,
                ToTarget::Init,
                ToTarget::Element,
                ToTarget::Done,
                |e: StreamError| ToTarget::Failed(e.to_string()),
            ),
            Keep::left,
        )
        .run(&mat);
    let ToTarget::Init(ack) = rx.recv_timeout(PATIENCE).unwrap() else {
        panic!("init first")
    };
    up.expect_no_signal(QUIET); // nothing is pulled before the init is acknowledged
    ack.tell(());
    up.expect_request();
    up.send_next(7);
    let ToTarget::Element(7, ack) = rx.recv_timeout(PATIENCE).unwrap() else {
        panic!("the element")
    };
    up.send_complete();
    assert!(
        rx.recv_timeout(QUIET).is_err(),
        "completion waits for the last ack"
    );
    ack.tell(());
    assert_eq!(rx.recv_timeout(PATIENCE).unwrap(), ToTarget::Done);

    let (target, rx) = forwarder::<ToTarget>(&system, "target-2");
    let mut up = TestSource::probe::<u32>()
        .to_mat(
            Sink::actor_ref_with_backpressure(
                target,
                ToTarget::Init,
                ToTarget::Element,
                ToTarget::Done,
                |e: StreamError| ToTarget::Failed(e.to_string()),
            ),
            Keep::left,
        )
        .run(&mat);
    let ToTarget::Init(_) = rx.recv_timeout(PATIENCE).unwrap() else {
        panic!("init first")
    };
    up.send_error(StreamError::msg("upstream broke"));
    let ToTarget::Failed(message) = rx.recv_timeout(PATIENCE).unwrap() else {
        panic!("failure message")
    };
    assert!(message.ends_with("upstream broke"));
    shutdown(&system);
}

#[test]
fn the_sink_cancels_when_its_target_terminates() {
    let (system, mat) = stream_system("bp-sink-gone");
    let (target, rx) = forwarder::<ToTarget>(&system, "target");
    let mut up = TestSource::probe::<u32>()
        .to_mat(
            Sink::actor_ref_with_backpressure(
                target.clone(),
                ToTarget::Init,
                ToTarget::Element,
                ToTarget::Done,
                |e: StreamError| ToTarget::Failed(e.to_string()),
            ),
            Keep::left,
        )
        .run(&mat);
    let ToTarget::Init(_) = rx.recv_timeout(PATIENCE).unwrap() else {
        panic!("init first")
    };
    target.stop();
    up.expect_cancellation();
    shutdown(&system);
}

#[test]
fn sender_acks_go_to_each_sender_only_once_its_element_is_taken() {
    let (system, mat) = stream_system("sender-ack-demand");
    let (a, a_rx) = forwarder::<&'static str>(&system, "a");
    let (b, b_rx) = forwarder::<&'static str>(&system, "b");
    let (src, mut down) = Source::<u32, _>::actor_ref_with_sender_ack("ack")
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    src.tell_with_ack(1, a.clone());
    src.tell((2, b.clone()));
    assert!(a_rx.recv_timeout(QUIET).is_err(), "no ack before demand");
    assert!(b_rx.try_recv().is_err(), "no ack before demand");
    down.request(1);
    assert_eq!(down.expect_next(), 1);
    assert_eq!(a_rx.recv_timeout(PATIENCE).unwrap(), "ack");
    assert!(b_rx.recv_timeout(QUIET).is_err(), "b's element still waits");
    down.request(1);
    assert_eq!(down.expect_next(), 2);
    assert_eq!(b_rx.recv_timeout(PATIENCE).unwrap(), "ack");
    // Demand first: the next element goes through and is acked at once.
    down.request(1);
    src.tell_with_ack(3, a);
    assert_eq!(down.expect_next(), 3);
    assert_eq!(a_rx.recv_timeout(PATIENCE).unwrap(), "ack");
    shutdown(&system);
}

#[derive(Clone)]
struct Acked;

/// Sends `first..first + count` into the stream, each after the previous
/// one's ack, then tells `finished`.
struct AckingProducer {
    out: weir_streams::ActorRefSource<weir_streams::WithAck<u32, Acked>>,
    next: u32,
    end: u32,
    finished: mpsc::Sender<()>,
}

impl Actor for AckingProducer {
    type Msg = Acked;
    fn pre_start(&mut self, ctx: &mut Context<Self>) {
        self.out.tell_with_ack(self.next, ctx.myself());
    }
    fn receive(&mut self, ctx: &mut Context<Self>, Acked: Acked) {
        self.next += 1;
        if self.next == self.end {
            self.finished.send(()).unwrap();
        } else {
            self.out.tell_with_ack(self.next, ctx.myself());
        }
    }
}

#[test]
fn several_producers_feed_one_source_through_their_acks() {
    const PRODUCERS: u32 = 4;
    const EACH: u32 = 200;
    let (system, mat) = stream_system("sender-ack-many");
    let (src, done) = Source::actor_ref_with_sender_ack(Acked)
        .async_boundary()
        .to_mat(Sink::collect(), Keep::both)
        .run(&mat);
    let (finished, all_finished) = mpsc::channel();
    for p in 0..PRODUCERS {
        let (out, finished) = (src.clone(), finished.clone());
        system
            .spawn(
                Props::new(move || AckingProducer {
                    out: out.clone(),
                    next: p * EACH,
                    end: (p + 1) * EACH,
                    finished: finished.clone(),
                }),
                &format!("producer{p}"),
            )
            .unwrap();
    }
    for _ in 0..PRODUCERS {
        all_finished.recv_timeout(PATIENCE).unwrap();
    }
    src.complete();
    let got = done.wait().unwrap();
    assert_eq!(got.len(), (PRODUCERS * EACH) as usize);
    for p in 0..PRODUCERS {
        let mine: Vec<u32> = got.iter().copied().filter(|n| n / EACH == p).collect();
        assert_eq!(mine, (p * EACH..(p + 1) * EACH).collect::<Vec<_>>());
    }
    assert_eq!(src.dropped(), 0, "no protocol error, nothing dropped");
    shutdown(&system);
}

#[test]
fn sender_ack_source_completes_after_the_waiting_elements_and_fails_at_once() {
    let (system, mat) = stream_system("sender-ack-end");
    let (a, a_rx) = forwarder::<()>(&system, "a");
    let (b, b_rx) = forwarder::<()>(&system, "b");
    let (src, mut down) = Source::<u32, _>::actor_ref_with_sender_ack(())
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    src.tell_with_ack(1, a.clone());
    src.tell_with_ack(2, b.clone());
    src.complete();
    src.tell_with_ack(3, a.clone()); // after the completion: dropped
    down.request(5);
    assert_eq!(down.expect_next_n(2), [1, 2]);
    down.expect_complete();
    assert_eq!(a_rx.recv_timeout(PATIENCE).unwrap(), ());
    assert_eq!(b_rx.recv_timeout(PATIENCE).unwrap(), ());
    assert!(weir_tests::eventually(PATIENCE, || src.dropped() == 1));
    assert!(
        a_rx.recv_timeout(QUIET).is_err(),
        "the dropped one is not acked"
    );

    let (src, mut down) = Source::<u32, _>::actor_ref_with_sender_ack(())
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    src.tell_with_ack(1, a);
    src.fail(StreamError::msg("producer failed"));
    assert!(down.expect_error().to_string().ends_with("producer failed"));
    assert!(
        a_rx.recv_timeout(QUIET).is_err(),
        "a waiting element is not acked"
    );
    assert!(weir_tests::eventually(PATIENCE, || src.dropped() == 1));
    shutdown(&system);
}

#[test]
fn sender_ack_source_fails_when_a_sender_does_not_await_its_ack() {
    let (system, mat) = stream_system("sender-ack-no-await");
    let (a, _a_rx) = forwarder::<()>(&system, "a");
    let (src, mut down) = Source::<u32, _>::actor_ref_with_sender_ack(())
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    src.tell_with_ack(1, a.clone());
    src.tell_with_ack(2, a);
    let error = down.expect_error();
    assert!(
        matches!(error.kind(), ErrorKind::Protocol(m) if m.contains("before its ack")),
        "{error}"
    );
    shutdown(&system);
}
