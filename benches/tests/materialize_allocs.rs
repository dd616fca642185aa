//! A small graph materializes with few allocations: a `RunnableGraph` run again reuses its plan, and a finished stream builds no error on teardown (counted by the benches' counting allocator).

use weir_benches::CountingAlloc;
use weir_benches::materialize::weir_graph;
use weir_streams::prelude::*;

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc::new();

const GRAPHS: u64 = 500;

/// Allocations per run of `graph`, each run waited for (after a warm-up).
fn per_run(graph: &RunnableGraph<Completion<u64>>, mat: &Materializer) -> f64 {
    for _ in 0..50 {
        graph.run(mat).wait().unwrap();
    }
    let before = ALLOC.allocations();
    for _ in 0..GRAPHS {
        assert_eq!(graph.run(mat).wait(), Ok(3));
    }
    (ALLOC.allocations() - before) as f64 / GRAPHS as f64
}

#[test]
fn a_small_graph_run_again_allocates_little() {
    let system = weir_actor::ActorSystem::builder()
        .name("materializeAllocs")
        .threads(2)
        .build()
        .unwrap();
    let mat = Materializer::new(&system);
    // Before the plan was kept, names were made on the stack and teardown
    // stopped building errors, these were 70 and 98; now 28 and 44.
    let one = per_run(&weir_graph(1, 1), &mat);
    assert!(one <= 30.0, "one island: {one} allocations per run");
    let two = per_run(&weir_graph(1, 2), &mat);
    assert!(two <= 47.0, "two islands: {two} allocations per run");
    system.terminate().wait().unwrap();
}
