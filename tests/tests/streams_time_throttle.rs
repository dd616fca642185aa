//! `throttle` and `throttle_with_cost` on a test clock: spacing, bursts, enforcing, cost, back-pressure, completion and failure.

use std::time::Duration;

use weir_streams::prelude::*;
use weir_streams::{ArgumentError, ErrorKind, Flow, StreamError, ThrottleMode};
use weir_tests::clocked::Rig;

const fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn shaping(elements: u32, per: Duration, burst: u32) -> Flow<u32, u32> {
    Flow::new()
        .throttle(elements, per, burst, ThrottleMode::Shaping)
        .unwrap()
}

#[test]
fn shaping_spaces_elements_by_the_period() {
    let mut rig = Rig::new("throttle-space", shaping(1, ms(100), 1));
    rig.down.request(10);
    rig.send([1, 2, 3]);
    assert_eq!(rig.down.expect_next(), 1); // the bucket starts full
    rig.expect_nothing();
    rig.advance(ms(99));
    rig.expect_nothing();
    rig.advance(ms(1));
    assert_eq!(rig.down.expect_next(), 2);
    rig.advance(ms(99));
    rig.expect_nothing();
    rig.advance(ms(1));
    assert_eq!(rig.down.expect_next(), 3);
    rig.shutdown();
}

#[test]
fn a_full_bucket_lets_a_burst_through_and_refills_at_the_rate() {
    // 10 per second: a token every 100 ms, up to 3 saved.
    let mut rig = Rig::new("throttle-burst", shaping(10, Duration::from_secs(1), 3));
    rig.down.request(100);
    rig.send(0..5);
    assert_eq!(rig.down.expect_next_n(3), [0, 1, 2]);
    rig.expect_nothing();
    rig.advance(ms(100));
    assert_eq!(rig.down.expect_next(), 3);
    rig.advance(ms(100));
    assert_eq!(rig.down.expect_next(), 4);
    // Quiet for a second: the bucket refills to its burst, no further.
    rig.advance(ms(1000));
    rig.send(5..10);
    assert_eq!(rig.down.expect_next_n(3), [5, 6, 7]);
    rig.expect_nothing();
    rig.advance(ms(100));
    assert_eq!(rig.down.expect_next(), 8);
    rig.shutdown();
}

#[test]
fn a_rate_that_is_no_whole_number_of_nanoseconds_per_element_holds_exactly() {
    // 3 per 5 ns: a token every 5/3 ns. Truncated to a token every 1 ns
    // the rate was 5/3 too fast; above one per nanosecond (a period of 0)
    // it was not limited at all.
    let ns = Duration::from_nanos;
    let mut rig = Rig::new("throttle-fraction", shaping(3, ns(5), 1));
    rig.down.request(100);
    rig.send(0..7);
    assert_eq!(rig.down.expect_next(), 0); // the bucket starts full
    // Tokens come at 5/3, 10/3, 5, 20/3, 25/3 and 10 ns: the elements go
    // at 2, 4, 5, 7, 9 and 10 ns.
    let (mut now, mut got) = (0, 1);
    for (at, released) in [
        (1, 1),
        (2, 2),
        (4, 3),
        (5, 4),
        (6, 4),
        (7, 5),
        (9, 6),
        (10, 7),
    ] {
        rig.advance(ns(at - now));
        now = at;
        while got < released {
            assert_eq!(rig.down.expect_next(), got, "at {at} ns");
            got += 1;
        }
        rig.expect_nothing();
    }
    rig.shutdown();
}

#[test]
fn extreme_rates_and_costs_neither_panic_nor_hang() {
    // One per Duration::MAX: the first goes, the next never does.
    let mut rig = Rig::new("throttle-max", shaping(1, Duration::MAX, 1));
    rig.down.request(10);
    rig.send([1, 2]);
    assert_eq!(rig.down.expect_next(), 1);
    rig.advance(Duration::from_secs(86_400 * 365));
    rig.expect_nothing();
    rig.shutdown();
    // The greatest rate, burst and cost: what the bucket holds goes at
    // once, more waits.
    let flow = Flow::new()
        .throttle_with_cost(
            u32::MAX,
            Duration::from_nanos(1),
            u32::MAX,
            |x: &u32| *x,
            ThrottleMode::Shaping,
        )
        .unwrap();
    let mut rig = Rig::new("throttle-huge", flow);
    rig.down.request(10);
    rig.send([u32::MAX, u32::MAX, 0]);
    assert_eq!(rig.down.expect_next(), u32::MAX);
    rig.expect_nothing();
    rig.advance(Duration::from_nanos(1));
    assert_eq!(rig.down.expect_next_n(2), [u32::MAX, 0]);
    rig.shutdown();
}

#[test]
fn more_than_one_element_per_nanosecond_is_still_a_limit() {
    // 2 per nanosecond with no burst to spare: the second of two elements
    // at the same instant breaks the rate.
    let flow = Flow::new()
        .throttle(2, Duration::from_nanos(1), 1, ThrottleMode::Enforcing)
        .unwrap();
    let mut rig = Rig::new("throttle-fast", flow);
    rig.down.request(10);
    rig.send([1, 2]);
    assert_eq!(rig.down.expect_next(), 1);
    let error = rig.down.expect_error();
    assert!(
        matches!(error.kind(), ErrorKind::RateExceeded { .. }),
        "{error:?}"
    );
    rig.shutdown();
}

#[test]
fn the_rate_holds_over_a_long_run() {
    // A token every 20 ms, none saved beyond one.
    let mut rig = Rig::new("throttle-rate", shaping(5, ms(100), 1));
    rig.down.request(1000);
    rig.send(0..200);
    for _ in 0..100 {
        rig.advance(ms(10));
    }
    // One at once, then one per 20 ms over the second.
    assert_eq!(rig.down.expect_next_n(51), (0..51).collect::<Vec<_>>());
    rig.expect_nothing();
    rig.shutdown();
}

#[test]
fn enforcing_fails_when_the_rate_is_exceeded() {
    let flow = Flow::new()
        .throttle(1, ms(100), 1, ThrottleMode::Enforcing)
        .unwrap();
    let mut rig = Rig::new("throttle-enforce", flow);
    rig.down.request(10);
    rig.send([1]);
    assert_eq!(rig.down.expect_next(), 1);
    rig.advance(ms(100));
    rig.send([2]);
    assert_eq!(rig.down.expect_next(), 2, "on time: passes");
    rig.advance(ms(50));
    rig.send([3]);
    let error = rig.down.expect_error();
    assert!(
        matches!(
            error.kind(),
            ErrorKind::RateExceeded { cost: 1, per } if *per == ms(100)
        ),
        "{error:?}"
    );
    rig.up.expect_cancellation();
    rig.shutdown();
}

#[test]
fn throttle_with_cost_charges_each_element_its_cost() {
    // 10 units per second (a unit every 100 ms), up to 10 saved.
    let flow = Flow::new()
        .throttle_with_cost(
            10,
            Duration::from_secs(1),
            10,
            |x: &u32| *x,
            ThrottleMode::Shaping,
        )
        .unwrap();
    let mut rig = Rig::new("throttle-cost", flow);
    rig.down.request(10);
    rig.send([10, 5, 1]);
    assert_eq!(rig.down.expect_next(), 10); // the whole bucket
    rig.advance(ms(499));
    rig.expect_nothing();
    rig.advance(ms(1));
    assert_eq!(rig.down.expect_next(), 5);
    rig.advance(ms(99));
    rig.expect_nothing();
    rig.advance(ms(1));
    assert_eq!(rig.down.expect_next(), 1);
    rig.shutdown();
}

#[test]
fn pulls_upstream_only_when_downstream_asks() {
    let mut rig = Rig::new("throttle-bp", shaping(1000, ms(1), 1000));
    assert_eq!(rig.requests(), 0, "no demand, no pull");
    rig.down.request(1);
    assert_eq!(rig.requests(), 1);
    rig.send([1]);
    assert_eq!(rig.down.expect_next(), 1);
    assert_eq!(rig.requests(), 0, "one request per demand");
    rig.shutdown();
}

#[test]
fn completion_waits_for_the_held_element() {
    let mut rig = Rig::new("throttle-complete", shaping(1, ms(100), 1));
    rig.down.request(10);
    rig.send([1, 2]);
    rig.up.send_complete();
    assert_eq!(rig.down.expect_next(), 1);
    rig.expect_nothing(); // 2 is held: not completed yet
    rig.advance(ms(100));
    assert_eq!(rig.down.expect_next(), 2);
    rig.down.expect_complete();
    rig.shutdown();
}

#[test]
fn upstream_failure_passes_at_once() {
    let mut rig = Rig::new("throttle-fail", shaping(1, ms(100), 1));
    rig.down.request(10);
    rig.send([1, 2]);
    assert_eq!(rig.down.expect_next(), 1);
    rig.up.send_error(StreamError::msg("boom"));
    let error = rig.down.expect_error();
    assert!(
        matches!(error.kind(), ErrorKind::Message(m) if m == "boom"),
        "{error:?}"
    );
    rig.shutdown();
}

#[test]
fn bad_arguments_are_typed_errors() {
    let zero = |e: u32, per| {
        Flow::<u32>::new()
            .throttle(e, per, 1, ThrottleMode::Shaping)
            .err()
    };
    assert_eq!(
        zero(0, ms(1)),
        Some(ArgumentError::Zero {
            argument: "elements"
        })
    );
    assert_eq!(
        zero(1, Duration::ZERO),
        Some(ArgumentError::Zero { argument: "per" })
    );
    assert!(matches!(
        Flow::<u32>::new().throttle(1, ms(1), 0, ThrottleMode::Enforcing),
        Err(ArgumentError::Invalid {
            argument: "maximum_burst",
            ..
        })
    ));
}
