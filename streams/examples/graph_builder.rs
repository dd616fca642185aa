//! Graphs beyond a straight line, built with the `GraphBuilder` (Akka's
//! GraphDSL): fan-out and fan-in junctions, a reusable flow made of a
//! graph, and a closed graph with two materialized values.
//!
//! - `parallel_pricing` is a `Flow` built from a graph: a `Balance` deals
//!   orders out to three workers, each on its own island (an async
//!   boundary: three actors work at once), and a `Merge` joins their
//!   results. Built once, it is used like any other flow.
//! - The closed graph: orders go through that flow, then a `Broadcast`
//!   sends each priced order to a `Partition` (small and large orders,
//!   each counted by its own sink), to a revenue `fold` and to a `reduce`
//!   finding the largest. Every sink's value is reached by the key it was
//!   added with.
//!
//! Run with `cargo run --release --example graph_builder`.

use weir_streams::GraphError;
use weir_streams::graph::{Balance, Broadcast, GraphBuilder, Merge, Partition};
use weir_streams::prelude::*;

#[derive(Clone, Copy, Debug)]
struct Order {
    id: u32,
    quantity: u32,
}

#[derive(Clone, Copy, Debug)]
struct Priced {
    id: u32,
    cents: u64,
}

/// A deliberately busy price computation, so the workers have something
/// to do.
fn price(order: Order) -> Priced {
    let mut cents = u64::from(order.quantity) * 1_250;
    for round in 0..2_000u64 {
        cents = cents.wrapping_mul(31).wrapping_add(round) % 1_000_003 + 1;
    }
    Priced {
        id: order.id,
        cents: cents % 100_000,
    }
}

/// A flow made of a graph: balance over `WORKERS` parallel workers, merge
/// their results (in the order they finish, not the order they came).
fn parallel_pricing() -> Result<Flow<Order, Priced>, GraphError> {
    const WORKERS: usize = 3;
    let mut b = GraphBuilder::new();
    let balance = b.add(Balance::<Order, WORKERS>::new());
    let merge = b.add(Merge::<Priced, WORKERS>::new());
    for (to_worker, from_worker) in balance.outs().into_iter().zip(merge.ins()) {
        // `async_boundary` puts each worker on an island (an actor) of its own.
        let (worker_in, worker_out) = b.flow(Flow::new().map(price).async_boundary());
        b.connect(to_worker, worker_in)?;
        b.connect(worker_out, from_worker)?;
    }
    // The balance's inlet and the merge's outlet stay open: they become
    // the flow's ends.
    b.build_flow(balance.inlet(), merge.out(), |_| ())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let system = weir_actor::ActorSystem::new("graph-builder")?;
    let materializer = Materializer::new(&system);

    let mut b = GraphBuilder::new();
    let orders = b.source(Source::range(1u32..=3_000).map(|id| Order {
        id,
        quantity: 1 + id % 40,
    }));
    let (pricing_in, pricing_out) = b.flow(parallel_pricing()?);
    let broadcast = b.add(Broadcast::<Priced, 3>::new());
    // Output 0 for orders under 500.00, output 1 for the rest.
    let partition = b.add(Partition::<Priced, 2, _>::new(|p: &Priced| {
        usize::from(p.cents >= 50_000)
    }));
    let (small, small_count) = b.sink_mat(Sink::count());
    let (large, large_count) = b.sink_mat(Sink::count());
    let (revenue, revenue_total) = b.sink_mat(Sink::fold(0u64, |total, p: Priced| total + p.cents));
    let (largest, largest_order) = b.sink_mat(Sink::reduce(
        |a: Priced, p: Priced| {
            if p.cents > a.cents { p } else { a }
        },
    ));

    let [to_partition, to_revenue, to_largest] = broadcast.outs();
    let [small_orders, large_orders] = partition.outs();
    b.connect(orders, pricing_in)?;
    b.connect(pricing_out, broadcast.inlet())?;
    b.connect(to_partition, partition.inlet())?;
    b.connect(small_orders, small)?;
    b.connect(large_orders, large)?;
    b.connect(to_revenue, revenue)?;
    b.connect(to_largest, largest)?;

    // The graph's value: every sink's completion, taken by key.
    let graph = b.build(move |mats| {
        (
            mats.take(&small_count),
            mats.take(&large_count),
            mats.take(&revenue_total),
            mats.take(&largest_order),
        )
    })?;

    let (small, large, revenue, largest) = graph.run(&materializer);
    let (small, large) = (small.wait()?, large.wait()?);
    let revenue = revenue.wait()?;
    let largest = largest.wait()?;
    println!("priced {} orders on 3 parallel workers", small + large);
    println!("  under 500.00: {small}, from 500.00: {large}");
    println!(
        "  revenue {}.{:02}; largest order #{} at {}.{:02}",
        revenue / 100,
        revenue % 100,
        largest.id,
        largest.cents / 100,
        largest.cents % 100
    );
    system.terminate().wait()?;
    Ok(())
}
