//! A `RunnableGraph` run many times, on fused and unfused materializers: each run plans for its materializer's setting and gets its own values.

use weir_actor::ActorSystem;
use weir_streams::prelude::*;

fn failing_map() -> RunnableGraph<Completion<u32>> {
    Source::single(1u32)
        .map(|x: u32| if x == 1 { panic!("boom") } else { x })
        .to_mat(Sink::head(), Keep::right)
}

#[test]
fn a_graph_run_on_fused_and_unfused_materializers_plans_for_each() {
    let system = ActorSystem::new("materializeBoth").unwrap();
    let fused = Materializer::new(&system);
    let unfused = Materializer::builder(&system).fusion(false).build();
    // The stage a failure names shows how the graph was planned: the
    // fused stage carries the names of all it fused, the plain one `map`.
    let stage = |graph: &RunnableGraph<Completion<u32>>, mat: &Materializer| {
        let error = graph.run(mat).wait().expect_err("the map panics");
        error.stage().map(str::to_owned)
    };
    let (fresh_fused, fresh_unfused) = (
        stage(&failing_map(), &fused),
        stage(&failing_map(), &unfused),
    );
    assert_ne!(
        fresh_fused, fresh_unfused,
        "the two settings plan differently"
    );
    let graph = failing_map();
    for _ in 0..3 {
        assert_eq!(stage(&graph, &fused), fresh_fused);
        assert_eq!(stage(&graph, &unfused), fresh_unfused);
        assert_eq!(stage(&graph.clone(), &unfused), fresh_unfused);
    }
    system.terminate().wait().unwrap();
}

#[test]
fn each_run_of_a_graph_gets_its_own_materialized_values() {
    let system = ActorSystem::new("materializeValues").unwrap();
    let mat = Materializer::new(&system);
    let graph = Source::queue(4)
        .unwrap()
        .map(|x: u32| x * 2)
        .async_boundary()
        .to_mat(Sink::collect(), Keep::both);
    let runs: Vec<_> = (0..3u32).map(|_| graph.run(&mat)).collect();
    for (i, (queue, _)) in runs.iter().enumerate() {
        assert!(matches!(
            queue.offer(i as u32),
            weir_streams::QueueOfferResult::Enqueued
        ));
        queue.complete();
    }
    for (i, (_, done)) in runs.into_iter().enumerate() {
        assert_eq!(done.wait(), Ok(vec![i as u32 * 2]));
    }
    system.terminate().wait().unwrap();
}
