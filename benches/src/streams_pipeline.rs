//! The streams pipeline benchmark: `range -> map -> filter -> fold` over
//! N elements, the same work done by Weir (fused, across one async
//! boundary, as a 10-map chain, and as 10 unfused custom stages), by a
//! plain iterator, by `futures::stream` under `block_on`, and (feature
//! `peers`) by datum-core.
//!
//! Every variant returns the same checksum, so none can skip the work.

use std::hint::black_box;

use weir_streams::prelude::*;
use weir_streams::stage::{
    FlowShape, GraphStage, GraphStageLogic, InPort, MatContext, OutPort, StageContext, StageResult,
};

#[inline]
fn step(x: u64) -> u64 {
    black_box(x).wrapping_mul(3)
}

#[inline]
fn keep(x: &u64) -> bool {
    x.is_multiple_of(2)
}

/// The expected checksum for `n` elements.
pub fn expected(n: u64) -> u64 {
    (0..n)
        .map(|x| x.wrapping_mul(3))
        .filter(|x| x % 2 == 0)
        .fold(0u64, u64::wrapping_add)
}

/// The chain as a plain iterator (the ceiling).
pub fn iterator(n: u64) -> u64 {
    (0..n).map(step).filter(keep).fold(0u64, u64::wrapping_add)
}

/// The chain as `futures::stream` combinators under `block_on`.
pub fn futures_stream(n: u64) -> u64 {
    use futures_util::future::ready;
    use futures_util::stream::{self, StreamExt};
    futures_executor::block_on(
        stream::iter(0..n)
            .map(step)
            .filter(|x| ready(keep(x)))
            .fold(0u64, |a, x| ready(a.wrapping_add(x))),
    )
}

/// The chain on Weir, one island (fused before interpretation).
pub fn weir_fused(n: u64, mat: &Materializer) -> u64 {
    Source::range(0..n)
        .map(step)
        .filter(keep)
        .run_with(Sink::fold(0u64, u64::wrapping_add), mat)
        .wait()
        .expect("the stream completes")
}

/// The chain on Weir with one async boundary before the fold.
pub fn weir_async_boundary(n: u64, mat: &Materializer) -> u64 {
    Source::range(0..n)
        .map(step)
        .filter(keep)
        .async_boundary()
        .run_with(Sink::fold(0u64, u64::wrapping_add), mat)
        .wait()
        .expect("the stream completes")
}

/// As [`weir_async_boundary`], with an input buffer of `buffer` after the boundary.
pub fn weir_async_boundary_buffer(n: u64, buffer: usize, mat: &Materializer) -> u64 {
    Source::range(0..n)
        .map(step)
        .filter(keep)
        .async_boundary()
        .run_with(
            Sink::fold(0u64, u64::wrapping_add).with_attributes(
                weir_streams::Attributes::new()
                    .with_input_buffer(buffer)
                    .expect("a buffer of at least 1"),
            ),
            mat,
        )
        .wait()
        .expect("the stream completes")
}

/// Ten maps then the fold (the maps fuse into the source).
pub fn weir_ten_maps(n: u64, mat: &Materializer) -> u64 {
    let mut source = Source::range(0..n).map(step);
    for _ in 0..9 {
        source = source.map(|x: u64| x ^ 1);
    }
    source
        .filter(keep)
        .run_with(Sink::fold(0u64, u64::wrapping_add), mat)
        .wait()
        .expect("the stream completes")
}

/// The same ten maps as an iterator, to compare `weir_ten_maps` with.
pub fn iterator_ten_maps(n: u64) -> u64 {
    let mut it: Box<dyn Iterator<Item = u64>> = Box::new((0..n).map(step));
    for _ in 0..9 {
        it = Box::new(it.map(|x| x ^ 1));
    }
    it.filter(keep).fold(0u64, u64::wrapping_add)
}

/// Ten custom identity stages between map and filter, which the
/// interpreter runs as ten stages (no fusion): the cost of a port hop.
pub fn weir_ten_unfused_stages(n: u64, mat: &Materializer) -> u64 {
    let mut source = Source::range(0..n).map(step);
    for _ in 0..10 {
        source = source.via(Flow::from_graph(Identity));
    }
    source
        .filter(keep)
        .run_with(Sink::fold(0u64, u64::wrapping_add), mat)
        .wait()
        .expect("the stream completes")
}

struct Identity;
struct IdentityLogic(FlowShape<u64, u64>);

impl GraphStage for Identity {
    type Shape = FlowShape<u64, u64>;
    type Mat = ();
    fn name(&self) -> &'static str {
        "identity"
    }
    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        (Box::new(IdentityLogic(FlowShape::new())), ())
    }
}

impl GraphStageLogic for IdentityLogic {
    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let x = ctx.grab(self.0.inlet)?;
        ctx.push(self.0.out, x)
    }
    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.pull(self.0.inlet)
    }
}

/// The chain on datum-core 0.11 (a Rust port of Akka Streams on ractor).
#[cfg(feature = "peers")]
pub fn datum(n: u64) -> u64 {
    use datum::prelude::*;
    (0..n)
        .into_source()
        .map(step)
        .filter(keep)
        .run_fold(0u64, u64::wrapping_add)
        .expect("datum materializes")
        .wait()
        .expect("datum completes")
}

/// Ten `scan`s on datum-core 0.11 between map and filter. datum-core runs
/// a linear `Flow` chain as nested boxed iterators (its `scan` is a
/// `Flow::from_transform` over `Box<dyn Iterator>`), so this measures a
/// boxed iterator's `next` per stage, not an interpreter hop: its peer is
/// [`weir_ten_scans`], and the interpreter's peer is
/// [`datum_ten_interpreted`]. (Each `scan` emits its seed first, so the
/// checksum differs from the plain chain's.)
#[cfg(feature = "peers")]
pub fn datum_ten_scans(n: u64) -> u64 {
    use datum::prelude::*;
    let mut source = (0..n).into_source().map(step);
    for _ in 0..10 {
        source = source.scan(0u64, |_, x| x);
    }
    source
        .filter(keep)
        .run_fold(0u64, u64::wrapping_add)
        .expect("datum materializes")
        .wait()
        .expect("datum completes")
}

/// Ten of datum-core 0.11's `Identity` graph stages between map and filter,
/// run by its graph executor on the calling thread with `fusion` (
/// `Fusion::ErasedOnly`: its interpreter, a port hop per stage, the peer
/// of [`weir_ten_unfused_stages`]; `Fusion::Auto`: it may run the chain as
/// one typed loop). The filter runs inside the fold, as the executor takes
/// an input iterator and a fold rather than a source and a sink.
#[cfg(feature = "peers")]
pub fn datum_ten_interpreted(n: u64, fusion: datum::Fusion) -> u64 {
    use datum::{Attributes, FusedExecutionConfig, GraphDsl, GraphFlowShape, Identity};
    let chain = GraphDsl::try_create(|b| {
        let first = b.add(Identity::<u64>::new());
        let (inlet, mut outlet) = (first.inlet(), first.outlet());
        for _ in 1..10 {
            let next = b.add(Identity::<u64>::new());
            b.connect(outlet, next.inlet())?;
            outlet = next.outlet();
        }
        Ok(GraphFlowShape::new(inlet, outlet))
    })
    .expect("datum builds the chain")
    .add_attributes(Attributes::fusion(fusion));
    let config = FusedExecutionConfig {
        event_limit: usize::MAX,
    };
    chain
        .run_fold_with_input_report(
            (0..n).map(step),
            0u64,
            |acc, x| if keep(&x) { acc.wrapping_add(x) } else { acc },
            config,
        )
        .expect("datum completes")
        .result
}

/// Ten `scan`s between map and filter, the peer of
/// `datum_ten_scans` (feature `peers`). (Each emits its seed, 0, first: the checksum is
/// the plain chain's.)
pub fn weir_ten_scans(n: u64, mat: &Materializer) -> u64 {
    let mut source = Source::range(0..n).map(step);
    for _ in 0..10 {
        source = source.scan(0u64, |_, x| x);
    }
    source
        .filter(keep)
        .run_with(Sink::fold(0u64, u64::wrapping_add), mat)
        .wait()
        .expect("the stream completes")
}

/// `map` then a broadcast to two branches merged again, then the fold:
/// four connections between junctions the interpreter runs as stages
/// (source -> broadcast, two broadcast -> merge, merge -> fold), and
/// every element reaches the fold twice.
pub fn weir_broadcast_merge(n: u64, mat: &Materializer) -> u64 {
    use weir_streams::graph::{Broadcast, GraphBuilder, Merge};
    let mut b = GraphBuilder::new();
    let source = b.source(Source::range(0..n).map(step));
    let split = b.add(Broadcast::<u64, 2>::new());
    let join = b.add(Merge::<u64, 2>::new());
    let (sum, sum_key) = b.sink_mat(Sink::fold(0u64, u64::wrapping_add));
    let [left, right] = split.outs();
    let [to_left, to_right] = join.ins();
    b.connect(source, split.inlet()).expect("fresh ports");
    b.connect(left, to_left).expect("fresh ports");
    b.connect(right, to_right).expect("fresh ports");
    b.connect(join.out(), sum).expect("fresh ports");
    let graph = b
        .build(move |m| m.take(&sum_key))
        .expect("every port connected");
    graph.run(mat).wait().expect("the stream completes")
}

/// [`weir_broadcast_merge`] as an iterator: each element twice.
pub fn iterator_broadcast_merge(n: u64) -> u64 {
    (0..n)
        .map(step)
        .flat_map(|x| [x, x])
        .fold(0u64, u64::wrapping_add)
}
