//! `grouped_within` and `grouped_weighted_within` on a test clock: closed by size or by time, back-pressure, completion and failure.

use std::time::Duration;

use weir_streams::prelude::*;
use weir_streams::{ArgumentError, ErrorKind, Flow, StreamError};
use weir_tests::clocked::Rig;

const fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn grouped(n: usize, within: Duration) -> Rig<u32, Vec<u32>> {
    Rig::new(
        "grouped-within",
        Flow::new().grouped_within(n, within).unwrap(),
    )
}

#[test]
fn a_full_group_goes_at_once() {
    let mut rig = grouped(3, ms(100));
    rig.down.request(10);
    rig.send(1..=7);
    assert_eq!(rig.down.expect_next_n(2), [vec![1, 2, 3], vec![4, 5, 6]]);
    rig.expect_nothing();
    rig.shutdown();
}

#[test]
fn a_partial_group_goes_when_the_time_is_up() {
    let mut rig = grouped(3, ms(100));
    rig.down.request(10);
    rig.send([1, 2]);
    rig.advance(ms(99));
    rig.expect_nothing();
    rig.advance(ms(1));
    assert_eq!(rig.down.expect_next(), [1, 2]);
    // Nothing arrives: no empty groups.
    rig.advance(ms(500));
    rig.expect_nothing();
    rig.send([3]);
    rig.advance(ms(100));
    assert_eq!(rig.down.expect_next(), [3]);
    rig.shutdown();
}

#[test]
fn the_window_restarts_when_a_group_goes() {
    let mut rig = grouped(2, ms(100));
    rig.down.request(10);
    rig.advance(ms(60));
    rig.send([1, 2]); // full at 60 ms: the next window ends at 160 ms
    assert_eq!(rig.down.expect_next(), [1, 2]);
    rig.send([3]);
    rig.advance(ms(40)); // 100 ms: the old window's end
    rig.expect_nothing();
    rig.advance(ms(60));
    assert_eq!(rig.down.expect_next(), [3]);
    rig.shutdown();
}

#[test]
fn without_demand_a_timed_out_group_keeps_filling_and_a_full_one_backpressures() {
    let mut rig = grouped(3, ms(100));
    rig.send(1..=10);
    rig.advance(ms(100)); // time is up, nobody asks
    assert_eq!(
        rig.requests(),
        4,
        "collected a full group and the element that opens the next, then stopped pulling"
    );
    rig.expect_nothing();
    rig.down.request(1);
    assert_eq!(rig.down.expect_next(), [1, 2, 3]);
    rig.down.request(1);
    assert_eq!(rig.down.expect_next(), [4, 5, 6]);
    rig.shutdown();
}

#[test]
fn completion_flushes_what_was_collected() {
    let mut rig = grouped(3, ms(100));
    rig.down.request(10);
    rig.send(1..=4);
    rig.up.send_complete();
    assert_eq!(rig.down.expect_next_n(2), [vec![1, 2, 3], vec![4]]);
    rig.down.expect_complete();
    rig.shutdown();
}

#[test]
fn failure_passes_at_once() {
    let mut rig = grouped(3, ms(100));
    rig.down.request(10);
    rig.send([1]);
    rig.up.send_error(StreamError::msg("boom"));
    let error = rig.down.expect_error();
    assert!(matches!(error.kind(), ErrorKind::Message(m) if m == "boom"));
    rig.shutdown();
}

#[test]
fn weighted_groups_close_before_the_weight_would_be_exceeded() {
    let flow = Flow::new()
        .grouped_weighted_within(10, ms(100), |x: &u32| u64::from(*x))
        .unwrap();
    let mut rig = Rig::new("grouped-weighted", flow);
    rig.down.request(10);
    rig.send([4, 5, 3, 20, 1]);
    // 4+5 = 9, +3 would be 12; 20 alone exceeds: travels alone.
    assert_eq!(rig.down.expect_next_n(3), [vec![4, 5], vec![3], vec![20]]);
    rig.advance(ms(100));
    assert_eq!(rig.down.expect_next(), [1]);
    rig.shutdown();
}

fn weighted(max_weight: u64) -> Rig<u32, Vec<u32>> {
    let flow = Flow::new()
        .grouped_weighted_within(max_weight, ms(100), |x: &u32| u64::from(*x))
        .unwrap();
    Rig::new("grouped-weighted", flow)
}

#[test]
fn zero_weight_elements_join_a_full_group_that_waits_for_demand() {
    // As Akka's spec: a full group keeps taking elements of weight zero
    // until downstream asks.
    let mut rig = weighted(5);
    rig.send([3, 2, 0, 0, 0]);
    rig.down.request(1);
    assert_eq!(rig.down.expect_next(), [3, 2, 0, 0, 0]);
    rig.send([0, 0]);
    rig.up.send_complete();
    rig.down.request(1);
    assert_eq!(rig.down.expect_next(), [0, 0]);
    rig.down.expect_complete();
    rig.shutdown();
}

#[test]
fn a_full_group_goes_at_once_when_asked_and_zero_weights_open_the_next() {
    let mut rig = weighted(5);
    rig.down.request(10);
    rig.send([3, 2, 0, 0, 0]);
    assert_eq!(rig.down.expect_next(), [3, 2]);
    rig.expect_nothing();
    rig.advance(ms(100));
    assert_eq!(rig.down.expect_next(), [0, 0, 0]);
    rig.shutdown();
}

#[test]
fn a_positive_weight_after_a_full_group_waits_for_the_next_and_is_not_lost() {
    let mut rig = weighted(5);
    rig.send([3, 2, 0, 4, 0]);
    assert_eq!(
        rig.requests(),
        4,
        "3, 2, 0, then the 4, which waits: no more"
    );
    rig.up.send_complete();
    rig.down.request(1);
    assert_eq!(rig.down.expect_next(), [3, 2, 0]);
    rig.down.request(1);
    assert_eq!(rig.down.expect_next(), [4, 0]);
    rig.down.expect_complete();
    rig.shutdown();
}

#[test]
fn an_element_heavier_than_the_maximum_joins_a_group_of_weight_zero() {
    let mut rig = weighted(10);
    rig.send([0, 0, 11, 1]);
    rig.down.request(1);
    assert_eq!(rig.down.expect_next(), [0, 0, 11]);
    rig.up.send_complete();
    rig.down.request(1);
    assert_eq!(rig.down.expect_next(), [1]);
    rig.down.expect_complete();
    rig.shutdown();
}

#[test]
fn bad_arguments_are_typed_errors() {
    assert_eq!(
        Flow::<u32>::new().grouped_within(0, ms(1)).err(),
        Some(ArgumentError::Zero { argument: "n" })
    );
    assert_eq!(
        Flow::<u32>::new().grouped_within(1, Duration::ZERO).err(),
        Some(ArgumentError::Zero { argument: "within" })
    );
}

/// `aggregate_with_boundary` (Pekko 1.1's `aggregateWithBoundary`): pairs
/// closed by the aggregate function, or, timed, whatever is open when the
/// timer finds it ready.
mod aggregate_with_boundary {
    use super::*;

    fn pairs() -> Rig<u32, Vec<u32>> {
        let flow = Flow::new().aggregate_with_boundary(
            Vec::new,
            |b: &mut Vec<u32>, x| {
                b.push(x);
                b.len() == 2
            },
            |b| b,
        );
        Rig::new("aggregate-pairs", flow)
    }

    /// Never closed by the aggregate function; the timer closes what is open.
    fn timed(interval: Duration) -> Rig<u32, Vec<u32>> {
        let flow = Flow::new()
            .aggregate_with_boundary_timed(
                Vec::new,
                |b: &mut Vec<u32>, x| {
                    b.push(x);
                    false
                },
                |b| b,
                |b| !b.is_empty(),
                interval,
            )
            .unwrap();
        Rig::new("aggregate-timed", flow)
    }

    #[test]
    fn the_boundary_closes_an_aggregate_and_upstream_is_pulled_only_on_demand() {
        let mut rig = pairs();
        assert_eq!(rig.requests(), 0, "no pull before downstream asks");
        rig.down.request(2);
        rig.send(1..=4);
        assert_eq!(rig.down.expect_next_n(2), [vec![1, 2], vec![3, 4]]);
        assert_eq!(
            rig.requests(),
            4,
            "one pull per element, none ahead of demand"
        );
        rig.expect_nothing();
        // Nothing open: completion with no further demand.
        rig.up.send_complete();
        rig.down.expect_complete();
        rig.shutdown();
    }

    #[test]
    fn completion_emits_the_open_aggregate_when_asked() {
        let mut rig = pairs();
        rig.down.request(2);
        rig.send([1, 2, 3]);
        assert_eq!(rig.down.expect_next(), [1, 2]);
        rig.up.send_complete();
        assert_eq!(rig.down.expect_next(), [3]);
        rig.down.expect_complete();
        rig.shutdown();
    }

    #[test]
    fn failure_and_cancellation() {
        let mut rig = pairs();
        rig.down.request(1);
        rig.send([1]);
        rig.up.send_error(StreamError::msg("up"));
        assert!(rig.down.expect_error().to_string().contains("up"));
        rig.shutdown();

        let mut rig = pairs();
        rig.down.request(1);
        rig.send([1]);
        rig.down.cancel();
        rig.up.expect_cancellation();
        rig.shutdown();
    }

    #[test]
    fn the_timer_emits_what_is_open_and_never_an_empty_aggregate() {
        let mut rig = timed(ms(100));
        rig.down.request(5);
        rig.send([1, 2]);
        rig.advance(ms(99));
        rig.expect_nothing();
        rig.advance(ms(1));
        assert_eq!(rig.down.expect_next(), [1, 2]);
        rig.advance(ms(500));
        rig.expect_nothing();
        rig.shutdown();
    }

    #[test]
    fn a_timed_out_aggregate_waits_for_demand_and_stops_the_pulling() {
        let mut rig = timed(ms(100));
        rig.down.request(1);
        rig.send([1]);
        rig.advance(ms(100));
        assert_eq!(rig.down.expect_next(), [1]);
        // The pull outstanding brings 2; with no demand nothing more is pulled.
        rig.send([2, 3]);
        rig.advance(ms(100));
        rig.expect_nothing();
        assert_eq!(rig.requests(), 2, "1, then the pull 2 answered");
        rig.down.request(1);
        assert_eq!(rig.down.expect_next(), [2]);
        rig.shutdown();
    }

    #[test]
    fn an_interval_under_a_millisecond_is_an_error() {
        let built = Flow::<u32>::new().aggregate_with_boundary_timed(
            Vec::new,
            |b: &mut Vec<u32>, x| {
                b.push(x);
                false
            },
            |b| b,
            |_| true,
            Duration::from_micros(999),
        );
        assert!(matches!(
            built,
            Err(ArgumentError::Invalid {
                argument: "interval",
                ..
            })
        ));
    }
}
