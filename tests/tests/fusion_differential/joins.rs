//! The junctions of the differential test: a chain joined with more
//! random chains (or split and joined again), their model on vectors and
//! their blueprints.

use proptest::prelude::*;
use weir_streams::graph::{
    Balance, Broadcast, GraphBuilder, Merge, Partition, Unzip, ZipWith, ZipWith3,
};
use weir_streams::prelude::*;

use crate::chain::{Op, blueprint, branch, model, one_to_one, op, stateless, then};

/// A junction joining the chain with a second random chain; the
/// deterministic ones are followed by more random operators.
#[derive(Debug, Clone)]
pub(crate) enum Join {
    Alone,
    Merge(Vec<u64>, Vec<Op>),
    Zip(Vec<u64>, Vec<Op>, Vec<Op>),
    Concat(Vec<u64>, Vec<Op>, Vec<Op>),
    Interleave(Vec<u64>, Vec<Op>, usize, Vec<Op>),
    OrElse(Vec<u64>, Vec<Op>, Vec<Op>),
    MergeSorted(Vec<u64>, Vec<Op>, Vec<Op>),
    /// Merged with another chain by priorities (order up to timing).
    MergePrioritized(Vec<u64>, Vec<Op>, u32, u32),
    /// Zipped with two more chains by `Source::zip_with_n`.
    ZipN(Vec<u64>, Vec<Op>, Vec<u64>, Vec<Op>, Vec<Op>),
    /// Zipped with two more chains, as `u32`s and `bool`s, by a
    /// `ZipWith3` in a builder.
    ZipWith3(Vec<u64>, Vec<Op>, Vec<u64>, Vec<Op>, Vec<Op>),
    /// The chain's operators as a flow zipped with two more chains by
    /// `Flow::zip_with_n`.
    FlowZipN(Vec<u64>, Vec<Op>, Vec<u64>, Vec<Op>, Vec<Op>),
    /// The chain broadcast to two branches whose outputs merge again.
    BroadcastMerge(Vec<Op>, Vec<Op>),
    /// The chain broadcast to two one-to-one branches zipped together
    /// (a branch that drops elements would deadlock the zip, as in Akka).
    BroadcastZip(Vec<Op>, Vec<Op>, Vec<Op>),
    /// The chain partitioned by divisibility into two branches that merge.
    Partition(u64, Vec<Op>, Vec<Op>),
    /// The chain balanced over two branches with the same stateless
    /// operators, merged (which branch takes an element is up to timing).
    Balance(Vec<Op>),
    /// Each element `x` as `(x, x * 3 % 1000)`, unzipped into two
    /// one-to-one branches and zipped again.
    UnzipZip(Vec<Op>, Vec<Op>, Vec<Op>),
}

pub(crate) fn join() -> impl Strategy<Value = Join> {
    let input = || prop::collection::vec(0u64..1000, 0..20);
    let ops = || prop::collection::vec(op(), 0..4);
    prop_oneof![
        3 => Just(Join::Alone),
        1 => (input(), ops()).prop_map(|(i, o)| Join::Merge(i, o)),
        1 => (input(), ops(), ops()).prop_map(|(i, o, a)| Join::Zip(i, o, a)),
        1 => (input(), ops(), ops()).prop_map(|(i, o, a)| Join::Concat(i, o, a)),
        1 => (input(), ops(), 1usize..4, ops()).prop_map(|(i, o, n, a)| Join::Interleave(i, o, n, a)),
        1 => (input(), ops(), ops()).prop_map(|(i, o, a)| Join::OrElse(i, o, a)),
        1 => (input(), ops(), ops()).prop_map(|(i, o, a)| Join::MergeSorted(i, o, a)),
        1 => (input(), ops(), 1u32..5, 1u32..5).prop_map(|(i, o, p, q)| Join::MergePrioritized(i, o, p, q)),
        1 => (input(), ops(), input(), ops(), ops()).prop_map(|(i, o, j, p, a)| Join::ZipN(i, o, j, p, a)),
        1 => (input(), ops(), input(), ops(), ops()).prop_map(|(i, o, j, p, a)| Join::ZipWith3(i, o, j, p, a)),
        1 => (input(), ops(), input(), ops(), ops()).prop_map(|(i, o, j, p, a)| Join::FlowZipN(i, o, j, p, a)),
        1 => (ops(), ops()).prop_map(|(a, b)| Join::BroadcastMerge(a, b)),
        1 => (prop::collection::vec(one_to_one(), 0..4), prop::collection::vec(one_to_one(), 0..4), ops())
            .prop_map(|(a, b, after)| Join::BroadcastZip(a, b, after)),
        1 => (2u64..5, ops(), ops()).prop_map(|(m, a, b)| Join::Partition(m, a, b)),
        1 => prop::collection::vec(stateless(), 0..4).prop_map(Join::Balance),
        1 => (prop::collection::vec(one_to_one(), 0..4), prop::collection::vec(one_to_one(), 0..4), ops())
            .prop_map(|(a, b, after)| Join::UnzipZip(a, b, after)),
    ]
}

/// Zip's combining function, in the model and the blueprint.
fn zip_combine(a: u64, b: u64) -> u64 {
    (a * 7 + b) % 1000
}

/// The three-way zip's combining function.
fn zip3_combine([a, b, c]: [u64; 3]) -> u64 {
    (a * 7 + b * 3 + c) % 1000
}

/// The typed three-way zip's combining function.
fn zip3_typed(a: u64, b: u32, c: bool) -> u64 {
    (a * 7 + u64::from(b) * 3 + u64::from(c)) % 1000
}

/// The second input of the typed three-way zip (elements are below 1000).
fn as_u32(x: u64) -> u32 {
    u32::try_from(x).expect("below 1000")
}

/// The third input of the typed three-way zip.
fn is_even(x: u64) -> bool {
    x.is_multiple_of(2)
}

/// Interleave on vectors: `n` of each in turn, then the rest of the longer.
fn interleave_model(a: Vec<u64>, b: Vec<u64>, n: usize) -> Vec<u64> {
    let (mut a, mut b) = (a.into_iter().peekable(), b.into_iter().peekable());
    let mut out = Vec::new();
    while a.peek().is_some() || b.peek().is_some() {
        out.extend(a.by_ref().take(n));
        out.extend(b.by_ref().take(n));
    }
    out
}

/// The sorted-merge step on vectors: the smaller head first, ties to `a`.
fn merge_sorted_model(a: Vec<u64>, b: Vec<u64>) -> Vec<u64> {
    let (mut a, mut b) = (a.into_iter().peekable(), b.into_iter().peekable());
    let mut out = Vec::new();
    loop {
        let next = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) if y < x => b.next(),
            (Some(_), _) => a.next(),
            (None, Some(_)) => b.next(),
            (None, None) => return out,
        };
        out.extend(next);
    }
}

pub(crate) fn joined_model(input: &[u64], ops: &[Op], join: &Join) -> Vec<u64> {
    let mine = model(input, ops);
    match join {
        Join::Alone => mine,
        Join::Merge(i, o) => mine.into_iter().chain(model(i, o)).collect(),
        Join::Zip(i, o, after) => {
            let zipped: Vec<u64> = mine
                .into_iter()
                .zip(model(i, o))
                .map(|(a, b)| zip_combine(a, b))
                .collect();
            model(&zipped, after)
        }
        Join::MergePrioritized(i, o, ..) => mine.into_iter().chain(model(i, o)).collect(),
        Join::ZipWith3(i, o, j, p, after) => {
            let zipped: Vec<u64> = mine
                .into_iter()
                .zip(model(i, o))
                .zip(model(j, p))
                .map(|((x, y), z)| zip3_typed(x, as_u32(y), is_even(z)))
                .collect();
            model(&zipped, after)
        }
        Join::ZipN(i, o, j, p, after) | Join::FlowZipN(i, o, j, p, after) => {
            let zipped: Vec<u64> = mine
                .into_iter()
                .zip(model(i, o))
                .zip(model(j, p))
                .map(|((x, y), z)| zip3_combine([x, y, z]))
                .collect();
            model(&zipped, after)
        }
        Join::BroadcastMerge(a, b) => [model(&mine, a), model(&mine, b)].concat(),
        Join::BroadcastZip(a, b, after) => {
            let zipped: Vec<u64> = model(&mine, a)
                .into_iter()
                .zip(model(&mine, b))
                .map(|(x, y)| zip_combine(x, y))
                .collect();
            model(&zipped, after)
        }
        Join::Partition(m, a, b) => {
            let (on_b, on_a): (Vec<u64>, Vec<u64>) =
                mine.iter().partition(|x| x.is_multiple_of(*m));
            [model(&on_a, a), model(&on_b, b)].concat()
        }
        Join::Balance(ops) => model(&mine, ops),
        Join::UnzipZip(a, b, after) => {
            let tripled: Vec<u64> = mine.iter().map(|x| x * 3 % 1000).collect();
            let zipped: Vec<u64> = model(&mine, a)
                .into_iter()
                .zip(model(&tripled, b))
                .map(|(x, y)| zip_combine(x, y))
                .collect();
            model(&zipped, after)
        }
        Join::Concat(i, o, after) => model(&[mine, model(i, o)].concat(), after),
        Join::Interleave(i, o, n, after) => model(&interleave_model(mine, model(i, o), *n), after),
        Join::OrElse(i, o, after) => {
            let chosen = if mine.is_empty() { model(i, o) } else { mine };
            model(&chosen, after)
        }
        Join::MergeSorted(i, o, after) => model(&merge_sorted_model(mine, model(i, o)), after),
    }
}

pub(crate) fn joined_blueprint(
    input: &[u64],
    ops: &[Op],
    join: &Join,
    boundaries: bool,
) -> Source<u64> {
    let mine = blueprint(input, ops, boundaries);
    match join {
        Join::Alone => mine,
        Join::Merge(i, o) => mine.merge(blueprint(i, o, boundaries)),
        Join::Zip(i, o, after) => {
            let zipped = mine
                .zip(blueprint(i, o, boundaries))
                .map(|(a, b)| zip_combine(a, b));
            then(zipped, after, boundaries)
        }
        Join::Concat(i, o, after) => {
            then(mine.concat(blueprint(i, o, boundaries)), after, boundaries)
        }
        Join::Interleave(i, o, n, after) => {
            let mixed = mine
                .interleave(blueprint(i, o, boundaries), *n)
                .expect("n is at least 1");
            then(mixed, after, boundaries)
        }
        Join::OrElse(i, o, after) => {
            then(mine.or_else(blueprint(i, o, boundaries)), after, boundaries)
        }
        Join::MergeSorted(i, o, after) => then(
            mine.merge_sorted(blueprint(i, o, boundaries)),
            after,
            boundaries,
        ),
        Join::MergePrioritized(i, o, p, q) => mine
            .merge_prioritized(blueprint(i, o, boundaries), *p, *q)
            .expect("priorities are at least 1"),
        Join::ZipN(i, o, j, p, after) => {
            let sources = [
                mine,
                blueprint(i, o, boundaries),
                blueprint(j, p, boundaries),
            ];
            then(Source::zip_with_n(sources, zip3_combine), after, boundaries)
        }
        Join::ZipWith3(i, o, j, p, after) => {
            let zipped = typed_zip3(
                mine,
                blueprint(i, o, boundaries),
                blueprint(j, p, boundaries),
            );
            then(zipped, after, boundaries)
        }
        Join::FlowZipN(i, o, j, p, after) => {
            let others = [blueprint(i, o, boundaries), blueprint(j, p, boundaries)];
            let zipped = Source::from_iter(input.to_vec())
                .via(branch(ops, boundaries).zip_with_n(others, zip3_combine));
            then(zipped, after, boundaries)
        }
        Join::BroadcastMerge(a, b) => fanned(mine, None, a, b, false, boundaries),
        Join::BroadcastZip(a, b, after) => then(
            fanned(mine, None, a, b, true, boundaries),
            after,
            boundaries,
        ),
        Join::Partition(m, a, b) => fanned(mine, Some(*m), a, b, false, boundaries),
        Join::Balance(ops) => balanced(mine, ops, boundaries),
        Join::UnzipZip(a, b, after) => then(unzipped(mine, a, b, boundaries), after, boundaries),
    }
}

/// `mine`, `b` as `u32`s and `c` as `bool`s zipped by a `ZipWith3`.
fn typed_zip3(mine: Source<u64>, b: Source<u64>, c: Source<u64>) -> Source<u64> {
    let mut g = GraphBuilder::new();
    let zip = g.add(ZipWith3::new(zip3_typed));
    let a = g.source(mine);
    let b = g.source(b.map(as_u32));
    let c = g.source(c.map(is_even));
    g.connect(a, zip.in0()).unwrap();
    g.connect(b, zip.in1()).unwrap();
    g.connect(c, zip.in2()).unwrap();
    g.build_source(zip.out(), |_| ()).unwrap()
}

/// `mine` balanced over two copies of `ops`, merged.
fn balanced(mine: Source<u64>, ops: &[Op], boundaries: bool) -> Source<u64> {
    let mut g = GraphBuilder::new();
    let input = g.source(mine);
    let split = g.add(Balance::<u64, 2>::new());
    let join = g.add(Merge::<u64, 2>::new());
    g.connect(input, split.inlet()).unwrap();
    for (to, from) in split.outs().into_iter().zip(join.ins()) {
        let (b_in, b_out) = g.flow(branch(ops, boundaries));
        g.connect(to, b_in).unwrap();
        g.connect(b_out, from).unwrap();
    }
    g.build_source(join.out(), |_| ()).unwrap()
}

/// `mine` as pairs `(x, x * 3 % 1000)`, unzipped into `a` and `b`, zipped.
fn unzipped(mine: Source<u64>, a: &[Op], b: &[Op], boundaries: bool) -> Source<u64> {
    let mut g = GraphBuilder::new();
    let input = g.source(mine.map(|x| (x, x * 3 % 1000)));
    let split = g.add(Unzip::<u64, u64>::new());
    let join = g.add(ZipWith::new(zip_combine));
    let (a_in, a_out) = g.flow(branch(a, boundaries));
    let (b_in, b_out) = g.flow(branch(b, boundaries));
    g.connect(input, split.inlet()).unwrap();
    g.connect(split.out0(), a_in).unwrap();
    g.connect(split.out1(), b_in).unwrap();
    g.connect(a_out, join.in0()).unwrap();
    g.connect(b_out, join.in1()).unwrap();
    g.build_source(join.out(), |_| ()).unwrap()
}

/// `mine` split into branches `a` and `b` (by a broadcast, or by a
/// partition sending multiples of `partition` to `b`), joined again by a
/// merge or a zip.
fn fanned(
    mine: Source<u64>,
    partition: Option<u64>,
    a: &[Op],
    b: &[Op],
    zip: bool,
    boundaries: bool,
) -> Source<u64> {
    let mut g = GraphBuilder::new();
    let input = g.source(mine);
    let (a_in, a_out) = g.flow(branch(a, boundaries));
    let (b_in, b_out) = g.flow(branch(b, boundaries));
    let [to_a, to_b] = match partition {
        None => {
            let split = g.add(Broadcast::<u64, 2>::new());
            g.connect(input, split.inlet()).unwrap();
            split.outs()
        }
        Some(m) => {
            let split = g.add(Partition::<u64, 2, _>::new(move |x: &u64| {
                usize::from(x.is_multiple_of(m))
            }));
            g.connect(input, split.inlet()).unwrap();
            split.outs()
        }
    };
    g.connect(to_a, a_in).unwrap();
    g.connect(to_b, b_in).unwrap();
    let out = if zip {
        let join = g.add(ZipWith::new(zip_combine));
        g.connect(a_out, join.in0()).unwrap();
        g.connect(b_out, join.in1()).unwrap();
        join.out()
    } else {
        let join = g.add(Merge::<u64, 2>::new());
        let [from_a, from_b] = join.ins();
        g.connect(a_out, from_a).unwrap();
        g.connect(b_out, from_b).unwrap();
        join.out()
    };
    g.build_source(out, |_| ()).unwrap()
}
