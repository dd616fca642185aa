//! `group_by` whose substreams are simple operators then a `fold`: with
//! fusion on each substream runs directly (a consumer per key, called by
//! the splitting stage), with fusion off as a sub-island; with fusion on
//! the splitting stage pulls the iterator source before it itself, unless
//! an async boundary is between them. Every run of the same random
//! pipeline is checked against a plain-Rust model, and
//! the supervision, failure and limit cases are run both ways, so the
//! direct form cannot drift from the general one.

use std::collections::{HashMap, HashSet};

use proptest::prelude::*;
use weir_streams::prelude::*;
use weir_streams::{Attributes, ErrorKind, StreamError, SupervisionStrategy};
use weir_tests::{shutdown, stream_system};

/// One operator of a substream's chain (elements are below 1000).
#[derive(Debug, Clone, Copy)]
enum Op {
    Map(u64),
    Filter(u64),
    Take(u64),
    Skip(u64),
    TakeWhile(u64),
    SkipWhile(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (1u64..7).prop_map(Op::Map),
        2 => (2u64..5).prop_map(Op::Filter),
        1 => (0u64..5).prop_map(Op::Take),
        1 => (0u64..4).prop_map(Op::Skip),
        1 => (100u64..1000).prop_map(Op::TakeWhile),
        1 => (0u64..500).prop_map(Op::SkipWhile),
    ]
}

fn map(k: u64) -> impl Fn(u64) -> u64 + Clone {
    move |x| (x * k + 1) % 1000
}

/// What one operator of the model made of an element.
enum Out {
    Emit(u64),
    Skip,
    /// This element, then the operator completes.
    Last(u64),
    /// The operator completes without it.
    Done,
}

/// One operator of one substream of the model, with its state.
struct State {
    op: Op,
    /// Elements still to take or skip; whether skip_while still skips.
    left: u64,
    skipping: bool,
}

impl State {
    fn new(op: Op) -> Self {
        let left = match op {
            Op::Take(n) | Op::Skip(n) => n,
            _ => 0,
        };
        Self {
            op,
            left,
            skipping: true,
        }
    }

    fn step(&mut self, x: u64) -> Out {
        match self.op {
            Op::Map(k) => Out::Emit(map(k)(x)),
            Op::Filter(m) if !x.is_multiple_of(m) => Out::Emit(x),
            Op::Filter(_) => Out::Skip,
            Op::Take(_) if self.left == 0 => Out::Done,
            Op::Take(_) => {
                self.left -= 1;
                if self.left == 0 {
                    Out::Last(x)
                } else {
                    Out::Emit(x)
                }
            }
            Op::Skip(_) if self.left > 0 => {
                self.left -= 1;
                Out::Skip
            }
            Op::Skip(_) => Out::Emit(x),
            Op::TakeWhile(t) if x < t => Out::Emit(x),
            Op::TakeWhile(_) => Out::Done,
            Op::SkipWhile(t) if self.skipping && x < t => Out::Skip,
            Op::SkipWhile(_) => {
                self.skipping = false;
                Out::Emit(x)
            }
        }
    }
}

/// One substream of the model: its operators, then the fold (a vector).
struct Sub {
    ops: Vec<State>,
    acc: Vec<u64>,
}

impl Sub {
    /// Feed `x`; whether the substream completed (an operator did).
    fn feed(&mut self, mut x: u64) -> bool {
        let mut ended = false;
        for state in &mut self.ops {
            match state.step(x) {
                Out::Emit(y) => x = y,
                Out::Skip => return ended,
                Out::Last(y) => {
                    x = y;
                    ended = true;
                }
                Out::Done => return true,
            }
        }
        self.acc.push(x);
        ended
    }
}

/// The pipeline on plain vectors: each substream's folded vector, sorted.
fn model(input: &[u64], keys: u64, ops: &[Op], recreate: bool) -> Vec<Vec<u64>> {
    let mut open: HashMap<u64, Sub> = HashMap::new();
    let mut closed = HashSet::new();
    let mut out = Vec::new();
    for &x in input {
        let key = x % keys;
        if closed.contains(&key) {
            continue;
        }
        // `take(0)` completes as its substream opens: the fold gives its
        // seed, the element that opened it is dropped.
        if !open.contains_key(&key) && ops.iter().any(|op| matches!(op, Op::Take(0))) {
            out.push(Vec::new());
            if !recreate {
                closed.insert(key);
            }
            continue;
        }
        let sub = open.entry(key).or_insert_with(|| Sub {
            ops: ops.iter().copied().map(State::new).collect(),
            acc: Vec::new(),
        });
        if sub.feed(x) {
            out.push(open.remove(&key).expect("fed above").acc);
            if !recreate {
                closed.insert(key);
            }
        }
    }
    out.extend(open.into_values().map(|sub| sub.acc));
    out.sort();
    out
}

/// The same chain on a substream flow.
fn chain(ops: &[Op]) -> Flow<u64, u64> {
    ops.iter().fold(Flow::<u64>::new(), |flow, op| match *op {
        Op::Map(k) => flow.map(map(k)),
        Op::Filter(m) => flow.filter(move |x| !x.is_multiple_of(m)),
        Op::Take(n) => flow.take(n),
        Op::Skip(n) => flow.skip(n),
        Op::TakeWhile(t) => flow.take_while(move |x| *x < t),
        Op::SkipWhile(t) => flow.skip_while(move |x| *x < t),
    })
}

fn push(mut acc: Vec<u64>, x: u64) -> Vec<u64> {
    acc.push(x);
    acc
}

fn run(
    input: &[u64],
    keys: u64,
    ops: &[Op],
    recreate: bool,
    boundary: bool,
    mat: &Materializer,
) -> Result<Vec<Vec<u64>>, StreamError> {
    let key = move |x: &u64| x % keys;
    let mut source = Source::from_iter(input.to_vec());
    if boundary {
        // Elements reach the splitting stage through its inlet, not from
        // the iterator fused into it.
        source = source.async_boundary();
    }
    let split = if recreate {
        source.group_by_recreating(keys as usize, key)
    } else {
        source.group_by(keys as usize, key)
    };
    let mut out = split
        .expect("keys > 0")
        .via_flow(chain(ops))
        .fold(Vec::new(), push)
        .merge_substreams()
        .run_with(Sink::collect(), mat)
        .wait()?;
    out.sort();
    Ok(out)
}

/// A materializer with fusion on (direct substreams) and one with it off.
fn both(system: &weir_actor::ActorSystem) -> [Materializer; 2] {
    [
        Materializer::new(system),
        Materializer::builder(system).fusion(false).build(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn direct_and_general_substreams_agree_with_the_model(
        input in prop::collection::vec(0u64..1000, 0..120),
        keys in 1u64..6,
        ops in prop::collection::vec(op(), 0..4),
        recreate in any::<bool>(),
    ) {
        let (system, _) = stream_system("group-by-direct-model");
        let expected = model(&input, keys, &ops, recreate);
        for mat in both(&system) {
            for boundary in [false, true] {
                let got = run(&input, keys, &ops, recreate, boundary, &mat);
                prop_assert_eq!(
                    got,
                    Ok(expected.clone()),
                    "fusion {}, boundary {}",
                    mat.fusion(),
                    boundary
                );
            }
        }
        shutdown(&system);
    }
}

/// Sums per key (`x % 2`) of `0..10` through `fold` with `attributes`, a
/// panic at 5 and 6; sorted.
fn supervised_sums(attributes: Attributes, mat: &Materializer) -> Result<Vec<u32>, StreamError> {
    let fold = Flow::<u32>::new()
        .fold(0u32, |a, x| {
            assert!(x != 5 && x != 6, "no {x}");
            a + x
        })
        .with_attributes(attributes);
    let mut out = Source::range(0u32..10)
        .group_by(2, |x| x % 2)
        .unwrap()
        .via_flow(fold)
        .merge_substreams()
        .run_with(Sink::collect(), mat)
        .wait()?;
    out.sort_unstable();
    Ok(out)
}

#[test]
fn a_supervised_fold_resumes_or_restarts_in_both_forms() {
    let (system, _) = stream_system("group-by-direct-supervised");
    let strategy = |s| Attributes::new().with_supervision_strategy(s);
    for mat in both(&system) {
        // Resume drops 5 and 6: evens 0+2+4+8, odds 1+3+7+9.
        let resumed = supervised_sums(strategy(SupervisionStrategy::resuming()), &mat);
        assert_eq!(resumed, Ok(vec![14, 20]), "fusion {}", mat.fusion());
        // Restart starts again from 0 after them: evens 8, odds 7+9.
        let restarted = supervised_sums(strategy(SupervisionStrategy::restarting()), &mat);
        assert_eq!(restarted, Ok(vec![8, 16]), "fusion {}", mat.fusion());
        let error = supervised_sums(Attributes::new(), &mat).unwrap_err();
        assert!(
            matches!(error.kind(), ErrorKind::Panicked(m) if m.contains("no 5")),
            "fusion {}: {error}",
            mat.fusion()
        );
    }
    shutdown(&system);
}

#[test]
fn failures_and_the_limit_reach_direct_substreams_as_the_general_ones() {
    let (system, _) = stream_system("group-by-direct-failures");
    for mat in both(&system) {
        // Upstream fails after some elements: the merged stream fails.
        let failed = Source::range(0u32..6)
            .concat(Source::failed(StreamError::msg("upstream broke")))
            .group_by(3, |x| x % 3)
            .unwrap()
            .fold(0u32, |a, x| a + x)
            .merge_substreams()
            .run_with(Sink::collect(), &mat)
            .wait();
        let error = failed.unwrap_err();
        assert!(error.to_string().contains("upstream broke"), "{error}");
        // A third key past max_substreams = 2: the typed error.
        let over = Source::range(0u32..6)
            .group_by(2, |x| x % 3)
            .unwrap()
            .fold(0u32, |a, x| a + x)
            .merge_substreams()
            .run_with(Sink::collect(), &mat)
            .wait();
        let error = over.unwrap_err();
        assert!(
            matches!(error.kind(), ErrorKind::TooManySubstreams { max: 2 }),
            "fusion {}: {error}",
            mat.fusion()
        );
        // A panicking source (a map fused into the range) fails it too.
        let broken = Source::range(0u32..6)
            .map(|x| {
                assert!(x != 4, "no 4");
                x
            })
            .group_by(2, |x| x % 2)
            .unwrap()
            .fold(0u32, |a, x| a + x)
            .merge_substreams()
            .run_with(Sink::collect(), &mat)
            .wait();
        let error = broken.unwrap_err();
        assert!(
            matches!(error.kind(), ErrorKind::Panicked(m) if m.contains("no 4")),
            "fusion {}: {error}",
            mat.fusion()
        );
        // A panicking map before the fold fails the stream.
        let panicked = Source::range(0u32..6)
            .group_by(2, |x| x % 2)
            .unwrap()
            .map(|x| {
                assert!(x != 3, "no 3");
                x
            })
            .fold(0u32, |a, x| a + x)
            .merge_substreams()
            .run_with(Sink::collect(), &mat)
            .wait();
        let error = panicked.unwrap_err();
        assert!(
            matches!(error.kind(), ErrorKind::Panicked(m) if m.contains("no 3")),
            "fusion {}: {error}",
            mat.fusion()
        );
    }
    shutdown(&system);
}

#[test]
fn an_empty_iterator_source_completes_the_merge_without_demand() {
    let (system, _) = stream_system("group-by-direct-empty");
    for mat in both(&system) {
        let mut probe = Source::range(0u32..0)
            .group_by(2, |x| x % 2)
            .unwrap()
            .fold(0u32, |a, x| a + x)
            .merge_substreams()
            .run_with(weir_streams::testkit::TestSink::probe(), &mat);
        probe.expect_complete();
    }
    shutdown(&system);
}
