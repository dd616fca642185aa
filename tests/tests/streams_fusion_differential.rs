//! Random operator chains and junctions run fused, unfused and with boundaries everywhere, each checked against a plain-Rust model.

#[path = "fusion_differential/chain.rs"]
mod chain;
#[path = "fusion_differential/joins.rs"]
mod joins;

use proptest::prelude::*;
use weir_streams::prelude::*;

use chain::op;
use joins::{Join, join, joined_blueprint, joined_model};
use weir_streams::testkit::TestSink;
use weir_tests::{shutdown, stream_system};

/// How the result is taken.
#[derive(Debug, Clone)]
enum End {
    /// `Sink::collect` (a folding sink).
    Collect,
    /// `Sink::fold` of the sum (a folding sink; only the sum is compared).
    Sum,
    /// `Sink::count` (a folding sink; only the count is compared).
    Count,
    /// A probe that requests in these chunks (a plain sink stage).
    Demand(Vec<u64>),
}

fn end() -> impl Strategy<Value = End> {
    prop_oneof![
        Just(End::Collect),
        Just(End::Sum),
        Just(End::Count),
        prop::collection::vec(1u64..8, 1..6).prop_map(End::Demand),
    ]
}

/// Run `source` into `end`; what the model's result is compared with.
fn run(source: Source<u64>, end: &End, expected: &[u64], mat: &Materializer) -> Vec<u64> {
    match end {
        End::Collect => source
            .run_with(Sink::collect(), mat)
            .wait()
            .expect("the chain completes"),
        End::Sum => {
            let sum = source.run_with(Sink::fold(0u64, |a, x| a + x), mat).wait();
            vec![sum.expect("the chain completes")]
        }
        End::Count => vec![
            source
                .run_with(Sink::count(), mat)
                .wait()
                .expect("the chain completes"),
        ],
        End::Demand(chunks) => {
            let mut probe = source.run_with(TestSink::probe(), mat);
            let mut got = Vec::new();
            let mut chunks = chunks.iter().copied().cycle();
            while got.len() < expected.len() {
                let chunk = chunks.next().expect("cycled");
                probe.request(chunk);
                let n = (chunk as usize).min(expected.len() - got.len());
                got.extend(probe.expect_next_n(n));
            }
            // The end may need demand to be found (a filter pulls on).
            probe.request(1);
            probe.expect_complete();
            got
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn fused_unfused_and_boundaries_agree_with_the_model(
        input in prop::collection::vec(0u64..1000, 0..40),
        ops in prop::collection::vec(op(), 0..10),
        join in join(),
        end in end(),
    ) {
        let (system, fused) = stream_system("differential");
        let unfused = Materializer::builder(&system).fusion(false).build();
        let expected = joined_model(&input, &ops, &join);
        let mut expected = match end {
            End::Sum => vec![expected.iter().sum()],
            End::Count => vec![expected.len() as u64],
            _ => expected,
        };
        let go = |boundaries, mat| run(joined_blueprint(&input, &ops, &join, boundaries), &end, &expected, mat);
        let runs = [
            ("fused", go(false, &fused)),
            ("unfused", go(false, &unfused)),
            ("boundaries", go(true, &fused)),
            ("boundaries unfused", go(true, &unfused)),
        ];
        shutdown(&system);
        // A merge interleaves as elements arrive: compare its elements only.
        let unordered = matches!(
            join,
            Join::Merge(..)
                | Join::MergePrioritized(..)
                | Join::BroadcastMerge(..)
                | Join::Partition(..)
                | Join::Balance(..)
        );
        if unordered {
            expected.sort_unstable();
        }
        for (how, mut got) in runs {
            if unordered {
                got.sort_unstable();
            }
            prop_assert_eq!(&got, &expected, "{} run of {:?} joined by {:?}", how, ops, join);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// `Source::cycle` (an iterator source, so the chain fuses into it)
    /// under a random chain, cut by `take`: fused, unfused and with
    /// boundaries, against the model of the repeated input.
    #[test]
    fn a_cycled_source_agrees_with_the_model(
        input in prop::collection::vec(0u64..1000, 1..8),
        n in 0u64..30,
        ops in prop::collection::vec(chain::one_to_one(), 0..6),
        end in end(),
    ) {
        let (system, fused) = stream_system("differential-cycle");
        let unfused = Materializer::builder(&system).fusion(false).build();
        let repeated: Vec<u64> = input.iter().copied().cycle().take(n as usize).collect();
        let expected = chain::model(&repeated, &ops);
        let expected = match end {
            End::Sum => vec![expected.iter().sum()],
            End::Count => vec![expected.len() as u64],
            _ => expected,
        };
        let cycled = || {
            let input = input.clone();
            Source::cycle(move || input.clone()).take(n)
        };
        let go = |boundaries, mat| run(chain::then(cycled(), &ops, boundaries), &end, &expected, mat);
        let runs = [
            ("fused", go(false, &fused)),
            ("unfused", go(false, &unfused)),
            ("boundaries", go(true, &fused)),
            ("boundaries unfused", go(true, &unfused)),
        ];
        shutdown(&system);
        for (how, got) in runs {
            prop_assert_eq!(&got, &expected, "{} run of cycle({:?}).take({}) then {:?}", how, input, n, ops);
        }
    }
}

/// The example: maps after a non-simple stage fuse like a flow of
/// maps composed first, and give the same result as unfused.
#[test]
fn maps_after_scan_fuse_like_a_composed_flow() {
    let (system, fused) = stream_system("scan-maps");
    let unfused = Materializer::builder(&system).fusion(false).build();
    let mut chained = Source::range(0u64..1000).scan(0u64, |a, x| a + x);
    let mut flow = Flow::<u64>::new();
    for k in 1..=9 {
        chained = chained.map(move |x| x + k);
        flow = flow.map(move |x| x + k);
    }
    let composed = Source::range(0u64..1000).scan(0u64, |a, x| a + x).via(flow);
    let sum =
        |s: Source<u64>, m: &Materializer| s.run_with(Sink::fold(0u64, |a, x| a + x), m).wait();
    let want = sum(composed.clone(), &unfused);
    assert_eq!(sum(chained.clone(), &fused), want);
    assert_eq!(sum(composed, &fused), want);
    assert_eq!(sum(chained, &unfused), want);
    shutdown(&system);
}

/// Regression: past the interpreter's chase limit the chased push of
/// `take`'s last element was queued behind the completion that followed
/// it, so the element was lost (found by the differential test above).
#[test]
fn the_last_element_of_a_take_is_not_overtaken_by_its_completion() {
    let (system, _) = stream_system("take-last");
    let unfused = Materializer::builder(&system).fusion(false).build();
    for n in 1..40 {
        let got = Source::from_iter(0u64..100)
            .take(n)
            .map(|x| x + 1)
            .run_with(Sink::collect(), &unfused)
            .wait();
        assert_eq!(got, Ok((1..=n).collect::<Vec<_>>()), "take({n})");
    }
    shutdown(&system);
}

/// A dispatcher asked for by a node that the planner fuses (a folding
/// sink after an iterator source, or inside a boundary's half) still moves
/// its island off the shared pool.
#[test]
fn a_fused_node_keeps_its_dispatcher() {
    let (system, fused) = stream_system("fused-dispatcher");
    let unfused = Materializer::builder(&system).fusion(false).build();
    let thread = || std::thread::current().name().unwrap_or("").to_owned();
    let on = |source: Source<u64>, blocking: bool, mat: &Materializer| {
        let sink = Sink::fold(String::new(), move |_, _: u64| thread());
        let sink = if blocking {
            sink.with_attributes(weir_streams::Attributes::blocking())
        } else {
            sink
        };
        source.run_with(sink, mat).wait().expect("completes")
    };
    for mat in [&fused, &unfused] {
        let shared = on(Source::range(0u64..3), false, mat);
        for source in [
            Source::range(0u64..3),
            Source::range(0u64..3).async_boundary(),
        ] {
            let pinned = on(source, true, mat);
            assert!(
                pinned.ends_with("-pinned"),
                "on a pinned thread, got {pinned}"
            );
            assert!(
                !shared.ends_with("-pinned"),
                "the control runs on the shared pool: {shared}"
            );
        }
    }
    shutdown(&system);
}

#[test]
fn a_source_that_never_wakes_its_stream_waits_in_every_driver() {
    let (system, fused) = stream_system("never-wakes");
    let unfused = Materializer::builder(&system).fusion(false).build();
    // The future never completes and drops the waker it is given: fused
    // with the fold, the graph is one pool task; unfused, islands.
    let graph = || {
        Source::future(std::future::pending::<Result<u32, StreamError>>)
            .map(|x| x + 1)
            .to_mat(Sink::fold(0u32, |sum, x| sum + x), Keep::right)
    };
    assert_eq!(
        graph().describe(&fused).driver,
        weir_streams::Driver::PoolTask
    );
    assert_eq!(
        graph().describe(&unfused).driver,
        weir_streams::Driver::Islands
    );
    let waiting: Vec<_> = [&fused, &unfused]
        .into_iter()
        .map(|mat| {
            let done = graph().run(mat);
            match done.wait_timeout(std::time::Duration::from_millis(200)) {
                Ok(outcome) => panic!("a stream whose source never gives ended: {outcome:?}"),
                Err(done) => done,
            }
        })
        .collect();
    fused.shutdown();
    unfused.shutdown();
    for done in waiting {
        let outcome = done.wait();
        assert!(
            matches!(&outcome, Err(e) if matches!(e.kind(), weir_streams::ErrorKind::AbruptTermination)),
            "stopped by the shutdown: {outcome:?}"
        );
    }
    shutdown(&system);
}
