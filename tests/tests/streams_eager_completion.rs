//! Completion and failure need no demand: empty and failed sources end a sink that never pulls, across async boundaries too, and finite sources complete with their last element.

use std::time::Duration;

use weir_streams::prelude::*;
use weir_streams::stage::{
    FlowShape, GraphStage, GraphStageLogic, InPort, MatContext, OutPort, StageContext, StageResult,
};
use weir_streams::testkit::{SinkProbe, TestSink};
use weir_streams::{ErrorKind, StreamError};
use weir_tests::{shutdown, stream_system};

/// A pass-through stage nothing fuses with: the unfused path.
struct Plain;
struct PlainLogic(FlowShape<u32, u32>);

impl GraphStage for Plain {
    type Shape = FlowShape<u32, u32>;
    type Mat = ();
    fn name(&self) -> &'static str {
        "plain"
    }
    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        (Box::new(PlainLogic(FlowShape::new())), ())
    }
}

impl GraphStageLogic for PlainLogic {
    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let x = ctx.grab(self.0.inlet)?;
        ctx.push(self.0.out, x)
    }
    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.pull(self.0.inlet)
    }
}

/// The same source through every path: alone, with a fused operator, with
/// an unfused stage, across an async boundary (its upstream half fuses the
/// source), and across one after an unfused stage.
fn paths(source: &Source<u32, ()>) -> Vec<(&'static str, Source<u32, ()>)> {
    vec![
        ("plain", source.clone()),
        ("fused map", source.clone().map(|x| x)),
        ("unfused stage", source.clone().via(Flow::from_graph(Plain))),
        ("async boundary", source.clone().async_boundary()),
        (
            "stage then boundary",
            source.clone().via(Flow::from_graph(Plain)).async_boundary(),
        ),
        (
            "boundary then map",
            source.clone().async_boundary().map(|x| x),
        ),
    ]
}

fn probe(source: Source<u32, ()>, mat: &Materializer) -> SinkProbe<u32> {
    source
        .run_with(TestSink::probe(), mat)
        .with_timeout(Duration::from_secs(2))
}

#[test]
fn an_empty_source_completes_a_sink_that_never_pulls() {
    let (system, mat) = stream_system("empty-no-demand");
    for (path, source) in [
        ("plain", Source::<u32, ()>::empty()),
        ("async boundary", Source::empty().async_boundary()),
        (
            "stage then boundary",
            Source::empty()
                .via(Flow::from_graph(Plain))
                .async_boundary(),
        ),
        ("empty iterator", Source::from_iter(Vec::<u32>::new())),
    ] {
        let mut down = probe(source, &mat);
        // No request: completion needs none (Reactive Streams 1.5, 2.9).
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| down.expect_complete()))
            .unwrap_or_else(|_| panic!("{path}: no completion without demand"));
    }
    shutdown(&system);
}

#[test]
fn a_failed_source_fails_a_sink_that_never_pulls_across_a_boundary_every_time() {
    let (system, mat) = stream_system("failed-no-demand");
    // The failure used to arrive only when the downstream island started
    // before the upstream one had failed: repeat to catch both orders.
    for round in 0..50 {
        let source = Source::<u32, ()>::failed(StreamError::msg("no beans"));
        let source = if round % 2 == 0 {
            source.async_boundary()
        } else {
            source.via(Flow::from_graph(Plain)).async_boundary()
        };
        let error = probe(source, &mat).expect_error();
        assert_eq!(error.kind().to_string(), "no beans", "round {round}");
    }
    shutdown(&system);
}

#[test]
fn finite_sources_complete_with_their_last_element_on_every_path() {
    let (system, mat) = stream_system("eager-complete");
    let sources: Vec<(&str, Source<u32, ()>, Vec<u32>)> = vec![
        ("single", Source::single(7), vec![7]),
        ("from_iter", Source::from_iter(vec![1, 2, 3]), vec![1, 2, 3]),
        ("range", Source::range(1u32..=4), vec![1, 2, 3, 4]),
        ("range exclusive", Source::range(5u32..7), vec![5, 6]),
    ];
    for (name, source, expected) in sources {
        for (path, source) in paths(&source) {
            let mut down = probe(source, &mat);
            // Akka's pattern: ask for exactly what there is, then expect
            // the completion without asking for more.
            down.request(expected.len() as u64);
            let got = down.expect_next_n(expected.len());
            assert_eq!(got, expected, "{name} via {path}");
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| down.expect_complete()))
                .unwrap_or_else(|_| {
                    panic!("{name} via {path}: no completion after the last element")
                });
        }
    }
    shutdown(&system);
}

/// A fused `take` ends its source with its last element: the stage that
/// emits the fused source one element per pull completes without being
/// pulled again (the path that asks its source for one element at a time).
#[test]
fn a_fused_take_completes_with_its_last_element() {
    let (system, mat) = stream_system("eager-take");
    let chains: Vec<(&str, Source<u32, ()>)> = vec![
        ("take", Source::range(1u32..100).take(3)),
        ("take then map", Source::range(1u32..100).take(3).map(|x| x)),
        ("map then take", Source::range(1u32..100).map(|x| x).take(3)),
        (
            "take then unfused stage",
            Source::range(1u32..100)
                .take(3)
                .via(Flow::from_graph(Plain)),
        ),
    ];
    for (path, source) in chains {
        let mut down = probe(source, &mat);
        down.request(3);
        assert_eq!(down.expect_next_n(3), vec![1, 2, 3], "{path}");
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| down.expect_complete()))
            .unwrap_or_else(|_| panic!("{path}: no completion after the last element"));
    }
    shutdown(&system);
}

#[test]
fn eager_completion_changes_no_result_of_a_folding_sink() {
    let (system, mat) = stream_system("eager-fold");
    for (path, source) in paths(&Source::range(1u32..=100)) {
        let sum = source.run_with(Sink::fold(0u64, |a, x| a + u64::from(x)), &mat);
        assert_eq!(sum.wait(), Ok(5050), "{path}");
    }
    for (path, source) in paths(&Source::single(3)) {
        let head = source.run_with(Sink::head(), &mat);
        assert_eq!(head.wait(), Ok(3), "{path}");
    }
    for (path, source) in paths(&Source::empty()) {
        let head = source.run_with(Sink::head(), &mat);
        assert!(
            matches!(head.wait().unwrap_err().kind(), ErrorKind::EmptyStream),
            "{path}"
        );
    }
    shutdown(&system);
}

#[test]
fn a_source_that_cannot_tell_its_end_still_makes_nothing_before_demand() {
    let (system, mat) = stream_system("lazy-unfold");
    let made = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
    let counter = std::sync::Arc::clone(&made);
    let source = Source::unfold(0u32, move |n| {
        counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        (n < 2).then_some((n + 1, n))
    });
    let mut down = probe(source, &mat);
    down.request(2);
    assert_eq!(down.expect_next_n(2), vec![0, 1]);
    down.expect_no_message(Duration::from_millis(100));
    assert_eq!(
        made.load(std::sync::atomic::Ordering::SeqCst),
        2,
        "no peeking ahead"
    );
    down.request(1);
    down.expect_complete();
    shutdown(&system);
}

#[test]
fn a_huge_input_buffer_is_a_bound_not_an_allocation() {
    let (system, mat) = stream_system("huge-buffer");
    let huge = weir_streams::Attributes::new()
        .with_input_buffer(1 << 40)
        .expect("a non-zero buffer");
    // A fused folding sink after the boundary, and an ordinary stage.
    let sum = Source::range(1u64..=1000).async_boundary().run_with(
        Sink::fold(0u64, |a, x| a + x).with_attributes(huge.clone()),
        &mat,
    );
    assert_eq!(sum.wait(), Ok(500_500));
    let mut down = Source::range(1u32..=3)
        .async_boundary()
        .via(Flow::from_graph(Plain).with_attributes(huge))
        .run_with(TestSink::probe(), &mat);
    down.request(3);
    assert_eq!(down.expect_next_n(3), vec![1, 2, 3]);
    down.expect_complete();
    shutdown(&system);
}

/// A stage that completes when it finds its inlet closed must not lose
/// an element pushed together with upstream's completion: the inlet is
/// closed only once the completion reaches the stage (as Akka's
/// `isClosed(in)`). These lost the last element when the inlet read as
/// closed as soon as upstream completed.
#[test]
fn the_last_element_reaches_a_stage_that_checks_its_inlet_for_completion() {
    let (system, mat) = stream_system("eager-last-element");
    // `expand` completes on a pull with its inlet closed.
    let expanded = Source::single(1u32)
        .expand(std::iter::repeat)
        .run_with(Sink::collect(), &mat)
        .wait()
        .unwrap();
    assert!(
        !expanded.is_empty() && expanded.iter().all(|x| *x == 1),
        "{expanded:?}"
    );
    // `conflate` / `batch` complete on a pull once their inlet is closed
    // and nothing is held, followed by a stage on the same island.
    let sums = Source::range(1u64..=4)
        .conflate(|a, x| a + x)
        .scan(0, |a, x| a + x)
        .run_with(Sink::collect(), &mat)
        .wait()
        .unwrap();
    assert_eq!(sums.last(), Some(&10), "{sums:?}");
    let batches = Source::range(1u32..=4)
        .batch(
            10,
            |x| vec![x],
            |mut v, x| {
                v.push(x);
                v
            },
        )
        .unwrap()
        .grouped(10)
        .unwrap()
        .run_with(Sink::collect(), &mat)
        .wait()
        .unwrap();
    assert_eq!(batches.concat().concat(), vec![1, 2, 3, 4]);
    shutdown(&system);
}
