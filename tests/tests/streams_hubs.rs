//! Hubs (`MergeHub`, `BroadcastHub`, `PartitionHub`): attaching and
//! detaching while running, attaching after the end, a failing producer,
//! back-pressure, draining. Scenarios modelled on Pekko's HubSpec.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use weir_streams::prelude::*;
use weir_streams::testkit::{TestSink, TestSource};
use weir_streams::{
    ArgumentError, BroadcastHub, ConsumerInfo, DrainingControl, ErrorKind, MergeHub, PartitionHub,
};

use weir_tests::{PATIENCE, QUIET, eventually, shutdown, stream_system};

fn assert_handle<H: Send + Sync + Clone + 'static>(_: &H) {}

#[test]
fn handles_are_send_sync_clone_and_zero_buffers_are_refused() {
    let (system, mat) = stream_system("hub-handles");
    let (sink, draining) = MergeHub::source_with_draining::<u32>(4)
        .unwrap()
        .to(Sink::ignore())
        .run(&mat);
    assert_handle::<Sink<u32, ()>>(&sink);
    assert_handle::<DrainingControl>(&draining);
    let source = Source::<u32, ()>::empty().run_with(BroadcastHub::sink(4).unwrap(), &mat);
    assert_handle::<Source<u32, ()>>(&source);
    let source = Source::<u32, ()>::empty().run_with(
        PartitionHub::sink(|_, _: &u32| Some(0), 1, 4).unwrap(),
        &mat,
    );
    assert_handle::<Source<u32, ()>>(&source);
    assert_eq!(
        MergeHub::source::<u32>(0).err(),
        Some(ArgumentError::Zero {
            argument: "per_producer_buffer"
        })
    );
    assert_eq!(
        BroadcastHub::sink::<u32>(0).err(),
        Some(ArgumentError::Zero { argument: "buffer" })
    );
    let partition = PartitionHub::sink(|_, _: &u32| Some(0), 1, 0);
    assert_eq!(
        partition.err(),
        Some(ArgumentError::Zero { argument: "buffer" })
    );
    shutdown(&system);
}

// ---- MergeHub ----

#[test]
fn merge_hub_merges_producers_attached_while_running() {
    let (system, mat) = stream_system("merge-happy");
    let (sink, all) = MergeHub::source(8)
        .unwrap()
        .take(30)
        .to_mat(Sink::collect(), Keep::both)
        .run(&mat);
    let first = Source::from_iter(1..=10u32)
        .via_mat(Flow::watch_termination(), Keep::right)
        .to_mat(sink.clone(), Keep::left)
        .run(&mat);
    let second = Source::from_iter(11..=20u32)
        .async_boundary()
        .via_mat(Flow::watch_termination(), Keep::right)
        .to_mat(sink.clone(), Keep::left)
        .run(&mat);
    // A producer attaching later, after the first ones completed.
    assert_eq!(first.wait(), Ok(()));
    assert_eq!(second.wait(), Ok(()));
    Source::from_iter(21..=30u32).run_with(sink, &mat);
    let mut all = all.wait().unwrap();
    all.sort_unstable();
    assert_eq!(all, (1..=30).collect::<Vec<_>>());
    shutdown(&system);
}

#[test]
fn merge_hub_keeps_each_producer_in_order_over_long_streams() {
    let (system, mat) = stream_system("merge-long");
    let (sink, all) = MergeHub::source(16)
        .unwrap()
        .take(20_000)
        .to_mat(Sink::collect(), Keep::both)
        .run(&mat);
    Source::from_iter(0..10_000u32).run_with(sink.clone(), &mat);
    Source::from_iter(10_000..20_000u32).run_with(sink, &mat);
    let all = all.wait().unwrap();
    let (low, high): (Vec<u32>, Vec<u32>) = all.into_iter().partition(|&x| x < 10_000);
    assert_eq!(low, (0..10_000).collect::<Vec<_>>());
    assert_eq!(high, (10_000..20_000).collect::<Vec<_>>());
    shutdown(&system);
}

#[test]
fn merge_hub_back_pressures_each_producer_on_its_own_buffer() {
    let (system, mat) = stream_system("merge-buffer");
    let (sink, mut down) = MergeHub::source(4)
        .unwrap()
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    let mut slow = TestSource::probe::<u32>().to(sink.clone()).run(&mat);
    // Without demand downstream the producer may send its buffer, no more.
    let mut sent = 0;
    while sent < 10 && eventually(QUIET, || slow.take_requests() > 0) {
        slow.send_next(sent);
        sent += 1;
    }
    assert_eq!(sent, 4, "a producer fills its own buffer, then waits");
    // Another producer is not held back by the first.
    Source::from_iter(vec![100u32, 101]).run_with(sink, &mat);
    down.request(6);
    let mut got = down.expect_next_n(6);
    got.sort_unstable();
    assert_eq!(got, vec![0, 1, 2, 3, 100, 101]);
    // Demand returns credit: the first producer may send again.
    assert!(eventually(PATIENCE, || slow.take_requests() > 0));
    shutdown(&system);
}

#[test]
fn merge_hub_keeps_working_when_a_producer_fails() {
    let (system, mat) = stream_system("merge-failing");
    let (sink, all) = MergeHub::source(8)
        .unwrap()
        .take(10)
        .to_mat(Sink::collect(), Keep::both)
        .run(&mat);
    Source::<u32, ()>::failed(StreamError::msg("producer failed")).run_with(sink.clone(), &mat);
    let mut failing = TestSource::probe::<u32>().to(sink.clone()).run(&mat);
    for i in 1..=5 {
        assert!(eventually(PATIENCE, || failing.take_requests() > 0));
        failing.send_next(i);
    }
    failing.send_error(StreamError::msg("late failure"));
    Source::from_iter(6..=10u32).run_with(sink, &mat);
    let mut all = all
        .wait()
        .expect("a producer's failure does not fail the hub");
    all.sort_unstable();
    assert_eq!(all, (1..=10).collect::<Vec<_>>());
    shutdown(&system);
}

#[test]
fn merge_hub_cancellation_reaches_attached_and_later_producers() {
    let (system, mat) = stream_system("merge-cancel");
    let (sink, mut down) = MergeHub::source(4)
        .unwrap()
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    let mut attached = TestSource::probe::<u32>().to(sink.clone()).run(&mat);
    attached.send_next(1);
    down.request(1);
    assert_eq!(down.expect_next(), 1);
    down.cancel();
    attached.expect_cancellation();
    let mut late = TestSource::probe::<u32>().to(sink).run(&mat);
    late.expect_cancellation();
    shutdown(&system);
}

#[test]
fn merge_hub_drains_attached_producers_then_completes() {
    let (system, mat) = stream_system("merge-drain");
    let ((sink, draining), mut down) = MergeHub::source_with_draining(4)
        .unwrap()
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    let mut attached = TestSource::probe::<u32>().to(sink.clone()).run(&mat);
    attached.send_next(1);
    down.request(10);
    assert_eq!(down.expect_next(), 1);
    draining.drain_and_complete();
    // Producers attaching after the drain are refused.
    let mut late = TestSource::probe::<u32>().to(sink).run(&mat);
    late.expect_cancellation();
    // The attached one goes on until it completes; then the hub completes.
    attached.send_next(2);
    assert_eq!(down.expect_next(), 2);
    down.expect_no_message(QUIET);
    attached.send_complete();
    down.expect_complete();
    shutdown(&system);
}

// ---- BroadcastHub ----

#[test]
fn broadcast_hub_sends_the_same_elements_to_consumers_attached_together() {
    let (system, mat) = stream_system("broadcast-happy");
    let (mut up, source) = TestSource::probe::<u32>()
        .to_mat(BroadcastHub::sink(8).unwrap(), Keep::both)
        .run(&mat);
    let a = source.clone().run_with(Sink::collect(), &mat);
    let b = source.run_with(Sink::collect(), &mat);
    // Both attachments reach the hub before the elements (one mailbox).
    for i in 1..=20 {
        assert!(eventually(PATIENCE, || up.take_requests() > 0));
        up.send_next(i);
    }
    up.send_complete();
    assert_eq!(a.wait(), Ok((1..=20).collect::<Vec<_>>()));
    assert_eq!(b.wait(), Ok((1..=20).collect::<Vec<_>>()));
    shutdown(&system);
}

#[test]
fn broadcast_hub_holds_elements_for_the_first_consumer_and_drains_on_completion() {
    let (system, mat) = stream_system("broadcast-hold");
    // Upstream completes before anyone attached: the buffered elements
    // wait for the first consumer, which then gets the completion.
    let (done, source) = Source::from_iter(1..=5u32)
        .via_mat(Flow::watch_termination(), Keep::right)
        .to_mat(BroadcastHub::sink(8).unwrap(), Keep::both)
        .run(&mat);
    assert_eq!(done.wait(), Ok(()));
    assert_eq!(
        source.clone().run_with(Sink::collect(), &mat).wait(),
        Ok(vec![1, 2, 3, 4, 5])
    );
    // A consumer attaching after the end gets the end at once.
    let late = source.run_with(Sink::collect(), &mat);
    assert_eq!(late.wait(), Ok(Vec::<u32>::new()));
    shutdown(&system);
}

#[test]
fn broadcast_hub_goes_at_the_pace_of_the_slowest_consumer() {
    let (system, mat) = stream_system("broadcast-slow");
    let (mut up, source) = TestSource::probe::<u32>()
        .to_mat(BroadcastHub::sink(2).unwrap(), Keep::both)
        .run(&mat);
    let mut fast = source
        .clone()
        .to_mat(TestSink::probe(), Keep::right)
        .run(&mat);
    let mut slow = source
        .clone()
        .to_mat(TestSink::probe(), Keep::right)
        .run(&mat);
    fast.request(100);
    let mut sent = 0;
    while eventually(QUIET, || up.take_requests() > 0) {
        up.send_next(sent);
        sent += 1;
        assert!(sent <= 10, "the slow consumer must hold the hub back");
    }
    assert_eq!(
        fast.expect_next_n(sent as usize),
        (0..sent).collect::<Vec<_>>()
    );
    // Detaching the slow consumer releases the hub.
    slow.cancel();
    assert!(eventually(PATIENCE, || up.take_requests() > 0));
    up.send_next(99);
    assert_eq!(fast.expect_next(), 99);
    // A consumer attaching while running sees elements from then on.
    // Nothing shows when it has attached, so send until it sees an element.
    let seen = Arc::new(AtomicU32::new(0));
    let seen_in = Arc::clone(&seen);
    let mut later = source
        .map(move |x| {
            seen_in.fetch_add(1, Ordering::SeqCst);
            x
        })
        .to_mat(TestSink::probe(), Keep::right)
        .run(&mat);
    later.request(100);
    let mut next = 100;
    let mut credit = 0;
    assert!(eventually(PATIENCE, || {
        credit += up.take_requests();
        if seen.load(Ordering::SeqCst) > 0 {
            return true;
        }
        if credit > 0 {
            credit -= 1;
            up.send_next(next);
            assert_eq!(fast.expect_next(), next);
            next += 1;
            assert!(next < 150, "the late consumer never attached");
        }
        false
    }));
    // From its first element on, it sees what the fast consumer sees.
    let first = later.expect_next();
    assert!((100..next).contains(&first), "{first} was sent before");
    assert_eq!(
        later.expect_next_n((next - first - 1) as usize),
        (first + 1..next).collect::<Vec<_>>()
    );
    assert!(eventually(PATIENCE, || {
        credit += up.take_requests();
        credit > 0
    }));
    up.send_next(200);
    assert_eq!(fast.expect_next(), 200);
    assert_eq!(later.expect_next(), 200);
    up.send_complete();
    fast.expect_complete();
    later.expect_complete();
    shutdown(&system);
}

#[test]
fn broadcast_hub_failure_reaches_every_consumer_and_late_ones() {
    let (system, mat) = stream_system("broadcast-fail");
    let (mut up, source) = TestSource::probe::<u32>()
        .to_mat(BroadcastHub::sink(4).unwrap(), Keep::both)
        .run(&mat);
    let mut a = source
        .clone()
        .to_mat(TestSink::probe(), Keep::right)
        .run(&mat);
    let mut b = source
        .clone()
        .to_mat(TestSink::probe(), Keep::right)
        .run(&mat);
    a.request(1);
    b.request(1);
    up.expect_request();
    up.send_next(1);
    assert_eq!(a.expect_next(), 1);
    assert_eq!(b.expect_next(), 1);
    up.send_error(StreamError::msg("upstream broke"));
    assert_eq!(a.expect_error().to_string(), b.expect_error().to_string());
    let late = source.run_with(Sink::collect(), &mat).wait();
    assert!(late.unwrap_err().to_string().contains("upstream broke"));
    shutdown(&system);
}

// ---- PartitionHub ----

#[test]
fn partition_hub_routes_each_element_to_one_consumer() {
    let (system, mat) = stream_system("partition-happy");
    let source = Source::from_iter(0..100u32).run_with(
        PartitionHub::sink(|n, x: &u32| Some(*x as usize % n), 2, 4).unwrap(),
        &mat,
    );
    let even = source.clone().run_with(Sink::collect(), &mat);
    let odd = source.clone().run_with(Sink::collect(), &mat);
    assert_eq!(even.wait(), Ok((0..100).step_by(2).collect::<Vec<_>>()));
    assert_eq!(odd.wait(), Ok((1..100).step_by(2).collect::<Vec<_>>()));
    // Attaching after completion: completed at once.
    assert_eq!(
        source.run_with(Sink::collect(), &mat).wait(),
        Ok(Vec::<u32>::new())
    );
    shutdown(&system);
}

#[test]
fn partition_hub_waits_for_its_consumers_and_back_pressures() {
    let (system, mat) = stream_system("partition-start");
    let (mut up, source) = TestSource::probe::<u32>()
        .to_mat(
            PartitionHub::sink(|_, x: &u32| Some(*x as usize % 2), 2, 2).unwrap(),
            Keep::both,
        )
        .run(&mat);
    let mut first = source
        .clone()
        .to_mat(TestSink::probe(), Keep::right)
        .run(&mat);
    up.expect_no_signal(QUIET); // one consumer of two: nothing is pulled
    let mut second = source.to_mat(TestSink::probe(), Keep::right).run(&mat);
    second.request(100);
    // Elements for `first` (even) fill its buffer; then the hub waits.
    let mut sent = 0;
    while eventually(QUIET, || up.take_requests() > 0) {
        up.send_next(sent * 2);
        sent += 1;
        assert!(sent <= 10, "a full consumer holds the hub back");
    }
    assert_eq!(sent, 3, "two buffered, one waiting for room");
    first.request(3);
    assert_eq!(first.expect_next_n(3), vec![0, 2, 4]);
    up.expect_request();
    up.send_next(1);
    assert_eq!(second.expect_next(), 1);
    up.send_complete();
    first.expect_complete();
    second.expect_complete();
    shutdown(&system);
}

#[test]
fn partition_hub_drops_on_none_and_fails_on_an_index_out_of_range() {
    let (system, mat) = stream_system("partition-index");
    let source = Source::from_iter(0..10u32).run_with(
        PartitionHub::sink(
            |_, x: &u32| if *x < 3 { None } else { Some(*x as usize - 3) },
            1,
            4,
        )
        .unwrap(),
        &mat,
    );
    let error = source.run_with(Sink::collect(), &mat).wait().unwrap_err();
    assert!(
        matches!(
            error.kind(),
            ErrorKind::PartitionOutOfRange {
                index: 1,
                consumers: 1
            }
        ),
        "{error}"
    );
    // Consumers that leave stop being partitioned to.
    // Markers (1000 and up) are dropped; they let the test see how many
    // consumers the hub counts.
    let counted = Arc::new(AtomicUsize::new(0));
    let counted_in = Arc::clone(&counted);
    let partitioner = move |n: usize, x: &u32| {
        counted_in.store(n, Ordering::SeqCst);
        (*x < 1000).then_some(*x as usize % n)
    };
    let (mut up, source) = TestSource::probe::<u32>()
        .to_mat(PartitionHub::sink(partitioner, 2, 4).unwrap(), Keep::both)
        .run(&mat);
    let mut stays = source
        .clone()
        .to_mat(TestSink::probe(), Keep::right)
        .run(&mat);
    let mut leaves = source.to_mat(TestSink::probe(), Keep::right).run(&mat);
    stays.request(10);
    leaves.cancel();
    // Wait until the hub has seen the cancel.
    let mut credit = 0;
    assert!(eventually(PATIENCE, || {
        credit += up.take_requests();
        if counted.load(Ordering::SeqCst) == 1 {
            return true;
        }
        if credit > 0 {
            credit -= 1;
            up.send_next(1000);
        }
        false
    }));
    for i in 0..3 {
        assert!(eventually(PATIENCE, || {
            credit += up.take_requests();
            credit > 0
        }));
        credit -= 1;
        up.send_next(i);
    }
    assert_eq!(stays.expect_next_n(3), vec![0, 1, 2]);
    shutdown(&system);
}

// ---- what a leaving consumer leaves, and failures that overtake ----

/// Pekko's BroadcastHub rolls its buffer forward to where the last
/// consumer stopped: what it was handed and did not take goes to the next.
/// The next consumer attaches once the first has left (its island has
/// handled the cancel): a consumer attaching while another is still
/// there starts at the hub's position instead, as in Pekko. (A sink that
/// completes as it cancels, such as `take(10)` into `collect`, reports
/// its result as the cancel goes out; attaching on that result races the
/// cancel, which CI saw.)
#[test]
fn broadcast_hub_keeps_what_the_last_consumer_left_for_the_next() {
    let (system, mat) = stream_system("broadcast-leftovers");
    let source = Source::range(1u32..=20).run_with(BroadcastHub::sink(8).unwrap(), &mat);
    let mut first = source.clone().run_with(TestSink::probe(), &mat);
    first.request(10);
    assert_eq!(first.expect_next_n(10), (1..=10).collect::<Vec<_>>());
    first.cancel();
    first.wait_idle();
    let second = source.run_with(Sink::collect(), &mat);
    assert_eq!(second.wait(), Ok((11..=20).collect::<Vec<_>>()));
    shutdown(&system);
}

/// A hub's failure reaches a consumer at once, over elements it holds and
/// has not requested (Reactive Streams' onError needs no demand).
#[test]
fn hub_failure_overtakes_elements_a_consumer_has_not_requested() {
    let (system, mat) = stream_system("hub-fail-overtakes");
    let (mut up, source) = TestSource::probe::<u32>()
        .to_mat(BroadcastHub::sink(4).unwrap(), Keep::both)
        .run(&mat);
    let mut consumer = source.to_mat(TestSink::probe(), Keep::right).run(&mat);
    consumer.request(1);
    for x in 1..=3 {
        up.expect_request();
        up.send_next(x);
    }
    assert_eq!(consumer.expect_next(), 1);
    up.send_error(StreamError::msg("broadcast broke"));
    assert!(
        consumer
            .expect_error()
            .to_string()
            .contains("broadcast broke")
    );

    let (mut up, source) = TestSource::probe::<u32>()
        .to_mat(
            PartitionHub::sink(|_, _: &u32| Some(0), 1, 4).unwrap(),
            Keep::both,
        )
        .run(&mat);
    let mut consumer = source.to_mat(TestSink::probe(), Keep::right).run(&mat);
    consumer.request(1);
    for x in 1..=3 {
        up.expect_request();
        up.send_next(x);
    }
    assert_eq!(consumer.expect_next(), 1);
    up.send_error(StreamError::msg("partition broke"));
    assert!(
        consumer
            .expect_error()
            .to_string()
            .contains("partition broke")
    );
    shutdown(&system);
}

/// `sink_starting_after(2, ..)`: one consumer attached pulls nothing; with
/// the second both see the stream from its first element; once started
/// it goes on when one leaves.
#[test]
fn broadcast_hub_starting_after_waits_for_its_consumers() {
    let (system, mat) = stream_system("broadcast-start-after");
    let (mut up, source) = TestSource::probe::<u32>()
        .to_mat(BroadcastHub::sink_starting_after(2, 8).unwrap(), Keep::both)
        .run(&mat);
    let mut a = source
        .clone()
        .to_mat(TestSink::probe(), Keep::right)
        .run(&mat);
    a.request(10);
    up.expect_no_signal(QUIET);
    let mut b = source.to_mat(TestSink::probe(), Keep::right).run(&mat);
    b.request(10);
    assert!(eventually(PATIENCE, || up.take_requests() > 0));
    up.send_next(1);
    assert_eq!(a.expect_next(), 1);
    assert_eq!(b.expect_next(), 1);
    a.cancel();
    a.wait_idle();
    assert!(eventually(PATIENCE, || up.take_requests() > 0));
    up.send_next(2);
    assert_eq!(b.expect_next(), 2);
    up.send_complete();
    b.expect_complete();
    assert!(matches!(
        BroadcastHub::sink_starting_after::<u32>(1, 0),
        Err(ArgumentError::Zero { .. })
    ));
    shutdown(&system);
}

/// The shortest queue, ties to the later consumer.
fn shortest_queue(info: &ConsumerInfo<'_>, _: &u32) -> Option<usize> {
    (0..info.size()).min_by_key(|&i| (info.queue_size(i), std::cmp::Reverse(i)))
}

/// `stateful_sink`: with neither consumer taking anything, the queues the
/// partitioner sees grow by one per element routed, so the shortest-queue
/// router alternates; a consumer with no room holds the hub back; one
/// partitioner per materialization.
#[test]
fn partition_hub_stateful_sink_sees_each_consumers_queue() {
    let (system, mat) = stream_system("partition-stateful");
    let made = Arc::new(AtomicUsize::new(0));
    let hub = {
        let made = made.clone();
        PartitionHub::stateful_sink(
            move || {
                made.fetch_add(1, Ordering::SeqCst);
                shortest_queue
            },
            2,
            4,
        )
        .unwrap()
    };
    let (mut up, source) = TestSource::probe::<u32>()
        .to_mat(hub.clone(), Keep::both)
        .run(&mat);
    let mut a = source
        .clone()
        .to_mat(TestSink::probe(), Keep::right)
        .run(&mat);
    let mut b = source.to_mat(TestSink::probe(), Keep::right).run(&mat);
    let mut sent = 0;
    while eventually(QUIET, || up.take_requests() > 0) {
        up.send_next(sent);
        sent += 1;
        assert!(sent <= 12, "full consumers hold the hub back");
    }
    assert_eq!(sent, 9, "four each, one waiting for room");
    a.request(4);
    assert_eq!(a.expect_next_n(4), vec![1, 3, 5, 7]);
    b.request(5);
    assert_eq!(b.expect_next_n(5), vec![0, 2, 4, 6, 8]);
    up.send_complete();
    a.expect_complete();
    b.expect_complete();
    let _second = Source::single(1u32).run_with(hub, &mat);
    assert!(eventually(PATIENCE, || made.load(Ordering::SeqCst) == 2));
    shutdown(&system);
}

/// An element that waited for room goes to its consumer as soon as there
/// is room, not with the next element from upstream (with a buffer of 4
/// it went into a part batch that nothing handed over).
#[test]
fn partition_hub_delivers_a_waiting_element_once_there_is_room() {
    let (system, mat) = stream_system("partition-waiting");
    let (mut up, source) = TestSource::probe::<u32>()
        .to_mat(
            PartitionHub::sink(|_, _: &u32| Some(0), 1, 4).unwrap(),
            Keep::both,
        )
        .run(&mat);
    let mut only = source.to_mat(TestSink::probe(), Keep::right).run(&mat);
    let mut sent = 0;
    while eventually(QUIET, || up.take_requests() > 0) {
        up.send_next(sent);
        sent += 1;
        assert!(sent <= 8, "a full consumer holds the hub back");
    }
    assert_eq!(sent, 5, "four buffered, one waiting for room");
    only.request(5);
    assert_eq!(only.expect_next_n(5), vec![0, 1, 2, 3, 4]);
    shutdown(&system);
}

/// `source_with_max_total(2, 3)`: room for one producer of 2. The second
/// pulls nothing until the first has ended and its elements are taken;
/// a producer that ends while it waits gives its turn on; cancelling the
/// hub reaches waiting producers.
#[test]
fn merge_hub_with_max_total_lets_producers_in_as_room_frees() {
    let (system, mat) = stream_system("merge-max-total");
    let (sink, mut down) = MergeHub::source_with_max_total(2, 3)
        .unwrap()
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    let mut first = TestSource::probe::<u32>().to(sink.clone()).run(&mat);
    let mut quitter = TestSource::probe::<u32>().to(sink.clone()).run(&mat);
    let mut second = TestSource::probe::<u32>().to(sink.clone()).run(&mat);
    for x in [1, 2] {
        assert!(eventually(PATIENCE, || first.take_requests() > 0));
        first.send_next(x);
    }
    quitter.expect_no_signal(QUIET);
    second.expect_no_signal(QUIET);
    quitter.send_complete(); // ends while waiting: nothing of it arrives
    first.send_complete();
    second.expect_no_signal(QUIET); // the first's elements are still in the hub
    down.request(1);
    assert_eq!(down.expect_next(), 1);
    second.expect_no_signal(QUIET);
    down.request(3);
    assert_eq!(down.expect_next(), 2);
    assert!(eventually(PATIENCE, || second.take_requests() > 0));
    second.send_next(3);
    assert_eq!(down.expect_next(), 3);
    let mut waiting = TestSource::probe::<u32>().to(sink).run(&mat);
    waiting.expect_no_signal(QUIET);
    down.cancel();
    second.expect_cancellation();
    waiting.expect_cancellation();
    assert!(matches!(
        MergeHub::source_with_max_total::<u32>(4, 3),
        Err(ArgumentError::Invalid { .. })
    ));
    assert!(matches!(
        MergeHub::source_with_max_total::<u32>(0, 3),
        Err(ArgumentError::Zero { .. })
    ));
    shutdown(&system);
}

/// Three producers through room for two, each sending more than its
/// buffer (credit comes back while it waits): every element arrives.
#[test]
fn merge_hub_with_max_total_serves_more_producers_than_room() {
    let (system, mat) = stream_system("merge-max-total-three");
    let (sink, sum) = MergeHub::source_with_max_total(8, 16)
        .unwrap()
        .take(30)
        .to_mat(Sink::fold(0, |sum, x| sum + x), Keep::both)
        .run(&mat);
    for _ in 0..3 {
        Source::repeat(1).take(10).run_with(sink.clone(), &mat);
    }
    let Ok(sum) = sum.wait_timeout(PATIENCE) else {
        panic!("the hub completes in time");
    };
    assert_eq!(sum, Ok(30));
    shutdown(&system);
}

/// `source_with_draining_and_max_total(2, 3)`: room for one producer. A
/// producer still waiting for room when the drain comes was run before
/// it: it is let in and drained (not cancelled), and the hub completes
/// after it; a producer run after the drain is cancelled.
#[test]
fn a_bounded_hub_drains_a_producer_that_waited_for_room() {
    let (system, mat) = stream_system("merge-max-total-drain");
    let ((sink, draining), mut down) = MergeHub::source_with_draining_and_max_total(2, 3)
        .unwrap()
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    let mut first = TestSource::probe::<u32>().to(sink.clone()).run(&mat);
    let mut waiting = TestSource::probe::<u32>().to(sink.clone()).run(&mat);
    assert!(eventually(PATIENCE, || first.take_requests() > 0));
    first.send_next(1);
    waiting.expect_no_signal(QUIET);
    draining.drain_and_complete();
    let mut late = TestSource::probe::<u32>().to(sink).run(&mat);
    late.expect_cancellation();
    first.send_complete();
    down.request(3);
    assert_eq!(down.expect_next(), 1);
    assert!(
        eventually(PATIENCE, || waiting.take_requests() > 0),
        "let in after the drain, not cancelled"
    );
    waiting.send_next(2);
    assert_eq!(down.expect_next(), 2);
    down.expect_no_message(QUIET);
    waiting.send_complete();
    down.expect_complete();
    shutdown(&system);
}
