//! Blueprints are values: reuse, Keep, materialized values, fusion keeps semantics.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use weir_streams::prelude::*;
use weir_streams::testkit::{TestSink, TestSource};
use weir_streams::{Attributes, ErrorKind, KillSwitches};
use weir_tests::{PATIENCE, shutdown, stream_system};

#[test]
fn a_blueprint_materialized_twice_gives_two_independent_runs() {
    let (system, mat) = stream_system("twice");
    // The scan closure carries state per run: each run starts from zero.
    let counting = Source::range(1u32..=3).scan(0u32, |acc, x| acc + x);
    let a = counting.clone().run_with(Sink::collect(), &mat);
    let b = counting.run_with(Sink::collect(), &mat);
    assert_eq!(a.wait(), Ok(vec![0, 1, 3, 6]));
    assert_eq!(b.wait(), Ok(vec![0, 1, 3, 6]));
    shutdown(&system);
}

#[test]
fn fnmut_state_is_per_run_even_when_fused() {
    let (system, mat) = stream_system("per-run-state");
    let mut seen = 0u32;
    let numbered = Source::repeat(()).map(move |()| {
        seen += 1;
        seen
    });
    let a = numbered.clone().take(3).run_with(Sink::collect(), &mat);
    let b = numbered.take(2).run_with(Sink::collect(), &mat);
    assert_eq!(a.wait(), Ok(vec![1, 2, 3]));
    assert_eq!(b.wait(), Ok(vec![1, 2]));
    shutdown(&system);
}

#[test]
fn keep_picks_the_materialized_values() {
    let (system, mat) = stream_system("keep");
    let source = Source::range(0u8..3).map_materialized_value(|()| "left");
    let sink = Sink::fold(0u32, |a, _| a + 1);
    let left: &str = source.clone().to_mat(sink.clone(), Keep::left).run(&mat);
    assert_eq!(left, "left");
    let right = source.clone().to_mat(sink.clone(), Keep::right).run(&mat);
    assert_eq!(right.wait(), Ok(3));
    let (l, r) = source.clone().to_mat(sink.clone(), Keep::both).run(&mat);
    assert_eq!((l, r.wait()), ("left", Ok(3)));
    let () = source.to_mat(sink, Keep::none).run(&mat);
    shutdown(&system);
}

#[test]
fn via_mat_and_flow_to_mat_combine_values() {
    let (system, mat) = stream_system("via-mat");
    let flow = Flow::<u32>::new()
        .map(|x| x + 1)
        .map_materialized_value(|()| 7u8);
    let sink = flow.to_mat(Sink::collect(), Keep::both);
    let (seven, done) = Source::range(0u32..3).run_with(sink, &mat);
    assert_eq!(seven, 7);
    assert_eq!(done.wait(), Ok(vec![1, 2, 3]));
    let (seven, done) = Source::range(0u32..2)
        .via_mat(
            Flow::<u32>::new().map_materialized_value(|()| 9u8),
            Keep::right,
        )
        .to_mat(Sink::collect(), Keep::both)
        .run(&mat);
    assert_eq!((seven, done.wait()), (9, Ok(vec![0, 1])));
    shutdown(&system);
}

#[test]
fn run_returns_before_the_stream_has_run() {
    let (system, mat) = stream_system("eager");
    let (mut up, mut down) = TestSource::probe::<u8>()
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    // Handles work at once: the request is queued until the island starts.
    down.request(1);
    up.expect_request();
    up.send_next(5);
    assert_eq!(down.expect_next(), 5);
    shutdown(&system);
}

#[test]
fn fused_operators_run_only_on_demand() {
    let (system, mat) = stream_system("demand");
    let produced = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&produced);
    let mut down = Source::range(0u32..1000)
        .inspect(move |_| {
            counter.fetch_add(1, Ordering::SeqCst);
        })
        .map(|x| x * 2)
        .run_with(TestSink::probe(), &mat);
    down.expect_no_message(weir_tests::QUIET);
    assert_eq!(
        produced.load(Ordering::SeqCst),
        0,
        "nothing is produced before a request"
    );
    down.request(3);
    assert_eq!(down.expect_next_n(3), vec![0, 2, 4]);
    down.expect_no_message(weir_tests::QUIET);
    assert_eq!(
        produced.load(Ordering::SeqCst),
        3,
        "exactly what was requested was produced"
    );
    shutdown(&system);
}

#[test]
fn a_fused_filter_asks_upstream_only_for_what_is_missing() {
    let (system, mat) = stream_system("filter-demand");
    let produced = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&produced);
    let mut down = Source::range(0u32..1000)
        .inspect(move |_| {
            counter.fetch_add(1, Ordering::SeqCst);
        })
        .filter(|x| x % 4 == 0)
        .run_with(TestSink::probe(), &mat);
    down.request(3);
    assert_eq!(down.expect_next_n(3), vec![0, 4, 8]);
    down.expect_no_message(weir_tests::QUIET);
    assert_eq!(
        produced.load(Ordering::SeqCst),
        9,
        "upstream ran up to the third element that passed, no further"
    );
    shutdown(&system);
}

#[test]
fn a_fused_filter_that_rejects_everything_still_lets_its_island_stop() {
    let (system, mat) = stream_system("filter-none");
    let (switch, done) = Source::repeat(1u32)
        .filter(|_| false)
        .via_mat(KillSwitches::single(), Keep::right)
        .to_mat(Sink::fold(0u32, |a, x| a + x), Keep::both)
        .run(&mat);
    std::thread::sleep(weir_tests::QUIET);
    switch.shutdown();
    let outcome = done
        .wait_timeout(PATIENCE)
        .unwrap_or_else(|_| panic!("the stream did not stop"));
    assert_eq!(outcome, Ok(0));
    shutdown(&system);
}

#[test]
fn take_while_stops_the_fused_iterator_at_the_first_failing_element() {
    let (system, mat) = stream_system("take-while");
    let produced = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&produced);
    let done = Source::range(0u32..1_000_000)
        .inspect(move |_| {
            counter.fetch_add(1, Ordering::SeqCst);
        })
        .take_while(|x| *x < 5)
        .run_with(Sink::collect(), &mat);
    assert_eq!(done.wait(), Ok(vec![0, 1, 2, 3, 4]));
    assert_eq!(
        produced.load(Ordering::SeqCst),
        6,
        "the iterator stops at the first failing element"
    );
    shutdown(&system);
}

#[test]
fn a_panic_in_a_fused_closure_names_the_fused_stage() {
    let (system, mat) = stream_system("fused-panic");
    let done = Source::range(0u32..10)
        .map(|x| if x == 3 { panic!("boom at {x}") } else { x })
        .run_with(Sink::fold(0, |a, x| a + x), &mat);
    let error = done.wait().unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::Panicked(m) if m == "boom at 3"),
        "{error}"
    );
    assert_eq!(error.stage(), Some("range.map.fold"));
    shutdown(&system);
}

/// Counts 0, 1, 2, ... and panics at `at`.
struct BreaksAt {
    next: u32,
    at: u32,
}

impl Iterator for BreaksAt {
    type Item = u32;
    fn next(&mut self) -> Option<u32> {
        assert!(self.next != self.at, "source broke at {}", self.at);
        self.next += 1;
        Some(self.next - 1)
    }
}

#[test]
fn elements_before_a_panicking_fused_source_still_arrive_first() {
    let (system, mat) = stream_system("fused-source-panic");
    let source = || Source::lazy(|| BreaksAt { next: 0, at: 3 }).map(|x| x * 10);
    for across_a_boundary in [false, true] {
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        let sink = Sink::for_each(move |x| log.lock().unwrap().push(x));
        let done = if across_a_boundary {
            source().async_boundary().run_with(sink, &mat)
        } else {
            source().run_with(sink, &mat)
        };
        let error = done.wait().unwrap_err();
        assert!(
            matches!(error.kind(), ErrorKind::Panicked(m) if m == "source broke at 3"),
            "{error}"
        );
        assert_eq!(*seen.lock().unwrap(), vec![0, 10, 20], "then the failure");
    }
    assert_eq!(
        source().run_with(Sink::head(), &mat).wait(),
        Ok(0),
        "a head stops before the failure"
    );
    shutdown(&system);
}

#[test]
fn named_stages_appear_in_errors() {
    let (system, mat) = stream_system("named");
    let done = TestSource::probe::<u32>()
        .map(|x| if x == 1 { panic!("bad") } else { x })
        .named("parser")
        .to_mat(Sink::ignore(), Keep::both)
        .run(&mat);
    let (mut up, done) = done;
    up.expect_request();
    up.send_next(1);
    let error = done.wait().unwrap_err();
    assert_eq!(error.stage(), Some("parser"));
    assert!(
        error
            .to_string()
            .contains("stage `parser` failed: panicked: bad"),
        "{error}"
    );
    up.expect_cancellation();
    shutdown(&system);
}

#[test]
fn the_identity_flow_adds_nothing_and_flows_compose() {
    let (system, mat) = stream_system("identity");
    let flow = Flow::<u32>::new()
        .via(Flow::new())
        .filter(|x| x % 2 == 1)
        .via(Flow::new().map(|x: u32| x * 10));
    let done = Source::from_iter(vec![1u32, 2, 3])
        .via(flow)
        .run_with(Sink::collect(), &mat);
    assert_eq!(done.wait(), Ok(vec![10, 30]));
    shutdown(&system);
}

#[test]
fn attributes_reach_the_stage() {
    assert_eq!(
        Attributes::named("x").with_input_buffer(0),
        Err(weir_streams::ArgumentError::Zero {
            argument: "input_buffer"
        }),
        "a zero buffer is a typed error, not a silent 1"
    );
    let merged = Attributes::named("a").and(&Attributes::new().with_input_buffer(4).unwrap());
    assert_eq!((merged.name(), merged.input_buffer()), (Some("a"), 4));
}

#[test]
fn completions_are_futures_on_any_executor() {
    let (system, mat) = stream_system("futures");
    let done = Source::range(1u64..=100).run_with(Sink::fold(0, |a, x| a + x), &mat);
    assert_eq!(futures_executor::block_on(done), Ok(5050));
    let slow = Source::<u8, _>::tick(PATIENCE, PATIENCE, 0)
        .unwrap()
        .run_with(Sink::ignore(), &mat);
    let slow = slow
        .wait_timeout(std::time::Duration::from_millis(20))
        .unwrap_err();
    assert!(!slow.is_completed());
    shutdown(&system);
}

/// A probe that waits "for ever" (`Duration::MAX`) must not overflow the
/// clock when it waits for a cancellation (it computed `now + timeout`).
#[test]
fn a_source_probe_that_waits_for_ever_does_not_overflow_the_clock() {
    let (system, mat) = stream_system("probeForEver");
    let mut up = TestSource::probe::<u32>()
        .take(1)
        .to_mat(Sink::ignore(), Keep::left)
        .run(&mat)
        .with_timeout(std::time::Duration::MAX);
    up.expect_request();
    up.send_next(1);
    up.expect_cancellation();
    shutdown(&system);
}
