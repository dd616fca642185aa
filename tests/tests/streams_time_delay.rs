//! `delay` (with each overflow strategy), `delay_with`, `initial_delay`, `take_within` and `drop_within` on a test clock.

use std::time::Duration;

use weir_streams::prelude::*;
use weir_streams::{Attributes, DelayOverflowStrategy, ErrorKind, Flow, StreamError};
use weir_tests::clocked::Rig;

const fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn delayed(by: Duration, strategy: DelayOverflowStrategy, buffer: usize) -> Rig<u32, u32> {
    let flow = Flow::new()
        .delay(by, strategy)
        .with_attributes(Attributes::new().with_input_buffer(buffer).unwrap());
    Rig::new("delay", flow)
}

#[test]
fn each_element_comes_its_delay_after_it_arrived() {
    let mut rig = delayed(ms(100), DelayOverflowStrategy::Backpressure, 16);
    rig.down.request(10);
    rig.send([1]);
    rig.advance(ms(30));
    rig.send([2]);
    rig.advance(ms(69));
    rig.expect_nothing();
    rig.advance(ms(1));
    assert_eq!(rig.down.expect_next(), 1);
    rig.advance(ms(29));
    rig.expect_nothing();
    rig.advance(ms(1));
    assert_eq!(rig.down.expect_next(), 2);
    rig.shutdown();
}

#[test]
fn a_due_element_waits_for_demand_and_completion_waits_for_the_buffer() {
    let mut rig = delayed(ms(10), DelayOverflowStrategy::Backpressure, 16);
    rig.send([1, 2]);
    rig.up.send_complete();
    rig.advance(ms(50));
    rig.expect_nothing();
    rig.down.request(1);
    assert_eq!(rig.down.expect_next(), 1);
    rig.down.request(1);
    assert_eq!(rig.down.expect_next(), 2);
    rig.down.expect_complete();
    rig.shutdown();
}

#[test]
fn backpressure_stops_pulling_when_the_buffer_is_full() {
    let mut rig = delayed(ms(10), DelayOverflowStrategy::Backpressure, 2);
    rig.send(1..=5);
    rig.advance(ms(10));
    assert_eq!(rig.requests(), 2, "two buffered, no more pulled");
    rig.down.request(10);
    assert_eq!(rig.down.expect_next_n(2), [1, 2]);
    rig.advance(ms(10));
    assert_eq!(rig.down.expect_next_n(2), [3, 4]);
    rig.shutdown();
}

/// A buffer of 2 and demand: 1, 2 and 3 arrive at once, then upstream completes.
fn overflowing(strategy: DelayOverflowStrategy) -> Rig<u32, u32> {
    let mut rig = delayed(ms(10), strategy, 2);
    rig.down.request(10);
    rig.send([1, 2, 3]);
    rig.up.send_complete();
    rig
}

/// What comes out after the delay, then completion.
fn after_delay(mut rig: Rig<u32, u32>, n: usize) -> Vec<u32> {
    rig.expect_nothing();
    rig.advance(ms(10));
    let out = rig.down.expect_next_n(n);
    rig.down.expect_complete();
    rig.shutdown();
    out
}

#[test]
fn overflow_strategies_drop_what_they_say() {
    use DelayOverflowStrategy::*;
    assert_eq!(after_delay(overflowing(DropHead), 2), [2, 3]);
    assert_eq!(after_delay(overflowing(DropTail), 2), [1, 3]);
    assert_eq!(after_delay(overflowing(DropBuffer), 1), [3]);
    assert_eq!(after_delay(overflowing(DropNew), 2), [1, 2]);
}

#[test]
fn backpressure_delays_the_overflowing_element_by_a_full_delay() {
    let mut rig = overflowing(DelayOverflowStrategy::Backpressure);
    rig.advance(ms(10));
    assert_eq!(rig.down.expect_next_n(2), [1, 2]);
    rig.advance(ms(9)); // 3 was pulled at 10 ms
    rig.expect_nothing();
    rig.advance(ms(1));
    assert_eq!(rig.down.expect_next(), 3);
    rig.down.expect_complete();
    rig.shutdown();
}

#[test]
fn emit_early_pushes_the_head_before_its_time() {
    let mut rig = overflowing(DelayOverflowStrategy::EmitEarly);
    assert_eq!(rig.down.expect_next(), 1, "pushed out by 3, at once");
    rig.expect_nothing();
    rig.advance(ms(10));
    assert_eq!(rig.down.expect_next_n(2), [2, 3]);
    rig.down.expect_complete();
    rig.shutdown();
}

#[test]
fn fail_fails_the_stream_with_a_buffer_overflow() {
    let mut rig = overflowing(DelayOverflowStrategy::Fail);
    let error = rig.down.expect_error();
    assert!(
        matches!(error.kind(), ErrorKind::BufferOverflow { capacity: 2 }),
        "{error:?}"
    );
    rig.up.expect_cancellation();
    rig.shutdown();
}

#[test]
fn upstream_failure_passes_at_once() {
    let mut rig = delayed(ms(10), DelayOverflowStrategy::Backpressure, 16);
    rig.down.request(10);
    rig.send([1]);
    rig.up.send_error(StreamError::msg("boom"));
    let error = rig.down.expect_error();
    assert!(matches!(error.kind(), ErrorKind::Message(m) if m == "boom"));
    rig.shutdown();
}

#[test]
fn initial_delay_asks_upstream_only_after_the_delay() {
    let mut rig = Rig::new("initial-delay", Flow::new().initial_delay(ms(50)));
    rig.down.request(10);
    assert_eq!(rig.requests(), 0);
    rig.advance(ms(49));
    assert_eq!(rig.requests(), 0);
    rig.advance(ms(1));
    assert_eq!(rig.requests(), 1);
    rig.send([1, 2]);
    assert_eq!(rig.down.expect_next_n(2), [1, 2], "then no more delay");
    rig.up.send_complete();
    rig.down.expect_complete();
    rig.shutdown();
}

#[test]
fn take_within_passes_elements_then_completes_and_cancels() {
    let mut rig = Rig::new("take-within", Flow::new().take_within(ms(100)));
    rig.down.request(10);
    rig.send([1]);
    assert_eq!(rig.down.expect_next(), 1);
    rig.advance(ms(99));
    rig.send([2]);
    assert_eq!(rig.down.expect_next(), 2);
    rig.advance(ms(1));
    rig.down.expect_complete();
    rig.up.expect_cancellation();
    rig.shutdown();
}

#[test]
fn drop_within_drops_early_elements_only() {
    let mut rig = Rig::new("drop-within", Flow::new().drop_within(ms(100)));
    rig.down.request(10);
    rig.send([1, 2]);
    rig.advance(ms(99));
    rig.expect_nothing();
    rig.advance(ms(1));
    rig.send([3, 4]);
    assert_eq!(rig.down.expect_next_n(2), [3, 4]);
    rig.up.send_complete();
    rig.down.expect_complete();
    rig.shutdown();
}

#[test]
fn without_a_test_clock_the_delays_run_in_real_time() {
    // Real time is the point: the operators work without a test clock.
    let (system, mat) = weir_tests::stream_system("delay-real");
    let done = Source::range(0u32..5)
        .delay(ms(1), DelayOverflowStrategy::Backpressure)
        .initial_delay(ms(1))
        .run_with(Sink::collect(), &mat);
    assert_eq!(done.wait().unwrap(), [0, 1, 2, 3, 4]);
    weir_tests::shutdown(&system);
}

#[test]
fn delay_with_delays_each_element_by_its_own_delay_in_order() {
    // 1 waits 50 ms, 2 waits 10 ms but stays behind 1, 3 waits 100 ms.
    let flow = Flow::new().delay_with(
        |x: &u32| {
            ms(match x {
                1 => 50,
                2 => 10,
                _ => 100,
            })
        },
        DelayOverflowStrategy::Backpressure,
    );
    let mut rig = Rig::new("delay-with", flow);
    rig.down.request(10);
    rig.send([1, 2, 3]);
    rig.advance(ms(49));
    rig.expect_nothing();
    rig.advance(ms(1));
    assert_eq!(rig.down.expect_next_n(2), [1, 2], "2 was due, behind 1");
    rig.advance(ms(49));
    rig.expect_nothing();
    rig.advance(ms(1));
    assert_eq!(rig.down.expect_next(), 3);
    rig.shutdown();
}
