//! The planner's fan-in and flatten rules: junctions whose inputs are all
//! fused iterator chains, and `flat_map_concat` into a folding sink, run
//! fused, unfused and with async boundaries in the inputs (which keep the
//! rules from applying), each checked against a plain-Rust model. The
//! random chains here use only operators that fuse, so the fused runs
//! really take the fused paths (`streams_fusion_differential.rs` mixes in
//! operators that do not).

use std::time::Duration;

use proptest::prelude::*;
use weir_streams::graph::{Concat, GraphBuilder, Interleave, Merge, MergePreferred};
use weir_streams::prelude::*;
use weir_streams::testkit::TestSink;
use weir_streams::{DelayOverflowStrategy, OverflowStrategy};
use weir_tests::{shutdown, stream_system};

/// An operator that fuses into an iterator source.
#[derive(Debug, Clone)]
enum Op {
    Map(u64),
    Filter(u64),
    Take(u64),
    Skip(u64),
    TakeWhile(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (1u64..7).prop_map(Op::Map),
        2 => (2u64..5).prop_map(Op::Filter),
        1 => (0u64..30).prop_map(Op::Take),
        1 => (0u64..10).prop_map(Op::Skip),
        1 => (100u64..1000).prop_map(Op::TakeWhile),
    ]
}

/// One input of a junction: elements, operators, and whether an async
/// boundary follows its source.
#[derive(Debug, Clone)]
struct Input(Vec<u64>, Vec<Op>);

fn input() -> impl Strategy<Value = Input> {
    (
        prop::collection::vec(0u64..1000, 0..300),
        prop::collection::vec(op(), 0..3),
    )
        .prop_map(|(xs, ops)| Input(xs, ops))
}

/// The shapes under test.
#[derive(Debug, Clone)]
enum Shape {
    Merge(Vec<Input>),
    MergePreferred(Input, Input),
    Zip(Input, Input),
    Concat(Vec<Input>),
    Interleave(Input, Input, usize),
    /// A merge of a zip and a concat (the rule applied to fused junctions).
    Nested(Input, Input, Input, Input),
    /// `flat_map_concat` of each element into `r` copies; the inner source
    /// is fused (0), staged (1), timed (2) or behind a boundary (3).
    FlatMap(Input, usize, u8),
}

fn shape() -> impl Strategy<Value = Shape> {
    let inputs = || prop::collection::vec(input(), 1..4);
    prop_oneof![
        2 => inputs().prop_map(Shape::Merge),
        1 => (input(), input()).prop_map(|(a, b)| Shape::MergePreferred(a, b)),
        2 => (input(), input()).prop_map(|(a, b)| Shape::Zip(a, b)),
        1 => inputs().prop_map(Shape::Concat),
        1 => (input(), input(), 1usize..5).prop_map(|(a, b, n)| Shape::Interleave(a, b, n)),
        1 => (input(), input(), input(), input()).prop_map(|(a, b, c, d)| Shape::Nested(a, b, c, d)),
        2 => (input(), 0usize..4, 0u8..4).prop_map(|(a, r, k)| Shape::FlatMap(a, r, k)),
    ]
}

fn map(k: u64) -> impl Fn(u64) -> u64 + Clone {
    move |x| (x * k + 1) % 1000
}

fn combine(a: u64, b: u64) -> u64 {
    (a * 7 + b) % 1000
}

fn model(Input(xs, ops): &Input) -> Vec<u64> {
    let mut xs = xs.clone();
    for op in ops {
        xs = match *op {
            Op::Map(k) => xs.into_iter().map(map(k)).collect(),
            Op::Filter(m) => xs.into_iter().filter(|x| x % m != 0).collect(),
            Op::Take(n) => xs.into_iter().take(n as usize).collect(),
            Op::Skip(n) => xs.into_iter().skip(n as usize).collect(),
            Op::TakeWhile(t) => xs.into_iter().take_while(|x| *x < t).collect(),
        };
    }
    xs
}

fn interleave_model(a: Vec<u64>, b: Vec<u64>, n: usize) -> Vec<u64> {
    let (mut a, mut b) = (a.into_iter().peekable(), b.into_iter().peekable());
    let mut out = Vec::new();
    while a.peek().is_some() || b.peek().is_some() {
        out.extend(a.by_ref().take(n));
        out.extend(b.by_ref().take(n));
    }
    out
}

/// The expected elements, and whether their order is up to timing.
fn expected(shape: &Shape) -> (Vec<u64>, bool) {
    match shape {
        Shape::Merge(inputs) => (inputs.iter().flat_map(model).collect(), true),
        Shape::MergePreferred(a, b) => ([model(a), model(b)].concat(), true),
        Shape::Zip(a, b) => (zip_model(a, b), false),
        Shape::Concat(inputs) => (inputs.iter().flat_map(model).collect(), false),
        Shape::Interleave(a, b, n) => (interleave_model(model(a), model(b), *n), false),
        Shape::Nested(a, b, c, d) => {
            let concat = [model(c), model(d)].concat();
            ([zip_model(a, b), concat].concat(), true)
        }
        Shape::FlatMap(a, r, _) => {
            let xs = model(a)
                .into_iter()
                .flat_map(|x| std::iter::repeat_n(x, *r));
            (xs.collect(), false)
        }
    }
}

fn zip_model(a: &Input, b: &Input) -> Vec<u64> {
    model(a)
        .into_iter()
        .zip(model(b))
        .map(|(x, y)| combine(x, y))
        .collect()
}

fn source(Input(xs, ops): &Input, boundary: bool) -> Source<u64> {
    let mut s = Source::from_iter(xs.clone());
    if boundary {
        s = s.async_boundary();
    }
    ops.iter().fold(s, |s, op| match *op {
        Op::Map(k) => s.map(map(k)),
        Op::Filter(m) => s.filter(move |x| x % m != 0),
        Op::Take(n) => s.take(n),
        Op::Skip(n) => s.skip(n),
        Op::TakeWhile(t) => s.take_while(move |x| *x < t),
    })
}

/// A uniform junction over `inputs`, built with a `GraphBuilder`.
fn uniform<const N: usize, S>(stage: S, inputs: &[Input], boundary: bool) -> Source<u64>
where
    S: weir_streams::stage::GraphStage<Shape = weir_streams::stage::UniformFanInShape<u64, N>>,
{
    let mut g = GraphBuilder::new();
    let join = g.add(stage);
    for (input, inlet) in inputs.iter().zip(join.ins()) {
        let out = g.source(source(input, boundary));
        g.connect(out, inlet).unwrap();
    }
    g.build_source(join.out(), |_| ()).unwrap()
}

fn merge(inputs: &[Input], boundary: bool) -> Source<u64> {
    match inputs.len() {
        1 => uniform(Merge::<u64, 1>::new(), inputs, boundary),
        2 => uniform(Merge::<u64, 2>::new(), inputs, boundary),
        _ => uniform(Merge::<u64, 3>::new(), inputs, boundary),
    }
}

fn concat(inputs: &[Input], boundary: bool) -> Source<u64> {
    match inputs.len() {
        1 => uniform(Concat::<u64, 1>::new(), inputs, boundary),
        2 => uniform(Concat::<u64, 2>::new(), inputs, boundary),
        _ => uniform(Concat::<u64, 3>::new(), inputs, boundary),
    }
}

fn inner(x: u64, r: usize, kind: u8) -> Source<u64> {
    let s = Source::from_iter(std::iter::repeat_n(x, r));
    match kind {
        0 => s,
        1 => s
            .buffer(2, OverflowStrategy::Backpressure)
            .expect("2 is at least 1"),
        2 => s.delay(Duration::ZERO, DelayOverflowStrategy::Backpressure),
        _ => s.async_boundary(),
    }
}

fn blueprint(shape: &Shape, boundary: bool) -> Source<u64> {
    match shape {
        Shape::Merge(inputs) => merge(inputs, boundary),
        Shape::MergePreferred(a, b) => uniform(
            MergePreferred::<u64, 2>::new(),
            &[a.clone(), b.clone()],
            boundary,
        ),
        Shape::Zip(a, b) => source(a, boundary).zip_with(source(b, boundary), combine),
        Shape::Concat(inputs) => concat(inputs, boundary),
        Shape::Interleave(a, b, n) => {
            let stage = Interleave::<u64, 2>::new(*n).expect("n is at least 1");
            uniform(stage, &[a.clone(), b.clone()], boundary)
        }
        Shape::Nested(a, b, c, d) => source(a, boundary)
            .zip_with(source(b, boundary), combine)
            .merge(source(c, boundary).concat(source(d, boundary))),
        Shape::FlatMap(a, r, kind) => {
            let (r, kind) = (*r, *kind);
            source(a, boundary).flat_map_concat(move |x| inner(x, r, kind))
        }
    }
}

/// How the result is taken.
#[derive(Debug, Clone)]
enum End {
    Collect,
    Sum,
    /// A probe requesting in these chunks (no folding sink to fuse into).
    Demand(Vec<u64>),
}

fn end() -> impl Strategy<Value = End> {
    prop_oneof![
        2 => Just(End::Collect),
        1 => Just(End::Sum),
        1 => prop::collection::vec(1u64..300, 1..4).prop_map(End::Demand),
    ]
}

fn run(source: Source<u64>, end: &End, expected: usize, mat: &Materializer) -> Vec<u64> {
    match end {
        End::Collect => source
            .run_with(Sink::collect(), mat)
            .wait()
            .expect("completes"),
        End::Sum => vec![
            source
                .run_with(Sink::fold(0u64, |a, x| a + x), mat)
                .wait()
                .expect("completes"),
        ],
        End::Demand(chunks) => {
            let mut probe = source.run_with(TestSink::probe(), mat);
            let mut got = Vec::new();
            let mut chunks = chunks.iter().copied().cycle();
            while got.len() < expected {
                let chunk = chunks.next().expect("cycled");
                probe.request(chunk);
                let n = (chunk as usize).min(expected - got.len());
                got.extend(probe.expect_next_n(n));
            }
            probe.request(1);
            probe.expect_complete();
            got
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    #[test]
    fn fused_fan_in_and_flatten_agree_with_the_model(shape in shape(), end in end()) {
        let (system, fused) = stream_system("fan-in-differential");
        let unfused = Materializer::builder(&system).fusion(false).build();
        let (mut want, unordered) = expected(&shape);
        let count = want.len();
        if let End::Sum = end {
            want = vec![want.iter().sum()];
        }
        let runs = [
            ("fused", run(blueprint(&shape, false), &end, count, &fused)),
            ("unfused", run(blueprint(&shape, false), &end, count, &unfused)),
            ("boundaries", run(blueprint(&shape, true), &end, count, &fused)),
        ];
        shutdown(&system);
        if unordered {
            want.sort_unstable();
        }
        for (how, mut got) in runs {
            if unordered {
                got.sort_unstable();
            }
            prop_assert_eq!(&got, &want, "{} run of {:?}", how, shape);
        }
    }
}
