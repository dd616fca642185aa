//! `Source::actor_ref` into a folding sink (`fold`, `collect`, `for_each`,
//! `head`, ...), directly or through simple operators: the source runs the
//! sink inside its own stage. These check that the fused form keeps every
//! behaviour of the two-stage one (see `streams_actor_ref_source.rs`).

use weir_streams::ErrorKind;
use weir_streams::prelude::*;
use weir_tests::{PATIENCE, eventually, shutdown, stream_system};

fn source(
    buffer: usize,
    strategy: OverflowStrategy,
) -> Source<u32, weir_streams::ActorRefSource<u32>> {
    Source::actor_ref(buffer, strategy).expect("not Backpressure")
}

#[test]
fn fused_into_a_folding_sink_every_element_arrives_once_in_sender_order() {
    let (system, mat) = stream_system("ars-fused-order");
    let (src, done) = Source::<(u32, u32), _>::actor_ref(0, OverflowStrategy::DropHead)
        .unwrap()
        .to_mat(Sink::collect(), Keep::both)
        .run(&mat);
    let senders: Vec<_> = (0..4u32)
        .map(|t| {
            let actor = src.actor_ref().clone();
            std::thread::spawn(move || (0..20_000u32).for_each(|i| actor.tell((t, i))))
        })
        .collect();
    senders.into_iter().for_each(|s| s.join().unwrap());
    src.complete();
    let got = done.wait().unwrap();
    assert_eq!(got.len(), 80_000, "every element, even with a buffer of 0");
    for t in 0..4 {
        let mine: Vec<u32> = got
            .iter()
            .filter(|(s, _)| *s == t)
            .map(|&(_, i)| i)
            .collect();
        assert_eq!(mine, (0..20_000).collect::<Vec<_>>(), "sender {t} in order");
    }
    assert_eq!(src.dropped(), 0);
    assert!(eventually(PATIENCE, || src.actor_ref().is_terminated()));
    shutdown(&system);
}

#[test]
fn fused_completion_and_failure_keep_their_place_and_late_elements_are_dropped() {
    let (system, mat) = stream_system("ars-fused-end");
    // An immediate completion after three elements: nothing is ever
    // buffered in front of a folding sink, so all three arrive.
    let (src, done) = source(4, OverflowStrategy::DropHead)
        .to_mat(Sink::collect(), Keep::both)
        .run(&mat);
    (1..=3).for_each(|x| src.tell(x));
    src.complete_now();
    assert_eq!(done.wait(), Ok(vec![1, 2, 3]));
    src.tell(9); // after the end: a dead letter, never delivered
    assert!(eventually(PATIENCE, || src.actor_ref().is_terminated()));

    // A failure, named after the source stage as unfused.
    let (src, done) = source(0, OverflowStrategy::DropHead)
        .named("feed")
        .to_mat(Sink::fold(0u32, |a, x| a + x), Keep::both)
        .run(&mat);
    src.tell(1);
    src.fail(weir_streams::StreamError::msg("boom"));
    let error = done.wait().unwrap_err();
    assert_eq!(error.stage(), Some("feed"));
    assert!(error.to_string().contains("boom"), "{error}");

    // Elements told after a draining completion in the same burst are
    // dropped and counted (or refused as dead letters once the stage stopped).
    let (src, done) = source(0, OverflowStrategy::DropHead)
        .to_mat(Sink::collect(), Keep::both)
        .run(&mat);
    src.tell(1);
    src.complete();
    src.tell(2);
    assert_eq!(done.wait(), Ok(vec![1]));
    shutdown(&system);
}

#[test]
fn fused_sink_that_stops_early_or_panics_ends_the_stream_and_the_ref() {
    let (system, mat) = stream_system("ars-fused-stop");
    let (src, first) = source(0, OverflowStrategy::DropHead)
        .to_mat(Sink::head(), Keep::both)
        .run(&mat);
    src.tell(7);
    src.tell(8);
    assert_eq!(first.wait(), Ok(7));
    assert!(eventually(PATIENCE, || src.actor_ref().is_terminated()));

    let (src, done) = source(0, OverflowStrategy::DropHead)
        .to_mat(
            Sink::for_each(|x: u32| assert_ne!(x, 2, "the sink panics on 2")),
            Keep::both,
        )
        .run(&mat);
    (1..=3).for_each(|x| src.tell(x));
    let error = done.wait().unwrap_err();
    assert!(matches!(error.kind(), ErrorKind::Panicked(_)), "{error:?}");
    assert!(eventually(PATIENCE, || src.actor_ref().is_terminated()));

    let (src, done) = source(0, OverflowStrategy::DropHead)
        .to_mat(Sink::cancelled(), Keep::both)
        .run(&mat);
    assert_eq!(done.wait(), Ok(()));
    assert!(eventually(PATIENCE, || src.actor_ref().is_terminated()));
    shutdown(&system);
}

#[test]
fn fused_ref_is_named_after_the_source_stage() {
    let (system, mat) = stream_system("ars-fused-name");
    let (src, _done) = source(1, OverflowStrategy::DropHead)
        .named("SomeCustomName")
        .to_mat(Sink::ignore(), Keep::both)
        .run(&mat);
    let path = src.actor_ref().path().to_string();
    assert!(
        path.contains("SomeCustomName") && !path.contains("ignore"),
        "{path}"
    );
    shutdown(&system);
}

#[test]
fn fused_operators_between_the_source_and_a_folding_sink_keep_their_semantics() {
    let (system, mat) = stream_system("ars-fused-steps");
    // map, filter and a take that ends the stream: the ref terminates
    // after the third even square, as through separate stages.
    let (src, done) = source(0, OverflowStrategy::DropHead)
        .named("feed")
        .map(|x| x * x)
        .filter(|x| x % 2 == 0)
        .take(3)
        .to_mat(Sink::collect(), Keep::both)
        .run(&mat);
    assert!(
        src.actor_ref().path().name().contains("feed"),
        "{}",
        src.actor_ref().path()
    );
    (1..=10).for_each(|x| src.tell(x));
    assert_eq!(done.wait(), Ok(vec![4, 16, 36]));
    assert!(eventually(PATIENCE, || src.actor_ref().is_terminated()));

    // The materialized values line up when operators sit in between.
    let (src, sum) = source(0, OverflowStrategy::DropHead)
        .map(u64::from)
        .to_mat(Sink::fold(0u64, |a, x| a + x), Keep::both)
        .run(&mat);
    (1..=100).for_each(|x| src.tell(x));
    src.complete();
    assert_eq!(sum.wait(), Ok(5050));

    // A panicking operator fails the stream.
    let (src, done) = source(0, OverflowStrategy::DropHead)
        .map(|x| {
            assert_ne!(x, 2, "the operator panics on 2");
            x
        })
        .to_mat(Sink::ignore(), Keep::both)
        .run(&mat);
    (1..=3).for_each(|x| src.tell(x));
    let error = done.wait().unwrap_err();
    assert!(matches!(error.kind(), ErrorKind::Panicked(_)), "{error:?}");
    assert!(eventually(PATIENCE, || src.actor_ref().is_terminated()));
    shutdown(&system);
}

#[test]
fn fused_streams_share_the_pool_and_end_cleanly_when_the_system_stops_under_load() {
    let (system, mat) = stream_system("ars-fused-many");
    // Busy streams wait for their next burst through the island's mailbox,
    // not by holding a worker: eight of them on two threads all finish.
    let runs: Vec<_> = (0..8)
        .map(|_| {
            let (src, done) = Source::<u64, _>::actor_ref(0, OverflowStrategy::DropHead)
                .unwrap()
                .map(|x| x + 1)
                .to_mat(Sink::fold(0u64, |count, _| count + 1), Keep::both)
                .run(&mat);
            let actor = src.actor_ref().clone();
            let producer = std::thread::spawn(move || (0..50_000u64).for_each(|i| actor.tell(i)));
            (src, done, producer)
        })
        .collect();
    for (src, done, producer) in runs {
        producer.join().unwrap();
        src.complete();
        assert_eq!(done.wait(), Ok(50_000));
    }

    // Stopping the system while a producer still tells: the stream ends
    // with an abrupt termination, nothing hangs, later tells are dead letters.
    let (src, done) = Source::<u64, _>::actor_ref(0, OverflowStrategy::DropHead)
        .unwrap()
        .to_mat(Sink::ignore(), Keep::both)
        .run(&mat);
    let actor = src.actor_ref().clone();
    let told = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counter = std::sync::Arc::clone(&told);
    let producer = std::thread::spawn(move || {
        (0..1_000_000u64).for_each(|i| {
            actor.tell(i);
            counter.store(i + 1, std::sync::atomic::Ordering::Relaxed);
        })
    });
    // Stop while it tells: once a good part is told, well before the end.
    assert!(eventually(PATIENCE, || told
        .load(std::sync::atomic::Ordering::Relaxed)
        >= 10_000));
    shutdown(&system);
    producer.join().unwrap();
    let outcome = done.wait_timeout(PATIENCE).expect("ends in time");
    assert!(
        matches!(&outcome, Err(e) if matches!(e.kind(), ErrorKind::AbruptTermination)),
        "{outcome:?}"
    );
}
