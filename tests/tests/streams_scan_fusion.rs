//! `scan` fused into the source before it (an adapter that emits the seed
//! on the first demand): each case runs fused and unfused and must agree,
//! including the seed's timing (a sink that completes on the first
//! element gets the seed even when upstream never produces). The cases in
//! `scan_fusion/` came from a review of the change: seed timing, demand
//! and zips (`edges`), failures, supervision, junctions, inner sources and
//! the other planner paths (`placements`).

#[path = "scan_fusion/common.rs"]
mod common;
#[path = "scan_fusion/edges.rs"]
mod edges;
#[path = "scan_fusion/placements.rs"]
mod placements;

use common::*;

#[test]
fn the_seed_comes_first_and_alone_for_an_empty_source() {
    let (system, _) = stream_system("scan-seed");
    for (how, mat) in both(&system) {
        let empty = Source::<u64>::empty()
            .scan(7, add)
            .run_with(Sink::collect(), &mat);
        assert_eq!(empty.wait(), Ok(vec![7]), "{how}");
        let sums = Source::range(1u64..=4)
            .scan(0, add)
            .run_with(Sink::collect(), &mat);
        assert_eq!(sums.wait(), Ok(vec![0, 1, 3, 6, 10]), "{how}");
    }
    shutdown(&system);
}

/// What `scan(seed, f)` makes of `xs`: the seed, then each accumulation.
fn scan_model(seed: u64, xs: &[u64], mut f: impl FnMut(u64, u64) -> u64) -> Vec<u64> {
    let mut acc = seed;
    std::iter::once(seed)
        .chain(xs.iter().map(|&x| {
            acc = f(acc, x);
            acc
        }))
        .collect()
}

#[test]
fn scans_in_a_row_and_operators_around_them_agree() {
    let (system, _) = stream_system("scan-chain");
    let first: Vec<u64> = scan_model(0, &[1, 2, 3, 4, 5], add)
        .into_iter()
        .map(|x| x * 2)
        .collect();
    let second: Vec<u64> = scan_model(0, &first, add)
        .into_iter()
        .filter(|x| x % 4 == 0)
        .collect();
    let want = scan_model(0, &second, u64::max);
    for (how, mat) in both(&system) {
        let got = Source::range(1u64..=5)
            .scan(0, add)
            .map(|x| x * 2)
            .scan(0, add)
            .filter(|x| x % 4 == 0)
            .scan(0, u64::max)
            .run_with(Sink::collect(), &mat);
        assert_eq!(got.wait(), Ok(want.clone()), "{how}");
    }
    shutdown(&system);
}

/// A sink that wants one element gets the seed at once: from an endless
/// source (nothing upstream is asked for more than it needs) and from a
/// source that never has anything ready.
#[test]
fn a_head_sink_gets_the_seed_without_waiting_for_upstream() {
    let (system, _) = stream_system("scan-head");
    for (how, mat) in both(&system) {
        let endless = Source::repeat(1u64)
            .scan(5, add)
            .run_with(Sink::head(), &mat);
        assert_eq!(endless.wait(), Ok(5), "{how}");
        let never = Source::<u64>::from_poll_fn(|| |_: &mut std::task::Context<'_>| Poll::Pending)
            .scan(9, add)
            .run_with(Sink::head(), &mat);
        assert_eq!(never.wait(), Ok(9), "{how}");
        let two = Source::repeat(1u64)
            .scan(0, add)
            .take(3)
            .run_with(Sink::collect(), &mat);
        assert_eq!(two.wait(), Ok(vec![0, 1, 2]), "{how}");
    }
    shutdown(&system);
}

/// Between two async boundaries the scan runs inside the second one's
/// upstream half (the relay rule) when fused.
#[test]
fn a_scan_between_boundaries_agrees() {
    let (system, _) = stream_system("scan-relay");
    for (how, mat) in both(&system) {
        let got = Source::range(1u64..=1000)
            .async_boundary()
            .scan(0, add)
            .async_boundary()
            .run_with(Sink::collect(), &mat);
        let want = scan_model(0, &(1..=1000).collect::<Vec<_>>(), add);
        assert_eq!(got.wait(), Ok(want), "{how}");
    }
    shutdown(&system);
}

/// A failing source fails the stream after the seed and the values
/// before the failure, fused or not; a panic in `f` names the stage it
/// ran in (the fused stage is named after the source, the scan and the
/// sink it runs into).
#[test]
fn failures_pass_through_and_name_the_stage() {
    let (system, _) = stream_system("scan-fail");
    for (how, mat) in both(&system) {
        let failing = Source::from_poll_fn(|| {
            let mut left = 3u64;
            move |_: &mut std::task::Context<'_>| {
                if left == 0 {
                    return Poll::Ready(Some(Err(StreamError::msg("source broke"))));
                }
                left -= 1;
                Poll::Ready(Some(Ok(1u64)))
            }
        });
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let record = std::sync::Arc::clone(&seen);
        let result = failing
            .scan(0, add)
            .run_with(
                Sink::for_each(move |x| record.lock().unwrap().push(x)),
                &mat,
            )
            .wait();
        assert!(result.is_err(), "{how}: {result:?}");
        assert_eq!(*seen.lock().unwrap(), vec![0, 1, 2, 3], "{how}");

        let panicked = Source::range(1u64..=3)
            .scan(0, |a, x| if x == 2 { panic!("scan broke") } else { a + x })
            .run_with(Sink::ignore(), &mat)
            .wait()
            .expect_err("f panicked");
        assert!(
            matches!(panicked.kind(), ErrorKind::Panicked(_)),
            "{how}: {panicked:?}"
        );
        let stage = panicked.stage().unwrap_or_default().to_owned();
        match how {
            "fused" => assert!(stage.starts_with("range.scan"), "{stage}"),
            _ => assert_eq!(stage, "scan"),
        }
    }
    shutdown(&system);
}
