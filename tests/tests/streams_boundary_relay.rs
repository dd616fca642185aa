//! Operators between two async boundaries run inside the second
//! boundary's upstream half (the planner's relay rule): the island between
//! them moves batches, with no ports. Every test runs fused (the relay)
//! and unfused (ports everywhere) and expects the same behaviour.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use weir_streams::prelude::*;
use weir_streams::testkit::{TestSink, TestSource};
use weir_streams::{Attributes, ErrorKind, StreamError, SupervisionStrategy};
use weir_tests::{PATIENCE, shutdown, stream_system};

fn both_ways(name: &str, test: impl Fn(&Materializer)) {
    for fusion in [true, false] {
        let (system, _) = stream_system(name);
        let mat = Materializer::builder(&system).fusion(fusion).build();
        test(&mat);
        shutdown(&system);
    }
}

fn model(n: u64, boundaries: u64) -> u64 {
    (0..n)
        .map(|x| (1..=boundaries).fold(x, |x, k| x.wrapping_mul(3) ^ k))
        .filter(|x| x % 7 != 0)
        .fold(0u64, u64::wrapping_add)
}

#[test]
fn operators_between_boundaries_compute_what_the_model_does() {
    both_ways("relay-model", |mat| {
        for boundaries in [2u64, 4] {
            let mut source = Source::range(0..20_000u64).async_boundary();
            for k in 1..=boundaries {
                source = source
                    .map(move |x: u64| x.wrapping_mul(3) ^ k)
                    .async_boundary();
            }
            let sum = source
                .filter(|x| x % 7 != 0)
                .run_with(Sink::fold(0u64, u64::wrapping_add), mat)
                .wait();
            assert_eq!(
                sum,
                Ok(model(20_000, boundaries)),
                "{boundaries} boundaries"
            );
        }
    });
}

#[test]
fn two_boundaries_in_a_row_pass_every_element_in_order() {
    both_ways("relay-empty", |mat| {
        let seen = Source::range(0..5_000u32)
            .async_boundary()
            .async_boundary()
            .run_with(Sink::collect(), mat)
            .wait()
            .expect("the stream completes");
        assert_eq!(seen, (0..5_000).collect::<Vec<_>>());
    });
}

#[test]
fn elements_that_trickle_in_wake_the_relay() {
    both_ways("relay-trickle", |mat| {
        let (mut source, mut sink) = TestSource::probe::<u32>()
            .async_boundary()
            .map(|x| x * 2)
            .async_boundary()
            .to_mat(TestSink::probe(), Keep::both)
            .run(mat);
        source = source.with_timeout(PATIENCE);
        sink = sink.with_timeout(PATIENCE);
        sink.request(10);
        for x in 0..10 {
            source.send_next(x);
            assert_eq!(sink.expect_next(), x * 2);
        }
        source.send_complete();
        sink.expect_complete();
    });
}

#[test]
fn an_upstream_failure_goes_through_the_relay_after_the_elements_before_it() {
    both_ways("relay-upstream-failure", |mat| {
        let (mut source, mut sink) = TestSource::probe::<u32>()
            .async_boundary()
            .map(|x| x + 1)
            .async_boundary()
            .to_mat(TestSink::probe(), Keep::both)
            .run(mat);
        source = source.with_timeout(PATIENCE);
        sink = sink.with_timeout(PATIENCE);
        sink.request(3);
        source.send_next(1);
        source.send_next(2);
        source.send_error(StreamError::msg("boom"));
        assert_eq!(sink.expect_next(), 2);
        assert_eq!(sink.expect_next(), 3);
        let error = sink.expect_error();
        assert!(error.to_string().contains("boom"), "{error}");
    });
}

#[test]
fn a_panic_between_boundaries_fails_downstream_and_cancels_upstream() {
    both_ways("relay-panic", |mat| {
        let (mut source, done) = TestSource::probe::<u32>()
            .async_boundary()
            .map(|x| if x == 3 { panic!("three") } else { x })
            .async_boundary()
            .to_mat(Sink::fold(0u32, |a, x| a + x), Keep::both)
            .run(mat);
        source = source.with_timeout(PATIENCE);
        for x in 0..4 {
            source.send_next(x);
        }
        let error = done.wait().expect_err("the stream fails");
        assert!(matches!(error.kind(), ErrorKind::Panicked(_)), "{error:?}");
        source.expect_cancellation();
    });
}

/// The panic's cause crosses back with the cancellation, as it does with
/// ports (fusion off) and into a sink's island: `watch_termination` before
/// the first boundary sees the failure. The relay dropped its end instead
/// (a plain cancel: `Ok(())`). Found by a stage fault in simulation
/// (`sim_streams::faults`).
#[test]
fn a_panic_between_boundaries_cancels_upstream_with_its_cause() {
    both_ways("relay-panic-cause", |mat| {
        let (upstream, done) = Source::from_iter(0u32..)
            .via_mat(Flow::watch_termination(), Keep::right)
            .async_boundary()
            .map(|x| if x == 3 { panic!("three") } else { x })
            .async_boundary()
            .to_mat(Sink::ignore(), Keep::both)
            .run(mat);
        let error = done.wait().expect_err("the stream fails");
        assert!(matches!(error.kind(), ErrorKind::Panicked(_)), "{error:?}");
        let cause = upstream.wait().expect_err("cancelled with the failure");
        assert!(matches!(cause.kind(), ErrorKind::Panicked(_)), "{cause:?}");
    });
}

/// The same with a failure an operator between two boundaries raises
/// itself (`limit` fused into the relay fails the fill): upstream hears
/// the cause, as it does with ports.
#[test]
fn a_failing_operator_between_boundaries_cancels_upstream_with_its_cause() {
    both_ways("relay-limit-cause", |mat| {
        let (upstream, done) = Source::from_iter(0u32..)
            .via_mat(Flow::watch_termination(), Keep::right)
            .async_boundary()
            .limit(3)
            .async_boundary()
            .to_mat(Sink::ignore(), Keep::both)
            .run(mat);
        let error = done.wait().expect_err("the stream fails");
        assert!(
            matches!(error.kind(), ErrorKind::LimitExceeded { max: 3 }),
            "{error:?}"
        );
        let cause = upstream.wait().expect_err("cancelled with the failure");
        assert!(
            matches!(cause.kind(), ErrorKind::LimitExceeded { max: 3 }),
            "{cause:?}"
        );
    });
}

#[test]
fn take_between_boundaries_completes_downstream_and_cancels_upstream() {
    both_ways("relay-take", |mat| {
        let pulled = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&pulled);
        let (watched, seen) = Source::from_iter((0u64..).inspect(move |_| {
            counter.fetch_add(1, Ordering::Relaxed);
        }))
        .via_mat(Flow::watch_termination(), Keep::right)
        .async_boundary()
        .take(5)
        .async_boundary()
        .to_mat(Sink::collect(), Keep::both)
        .run(mat);
        assert_eq!(seen.wait(), Ok(vec![0, 1, 2, 3, 4]));
        // The endless source hears the cancellation and stops.
        assert_eq!(watched.wait(), Ok(()));
        assert!(pulled.load(Ordering::Relaxed) < 1_000_000);
    });
}

#[test]
fn cancelling_downstream_of_the_relay_cancels_upstream() {
    both_ways("relay-cancel", |mat| {
        let (mut source, mut sink) = TestSource::probe::<u32>()
            .async_boundary()
            .map(|x| x + 1)
            .async_boundary()
            .to_mat(TestSink::probe(), Keep::both)
            .run(mat);
        source = source.with_timeout(PATIENCE);
        sink = sink.with_timeout(PATIENCE);
        sink.request(1);
        source.send_next(1);
        assert_eq!(sink.expect_next(), 2);
        sink.cancel();
        source.expect_cancellation();
    });
}

#[test]
fn two_relays_in_a_row_carry_a_failure_down_and_a_cancellation_up() {
    both_ways("relay-chain", |mat| {
        // Three boundaries: two relays (the map's island, the filter's).
        let stream = || {
            TestSource::probe::<u32>()
                .async_boundary()
                .map(|x| x + 1)
                .async_boundary()
                .filter(|x| x % 2 == 0)
                .async_boundary()
                .to_mat(TestSink::probe(), Keep::both)
                .run(mat)
        };
        let (source, sink) = stream();
        let (mut source, mut sink) = (source.with_timeout(PATIENCE), sink.with_timeout(PATIENCE));
        sink.request(2);
        for x in 0..4 {
            source.send_next(x);
        }
        assert_eq!(sink.expect_next(), 2);
        assert_eq!(sink.expect_next(), 4);
        sink.cancel();
        source.expect_cancellation();

        let (source, sink) = stream();
        let (mut source, mut sink) = (source.with_timeout(PATIENCE), sink.with_timeout(PATIENCE));
        sink.request(5);
        source.send_next(1);
        source.send_error(StreamError::msg("late"));
        assert_eq!(sink.expect_next(), 2);
        let error = sink.expect_error();
        assert!(error.to_string().contains("late"), "{error}");
    });
}

#[test]
fn a_graph_run_twice_relays_each_run_through_its_own_hand_over() {
    both_ways("relay-reuse", |mat| {
        let graph = Source::range(0..2_000u64)
            .async_boundary()
            .map(|x| x * 2)
            .async_boundary()
            .async_boundary()
            .to_mat(Sink::fold(0u64, |a, x| a + x), Keep::right);
        let runs: Vec<_> = (0..3).map(|_| graph.clone().run(mat)).collect();
        for run in runs {
            assert_eq!(run.wait(), Ok(2 * (0..2_000u64).sum::<u64>()));
        }
    });
}

#[test]
fn a_dispatcher_on_the_operators_between_boundaries_runs_their_island_there() {
    for fusion in [true, false] {
        let system = weir_actor::ActorSystem::builder()
            .name("relay-dispatcher")
            .pool("relaypool", 1)
            .build()
            .expect("a valid system");
        let mat = Materializer::builder(&system).fusion(fusion).build();
        let on_pool =
            Attributes::new().with_dispatcher(weir_actor::DispatcherKind::Named("relaypool"));
        let threads = Source::range(0..3u32)
            .async_boundary()
            .map(|_| std::thread::current().name().unwrap_or("").to_owned())
            .with_attributes(on_pool)
            .async_boundary()
            .run_with(Sink::collect(), &mat)
            .wait()
            .expect("the stream completes");
        assert_eq!(threads.len(), 3);
        for thread in threads {
            assert!(
                thread.contains("relaypool"),
                "fusion {fusion}: ran on {thread}"
            );
        }
        shutdown(&system);
    }
}

#[test]
fn fused_fan_in_before_and_a_merge_after_a_relay_and_a_supervised_operator_in_it() {
    both_ways("relay-fan-in", |mat| {
        let resume = Attributes::new().with_supervision_strategy(SupervisionStrategy::resuming());
        let mut seen = Source::range(0..100u64)
            .merge(Source::range(100..200u64))
            .async_boundary()
            .map(|x| if x % 10 == 3 { panic!("skip") } else { x })
            .with_attributes(resume)
            .async_boundary()
            .merge(Source::range(1_000..1_010u64))
            .run_with(Sink::collect(), mat)
            .wait()
            .expect("the stream completes");
        seen.sort_unstable();
        let want: Vec<u64> = (0..200u64)
            .filter(|x| x % 10 != 3)
            .chain(1_000..1_010)
            .collect();
        assert_eq!(seen, want);
    });
}

#[test]
fn shutting_the_materializer_down_aborts_every_island_of_a_relayed_stream() {
    both_ways("relay-shutdown", |mat| {
        let never_ends = Source::repeat(1u32)
            .async_boundary()
            .map(|x| x + 1)
            .async_boundary()
            .async_boundary()
            .run_with(Sink::ignore(), mat);
        assert!(weir_tests::eventually(PATIENCE, || mat.running_islands() == 4));
        mat.shutdown();
        let error = never_ends
            .wait_timeout(PATIENCE)
            .expect("aborted in time")
            .unwrap_err();
        assert!(
            matches!(error.kind(), ErrorKind::AbruptTermination),
            "{error:?}"
        );
        assert!(weir_tests::eventually(PATIENCE, || mat.running_islands() == 0));
    });
}

#[test]
fn one_element_buffers_on_both_sides_of_a_relay_still_carry_every_element() {
    both_ways("relay-tiny", |mat| {
        let one = Attributes::new().with_input_buffer(1).expect("not zero");
        let sum = Source::range(0..3_000u64)
            .async_boundary()
            .map(|x| x + 1)
            .with_attributes(one.clone())
            .async_boundary()
            .async_boundary()
            .run_with(Sink::fold(0u64, |a, x| a + x).with_attributes(one), mat)
            .wait();
        assert_eq!(sum, Ok((1..=3_000u64).sum()));
    });
}

#[test]
fn a_slow_sink_holds_the_source_back_through_the_relay() {
    both_ways("relay-backpressure", |mat| {
        let pulled = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&pulled);
        let mut sink = Source::from_iter((0u64..).inspect(move |_| {
            counter.fetch_add(1, Ordering::Relaxed);
        }))
        .async_boundary()
        .map(|x| x * 2)
        .async_boundary()
        .run_with(TestSink::probe(), mat)
        .with_timeout(PATIENCE);
        sink.request(1);
        assert_eq!(sink.expect_next(), 0);
        // Three hand-overs of the default 16 and what the stages hold: the
        // source never runs far ahead of one requested element.
        assert!(!weir_tests::eventually(weir_tests::QUIET, || pulled
            .load(Ordering::Relaxed)
            > 80));
        sink.cancel();
    });
}
