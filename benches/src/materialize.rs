//! Materialization benchmark (`weir-bench materialize`): many small graphs,
//! `Source::single -> map -> Sink::head`, each run to its result: one
//! blueprint run many times (materialization alone, as Akka's
//! benchmark measures it) and, in one row, a blueprint built for every
//! graph (`single(i)`, construction and planning included); one at a time (run, then wait) and in batches (run a batch, then
//! wait for all of it); a one-island graph and a two-island one (an async
//! boundary after the map). Beside them (feature `peers`), the Rust user's
//! alternative: a tokio task per graph (`futures::stream::once -> map ->
//! next` inside the task) on a multi-thread runtime with a worker per core,
//! one at a time (spawn, then block on the join handle) and in batches.
//!
//! The one-island graph is a fused source and sink, which Weir runs as a
//! task of the pool; the two-island graph has a pool task per island,
//! each with its inbox. Under them, the two floors, with no
//! stream: a pool task that completes a promise (`task_floor`, what the
//! one-island graph cannot go below) and an actor spawned, told one
//! message and stopped (`actor_floor`, what an island cost when islands
//! were actors).
//!
//! Every variant returns the sum of its graphs' results, so none can skip
//! one; the report gives graphs per second (median of the runs), the ratio
//! against tokio (the median of per-round ratios: each round times every
//! variant in turn), and heap allocations per graph (counted by the
//! bench's global allocator, blueprint construction included).

use std::hint::black_box;
use std::time::Instant;

use weir_streams::prelude::*;

#[inline]
fn step(x: u64) -> u64 {
    black_box(x).wrapping_mul(3)
}

/// The sum a variant with graphs built each time must return for graphs `0..n`.
pub fn expected(n: u64) -> u64 {
    (0..n).map(|x| x.wrapping_mul(3)).fold(0, u64::wrapping_add)
}

/// The graph on Weir: one island, or two with an async boundary after
/// the map.
pub fn weir_graph(i: u64, islands: usize) -> RunnableGraph<Completion<u64>> {
    let source = Source::single(i).map(step);
    if islands > 1 {
        source.async_boundary().to_mat(Sink::head(), Keep::right)
    } else {
        source.to_mat(Sink::head(), Keep::right)
    }
}

/// How a variant gets its graphs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// One blueprint, built once, run for every graph (what Akka's
    /// materialization benchmark measures): graph `i` returns `3`.
    Prebuilt,
    /// A blueprint built for every graph (`single(i)`): graph `i`
    /// returns `3 * i`.
    Built,
}

/// Start graphs `0..n` with `start`, `batch` of them before waiting for
/// them with `finish`; the wrapping sum of what `finish` returns.
fn in_batches<P>(
    n: u64,
    batch: u64,
    mut start: impl FnMut(u64) -> P,
    mut finish: impl FnMut(P) -> u64,
) -> u64 {
    let mut sum = 0u64;
    let mut pending = Vec::with_capacity(batch as usize);
    let mut i = 0;
    while i < n {
        let end = (i + batch).min(n);
        pending.extend((i..end).map(&mut start));
        for started in pending.drain(..) {
            sum = sum.wrapping_add(finish(started));
        }
        i = end;
    }
    sum
}

/// `n` graphs on Weir, `batch` materialized before waiting for them.
pub fn weir(n: u64, batch: u64, islands: usize, shape: Shape, mat: &Materializer) -> u64 {
    let prebuilt = weir_graph(1, islands);
    in_batches(
        n,
        batch,
        |i| match shape {
            Shape::Prebuilt => prebuilt.run(mat),
            Shape::Built => weir_graph(i, islands).run(mat),
        },
        |done| done.wait().expect("the stream completes"),
    )
}

/// The floor of a graph that runs on its own actor, as each Weir island
/// does: spawn an actor, tell it one message, it completes a promise with
/// `3` and stops itself; `batch` spawned before waiting for them. No
/// stream is involved: what materializing an island cannot go below while
/// an island is an actor.
pub fn actor_floor(n: u64, batch: u64, system: &weir_actor::ActorSystem) -> u64 {
    use std::sync::Arc;
    use weir_actor::{Actor, Context, Promise, Props};

    #[derive(Default)]
    struct Once;
    impl Actor for Once {
        type Msg = Arc<Promise<u64>>;
        fn receive(&mut self, ctx: &mut Context<Self>, done: Self::Msg) {
            let _ = done.complete(3);
            ctx.stop_self();
        }
    }

    let props = Props::new(Once::default);
    in_batches(
        n,
        batch,
        |_| {
            let done = Arc::new(Promise::new());
            let actor = system
                .spawn_anonymous(props.clone())
                .expect("the system runs");
            actor.tell(Arc::clone(&done));
            done
        },
        |done| done.wait_take(),
    )
}

/// The floor of a graph run as a pool task, as Weir runs a fused
/// source-to-sink graph: spawn a task that completes a promise with `3`;
/// `batch` spawned before waiting for them. No stream is involved.
pub fn task_floor(n: u64, batch: u64, system: &weir_actor::ActorSystem) -> u64 {
    use std::sync::Arc;
    use weir_actor::Promise;

    in_batches(
        n,
        batch,
        |_| {
            let done = Arc::new(Promise::new());
            let answer = Arc::clone(&done);
            system
                .spawn_task(async move {
                    let _ = answer.complete(3);
                })
                .expect("the system runs");
            done
        },
        |done| done.wait_take(),
    )
}

/// `n` graphs as tokio tasks, `batch` spawned before waiting for them.
#[cfg(feature = "peers")]
pub fn tokio_tasks(n: u64, batch: u64, shape: Shape, runtime: &tokio::runtime::Runtime) -> u64 {
    use futures_util::stream::{self, StreamExt};
    in_batches(
        n,
        batch,
        |i| {
            let i = if shape == Shape::Prebuilt { 1 } else { i };
            runtime.spawn(async move { stream::iter(std::iter::once(i)).map(step).next().await })
        },
        |task| {
            let head = runtime.block_on(task).expect("the task completes");
            head.expect("one element")
        },
    )
}

/// `weir-bench materialize [--graphs N] [--runs N] [--batch N] [--only TEXT]`;
/// `allocations` reads the bench's allocation counter.
pub fn run(args: &[String], allocations: &dyn Fn() -> u64) {
    let flag = |name: &str| {
        let i = args.iter().position(|a| a == name)?;
        args.get(i + 1).map(String::as_str)
    };
    let number = |name: &str, default: u64| {
        flag(name).map_or(default, |v| v.replace('_', "").parse().expect("a number"))
    };
    report(
        number("--graphs", 100_000),
        number("--runs", 5) as usize,
        number("--batch", 1_000).max(1),
        flag("--only").unwrap_or(""),
        allocations,
    );
}

/// Run the report: `graphs` graphs per run, median of `runs`, batches of
/// `batch`, only the variants whose name contains `only` (all when empty);
/// `allocations` reads the bench's allocation counter.
pub fn report(graphs: u64, runs: usize, batch: u64, only: &str, allocations: &dyn Fn() -> u64) {
    let runs = runs.max(1);
    let system = weir_actor::ActorSystem::new("bench-materialize").expect("valid name");
    let mat = Materializer::new(&system);
    #[cfg(feature = "peers")]
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(std::thread::available_parallelism().map_or(2, usize::from))
        .build()
        .expect("a runtime");
    type Variant<'a> = (String, bool, u64, Shape, Box<dyn Fn() -> u64 + 'a>);
    let mut variants: Vec<Variant<'_>> = Vec::new();
    for (label, b) in [("one at a time", 1), ("batches", batch)] {
        let label = if b == 1 {
            label.to_owned()
        } else {
            format!("{label} of {b}")
        };
        #[cfg(feature = "peers")]
        {
            let runtime = &runtime;
            variants.push((
                format!("tokio task per graph, {label}"),
                true,
                b,
                Shape::Prebuilt,
                Box::new(move || tokio_tasks(graphs, b, Shape::Prebuilt, runtime)),
            ));
        }
        {
            let system = &system;
            variants.push((
                format!("pool task + promise, {label}"),
                false,
                b,
                Shape::Prebuilt,
                Box::new(move || task_floor(graphs, b, system)),
            ));
            variants.push((
                format!("actor spawn + tell + stop, {label}"),
                false,
                b,
                Shape::Prebuilt,
                Box::new(move || actor_floor(graphs, b, system)),
            ));
        }
        for (islands, shape) in [
            (1, Shape::Prebuilt),
            (2, Shape::Prebuilt),
            (1, Shape::Built),
        ] {
            let mat = &mat;
            let built = if shape == Shape::Built {
                ", built each"
            } else {
                ""
            };
            variants.push((
                format!(
                    "weir {islands} island{}{built}, {label}",
                    if islands > 1 { "s" } else { " (task)" }
                ),
                false,
                b,
                shape,
                Box::new(move || weir(graphs, b, islands, shape, mat)),
            ));
        }
    }
    println!(
        "{graphs} graphs `single -> map -> head`, median of {runs} runs, {} threads",
        std::thread::available_parallelism().map_or(1, usize::from)
    );
    println!(
        "{:<52} {:>12} {:>12} {:>14}",
        "variant", "graphs/s", "vs tokio", "allocs/graph"
    );
    let chosen: Vec<_> = variants.iter().filter(|v| v.0.contains(only)).collect();
    let want = |shape: Shape| match shape {
        Shape::Prebuilt => 3u64.wrapping_mul(graphs),
        Shape::Built => expected(graphs),
    };
    for (name, _, _, shape, run) in &chosen {
        assert_eq!(run(), want(*shape), "{name}: warm-up checksum");
    }
    // Rounds, each timing every variant in turn: a load change on the box
    // hits a round's rows alike, and each ratio is taken within a round
    // (the median of the rounds' ratios), not across them.
    let mut rates = vec![Vec::with_capacity(runs); chosen.len()];
    let mut allocs = vec![0.0; chosen.len()];
    for _ in 0..runs {
        for (i, (name, _, _, shape, run)) in chosen.iter().enumerate() {
            let before = allocations();
            let start = Instant::now();
            let sum = run();
            let elapsed = start.elapsed();
            allocs[i] = (allocations() - before) as f64 / graphs as f64;
            assert_eq!(sum, want(*shape), "{name}: checksum");
            rates[i].push(graphs as f64 / elapsed.as_secs_f64());
        }
    }
    let median = |mut values: Vec<f64>| {
        values.sort_by(f64::total_cmp);
        values[values.len() / 2]
    };
    for (i, (name, is_peer, b, _, _)) in chosen.iter().enumerate() {
        let peer = chosen
            .iter()
            .position(|(_, peer, pb, _, _)| *peer && pb == b)
            .filter(|_| !is_peer);
        let ratio = peer.map_or(String::new(), |p| {
            let ratios = rates[i].iter().zip(&rates[p]).map(|(r, p)| r / p).collect();
            format!("{:.2}x", median(ratios))
        });
        println!(
            "{name:<52} {:>10.0} K {ratio:>12} {:>14.1}",
            median(rates[i].clone()) / 1e3,
            allocs[i]
        );
    }
    #[cfg(not(feature = "peers"))]
    println!("(the tokio rows need --features peers)");
    system
        .terminate()
        .wait()
        .expect("called from outside the system");
}
