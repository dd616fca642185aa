//! `RunnableGraph::describe`: the plan as data (driver, islands, fused
//! stages, boundaries), as text, Mermaid and DOT, fused and unfused.

use weir_streams::prelude::*;
use weir_streams::{Driver, PlanDescription, StageKind};

fn describe<M: 'static>(graph: &RunnableGraph<M>, fusion: bool) -> PlanDescription {
    let system = weir_actor::ActorSystem::new("describe").unwrap();
    let mat = Materializer::builder(&system).fusion(fusion).build();
    let described = graph.describe(&mat);
    system.terminate().wait().unwrap();
    described
}

fn names(plan: &PlanDescription, island: usize) -> Vec<String> {
    plan.islands[island]
        .stages
        .iter()
        .map(|s| s.name.clone())
        .collect()
}

/// A linear graph fuses into one loop on a pool task; unfused, each
/// operator is a stage of one island, connected in order.
#[test]
fn a_linear_graph_is_one_fused_task_or_one_island_of_stages() {
    let graph = Source::range(1u32..=3)
        .map(|x| x + 1)
        .take(2)
        .to_mat(Sink::collect(), Keep::right);
    let fused = describe(&graph, true);
    assert_eq!(fused.driver, Driver::PoolTask);
    assert_eq!(names(&fused, 0), ["range.map.take.collect"]);
    assert!(fused.to_string().contains("one pool task"), "{fused}");

    let unfused = describe(&graph, false);
    assert_eq!(unfused.driver, Driver::Islands);
    assert_eq!(names(&unfused, 0), ["range", "map", "take", "collect"]);
    assert_eq!(unfused.islands[0].connections, [(0, 1), (1, 2), (2, 3)]);
    assert!(unfused.boundaries.is_empty());
}

/// Async boundaries cut islands; the text, Mermaid and DOT forms show the
/// halves and the boundary between them, and what was fused into a half.
#[test]
fn async_boundaries_cut_islands_and_show_in_every_form() {
    let graph = Source::range(1u32..=3)
        .map(|x| x * 2)
        .async_boundary()
        .filter(|x| x % 3 != 0)
        .to_mat(Sink::collect(), Keep::right);
    let fused = describe(&graph, true);
    assert_eq!(fused.driver, Driver::Islands);
    assert_eq!(fused.islands.len(), 2);
    assert_eq!(fused.boundaries, [(0, 1)]);
    assert_eq!(
        fused.islands[0].stages[0].kind,
        StageKind::BoundaryOut {
            boundary: 0,
            source: Some("range.map".into())
        }
    );
    let text = fused.to_string();
    assert!(text.contains("range.map → boundary 0 out"), "{text}");
    assert!(text.contains("boundary 0: island 0 -> island 1"), "{text}");
    let mermaid = fused.to_mermaid();
    assert!(mermaid.starts_with("flowchart LR\n"), "{mermaid}");
    assert!(mermaid.contains("subgraph island1"), "{mermaid}");
    assert!(mermaid.contains("i0s0 -. async .-> i1s0"), "{mermaid}");
    let dot = fused.to_dot();
    assert!(dot.starts_with("digraph stream {"), "{dot}");
    assert!(dot.contains("subgraph cluster_1"), "{dot}");
    assert!(dot.contains("i0s0 -> i1s0 [style=dashed"), "{dot}");
    assert!(dot.trim_end().ends_with('}'), "{dot}");

    let unfused = describe(&graph, false);
    assert_eq!(names(&unfused, 0), ["range", "map", "boundary 0 out"]);
    assert_eq!(names(&unfused, 1), ["boundary 0 in", "filter", "collect"]);
    assert!(unfused.to_mermaid().contains("i0s2 -. async .-> i1s0"));
}

/// Two boundaries in a row: the middle island relays from the first
/// boundary through its operators into the second.
#[test]
fn chained_boundaries_give_one_island_each() {
    let graph = Source::range(1u32..=3)
        .async_boundary()
        .map(|x| x + 1)
        .async_boundary()
        .map(|x| x * 2)
        .to_mat(Sink::collect(), Keep::right);
    let fused = describe(&graph, true);
    assert_eq!(fused.islands.len(), 3);
    assert_eq!(fused.boundaries, [(0, 1), (1, 2)]);
    assert_eq!(names(&fused, 1), ["boundary 1 out"]);
    assert!(
        fused
            .to_string()
            .contains("boundary 0 in → map → boundary 1 out"),
        "{fused}"
    );
}

/// A junction: unfused, its inputs and output are connections of one
/// island; fused, iterator inputs fuse through it into one loop.
#[test]
fn a_junction_shows_its_inputs() {
    let graph = Source::range(1u32..=3)
        .merge(Source::range(5u32..=6))
        .map(|x| x * 2)
        .to_mat(Sink::collect(), Keep::right);
    let fused = describe(&graph, true);
    assert_eq!(fused.driver, Driver::PoolTask);
    assert_eq!(names(&fused, 0), ["range.range.merge.map.collect"]);
    let unfused = describe(&graph, false);
    let stages = names(&unfused, 0);
    let merge = stages.iter().position(|s| s == "merge").unwrap();
    let into_merge = unfused.islands[0]
        .connections
        .iter()
        .filter(|c| c.1 == merge)
        .count();
    assert_eq!(into_merge, 2, "{unfused}");
}

/// A graph run by its sink's pull (no island at all): `Sink::as_stream`
/// pulls a fused source itself.
#[test]
fn a_pulled_graph_says_so() {
    use weir_interop::SinkAsStream;
    let graph = Source::range(1u32..=3)
        .map(|x| x + 1)
        .to_mat(Sink::as_stream(), Keep::right);
    let fused = describe(&graph, true);
    assert_eq!(fused.driver, Driver::PulledBySink);
    assert!(fused.islands.is_empty());
    assert!(
        fused
            .to_string()
            .starts_with("pulled by its sink: range.map"),
        "{fused}"
    );
    assert!(fused.to_mermaid().contains("pulled by its sink"));
    let unfused = describe(&graph, false);
    assert_eq!(unfused.driver, Driver::Islands);
}
