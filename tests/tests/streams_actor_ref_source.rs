//! `Source::actor_ref`, after Pekko's ActorRefSourceSpec: direct push, buffering and drops, completion, failure, the ref's lifecycle.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use weir_actor::{
    Actor, ActorHandle, ActorSystem, Context, DeadLetterReason, Event, LogLevel, Props, Terminated,
};
use weir_streams::prelude::*;
use weir_streams::testkit::TestSink;
use weir_streams::{ArgumentError, ErrorKind};
use weir_tests::{IslandGate, PATIENCE, Probe, QUIET, eventually, shutdown, stream_system};

fn source(
    buffer: usize,
    strategy: OverflowStrategy,
) -> Source<u32, weir_streams::ActorRefSource<u32>> {
    Source::actor_ref(buffer, strategy).expect("not Backpressure")
}

/// Watches one actor and reports its termination.
struct Watcher {
    target: ActorHandle,
    report: std::sync::mpsc::Sender<String>,
}

impl Actor for Watcher {
    type Msg = ();
    fn pre_start(&mut self, ctx: &mut Context<Self>) {
        ctx.watch(self.target.clone());
    }
    fn receive(&mut self, _: &mut Context<Self>, (): ()) {}
    fn on_terminated(&mut self, _: &mut Context<Self>, terminated: Terminated) {
        let _ = self.report.send(terminated.actor().path().to_string());
    }
}

fn watch(system: &ActorSystem, target: ActorHandle) -> Probe<String> {
    let probe = Probe::new();
    let report = probe.sender();
    system
        .spawn_anonymous(Props::new(move || Watcher {
            target: target.clone(),
            report: report.clone(),
        }))
        .unwrap();
    probe
}

#[test]
fn emits_received_messages() {
    let (system, mat) = stream_system("ars-emit");
    let (src, mut down) = source(10, OverflowStrategy::Fail)
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    down.request(2);
    src.tell(1);
    assert_eq!(down.expect_next(), 1);
    src.tell(2);
    assert_eq!(down.expect_next(), 2);
    src.tell(3);
    down.expect_no_message(QUIET);
    shutdown(&system);
}

#[test]
fn buffers_when_needed_and_drops_the_oldest_under_drop_head() {
    let (system, mat) = stream_system("ars-buffer");
    let (src, mut down) = source(100, OverflowStrategy::DropHead)
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    for i in 1..=20 {
        src.tell(i);
    }
    down.request(10);
    assert_eq!(down.expect_next_n(10), (1..=10).collect::<Vec<_>>());
    down.request(10);
    assert_eq!(down.expect_next_n(10), (11..=20).collect::<Vec<_>>());
    for i in 200..400 {
        src.tell(i);
    }
    // Let the whole burst reach the buffer before asking.
    assert!(eventually(PATIENCE, || src.dropped() == 100));
    down.request(100);
    assert_eq!(down.expect_next_n(100), (300..400).collect::<Vec<_>>());
    shutdown(&system);
}

#[test]
fn each_overflow_strategy_drops_what_it_says_and_counts_it() {
    let (system, mat) = stream_system("ars-strategies");
    for (strategy, expected) in [
        (OverflowStrategy::DropHead, vec![3, 4, 5]),
        (OverflowStrategy::DropTail, vec![1, 2, 5]),
        (OverflowStrategy::DropBuffer, vec![4, 5]),
        (OverflowStrategy::DropNew, vec![1, 2, 3]),
    ] {
        // A probe sink asks for nothing until told: all five find no demand.
        let (src, mut down) = source(3, strategy)
            .to_mat(TestSink::probe(), Keep::both)
            .run(&mat);
        for i in 1..=5 {
            src.tell(i);
        }
        assert!(
            eventually(PATIENCE, || src.dropped() == 5 - expected.len() as u64),
            "{strategy:?}"
        );
        src.complete();
        down.request(10);
        assert_eq!(down.expect_next_n(expected.len()), expected, "{strategy:?}");
        down.expect_complete();
    }
    let (src, mut down) = source(2, OverflowStrategy::Fail)
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    for i in 1..=3 {
        src.tell(i);
    }
    let error = down.expect_error();
    assert!(
        matches!(error.kind(), ErrorKind::BufferOverflow { capacity: 2 }),
        "{error}"
    );
    assert_eq!(
        Source::<u32, _>::actor_ref(1, OverflowStrategy::Backpressure)
            .map(|_| ())
            .unwrap_err(),
        ArgumentError::BackpressureUnsupported {
            hint: "a tell cannot wait; use Source::actor_ref_with_backpressure or Source::queue"
        }
    );
    shutdown(&system);
}

#[test]
fn drops_are_published_as_dead_letters() {
    let (system, mat) = stream_system("ars-dead-letters");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let _subscription = system.event_stream().subscribe(move |event| {
        let Event::DeadLetter(letter) = event else {
            return;
        };
        if letter.reason() == DeadLetterReason::Dropped {
            log.lock()
                .unwrap()
                .push((letter.downcast_ref::<u32>().copied(), letter.level()));
        }
    });
    let (src, _down) = source(0, OverflowStrategy::DropHead)
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    src.tell(41); // buffer 0, no demand: dropped, at debug level (Akka's)
    assert!(eventually(PATIENCE, || {
        seen.lock().unwrap().as_slice() == [(Some(41), LogLevel::Debug)]
    }));
    assert!(eventually(PATIENCE, || src.dropped() == 1));

    // The level is the user's to set.
    let (src, _down) = source(0, OverflowStrategy::DropHead)
        .with_attributes(weir_streams::Attributes::new().with_drop_log_level(LogLevel::Warning))
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    src.tell(42);
    assert!(eventually(PATIENCE, || {
        seen.lock().unwrap().last() == Some(&(Some(42), LogLevel::Warning))
    }));

    // Also when the source runs fused with a folding sink: an element told
    // after a draining completion, in the same burst, is dropped there.
    let gate = IslandGate::new();
    let (src, done) = source(0, OverflowStrategy::DropHead)
        .with_attributes(weir_streams::Attributes::new().with_drop_log_level(LogLevel::Error))
        // Hold the island on the first element while the rest queues.
        .map(gate.hold_first())
        .to_mat(Sink::ignore(), Keep::both)
        .run(&mat);
    src.tell(0);
    assert!(gate.entered(PATIENCE));
    src.complete();
    src.tell(43);
    gate.open();
    assert_eq!(done.wait(), Ok(()));
    assert!(eventually(PATIENCE, || {
        seen.lock().unwrap().last() == Some(&(Some(43), LogLevel::Error))
    }));
    // Counted once the batch settles, just after the letter is published.
    assert!(eventually(PATIENCE, || src.dropped() == 1));
    shutdown(&system);
}

#[test]
fn the_ref_terminates_when_the_stream_is_cancelled() {
    let (system, mat) = stream_system("ars-cancel");
    let (src, mut down) = source(0, OverflowStrategy::DropHead)
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    let watcher = watch(&system, src.actor_ref().handle());
    down.request(100);
    down.cancel();
    assert_eq!(watcher.expect(), src.actor_ref().path().to_string());
    assert!(src.actor_ref().is_terminated());
    // Watching after termination notifies at once.
    let late = watch(&system, src.actor_ref().handle());
    assert_eq!(late.expect(), src.actor_ref().path().to_string());
    shutdown(&system);
}

#[test]
fn completion_drains_the_buffer_and_respects_partial_demand() {
    let (system, mat) = stream_system("ars-drain");
    let (src, mut down) = source(100, OverflowStrategy::DropHead)
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    for i in 1..=20 {
        src.tell(i);
    }
    src.complete();
    down.request(10);
    assert_eq!(down.expect_next_n(10), (1..=10).collect::<Vec<_>>());
    down.expect_no_message(QUIET);
    down.request(10);
    assert_eq!(down.expect_next_n(10), (11..=20).collect::<Vec<_>>());
    down.expect_complete();
    shutdown(&system);
}

#[test]
fn complete_now_discards_the_buffer() {
    let (system, mat) = stream_system("ars-now");
    let (src, mut down) = source(100, OverflowStrategy::DropHead)
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    for i in 1..=20 {
        src.tell(i);
    }
    src.complete_now();
    // The signals reach the stage before the request (one mailbox, in
    // order): all twenty are buffered, then discarded.
    down.request(10);
    down.expect_complete();
    assert!(eventually(PATIENCE, || src.dropped() == 20));
    shutdown(&system);
}

#[test]
fn elements_after_a_draining_completion_are_dropped() {
    let (system, mat) = stream_system("ars-after-drain");
    let (src, mut down) = source(3, OverflowStrategy::DropBuffer)
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    for i in 1..=3 {
        src.tell(i);
    }
    src.complete();
    for _ in 0..3 {
        src.tell(100);
    }
    down.request(10);
    assert_eq!(down.expect_next_n(3), vec![1, 2, 3]);
    down.expect_complete();
    assert!(eventually(PATIENCE, || src.dropped() == 3));
    shutdown(&system);
}

#[test]
fn completes_an_empty_stream_and_fails_on_request() {
    let (system, mat) = stream_system("ars-complete-fail");
    let (src, done) = source(3, OverflowStrategy::DropHead)
        .to_mat(Sink::ignore(), Keep::both)
        .run(&mat);
    src.complete();
    assert_eq!(done.wait(), Ok(()));
    // Messages after completion: no panic, dead letters.
    src.tell(42);
    src.tell(43);
    assert!(eventually(PATIENCE, || system
        .event_stream()
        .dead_letter_count()
        >= 2));

    let (src, mut down) = source(3, OverflowStrategy::DropHead)
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    src.fail(StreamError::msg("told to fail"));
    assert!(down.expect_error().to_string().ends_with("told to fail"));
    shutdown(&system);
}

#[test]
fn a_buffer_of_zero_pushes_with_demand_and_drops_without() {
    let (system, mat) = stream_system("ars-zero");
    let (src, mut down) = source(0, OverflowStrategy::DropHead)
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    // The request and the element's wake-up are messages to the island,
    // sent in this order from this thread: the request is handled first.
    down.request(1);
    src.tell(1);
    assert_eq!(down.expect_next(), 1);
    src.tell(2); // no demand now
    assert!(eventually(PATIENCE, || src.dropped() == 1));
    down.expect_no_message(QUIET);
    shutdown(&system);
}

/// Each element arrives after downstream has had its turn, as if each were
/// its own message (Akka's behaviour): a burst that queued while the island
/// was busy reaches a buffer-0 source whose sink pulls at once, whole.
#[test]
fn a_burst_reaches_a_downstream_that_pulls_at_once_even_with_a_buffer_of_zero() {
    let (system, mat) = stream_system("ars-burst");
    let gate = IslandGate::new();
    let (src, done) = source(0, OverflowStrategy::DropHead)
        // Hold the island on the first element while the burst queues.
        .map(gate.hold_first())
        .to_mat(Sink::collect(), Keep::both)
        .run(&mat);
    // 0 may be dropped while the sink's first pull is on its way: retry.
    while {
        src.tell(0);
        !gate.entered(Duration::from_millis(20))
    } {}
    for i in 1..=1000 {
        src.tell(i);
    }
    src.complete();
    gate.open();
    let got: Vec<u32> = done
        .wait()
        .unwrap()
        .into_iter()
        .filter(|&x| x > 0)
        .collect();
    assert_eq!(got, (1..=1000).collect::<Vec<_>>());
    shutdown(&system);
}

#[test]
fn elements_take_the_direct_push_path_one_at_a_time() {
    let (system, mat) = stream_system("ars-direct");
    let (src, mut down) = source(10, OverflowStrategy::DropHead)
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    down.request(10);
    for i in 1..=10 {
        src.tell(i);
        assert_eq!(down.expect_next(), i);
    }
    src.complete();
    down.expect_complete();
    assert_eq!(src.dropped(), 0);
    shutdown(&system);
}

#[test]
fn stop_and_poison_pill_are_ignored_with_a_dead_letter() {
    let (system, mat) = stream_system("ars-lifecycle");
    let ignored = Arc::new(Mutex::new(0));
    let count = Arc::clone(&ignored);
    let _subscription = system.event_stream().subscribe(move |event| {
        let Event::DeadLetter(letter) = event else {
            return;
        };
        if letter.reason() == DeadLetterReason::LifecycleIgnored {
            *count.lock().unwrap() += 1;
        }
    });
    let (src, mut down) = source(10, OverflowStrategy::DropHead)
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    src.actor_ref().stop();
    src.actor_ref().poison_pill();
    src.tell(5);
    down.request(1);
    assert_eq!(down.expect_next(), 5);
    assert!(!src.actor_ref().is_terminated());
    assert_eq!(*ignored.lock().unwrap(), 2);
    src.complete();
    down.expect_complete();
    shutdown(&system);
}

#[test]
fn the_ref_is_named_after_the_stage() {
    let (system, mat) = stream_system("ars-name");
    let (src, _down) = source(1, OverflowStrategy::DropHead)
        .named("SomeCustomName")
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    assert!(
        src.actor_ref().path().name().contains("SomeCustomName"),
        "{}",
        src.actor_ref().path()
    );
    shutdown(&system);
}

#[test]
fn usable_at_once_on_fresh_materializers_and_systems() {
    let (system, _) = stream_system("ars-fresh");
    for _ in 0..100 {
        let mat = Materializer::new(&system);
        let (src, done) = source(10_000, OverflowStrategy::Fail)
            .to_mat(Sink::ignore(), Keep::both)
            .run(&mat);
        src.tell(1);
        src.complete();
        assert_eq!(done.wait(), Ok(()));
    }
    shutdown(&system);
    for i in 0..5 {
        let (system, mat) = stream_system(&format!("ars-first-{i}"));
        let (src, done) = source(10, OverflowStrategy::DropHead)
            .to_mat(Sink::ignore(), Keep::both)
            .run(&mat);
        src.complete();
        assert_eq!(
            done.wait_timeout(PATIENCE).expect("completes in time"),
            Ok(())
        );
        shutdown(&system);
    }
}

#[test]
fn elements_sent_from_many_threads_before_start_arrive_once_in_sender_order() {
    let (system, mat) = stream_system("ars-race");
    for _ in 0..20 {
        let (src, done) = source(100_000, OverflowStrategy::Fail)
            .to_mat(Sink::collect(), Keep::both)
            .run(&mat);
        let senders: Vec<_> = (0..4u32)
            .map(|t| {
                let actor = src.actor_ref().clone();
                std::thread::spawn(move || {
                    for i in 0..1000u32 {
                        actor.tell(t * 1_000_000 + i);
                    }
                })
            })
            .collect();
        for sender in senders {
            sender.join().unwrap();
        }
        src.complete();
        let got = done.wait().unwrap();
        assert_eq!(got.len(), 4000, "each element exactly once");
        for t in 0..4u32 {
            let mine: Vec<u32> = got.iter().copied().filter(|x| x / 1_000_000 == t).collect();
            assert_eq!(
                mine,
                (0..1000).map(|i| t * 1_000_000 + i).collect::<Vec<_>>(),
                "sender {t} in order"
            );
        }
    }
    shutdown(&system);
}
