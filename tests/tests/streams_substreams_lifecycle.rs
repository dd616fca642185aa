//! Substream lifecycles, after Pekko's FlowGroupBySpec, FlowSplitWhenSpec
//! and FlowPrefixAndTailSpec: a substream lives while a stage inside it
//! runs, merging completes on exact demand, closing many substreams is
//! linear, and a tail or substream that is never run times out.

use std::time::Duration;

use weir_streams::prelude::*;
use weir_streams::testkit::{TestSink, TestSource};
use weir_streams::{Attributes, ErrorKind, SubscriptionTimeoutMode};
use weir_tests::{QUIET, clocked_stream_system, shutdown, stream_system};

#[test]
fn merge_substreams_completes_when_demand_is_exactly_used_up() {
    let (system, mat) = stream_system("merge-exact-demand");
    let (mut up, mut sink) = TestSource::probe::<u32>()
        .group_by_recreating(2, |x| x % 2)
        .unwrap()
        .take(1)
        .merge_substreams()
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    sink.request(4);
    for x in [1, 2, 3, 4] {
        up.send_next(x);
    }
    let mut got = sink.expect_next_n(4);
    got.sort_unstable();
    assert_eq!(got, vec![1, 2, 3, 4]);
    up.send_complete();
    sink.expect_complete();
    shutdown(&system);
}

/// Pekko's `lift` idiom: each substream's tail, as a source.
#[test]
fn a_substream_lives_while_a_stage_inside_it_runs() {
    let (system, mat) = stream_system("substream-outlives-output");
    let (mut up, mut master) = TestSource::probe::<u32>()
        .split_when(|x| *x == 0)
        .prefix_and_tail(0)
        .map(|(_, tail)| tail)
        .concat_substreams()
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    master.request(2);
    up.send_next(1); // opens the first substream
    let tail = master.expect_next();
    let mut tail = tail.run_with(TestSink::probe(), &mat);
    tail.request(10);
    up.send_next(2);
    assert_eq!(tail.expect_next_n(2), vec![1, 2]);
    up.send_error(weir_streams::StreamError::msg("upstream broke"));
    assert!(tail.expect_error().to_string().contains("upstream broke"));
    assert!(master.expect_error().to_string().contains("upstream broke"));
    shutdown(&system);
}

#[test]
fn a_group_by_tail_keeps_its_key_after_another_key_opens() {
    let (system, mat) = stream_system("group-by-tail-keeps-key");
    let (mut up, mut master) = TestSource::probe::<u32>()
        .group_by(4, |x| x % 2)
        .unwrap()
        .prefix_and_tail(1)
        .merge_substreams()
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    master.request(4);
    up.send_next(2);
    let (prefix, even) = master.expect_next();
    assert_eq!(prefix, vec![2]);
    let mut even = even.run_with(TestSink::probe(), &mat);
    even.request(10);
    up.send_next(1);
    let (prefix, odd) = master.expect_next();
    assert_eq!(prefix, vec![1]);
    let mut odd = odd.run_with(TestSink::probe(), &mat);
    odd.request(10);
    up.send_next(4);
    up.send_next(3);
    up.send_next(6);
    assert_eq!(even.expect_next_n(2), vec![4, 6]);
    assert_eq!(odd.expect_next(), 3);
    up.send_complete();
    even.expect_complete();
    odd.expect_complete();
    master.expect_complete();
    shutdown(&system);
}

#[test]
fn cancelling_the_master_keeps_substreams_that_still_run() {
    let (system, mat) = stream_system("master-cancel-keeps-substreams");
    let (mut up, mut master) = TestSource::probe::<u32>()
        .group_by(4, |x| x % 2)
        .unwrap()
        .prefix_and_tail(1)
        .merge_substreams()
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    master.request(1);
    up.send_next(2);
    let (_, even) = master.expect_next();
    let mut even = even.run_with(TestSink::probe(), &mat);
    even.request(10);
    master.cancel();
    up.send_next(4);
    assert_eq!(even.expect_next(), 4);
    up.send_complete();
    even.expect_complete();
    shutdown(&system);
}

/// Pekko's subscription timeout: a tail never run stops holding the stage
/// and its upstream; a late run fails with a typed error.
#[test]
fn a_tail_that_is_never_run_times_out_and_cancels_upstream() {
    let (system, mat, clock) = clocked_stream_system("tail-timeout");
    let timeout = Duration::from_millis(300);
    let (mut up, pair) = TestSource::probe::<u32>()
        .prefix_and_tail(1)
        .with_attributes(
            Attributes::new().with_subscription_timeout(timeout, SubscriptionTimeoutMode::Cancel),
        )
        .to_mat(Sink::head(), Keep::both)
        .run(&mat);
    up.expect_request();
    up.send_next(1);
    let (prefix, tail) = pair.wait().unwrap();
    assert_eq!(prefix, vec![1]);
    clock.advance(timeout - Duration::from_millis(1));
    up.expect_no_signal(QUIET);
    clock.advance(Duration::from_millis(1));
    up.expect_cancellation();
    let late = tail.run_with(Sink::collect(), &mat).wait().unwrap_err();
    assert!(
        matches!(late.kind(), ErrorKind::SubscriptionTimeout(after) if *after == timeout),
        "{late}"
    );

    // By default, after 5 s (Pekko's default); a tail run in time is not
    // affected.
    let (mut up, pair) = TestSource::probe::<u32>()
        .prefix_and_tail(0)
        .to_mat(Sink::head(), Keep::both)
        .run(&mat);
    let (_, tail) = pair.wait().unwrap();
    clock.advance(Duration::from_millis(4_999));
    up.expect_no_signal(QUIET);
    clock.advance(Duration::from_millis(1));
    up.expect_cancellation();
    drop(tail);
    let (mut up, pair) = TestSource::probe::<u32>()
        .prefix_and_tail(0)
        .to_mat(Sink::head(), Keep::both)
        .run(&mat);
    let (_, tail) = pair.wait().unwrap();
    let mut tail = tail.run_with(TestSink::probe(), &mat);
    tail.request(1);
    clock.advance(Duration::from_secs(10));
    up.send_next(7);
    assert_eq!(tail.expect_next(), 7);
    shutdown(&system);
}

/// In `Warn` mode the tail stays runnable past the timeout.
#[test]
fn a_tail_in_warn_mode_stays_runnable_past_the_timeout() {
    let (system, mat, clock) = clocked_stream_system("tail-timeout-warn");
    let (mut up, pair) =
        TestSource::probe::<u32>()
            .prefix_and_tail(0)
            .with_attributes(Attributes::new().with_subscription_timeout(
                Duration::from_millis(100),
                SubscriptionTimeoutMode::Warn,
            ))
            .to_mat(Sink::head(), Keep::both)
            .run(&mat);
    let (_, tail) = pair.wait().unwrap();
    clock.advance(Duration::from_secs(1));
    up.expect_no_signal(QUIET);
    let mut tail = tail.run_with(TestSink::probe(), &mat);
    tail.request(1);
    up.send_next(3);
    assert_eq!(tail.expect_next(), 3);
    shutdown(&system);
}

/// A substream kept alive by a tail nobody runs ends when the tail times
/// out: the splitting stage then lets its upstream go.
#[test]
fn a_substream_held_by_a_tail_never_run_ends_at_the_timeout() {
    let (system, mat, clock) = clocked_stream_system("substream-tail-timeout");
    let (mut up, mut master) = TestSource::probe::<u32>()
        .group_by(4, |x| x % 2)
        .unwrap()
        .prefix_and_tail(0)
        .merge_substreams()
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    master.request(1);
    up.expect_request();
    up.send_next(1);
    let (_, _tail) = master.expect_next();
    master.cancel();
    // The substream's tail may still be run: upstream stays.
    up.expect_no_signal(QUIET);
    clock.advance(Duration::from_secs(5));
    up.expect_cancellation();
    shutdown(&system);
}
