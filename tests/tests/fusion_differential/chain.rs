//! The random operator chains of the differential test: the operators,
//! their model on vectors and their blueprints.

use proptest::prelude::*;
use weir_streams::prelude::*;

/// One operator of a random chain (elements are `u64` below 1000).
#[derive(Debug, Clone)]
pub(crate) enum Op {
    Map(u64),
    Filter(u64),
    Take(u64),
    Skip(u64),
    TakeWhile(u64),
    SkipWhile(u64),
    Scan,
    Grouped(usize),
    MapConcat(usize),
    /// `flat_map_concat` into `r` copies; `true`: the inner source has a
    /// stage the planner does not fuse (it runs as a sub-island).
    FlatMapConcat(usize, bool),
    Boundary,
}

pub(crate) fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (1u64..7).prop_map(Op::Map),
        2 => (2u64..5).prop_map(Op::Filter),
        1 => (0u64..30).prop_map(Op::Take),
        1 => (0u64..10).prop_map(Op::Skip),
        1 => (100u64..1000).prop_map(Op::TakeWhile),
        1 => (0u64..500).prop_map(Op::SkipWhile),
        1 => Just(Op::Scan),
        1 => (1usize..4).prop_map(Op::Grouped),
        1 => (0usize..3).prop_map(Op::MapConcat),
        1 => (0usize..3, any::<bool>()).prop_map(|(r, staged)| Op::FlatMapConcat(r, staged)),
        1 => Just(Op::Boundary),
    ]
}

/// Operators whose output for an element does not depend on the others.
pub(crate) fn stateless() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (1u64..7).prop_map(Op::Map),
        2 => (2u64..5).prop_map(Op::Filter),
        1 => (0usize..3).prop_map(Op::MapConcat),
        1 => Just(Op::Boundary),
    ]
}

/// Operators that keep one element out per element in, up to an end.
pub(crate) fn one_to_one() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (1u64..7).prop_map(Op::Map),
        1 => (0u64..30).prop_map(Op::Take),
        1 => Just(Op::Boundary),
    ]
}

pub(crate) fn map(k: u64) -> impl Fn(u64) -> u64 + Clone {
    move |x| (x * k + 1) % 1000
}

/// The chain on plain vectors.
pub(crate) fn model(input: &[u64], ops: &[Op]) -> Vec<u64> {
    let mut xs = input.to_vec();
    for op in ops {
        xs = match *op {
            Op::Map(k) => xs.into_iter().map(map(k)).collect(),
            Op::Filter(m) => xs.into_iter().filter(|x| x % m != 0).collect(),
            Op::Take(n) => xs.into_iter().take(n as usize).collect(),
            Op::Skip(n) => xs.into_iter().skip(n as usize).collect(),
            Op::TakeWhile(t) => xs.into_iter().take_while(|x| *x < t).collect(),
            Op::SkipWhile(t) => xs.into_iter().skip_while(|x| *x < t).collect(),
            Op::Scan => std::iter::once(0)
                .chain(xs.into_iter().scan(0, |a, x| {
                    *a = (*a + x) % 1000;
                    Some(*a)
                }))
                .collect(),
            Op::Grouped(n) => xs.chunks(n).map(|c| c.iter().sum::<u64>() % 1000).collect(),
            Op::MapConcat(r) | Op::FlatMapConcat(r, _) => xs
                .into_iter()
                .flat_map(|x| std::iter::repeat_n(x, r))
                .collect(),
            Op::Boundary => xs,
        };
    }
    xs
}

/// `$op` appended to `$chain` (a source or a flow).
macro_rules! apply_op {
    ($chain:expr, $op:expr) => {
        match *$op {
            Op::Map(k) => $chain.map(map(k)),
            Op::Filter(m) => $chain.filter(move |x| x % m != 0),
            Op::Take(n) => $chain.take(n),
            Op::Skip(n) => $chain.skip(n),
            Op::TakeWhile(t) => $chain.take_while(move |x| *x < t),
            Op::SkipWhile(t) => $chain.skip_while(move |x| *x < t),
            Op::Scan => $chain.scan(0u64, |a, x| (a + x) % 1000),
            Op::Grouped(n) => $chain
                .grouped(n)
                .expect("n is at least 1")
                .map(|c: Vec<u64>| c.iter().sum::<u64>() % 1000),
            Op::MapConcat(r) => $chain.map_concat(move |x| std::iter::repeat_n(x, r)),
            Op::FlatMapConcat(r, false) => {
                $chain.flat_map_concat(move |x| Source::from_iter(std::iter::repeat_n(x, r)))
            }
            Op::FlatMapConcat(r, true) => $chain.flat_map_concat(move |x| {
                Source::from_iter(std::iter::repeat_n(x, r))
                    .buffer(2, weir_streams::OverflowStrategy::Backpressure)
                    .expect("2 is at least 1")
            }),
            Op::Boundary => $chain.async_boundary(),
        }
    };
}

/// `op` appended to `source`.
pub(crate) fn apply(source: Source<u64>, op: &Op) -> Source<u64> {
    apply_op!(source, op)
}

/// `op` appended to `flow`.
pub(crate) fn apply_flow(flow: Flow<u64>, op: &Op) -> Flow<u64> {
    apply_op!(flow, op)
}

/// The chain as a blueprint; `boundaries` adds one after every operator.
pub(crate) fn blueprint(input: &[u64], ops: &[Op], boundaries: bool) -> Source<u64> {
    then(Source::from_iter(input.to_vec()), ops, boundaries)
}

/// `ops` appended to `source`.
pub(crate) fn then(source: Source<u64>, ops: &[Op], boundaries: bool) -> Source<u64> {
    ops.iter().fold(source, |source, op| {
        let source = apply(source, op);
        if boundaries {
            source.async_boundary()
        } else {
            source
        }
    })
}

/// `ops` as a flow; `boundaries` adds one after every operator.
pub(crate) fn branch(ops: &[Op], boundaries: bool) -> Flow<u64> {
    ops.iter().fold(Flow::new(), |flow, op| {
        let flow = apply_flow(flow, op);
        if boundaries {
            flow.async_boundary()
        } else {
            flow
        }
    })
}
