//! What a signal-level case is made of: the sources, the junction, the
//! operators after it, and the script of demand and upstream signals; and
//! the trace every run and the model produce.

use proptest::prelude::*;

/// One source of a case (elements are `u64` below 1000).
#[derive(Debug, Clone)]
pub(crate) enum Src {
    /// `Source::from_iter` of these elements (`Source::empty` when none).
    Iter(Vec<u64>),
    /// `Source::range(lo..hi)`.
    Range(u64, u64),
    /// `Source::failed`.
    Failed,
    /// A `TestSource::probe` the script plays.
    Probe,
}

/// The junction joining two sources.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Join {
    Merge,
    Concat,
    Zip,
    MergeSorted,
    /// `interleave` with segments of one, of two.
    Interleave,
    Interleave2,
    /// `a.prepend(b)`: b's elements, then a's.
    Prepend,
    /// `a.or_else(b)`: a's elements, or b's if a ends empty.
    OrElse,
    /// `MergePreferred` (input 0 preferred), `MergePrioritized` with
    /// priorities 1 and 3: as `Merge` (compared by counts: which ready
    /// input is taken depends on when the elements arrive).
    MergePreferred,
    MergePrioritized,
    /// Fluent `a.concat_lazy(b)`, `b` an iterator source (a probe `b`
    /// would be materialized only when asked for): as `Concat`.
    ConcatLazy,
    /// `Interleave::new(1).eager_close()`: completes when either input
    /// does.
    InterleaveEager,
    /// The junctions of `wide.rs` (eager merges, `Source::combine`, the
    /// zips of arrays and tuples).
    Wide(super::wide::Wide),
}

impl Join {
    /// A merge: which of its ready inputs it takes is not defined.
    pub(crate) fn merges(self) -> bool {
        matches!(
            self,
            Join::Merge | Join::MergePreferred | Join::MergePrioritized
        ) || matches!(self, Join::Wide(w) if w.merges())
    }
}

/// The junction splitting the stream to two sink probes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FanOut {
    Broadcast,
    Balance,
    /// `Balance::wait_for_all_downstreams`.
    BalanceAll,
    /// `Balance::eager_cancel`.
    BalanceEager,
    /// `Partition` by `x % 2` (upstream cancelled when both outputs are).
    Partition,
    /// Fluent `divert_to` (odd elements to the second output): a
    /// `Partition` with eager cancel.
    DivertTo,
    /// Fluent `also_to` (the second output): a `Broadcast` with eager
    /// cancel.
    AlsoTo,
    /// Fluent `wire_tap` (the tap is the second output).
    WireTap,
    /// `UnzipWith` of `x` into `x` and `x + 1000`.
    Unzip,
}

/// A fan-out.
fn fan_out() -> impl Strategy<Value = Option<FanOut>> {
    prop_oneof![
        12 => Just(None),
        2 => Just(Some(FanOut::Broadcast)),
        2 => Just(Some(FanOut::Balance)),
        1 => Just(Some(FanOut::BalanceAll)),
        1 => Just(Some(FanOut::BalanceEager)),
        1 => Just(Some(FanOut::Partition)),
        1 => Just(Some(FanOut::DivertTo)),
        1 => Just(Some(FanOut::AlsoTo)),
        1 => Just(Some(FanOut::WireTap)),
        1 => Just(Some(FanOut::Unzip)),
    ]
}

/// One linear operator after the sources (or the junction).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Op {
    Map(u64),
    Filter(u64),
    Take(u64),
    Skip(u64),
    TakeWhile(u64),
    SkipWhile(u64),
    Scan,
    Fold,
    Grouped(usize),
    MapConcat(usize),
    Intersperse,
    Buffer(usize),
    Recover,
    FilterMap(u64),
    Reduce,
    /// `map_error` to [`MAPPED`].
    MapError,
    /// `flat_map_concat` into `r` copies (an iterator source each).
    FlatMapConcat(usize),
    /// `limit(n)`: fails on the element past `n`.
    Limit(u64),
    /// The time operators, with a duration of so many [`TICK`]s.
    TakeWithin(u32),
    DropWithin(u32),
    InitialDelay(u32),
    InitialTimeout(u32),
    CompletionTimeout(u32),
    /// The operators of `linear_more.rs`.
    More(super::linear_more::More),
    /// The substream operators of `substreams.rs`.
    Sub(super::substreams::Sub),
    /// The time and rate operators of `timed_more.rs`.
    Timed(super::timed_more::Timed),
    /// The operators of `linear_extra.rs`.
    Extra(super::linear_extra::Extra),
}

impl Op {
    /// A time operator (its cases run on the test clock in one island
    /// only: across boundaries the islands arm their timers on their own,
    /// so "every timer armed before the clock moves" is not defined).
    pub(crate) fn timed(self) -> bool {
        matches!(
            self,
            Op::TakeWithin(_)
                | Op::DropWithin(_)
                | Op::InitialDelay(_)
                | Op::InitialTimeout(_)
                | Op::CompletionTimeout(_)
                | Op::Timed(_)
        )
    }
}

impl Op {
    /// Not run across boundaries (besides the time operators): what a
    /// dropping `buffer` drops depends on when the boundaries' batches
    /// arrive, which is not defined.
    pub(crate) fn one_island_only(self) -> bool {
        self.timed()
            || matches!(self, Op::More(m) if m.drops() || m.timed())
            || matches!(self, Op::Extra(e) if e.one_island_only())
    }

    /// A `recover_with_retries` that can switch to its fallback: Weir runs
    /// the fallback as a stream of its own (Pekko runs it in the stage's
    /// island), so its elements may come after the island is idle.
    pub(crate) fn runs_inner_stream(self) -> bool {
        matches!(self, Op::More(m) if m.runs_inner_stream())
            || matches!(self, Op::Sub(s) if s.runs_inner_stream())
    }
}

/// How far the test clock moves in a [`Step::Tick`].
pub(crate) const TICK: std::time::Duration = std::time::Duration::from_millis(100);

/// One step of the script.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Step {
    /// The downstream probe asks for `n` more.
    Request(u64),
    /// The downstream probe cancels.
    Cancel,
    /// The `i`-th probe source sends an element.
    Push(usize, u64),
    /// The `i`-th probe source sends `n` elements from `x` on (`% 1000`).
    PushMany(usize, u64, u64),
    /// The `i`-th probe source completes.
    Complete(usize),
    /// The `i`-th probe source fails.
    Fail(usize),
    /// The test clock moves on by a [`TICK`] (after every timer set so
    /// far is armed).
    Tick,
    /// The second output of the fan-out asks for `n` more.
    Request2(u64),
    /// The second output of the fan-out cancels.
    Cancel2,
}

/// One case: sources (one, or two joined), operators, script.
#[derive(Debug, Clone)]
pub(crate) struct Case {
    pub(crate) sources: Vec<Src>,
    pub(crate) join: Option<Join>,
    pub(crate) ops: Vec<Op>,
    /// A fan-out after the operators, to two sink probes (else one).
    pub(crate) fan_out: Option<FanOut>,
    pub(crate) script: Vec<Step>,
}

impl Case {
    /// How many sources are probes.
    pub(crate) fn probes(&self) -> usize {
        self.sources
            .iter()
            .filter(|s| matches!(s, Src::Probe))
            .count()
    }

    /// Whether the order of elements within a step is not defined (a
    /// merge picks among its ready inputs as they arrive).
    pub(crate) fn unordered(&self) -> bool {
        // A balance waiting for all its outputs has them both waiting
        // from the start: which it serves next follows from the order in
        // which they ask again, which is the interpreter's (with fusion
        // off it varies).
        self.join.is_some_and(Join::merges)
            || self.fan_out == Some(FanOut::BalanceAll)
            || self
                .ops
                .iter()
                .any(|o| matches!(o, Op::Sub(s) if s.unordered()))
    }
}

/// Where a trace ends: the step of the downstream probe's completion or
/// failure, and that signal.
pub(crate) fn end_of(trace: &[StepTrace]) -> Option<(usize, Sig)> {
    trace.iter().enumerate().find_map(|(at, step)| {
        step.down
            .iter()
            .find(|s| !matches!(s, Sig::Next(_)))
            .map(|s| (at, s.clone()))
    })
}

/// What the downstream probe saw.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Sig {
    Next(u64),
    Complete,
    /// A failure, by its message.
    Error(String),
}

/// What one upstream probe saw during a step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Up {
    pub(crate) requests: u64,
    pub(crate) cancelled: bool,
    /// Model only: the probe had completed with elements still queued
    /// when the cancellation came, so whether it sees it is not defined.
    pub(crate) maybe_cancelled: bool,
}

/// The signals after one step (index 0: after materialization) once the
/// stream is quiescent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct StepTrace {
    pub(crate) down: Vec<Sig>,
    pub(crate) up: Vec<Up>,
    /// What the second output of a fan-out saw.
    pub(crate) down2: Vec<Sig>,
}

/// The failure message every failing source uses.
pub(crate) const BOOM: &str = "boom";

/// The message of the failure `map_error` makes of another.
pub(crate) const MAPPED: &str = "mapped";

/// The element `recover` puts in place of a failure.
pub(crate) const RECOVERED: u64 = 999;

fn src() -> impl Strategy<Value = Src> {
    prop_oneof![
        6 => joined_src(),
        1 => Just(Src::Failed),
    ]
}

/// A source for a junction: no `Source::failed`. At materialization the
/// order in which its failure and the other input's first element reach
/// the junction is the interpreter's (it starts the stages in its own
/// order), not something the model states.
pub(crate) fn joined_src() -> impl Strategy<Value = Src> {
    prop_oneof![
        3 => Just(Src::Probe),
        2 => prop::collection::vec(0u64..1000, 0..6).prop_map(Src::Iter),
        1 => (0u64..4, 0u64..5).prop_map(|(lo, n)| Src::Range(lo, lo + n)),
    ]
}

fn join() -> impl Strategy<Value = Join> {
    prop_oneof![
        Just(Join::Merge),
        Just(Join::Concat),
        Just(Join::Zip),
        Just(Join::MergeSorted),
        Just(Join::Interleave),
        Just(Join::Interleave2),
        Just(Join::Prepend),
        Just(Join::OrElse),
        Just(Join::MergePreferred),
        Just(Join::MergePrioritized),
        Just(Join::ConcatLazy),
        Just(Join::InterleaveEager),
    ]
}

pub(crate) fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (1u64..7).prop_map(Op::Map),
        2 => (2u64..5).prop_map(Op::Filter),
        // Not `take(0)`: it cancels at materialization, and whether an empty
        // input beside a junction has made it pull its other input by then
        // is the interpreter's start order, not something the model states.
        1 => (1u64..5).prop_map(Op::Take),
        1 => (0u64..4).prop_map(Op::Skip),
        1 => (100u64..1000).prop_map(Op::TakeWhile),
        1 => (0u64..500).prop_map(Op::SkipWhile),
        1 => Just(Op::Scan),
        1 => Just(Op::Fold),
        1 => (1usize..4).prop_map(Op::Grouped),
        1 => (0usize..3).prop_map(Op::MapConcat),
        1 => Just(Op::Intersperse),
        1 => (1usize..4).prop_map(Op::Buffer),
        1 => Just(Op::Recover),
        1 => (2u64..5).prop_map(Op::FilterMap),
        1 => Just(Op::Reduce),
        1 => Just(Op::MapError),
        1 => (0usize..3).prop_map(Op::FlatMapConcat),
        1 => (0u64..4).prop_map(Op::Limit),
        4 => super::linear_more::more().prop_map(Op::More),
        3 => super::substreams::sub().prop_map(Op::Sub),
        2 => super::timed_more::timed().prop_map(Op::Timed),
        3 => super::linear_extra::extra().prop_map(Op::Extra),
        1 => prop_oneof![
            (1u32..4).prop_map(Op::TakeWithin),
            (1u32..4).prop_map(Op::DropWithin),
            (1u32..4).prop_map(Op::InitialDelay),
            (1u32..4).prop_map(Op::InitialTimeout),
            (1u32..4).prop_map(Op::CompletionTimeout),
        ],
    ]
}

/// Operators whose output, as a multiset and in count, does not depend
/// on the order of their input (so no `take`: which elements it keeps
/// does; and no `filter`, `filter_map`: the step the stream completes in
/// does, as elements they drop may be left for after the last request).
fn unordered_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (1u64..7).prop_map(Op::Map),
        1 => (0usize..3).prop_map(Op::MapConcat),
        1 => (1usize..4).prop_map(Op::Buffer),
        1 => Just(Op::Recover),
        1 => Just(Op::MapError),
        1 => (0usize..3).prop_map(Op::FlatMapConcat),
    ]
}

fn step(probes: usize, fan_out: bool) -> BoxedStrategy<Step> {
    let demand = if fan_out {
        prop_oneof![
            6 => (1u64..4).prop_map(Step::Request),
            1 => Just(Step::Cancel),
            6 => (1u64..4).prop_map(Step::Request2),
            1 => Just(Step::Cancel2),
            2 => Just(Step::Tick),
        ]
        .boxed()
    } else {
        prop_oneof![
            6 => (1u64..4).prop_map(Step::Request),
            1 => Just(Step::Cancel),
            2 => Just(Step::Tick),
        ]
        .boxed()
    };
    if probes == 0 {
        return demand.boxed();
    }
    prop_oneof![
        3 => demand,
        5 => (0..probes, 0u64..1000).prop_map(|(i, x)| Step::Push(i, x)),
        1 => (0..probes, 0u64..1000, 5u64..21).prop_map(|(i, x, n)| Step::PushMany(i, x, n)),
        1 => (0..probes).prop_map(Step::Complete),
        1 => (0..probes).prop_map(Step::Fail),
    ]
    .boxed()
}

/// A random case: one source or two joined, up to three operators, up to
/// twelve steps.
pub(crate) fn case() -> impl Strategy<Value = Case> {
    let sources = prop_oneof![
        2 => src().prop_map(|s| (vec![s], None)),
        2 => super::wide::sources(),
        3 => (joined_src(), joined_src(), join()).prop_map(|(a, b, j)| {
            // `concat_lazy` materializes `b` only when asked for.
            let b = match b {
                Src::Probe if j == Join::ConcatLazy => Src::Range(1, 4),
                b => b,
            };
            // An empty input ends an eager-closing interleave at
            // materialization, racing the first pulls of the other (the
            // interpreter's start order, as for `Source::failed`).
            let filled = |s: Src| match s {
                Src::Iter(v) if v.is_empty() && j == Join::InterleaveEager => Src::Iter(vec![7]),
                Src::Range(lo, hi) if lo == hi && j == Join::InterleaveEager => {
                    Src::Range(lo, lo + 1)
                }
                s => s,
            };
            (vec![filled(a), filled(b)], Some(j))
        }),
    ];
    // After a merge only operators that do not care about the order of
    // the elements: which input a merge takes first is not defined.
    let ops = sources.prop_flat_map(|(sources, join)| {
        let ops = if join.is_some_and(Join::merges) {
            unordered_op().boxed()
        } else {
            op().boxed()
        };
        (Just((sources, join)), prop::collection::vec(ops, 0..4))
    });
    let fan_out = fan_out();
    (ops, fan_out).prop_flat_map(|(((sources, join), ops), fan_out)| {
        let probes = sources.iter().filter(|s| matches!(s, Src::Probe)).count();
        // After a merge only a balance: the order of a merge's ready inputs
        // is not defined, and which elements a partition routes where, a
        // broadcast copies before an end, or a tap sees, follow from it.
        let fan_out = match fan_out {
            Some(FanOut::Balance | FanOut::BalanceAll) | None => fan_out,
            Some(_) if join.is_some_and(Join::merges) => Some(FanOut::Balance),
            f => f,
        };
        prop::collection::vec(step(probes, fan_out.is_some()), 0..12).prop_map(move |script| Case {
            sources: sources.clone(),
            join,
            ops: ops.clone(),
            fan_out,
            script: super::wide::script(join, legal(script, probes)),
        })
    })
}

/// `script` without the steps a probe cannot take: nothing is sent by a
/// probe after it completed or failed.
pub(crate) fn legal(script: Vec<Step>, probes: usize) -> Vec<Step> {
    let mut ended = vec![false; probes];
    script
        .into_iter()
        .filter(|step| match *step {
            Step::Push(i, _) | Step::PushMany(i, ..) => !ended[i],
            Step::Complete(i) | Step::Fail(i) => !std::mem::replace(&mut ended[i], true),
            Step::Request(_) | Step::Cancel | Step::Tick | Step::Request2(_) | Step::Cancel2 => {
                true
            }
        })
        .collect()
}
