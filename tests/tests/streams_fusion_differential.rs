//! Random operator chains and junctions run fused, unfused and with boundaries everywhere, each checked against a plain-Rust model.

use proptest::prelude::*;
use weir_streams::graph::{Balance, Broadcast, GraphBuilder, Merge, Partition, Unzip, ZipWith};
use weir_streams::prelude::*;

use weir_streams::testkit::TestSink;
use weir_tests::{shutdown, stream_system};

/// One operator of a random chain (elements are `u64` below 1000).
#[derive(Debug, Clone)]
enum Op {
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

fn op() -> impl Strategy<Value = Op> {
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

/// A junction joining the chain with a second random chain; the
/// deterministic ones are followed by more random operators.
#[derive(Debug, Clone)]
enum Join {
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

/// Operators whose output for an element does not depend on the others.
fn stateless() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (1u64..7).prop_map(Op::Map),
        2 => (2u64..5).prop_map(Op::Filter),
        1 => (0usize..3).prop_map(Op::MapConcat),
        1 => Just(Op::Boundary),
    ]
}

/// Operators that keep one element out per element in, up to an end.
fn one_to_one() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (1u64..7).prop_map(Op::Map),
        1 => (0u64..30).prop_map(Op::Take),
        1 => Just(Op::Boundary),
    ]
}

fn join() -> impl Strategy<Value = Join> {
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

fn joined_model(input: &[u64], ops: &[Op], join: &Join) -> Vec<u64> {
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
        Join::ZipN(i, o, j, p, after) => {
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

/// `ops` appended to `source`.
fn then(source: Source<u64>, ops: &[Op], boundaries: bool) -> Source<u64> {
    ops.iter().fold(source, |source, op| {
        let source = apply(source, op);
        if boundaries {
            source.async_boundary()
        } else {
            source
        }
    })
}

fn joined_blueprint(input: &[u64], ops: &[Op], join: &Join, boundaries: bool) -> Source<u64> {
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

/// `ops` as a flow; `boundaries` adds one after every operator.
fn branch(ops: &[Op], boundaries: bool) -> Flow<u64> {
    ops.iter().fold(Flow::new(), |flow, op| {
        let flow = apply_flow(flow, op);
        if boundaries {
            flow.async_boundary()
        } else {
            flow
        }
    })
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

/// How the result is taken.
#[derive(Debug, Clone)]
enum End {
    /// `Sink::collect` (a folding sink).
    Collect,
    /// `Sink::fold` of the sum (a folding sink; only the sum is compared).
    Sum,
    /// A probe that requests in these chunks (a plain sink stage).
    Demand(Vec<u64>),
}

fn end() -> impl Strategy<Value = End> {
    prop_oneof![
        Just(End::Collect),
        Just(End::Sum),
        prop::collection::vec(1u64..8, 1..6).prop_map(End::Demand),
    ]
}

fn map(k: u64) -> impl Fn(u64) -> u64 + Clone {
    move |x| (x * k + 1) % 1000
}

/// The chain on plain vectors.
fn model(input: &[u64], ops: &[Op]) -> Vec<u64> {
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
fn apply(source: Source<u64>, op: &Op) -> Source<u64> {
    apply_op!(source, op)
}

/// `op` appended to `flow`.
fn apply_flow(flow: Flow<u64>, op: &Op) -> Flow<u64> {
    apply_op!(flow, op)
}

/// The chain as a blueprint; `boundaries` adds one after every operator.
fn blueprint(input: &[u64], ops: &[Op], boundaries: bool) -> Source<u64> {
    then(Source::from_iter(input.to_vec()), ops, boundaries)
}

/// Run `source` into `end`; what the model's result is compared with.
fn run(source: Source<u64>, end: &End, expected: &[u64], mat: &Materializer) -> Vec<u64> {
    match end {
        End::Collect => source
            .run_with(Sink::collect(), mat)
            .wait()
            .expect("the chain completes"),
        End::Sum => {
            let sum = source.run_with(Sink::fold(0u64, |a, x| a + x), mat).wait();
            vec![sum.expect("the chain completes")]
        }
        End::Demand(chunks) => {
            let mut probe = source.run_with(TestSink::probe(), mat);
            let mut got = Vec::new();
            let mut chunks = chunks.iter().copied().cycle();
            while got.len() < expected.len() {
                let chunk = chunks.next().expect("cycled");
                probe.request(chunk);
                let n = (chunk as usize).min(expected.len() - got.len());
                got.extend(probe.expect_next_n(n));
            }
            // The end may need demand to be found (a filter pulls on).
            probe.request(1);
            probe.expect_complete();
            got
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn fused_unfused_and_boundaries_agree_with_the_model(
        input in prop::collection::vec(0u64..1000, 0..40),
        ops in prop::collection::vec(op(), 0..10),
        join in join(),
        end in end(),
    ) {
        let (system, fused) = stream_system("differential");
        let unfused = Materializer::builder(&system).fusion(false).build();
        let expected = joined_model(&input, &ops, &join);
        let mut expected = match end {
            End::Sum => vec![expected.iter().sum()],
            _ => expected,
        };
        let go = |boundaries, mat| run(joined_blueprint(&input, &ops, &join, boundaries), &end, &expected, mat);
        let runs = [
            ("fused", go(false, &fused)),
            ("unfused", go(false, &unfused)),
            ("boundaries", go(true, &fused)),
            ("boundaries unfused", go(true, &unfused)),
        ];
        shutdown(&system);
        // A merge interleaves as elements arrive: compare its elements only.
        let unordered = matches!(
            join,
            Join::Merge(..)
                | Join::MergePrioritized(..)
                | Join::BroadcastMerge(..)
                | Join::Partition(..)
                | Join::Balance(..)
        );
        if unordered {
            expected.sort_unstable();
        }
        for (how, mut got) in runs {
            if unordered {
                got.sort_unstable();
            }
            prop_assert_eq!(&got, &expected, "{} run of {:?} joined by {:?}", how, ops, join);
        }
    }
}

/// The example: maps after a non-simple stage fuse like a flow of
/// maps composed first, and give the same result as unfused.
#[test]
fn maps_after_scan_fuse_like_a_composed_flow() {
    let (system, fused) = stream_system("scan-maps");
    let unfused = Materializer::builder(&system).fusion(false).build();
    let mut chained = Source::range(0u64..1000).scan(0u64, |a, x| a + x);
    let mut flow = Flow::<u64>::new();
    for k in 1..=9 {
        chained = chained.map(move |x| x + k);
        flow = flow.map(move |x| x + k);
    }
    let composed = Source::range(0u64..1000).scan(0u64, |a, x| a + x).via(flow);
    let sum =
        |s: Source<u64>, m: &Materializer| s.run_with(Sink::fold(0u64, |a, x| a + x), m).wait();
    let want = sum(composed.clone(), &unfused);
    assert_eq!(sum(chained.clone(), &fused), want);
    assert_eq!(sum(composed, &fused), want);
    assert_eq!(sum(chained, &unfused), want);
    shutdown(&system);
}

/// Regression: past the interpreter's chase limit the chased push of
/// `take`'s last element was queued behind the completion that followed
/// it, so the element was lost (found by the differential test above).
#[test]
fn the_last_element_of_a_take_is_not_overtaken_by_its_completion() {
    let (system, _) = stream_system("take-last");
    let unfused = Materializer::builder(&system).fusion(false).build();
    for n in 1..40 {
        let got = Source::from_iter(0u64..100)
            .take(n)
            .map(|x| x + 1)
            .run_with(Sink::collect(), &unfused)
            .wait();
        assert_eq!(got, Ok((1..=n).collect::<Vec<_>>()), "take({n})");
    }
    shutdown(&system);
}

/// A dispatcher asked for by a node that the planner fuses (a folding
/// sink after an iterator source, or inside a boundary's half) still moves
/// its island off the shared pool.
#[test]
fn a_fused_node_keeps_its_dispatcher() {
    let (system, fused) = stream_system("fused-dispatcher");
    let unfused = Materializer::builder(&system).fusion(false).build();
    let thread = || std::thread::current().name().unwrap_or("").to_owned();
    let on = |source: Source<u64>, blocking: bool, mat: &Materializer| {
        let sink = Sink::fold(String::new(), move |_, _: u64| thread());
        let sink = if blocking {
            sink.with_attributes(weir_streams::Attributes::blocking())
        } else {
            sink
        };
        source.run_with(sink, mat).wait().expect("completes")
    };
    for mat in [&fused, &unfused] {
        let shared = on(Source::range(0u64..3), false, mat);
        for source in [
            Source::range(0u64..3),
            Source::range(0u64..3).async_boundary(),
        ] {
            let pinned = on(source, true, mat);
            assert!(
                pinned.ends_with("-pinned"),
                "on a pinned thread, got {pinned}"
            );
            assert!(
                !shared.ends_with("-pinned"),
                "the control runs on the shared pool: {shared}"
            );
        }
    }
    shutdown(&system);
}
