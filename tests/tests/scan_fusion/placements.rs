//! Failures, panics, supervision, junctions, inner sources and the other
//! planner paths: fused and unfused agree.

use super::common::*;

/// A failing source: what comes before the failure and the failure, into
/// a sink, into a boundary (iterator into boundary) and through a relay.
#[test]
fn upstream_failure_passes_the_same_elements_everywhere() {
    let (system, _) = stream_system("scan-review-fail");
    type Path = fn(Source<u64, ()>) -> Source<u64, ()>;
    let paths: [(&str, Path); 3] = [
        ("direct", |s| s.scan(0, add)),
        ("into a boundary", |s| s.scan(0, add).async_boundary()),
        ("relayed", |s| {
            s.async_boundary().scan(0, add).async_boundary()
        }),
    ];
    for (path, make) in paths {
        let mut seen_by = Vec::new();
        for (how, mat) in both(&system) {
            let seen = Arc::new(Mutex::new(Vec::new()));
            let record = Arc::clone(&seen);
            let result = make(failing_after_three())
                .run_with(
                    Sink::for_each(move |x| record.lock().unwrap().push(x)),
                    &mat,
                )
                .wait();
            let error = result.expect_err("the source fails");
            assert!(
                error.to_string().contains("source broke"),
                "{path} {how}: {error:?}"
            );
            seen_by.push(seen.lock().unwrap().clone());
        }
        assert_eq!(seen_by[0], model(0, 1..=3), "{path} fused");
        assert_eq!(seen_by[0], seen_by[1], "{path}: fused, unfused");
    }
    shutdown(&system);
}

/// A panic in `f`, or in the source: the same elements arrive before the
/// failure fused and unfused, and the failure is a panic.
#[test]
fn panics_pass_the_same_elements_before_the_failure() {
    quiet_panics();
    let (system, _) = stream_system("scan-review-panic");
    type Path = fn(Source<u64, ()>) -> Source<u64, ()>;
    let paths: [(&str, Path); 4] = [
        ("direct", |s| s.scan(0, adds_but_panics_on_3)),
        ("into a boundary", |s| {
            s.scan(0, adds_but_panics_on_3).async_boundary()
        }),
        ("relayed", |s| {
            s.async_boundary()
                .scan(0, adds_but_panics_on_3)
                .async_boundary()
        }),
        ("then map", |s| s.scan(0, adds_but_panics_on_3).map(|x| x)),
    ];
    for (path, make) in paths {
        let mut seen_by = Vec::new();
        for (how, mat) in both(&system) {
            let seen = Arc::new(Mutex::new(Vec::new()));
            let record = Arc::clone(&seen);
            let error = make(Source::range(1u64..=5))
                .run_with(
                    Sink::for_each(move |x| record.lock().unwrap().push(x)),
                    &mat,
                )
                .wait()
                .expect_err("f panics");
            assert!(
                matches!(error.kind(), ErrorKind::Panicked(m) if m.contains("three")),
                "{path} {how}: {error:?}"
            );
            seen_by.push(seen.lock().unwrap().clone());
        }
        assert_eq!(seen_by[0], seen_by[1], "{path}: fused, unfused");
    }
    // The source panics on its third poll.
    let mut seen_by = Vec::new();
    for (how, mat) in both(&system) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = Arc::clone(&seen);
        let error = Source::from_poll_fn(|| {
            let mut n = 0u64;
            move |_: &mut Context<'_>| {
                n += 1;
                assert!(n < 3, "source injected");
                Poll::Ready(Some(Ok(n)))
            }
        })
        .scan(0, add)
        .run_with(
            Sink::for_each(move |x| record.lock().unwrap().push(x)),
            &mat,
        )
        .wait()
        .expect_err("the source panics");
        assert!(
            matches!(error.kind(), ErrorKind::Panicked(_)),
            "{how}: {error:?}"
        );
        seen_by.push(seen.lock().unwrap().clone());
    }
    assert_eq!(seen_by[0], vec![0, 1, 3], "fused");
    assert_eq!(seen_by[0], seen_by[1], "fused, unfused");
    shutdown(&system);
}

// ------------------------------------------------------------- supervision

/// Resume and restart on a scan in every place it can run: fused after a
/// source, relayed, as an input of a zip, unfused before a folding sink
/// after a boundary, and after another scan.
#[test]
fn supervision_agrees_in_every_placement() {
    quiet_panics();
    let (system, _) = stream_system("scan-review-supervision");
    // 1..=6, the 3 dropped.
    let resumed = vec![0, 1, 3, 7, 12, 18];
    let restarted = vec![0, 1, 3, 4, 9, 15];
    type Place = fn(Attributes) -> Source<u64, ()>;
    let places: [(&str, Place); 5] = [
        ("fused", |a| {
            Source::range(1u64..=6)
                .scan(0, adds_but_panics_on_3)
                .with_attributes(a)
        }),
        ("relayed", |a| {
            Source::range(1u64..=6)
                .async_boundary()
                .scan(0, adds_but_panics_on_3)
                .with_attributes(a)
                .async_boundary()
        }),
        ("zip input", |a| {
            Source::range(0u64..100)
                .zip(
                    Source::range(1u64..=6)
                        .scan(0, adds_but_panics_on_3)
                        .with_attributes(a),
                )
                .map(|(_, x)| x)
        }),
        ("after a boundary", |a| {
            Source::range(1u64..=6)
                .async_boundary()
                .scan(0, adds_but_panics_on_3)
                .with_attributes(a)
        }),
        ("second scan", |a| {
            Source::range(1u64..=6)
                .scan(0, |_, x| x)
                .filter(|x| *x > 0)
                .scan(0, adds_but_panics_on_3)
                .with_attributes(a)
        }),
    ];
    for (place, make) in places {
        for (how, mat) in both(&system) {
            let run = |strategy| make(with(strategy)).run_with(Sink::collect(), &mat).wait();
            assert_eq!(
                run(SupervisionStrategy::resuming()),
                Ok(resumed.clone()),
                "{place} {how}: resume"
            );
            assert_eq!(
                run(SupervisionStrategy::restarting()),
                Ok(restarted.clone()),
                "{place} {how}: restart"
            );
            let stopped = run(SupervisionStrategy::stopping());
            assert!(
                matches!(&stopped, Err(e) if matches!(e.kind(), ErrorKind::Panicked(m) if m.contains("three"))),
                "{place} {how}: stop {stopped:?}"
            );
        }
    }
    shutdown(&system);
}

// ------------------------------------------------- fan-in, substreams, pull

/// Scans as inputs of fused merges, concats and or_else, and after them.
#[test]
fn scans_in_and_after_fan_in() {
    let (system, _) = stream_system("scan-review-fan-in");
    for (how, mat) in both(&system) {
        let or_else = Source::<u64>::empty()
            .scan(5, add)
            .or_else(Source::range(0u64..3))
            .run_with(Sink::collect(), &mat);
        assert_eq!(or_else.wait(), Ok(vec![5]), "{how}: or_else");
        let concat = Source::<u64>::empty()
            .scan(5, add)
            .concat(Source::range(1u64..=2).scan(10, add))
            .run_with(Sink::collect(), &mat);
        assert_eq!(concat.wait(), Ok(vec![5, 10, 11, 13]), "{how}: concat");
        let mut merged = Source::range(1u64..=3)
            .scan(0, add)
            .merge(Source::range(1u64..=3).scan(100, add))
            .run_with(Sink::collect(), &mat)
            .wait()
            .expect("merge");
        merged.sort_unstable();
        assert_eq!(merged, vec![0, 1, 3, 6, 100, 101, 103, 106], "{how}: merge");
        let after = Source::range(0u64..4)
            .zip(Source::range(10u64..14))
            .scan(0, |a, (x, y)| a + x * y)
            .take(3)
            .run_with(Sink::collect(), &mat);
        assert_eq!(after.wait(), Ok(vec![0, 0, 11]), "{how}: after a zip");
    }
    shutdown(&system);
}

/// Scans inside `flat_map_concat` inner sources (which plan with fusion on
/// whatever the materializer says) and after the flattening into a
/// folding sink; scans on substreams.
#[test]
fn scans_in_inner_sources_and_substreams() {
    let (system, _) = stream_system("scan-review-sub");
    for (how, mat) in both(&system) {
        let seeds = Source::range(0u64..3)
            .flat_map_concat(|x| Source::<u64>::empty().scan(x, add))
            .run_with(Sink::collect(), &mat);
        assert_eq!(seeds.wait(), Ok(vec![0, 1, 2]), "{how}: seeds");
        let inner = Source::range(1u64..=3)
            .flat_map_concat(|n| Source::range(1..=n).scan(n * 10, add))
            .run_with(Sink::collect(), &mat);
        let want: Vec<u64> = (1..=3).flat_map(|n| model(n * 10, 1..=n)).collect();
        assert_eq!(inner.wait(), Ok(want), "{how}: inner");
        let pending_inner = Source::range(0u64..3)
            .flat_map_concat(|x| never().scan(x, add))
            .run_with(Sink::head(), &mat);
        assert_eq!(pending_inner.wait(), Ok(0), "{how}: pending inner");
        let after = Source::range(1u64..=3)
            .flat_map_concat(|n| Source::range(0..n))
            .scan(0, add)
            .run_with(Sink::collect(), &mat);
        assert_eq!(
            after.wait(),
            Ok(model(0, [0, 0, 1, 0, 1, 2])),
            "{how}: after flattening"
        );
        let split = Source::range(1u64..=7)
            .split_when(|x| x % 3 == 0)
            .scan(0, add)
            .concat_substreams()
            .run_with(Sink::collect(), &mat);
        assert_eq!(
            split.wait(),
            Ok(vec![0, 1, 3, 0, 3, 7, 12, 0, 6, 13]),
            "{how}: split_when"
        );
        let mut grouped = Source::range(1u64..=6)
            .group_by(2, |x| x % 2)
            .unwrap()
            .scan(0, add)
            .merge_substreams()
            .run_with(Sink::collect(), &mat)
            .wait()
            .expect("group_by");
        grouped.sort_unstable();
        let mut want = [model(0, [1, 3, 5]), model(0, [2, 4, 6])].concat();
        want.sort_unstable();
        assert_eq!(grouped, want, "{how}: group_by");
        // A scan then a fold in each substream: not a direct substream (a
        // scan has no consumer form), the sub-island as before.
        let mut folded = Source::range(1u64..=6)
            .group_by(2, |x| x % 2)
            .unwrap()
            .scan(0, add)
            .fold(0, add)
            .merge_substreams()
            .run_with(Sink::collect(), &mat)
            .wait()
            .expect("group_by, scan, fold");
        folded.sort_unstable();
        let sum = |xs: Vec<u64>| xs.into_iter().sum::<u64>();
        let mut want = vec![sum(model(0, [1, 3, 5])), sum(model(0, [2, 4, 6]))];
        want.sort_unstable();
        assert_eq!(folded, want, "{how}: group_by, scan, fold");
    }
    shutdown(&system);
}

/// A sink made with `with_pull` drives the fused source (scan included)
/// itself: same sum as on an island.
#[test]
fn a_pull_sink_drives_a_scan() {
    use std::task::Waker;
    use weir_streams::{Completer, Pulled};
    let (system, _) = stream_system("scan-review-pull");
    let sum = Sink::fold(0u64, |a, x| a + x).with_pull(|mut pull| {
        let (mut completer, completion) = Completer::new();
        let (mut batch, mut sum) = (Vec::new(), 0u64);
        let mut cx = Context::from_waker(Waker::noop());
        loop {
            let pulled = pull.poll_fill(&mut cx, &mut batch, 3);
            sum += batch.drain(..).sum::<u64>();
            match pulled {
                Pulled::More => continue,
                Pulled::Completed => completer.complete(Ok(sum)),
                Pulled::Failed(error) => completer.complete(Err(error)),
                _ => unreachable!("a range is never pending"),
            }
            return completion;
        }
    });
    let want: u64 = model(7, 1..=20).iter().sum();
    for (how, mat) in both(&system) {
        let got = Source::range(1u64..=20)
            .scan(7, add)
            .run_with(sum.clone(), &mat);
        assert_eq!(got.wait(), Ok(want), "{how}");
        let empty = Source::<u64>::empty()
            .scan(7, add)
            .run_with(sum.clone(), &mat);
        assert_eq!(empty.wait(), Ok(7), "{how}: empty");
    }
    shutdown(&system);
}

/// A hosting source (`Source::actor_ref`) into a folding sink through a
/// scan: the host rule stands aside (the scan runs as its stage).
#[test]
fn a_hosting_source_through_a_scan_into_a_folding_sink() {
    let (system, _) = stream_system("scan-review-host");
    for (how, mat) in both(&system) {
        let (source, done) = Source::actor_ref(16, OverflowStrategy::DropHead)
            .unwrap()
            .map(|x: u64| x * 10)
            .scan(1, add)
            .to_mat(Sink::collect(), Keep::both)
            .run(&mat);
        for x in 1..=3u64 {
            source.tell(x);
        }
        source.complete();
        assert_eq!(done.wait(), Ok(vec![1, 11, 31, 61]), "{how}");
    }
    shutdown(&system);
}

/// One blueprint run twice starts from the seed each time; an empty
/// source's seed crosses a boundary; a source that fails before any
/// demand, relayed, passes the same elements fused and unfused.
#[test]
fn reuse_boundaries_and_early_failure() {
    let (system, _) = stream_system("scan-review-reuse");
    for (how, mat) in both(&system) {
        let blueprint = Source::range(1u64..=3).scan(0, add).map(|x| x + 1);
        for _ in 0..2 {
            let got = blueprint.clone().run_with(Sink::collect(), &mat);
            assert_eq!(got.wait(), Ok(vec![1, 2, 4, 7]), "{how}: reuse");
        }
        let crossed = Source::<u64>::empty()
            .scan(7, add)
            .async_boundary()
            .run_with(Sink::collect(), &mat);
        assert_eq!(crossed.wait(), Ok(vec![7]), "{how}: across");
    }
    let mut seen_by = Vec::new();
    for (how, mat) in both(&system) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = Arc::clone(&seen);
        let error = Source::<u64>::failed(StreamError::msg("early"))
            .async_boundary()
            .scan(7, add)
            .async_boundary()
            .run_with(
                Sink::for_each(move |x| record.lock().unwrap().push(x)),
                &mat,
            )
            .wait()
            .expect_err("fails");
        assert!(error.to_string().contains("early"), "{how}: {error:?}");
        seen_by.push(seen.lock().unwrap().clone());
    }
    assert_eq!(seen_by[0], seen_by[1], "early failure: fused, unfused");
    shutdown(&system);
}

/// Interleave with a scan input whose upstream is empty: the seed takes
/// its turn, then the other input goes on alone.
#[test]
fn interleave_with_a_seed_only_input() {
    let (system, _) = stream_system("scan-review-interleave");
    for (how, mat) in both(&system) {
        let got = Source::range(0u64..4)
            .interleave(Source::<u64>::empty().scan(7, add), 2)
            .unwrap()
            .run_with(Sink::collect(), &mat);
        assert_eq!(got.wait(), Ok(vec![0, 1, 7, 2, 3]), "{how}");
    }
    shutdown(&system);
}

/// The stage a failure names: a panic in `f` names a stage that has
/// `scan` in its name, fused (the fused stage) and unfused (`scan`).
#[test]
fn the_failing_stage_is_named_after_the_scan() {
    quiet_panics();
    let (system, _) = stream_system("scan-review-names");
    type Path = fn(Source<u64, ()>) -> Source<u64, ()>;
    let paths: [(&str, Path); 4] = [
        ("direct", |s| s.scan(0, adds_but_panics_on_3)),
        ("into a boundary", |s| {
            s.scan(0, adds_but_panics_on_3).async_boundary()
        }),
        ("relayed", |s| {
            s.async_boundary()
                .scan(0, adds_but_panics_on_3)
                .async_boundary()
        }),
        ("in a zip", |s| {
            Source::range(0u64..10)
                .zip(s.scan(0, adds_but_panics_on_3))
                .map(|(_, x)| x)
        }),
    ];
    for (path, make) in paths {
        for (how, mat) in both(&system) {
            let error = make(Source::range(1u64..=5))
                .run_with(Sink::ignore(), &mat)
                .wait()
                .expect_err("f panics");
            let stage = error.stage().unwrap_or_default().to_owned();
            assert!(stage.contains("scan"), "{path} {how}: {stage}");
        }
    }
    shutdown(&system);
}

/// An upstream failure names the same stage through a scan as through a
/// map. (A fused source's own failure names no stage fused and the source
/// unfused, with or without an operator after it: not this change's.)
#[test]
fn upstream_failure_names_like_a_map() {
    let (system, _) = stream_system("scan-review-fail-names");
    for (how, mat) in both(&system) {
        let named = |source: Source<u64, ()>| {
            source
                .run_with(Sink::ignore(), &mat)
                .wait()
                .expect_err("fails")
                .stage()
                .map(str::to_owned)
        };
        let scan = named(failing_after_three().scan(0, add));
        let map = named(failing_after_three().map(|x| x));
        let boundary = named(failing_after_three().scan(0, add).async_boundary());
        let map_boundary = named(failing_after_three().map(|x| x).async_boundary());
        assert_eq!(scan, map, "{how}");
        assert_eq!(boundary, map_boundary, "{how}");
    }
    shutdown(&system);
}
