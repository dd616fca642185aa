//! Stage supervision in the rate operators, as Akka's `Batch` and
//! `LimitWeighted` honour it: `batch` / `batch_weighted` / `conflate`
//! (their `cost_fn`, `seed` and `aggregate`), `limit_weighted`,
//! `throttle_with_cost` and `grouped_weighted_within` (their cost or
//! weight function).

use std::sync::Once;

use weir_streams::prelude::*;
use weir_streams::{Attributes, ErrorKind, Flow, StreamError, SupervisionStrategy};
use weir_tests::clocked::Rig;
use weir_tests::{shutdown, stream_system};

/// Injected panics would print a line each; keep the output readable.
fn quiet_panics() {
    static QUIET: Once = Once::new();
    QUIET.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let payload = info.payload();
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            if !message.contains("injected") {
                default(info);
            }
        }));
    });
}

fn with(strategy: SupervisionStrategy) -> Attributes {
    Attributes::new().with_supervision_strategy(strategy)
}

fn is_panic<T: std::fmt::Debug>(result: &Result<T, StreamError>) -> bool {
    matches!(result, Err(e) if matches!(e.kind(), ErrorKind::Panicked(m) if m.contains("injected")))
}

fn seed(x: u32) -> Vec<u32> {
    assert!(x != 3, "three injected");
    vec![x]
}

fn aggregate(mut batch: Vec<u32>, x: u32) -> Vec<u32> {
    assert!(x != 13, "thirteen injected");
    batch.push(x);
    batch
}

fn cost(x: &u32) -> u64 {
    assert!(*x != 23, "twenty-three injected");
    1
}

/// `batch_weighted` with the failing closures, under `strategy`, between
/// probes; `elements` sent before downstream asks, then one batch asked.
fn first_batch(strategy: SupervisionStrategy, elements: &[u32]) -> Vec<u32> {
    let flow = Flow::new()
        .batch_weighted(10, cost, seed, aggregate)
        .unwrap()
        .with_attributes(with(strategy));
    let mut rig = Rig::new("batch-supervised", flow);
    rig.send(elements.iter().copied());
    rig.down.wait_idle();
    rig.down.request(1);
    let batch = rig.down.expect_next();
    rig.up.send_complete();
    rig.down.request(1);
    rig.down.expect_complete();
    rig.shutdown();
    batch
}

#[test]
fn batch_stops_by_default() {
    quiet_panics();
    // The seed sees the first element, cost_fn and aggregate the next.
    for elements in [vec![3], vec![1, 13], vec![1, 23]] {
        let flow = Flow::new()
            .batch_weighted(10, cost, seed, aggregate)
            .unwrap();
        let mut rig = Rig::new("batch-stop", flow);
        rig.send(elements.iter().copied()); // no demand: one batch
        let error = rig.down.expect_error();
        assert!(is_panic::<()>(&Err(error)), "{elements:?}");
        rig.shutdown();
    }
}

#[test]
fn batch_resume_drops_the_element_and_keeps_the_batch() {
    quiet_panics();
    let resume = SupervisionStrategy::resuming;
    assert_eq!(first_batch(resume(), &[3, 5, 6]), [5, 6], "seed");
    assert_eq!(first_batch(resume(), &[1, 2, 23, 4]), [1, 2, 4], "cost_fn");
    // `aggregate` took the batch by value: it is lost with the element.
    assert_eq!(first_batch(resume(), &[1, 2, 13, 4]), [4], "aggregate");
}

#[test]
fn batch_restart_drops_the_batch_being_built() {
    quiet_panics();
    let restart = SupervisionStrategy::restarting;
    assert_eq!(first_batch(restart(), &[1, 2, 23, 4]), [4], "cost_fn");
    assert_eq!(
        first_batch(restart(), &[1, 2, 13, 4, 5]),
        [4, 5],
        "aggregate"
    );
    assert_eq!(first_batch(restart(), &[3, 5]), [5], "seed");
}

#[test]
fn batch_restart_drops_a_pending_element_whose_seed_fails_and_takes_fresh_closures() {
    quiet_panics();
    // A seed that counts its calls: after a restart it counts from 1.
    let counting = {
        let mut calls = 0u32;
        move |x: u32| {
            calls += 1;
            assert!(x != 3, "three injected");
            vec![x * 10 + calls]
        }
    };
    let flow = Flow::new()
        .batch(2, counting, aggregate)
        .unwrap()
        .with_attributes(with(SupervisionStrategy::restarting()));
    let mut rig = Rig::new("batch-pending", flow);
    rig.send([1, 2, 3]); // [1, 2] is full; 3 waits to seed the next
    rig.down.wait_idle();
    rig.down.request(1);
    assert_eq!(rig.down.expect_next(), [11, 2]);
    rig.send([4]); // 3's seed failed as the batch went: 4 starts afresh
    rig.down.request(1);
    assert_eq!(rig.down.expect_next(), [41]);
    rig.shutdown();
}

#[test]
fn conflate_honours_the_strategy() {
    quiet_panics();
    let sum = |a: u32, x: u32| {
        assert!(x != 13, "thirteen injected");
        a + x
    };
    for (strategy, expected) in [
        (SupervisionStrategy::resuming(), 9),
        (SupervisionStrategy::restarting(), 9),
    ] {
        let flow = Flow::new().conflate(sum).with_attributes(with(strategy));
        let mut rig = Rig::new("conflate-supervised", flow);
        rig.send([1, 2, 13, 4, 5]);
        rig.down.wait_idle();
        rig.down.request(1);
        assert_eq!(rig.down.expect_next(), expected, "1 + 2 went with 13");
        rig.shutdown();
    }
    let mut rig = Rig::new("conflate-stop", Flow::new().conflate(sum));
    rig.send([1, 13]);
    let error = rig.down.expect_error();
    assert!(is_panic::<()>(&Err(error)), "stops by default");
    rig.shutdown();
}

#[test]
fn limit_weighted_resumes_past_a_failing_cost_and_restart_gives_back_the_budget() {
    quiet_panics();
    let (system, mat) = stream_system("limit-supervised");
    let weigh = |x: &u32| {
        assert!(*x != 13, "thirteen injected");
        u64::from(*x)
    };
    let run = |elements: Vec<u32>, strategy: Option<SupervisionStrategy>| {
        let limited = Source::from_iter(elements).limit_weighted(10, weigh);
        let limited = match strategy {
            Some(strategy) => limited.with_attributes(with(strategy)),
            None => limited,
        };
        limited.run_with(Sink::collect(), &mat).wait()
    };
    assert!(is_panic(&run(vec![4, 13], None)), "stops by default");
    let resume = Some(SupervisionStrategy::resuming());
    assert_eq!(run(vec![4, 13, 4, 2], resume.clone()), Ok(vec![4, 4, 2]));
    let over = run(vec![4, 13, 4, 4], resume).unwrap_err();
    assert!(
        matches!(over.kind(), ErrorKind::LimitExceeded { max: 10 }),
        "resume keeps what was spent: {over:?}"
    );
    let restart = Some(SupervisionStrategy::restarting());
    assert_eq!(run(vec![4, 13, 4, 4, 2], restart), Ok(vec![4, 4, 4, 2]));
    shutdown(&system);
}

/// A panicking cost function: resume and restart drop the element (the
/// stream goes on at its rate), no strategy fails the stream.
#[test]
fn throttle_with_cost_drops_an_element_whose_cost_panics() {
    use std::time::Duration;
    use weir_streams::ThrottleMode;
    quiet_panics();
    let (system, mat) = stream_system("throttle-supervised");
    let cost = |x: &u32| {
        assert!(*x != 13, "thirteen injected");
        1
    };
    let run = |strategy: Option<SupervisionStrategy>| {
        let throttled = Source::from_iter(vec![1u32, 13, 2])
            .throttle_with_cost(
                100,
                Duration::from_secs(1),
                100,
                cost,
                ThrottleMode::Shaping,
            )
            .unwrap();
        let throttled = match strategy {
            Some(strategy) => throttled.with_attributes(with(strategy)),
            None => throttled,
        };
        throttled.run_with(Sink::collect(), &mat).wait()
    };
    assert!(is_panic(&run(None)), "stops by default");
    assert_eq!(run(Some(SupervisionStrategy::resuming())), Ok(vec![1, 2]));
    assert_eq!(run(Some(SupervisionStrategy::restarting())), Ok(vec![1, 2]));
    shutdown(&system);
}

/// A panicking weight function drops its element; the open group is
/// kept (resume and restart alike); no strategy fails the stream.
#[test]
fn grouped_weighted_within_drops_an_element_whose_weight_panics() {
    use std::time::Duration;
    quiet_panics();
    let (system, mat) = stream_system("grouped-within-supervised");
    let weigh = |x: &u64| {
        assert!(*x != 13, "thirteen injected");
        *x
    };
    let run = |strategy: Option<SupervisionStrategy>| {
        let grouped = Source::from_iter(vec![3u64, 13, 4, 2, 5])
            .grouped_weighted_within(7, Duration::from_secs(60), weigh)
            .unwrap();
        let grouped = match strategy {
            Some(strategy) => grouped.with_attributes(with(strategy)),
            None => grouped,
        };
        grouped.run_with(Sink::collect(), &mat).wait()
    };
    assert!(is_panic(&run(None)), "stops by default");
    for strategy in [
        SupervisionStrategy::resuming(),
        SupervisionStrategy::restarting(),
    ] {
        assert_eq!(run(Some(strategy)), Ok(vec![vec![3, 4], vec![2, 5]]));
    }
    shutdown(&system);
}
