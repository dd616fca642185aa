//! The substream operators: their script form ([`Sub`], one `Op::Sub`
//! variant), their model (one [`Node`] simulating Pekko's stages, built
//! by [`node`]) and how a run builds them ([`apply`]).
//!
//! Pekko runs `split_when` / `split_after` / `group_by` as a splitting
//! stage that emits substream sources, each run through the substream's
//! flow into a `FlattenMerge(breadth)` (`merge_substreams`: unbounded,
//! `concat_substreams`: 1); `prefix_and_tail(n)` flattened is
//! `PrefixAndTail` into `FlattenMerge(1)` (`flat_map_concat`). The model
//! plays those stages' handlers as events (those crossing into or out of
//! a substream after those within one interpreter, as Pekko's async
//! callbacks are), so it states what they do:
//! - nothing is pulled before downstream's first pull; the flattening
//!   stage pulls every substream it adds at once (one element ahead per
//!   substream), and asks the splitting stage for the next substream
//!   while it runs fewer than its breadth;
//! - `split_when` opens a substream with the first element and with each
//!   element `x % m == 0`, completing the one before; `split_after` ends a
//!   substream after such an element and pulls the next element at once;
//!   a substream that cancels (`take`) has the rest of its elements
//!   dropped up to the next split (`SubstreamCancelStrategy::Drain`,
//!   Weir's documented default: Akka's; Pekko 1.1 made it the supervision
//!   decider's);
//! - `group_by(max, x % m)` pulls when a substream asks or the flattening
//!   stage wants a new one, holds one element for a substream that has
//!   not asked, drops the elements of a closed key, and fails with
//!   `TooManySubstreams` on a new key when open and closed keys make
//!   `max` (Pekko counts the closed keys); at upstream completion each
//!   substream completes once it has taken its elements;
//! - `prefix_and_tail(n)` pulls until it holds `n` (or upstream ends),
//!   then emits the pair and completes; the tail is pulled upstream only
//!   when the inner source (`Source::from_iter(prefix).concat(tail)`)
//!   reaches it;
//! - an upstream failure fails the stream at once (what the flattening
//!   stage holds is dropped).

use weir_streams::SubFlow;
use weir_streams::graph::JunctionOps;
use weir_streams::prelude::*;

use super::model::map;
use super::script::Sig;

#[path = "substreams_model.rs"]
mod model;
pub(crate) use model::node;

/// The operator each substream runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Inner {
    /// No operator.
    Id,
    Map(u64),
    /// `take(n)`: cancels the substream after `n` elements.
    Take(u64),
    /// `fold(0, sum % 1000)`.
    Fold,
}

/// The operators of this module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sub {
    /// `split_when(x % m == 0)` (or `split_after`), `inner`, closed by
    /// `merge_substreams` (`merge`) or `concat_substreams`.
    Split {
        after: bool,
        m: u64,
        inner: Inner,
        merge: bool,
    },
    /// `group_by(max, x % m)`, `inner`, `merge_substreams` (or
    /// `concat_substreams`).
    GroupBy {
        m: u64,
        max: usize,
        inner: Inner,
        merge: bool,
    },
    /// `prefix_and_tail(n)` then `flat_map_concat` of the prefix, then
    /// the tail.
    PrefixAndTail(usize),
}

impl Sub {
    /// With `merge_substreams` over `group_by`, the substreams' elements
    /// come as they arrive: compared by counts (as a `merge`).
    pub(crate) fn unordered(self) -> bool {
        matches!(self, Sub::GroupBy { merge: true, .. })
    }

    /// `prefix_and_tail`'s tail runs as a stream of its own in Weir (in
    /// the stage's island in Pekko): its signals may come after the island
    /// is idle, so the runs wait for them (as for `recover_with_retries`),
    /// and what upstream probes see is not compared.
    ///
    /// Also `split_*` and `group_by`: each substream is asked one element
    /// ahead of demand and upstream pulled only when a substream asks (or
    /// a new one may open), as Pekko's `FlattenMerge`, `Split` and
    /// `GroupBy` do, and the regressions below compare the upstream
    /// probes (`check_all_forms`); in random cases a few rare upstream
    /// differences remain (a `scan_async` before `split_after` into a
    /// `fold` asks one element more than the model), so the random runs
    /// compare what reaches downstream only.
    pub(crate) fn runs_inner_stream(self) -> bool {
        true
    }
}

/// The strategy for the random cases (`script.rs`'s `op`).
pub(crate) fn sub() -> impl proptest::strategy::Strategy<Value = Sub> {
    use proptest::prelude::*;
    let inner = prop_oneof![
        Just(Inner::Id),
        (1u64..4).prop_map(Inner::Map),
        (1u64..3).prop_map(Inner::Take),
        Just(Inner::Fold),
    ];
    prop_oneof![
        3 => (any::<bool>(), 2u64..4, inner.clone(), any::<bool>())
            .prop_map(|(after, m, inner, merge)| Sub::Split { after, m, inner, merge }),
        2 => (2u64..4, 1usize..4, inner, any::<bool>())
            .prop_map(|(m, max, inner, merge)| Sub::GroupBy { m, max, inner, merge }),
        1 => (0usize..4).prop_map(Sub::PrefixAndTail),
    ]
}

fn sum(a: u64, x: u64) -> u64 {
    (a + x) % 1000
}

fn close(sf: SubFlow<Source<u64>, u64, u64>, inner: Inner, merge: bool) -> Source<u64> {
    let sf = match inner {
        Inner::Id => sf,
        Inner::Map(k) => sf.map(map(k)),
        Inner::Take(n) => sf.take(n),
        Inner::Fold => sf.fold(0, sum),
    };
    if merge {
        sf.merge_substreams()
    } else {
        sf.concat_substreams()
    }
}

/// The operator as a run builds it.
pub(crate) fn apply(s: Source<u64>, op: Sub) -> Source<u64> {
    match op {
        Sub::Split {
            after,
            m,
            inner,
            merge,
        } => {
            let p = move |x: &u64| x.is_multiple_of(m);
            let sf = if after {
                s.split_after(p)
            } else {
                s.split_when(p)
            };
            close(sf, inner, merge)
        }
        Sub::GroupBy {
            m,
            max,
            inner,
            merge,
        } => close(
            s.group_by(max, move |x| x % m).expect("max is at least 1"),
            inner,
            merge,
        ),
        Sub::PrefixAndTail(n) => {
            s.prefix_and_tail(n)
                .flat_map_concat(|(prefix, tail): (Vec<u64>, Source<u64>)| {
                    Source::from_iter(prefix).concat(tail)
                })
        }
    }
}

/// The message of `group_by`'s failure as the runs report it.
pub(crate) fn too_many(max: usize) -> Sig {
    Sig::Error(format!("TooManySubstreams {{ max: {max} }}"))
}

/// Cases whose order is not defined: with `merge_substreams`, a failure
/// (upstream's, a `limit`'s, `group_by`'s `TooManySubstreams`) that comes
/// in the step a substream's element is on its way; `group_by`'s
/// `TooManySubstreams` with `concat_substreams` too (it asks its
/// substream one element ahead, so an element may be on its way). Pekko's substreams
/// hand elements on through async callbacks, which the failure, within
/// one interpreter, overtakes; Weir delivers the element first. Which of
/// the two happens first is the implementation's, not defined.
pub(crate) fn not_modelled(case: &super::script::Case) -> bool {
    use super::script::{Op, Src, Step};
    // A time operator before a substream operator: its timer's end reaches
    // a tail or substream that runs as a stream of its own, and the runs'
    // wait for its signals and the model's ticks do not agree on the step
    // (the proptest found `take_within` into `prefix_and_tail` differing
    // by a step; both forms do complete, checked by hand). Not modelled.
    let timed = case
        .ops
        .iter()
        .any(|o| o.timed() || matches!(o, Op::Timed(_)) || matches!(o, Op::More(m) if m.timed()));
    if timed && has(case, |_| true) {
        return true;
    }
    // `group_by`'s own failure, with either closer (`concat_substreams`
    // asks its substream ahead too, so an element may be on its way).
    let too_many = has(
        case,
        |s| matches!(s, Sub::GroupBy { m, max, .. } if (max as u64) < m),
    );
    if too_many {
        return true;
    }
    let Some(at) = case.ops.iter().position(|o| {
        matches!(
            o,
            Op::Sub(Sub::Split { merge: true, .. } | Sub::GroupBy { merge: true, .. })
        )
    }) else {
        return false;
    };
    let fails_before = case.ops[..at].iter().any(|o| {
        matches!(
            o,
            Op::Limit(_)
                | Op::Reduce
                | Op::More(super::linear_more::More::LimitWeighted(_))
                | Op::More(super::linear_more::More::Buffer(..))
        )
    });
    fails_before
        || case.sources.iter().any(|s| matches!(s, Src::Failed))
        || case.script.iter().any(|s| matches!(s, Step::Fail(_)))
}

/// Whether `case` has a substream operator that `pred` matches.
pub(crate) fn has(case: &super::script::Case, pred: fn(Sub) -> bool) -> bool {
    case.ops
        .iter()
        .any(|o| matches!(o, super::script::Op::Sub(s) if pred(*s)))
}

// The divergences of these operators (in `KNOWN_DEFECTS`), each with an
// ignored regression test in `regressions`.

/// Found by the differential's survey in simulation (every seed; the
/// real runs show it too, 50 of 50).
pub(crate) const KNOWN_CONCAT_FAILURE: super::KnownDefect = super::KnownDefect {
    issue: "a divergence to settle: a stage's failure before split_* / group_by into \
            concat_substreams (a limit exceeded) overtakes, in Pekko, a substream's \
            element still on its way through async callbacks; Weir delivers that element \
            first (the order merge_substreams is exempt for, see not_modelled). \
            interleave(2) of two probes, limit(3), split_after(x % 2 == 0), \
            concat_substreams; the second probe sends 168, 907, the first 260..275, \
            request 3: Weir 260, 261, 168, the limit's failure; the model 260, 261, the \
            failure",
    forms: &[super::Form::Fused, super::Form::Unfused],
    applies: |case| {
        use super::script::Op;
        case.ops
            .iter()
            .position(|o| {
                matches!(
                    o,
                    Op::Sub(Sub::Split { merge: false, .. } | Sub::GroupBy { merge: false, .. })
                )
            })
            .is_some_and(|at| {
                case.ops[..at].iter().any(|o| {
                    matches!(
                        o,
                        Op::Limit(_)
                            | Op::Reduce
                            | Op::More(super::linear_more::More::LimitWeighted(_))
                    )
                })
            })
    },
};

/// `split_*` after downstream cancels.
pub(crate) const KNOWN_CANCEL: super::KnownDefect = super::KnownDefect {
    issue: "a divergence to settle: after downstream cancels, Pekko's split_when / \
                split_after (Drain) keep the running substream's place and drain \
                upstream up to the next split; Weir cancels upstream at once",
    forms: &[super::Form::Fused, super::Form::Unfused],
    applies: |case| {
        has(case, |s| matches!(s, Sub::Split { .. }))
            && case
                .script
                .iter()
                .any(|s| matches!(s, super::script::Step::Cancel))
    },
};

#[cfg(test)]
mod regressions {
    use super::super::script::{Case, Op, Src, Step};
    use super::{Inner, Sub};

    fn probe(op: Sub, script: Vec<Step>) -> Case {
        Case {
            sources: vec![Src::Probe],
            join: None,
            ops: vec![Op::Sub(op)],
            fan_out: None,
            script,
        }
    }

    /// zip of `from_iter([17, 696, 542])` and a probe, `flat_map_prefix(0)`:
    /// the probe's failure after the zip cancelled it goes nowhere; the
    /// row the tail holds and the completion come on demand
    /// (was a known defect; settled by asking substreams one element
    /// ahead).
    #[test]
    fn a_cancelled_sources_failure_does_not_reach_a_tail() {
        let case = Case {
            sources: vec![Src::Iter(vec![17, 696, 542]), Src::Probe],
            join: Some(super::super::script::Join::Wide(
                super::super::wide::Wide::ZipTuple,
            )),
            ops: vec![Op::Sub(Sub::PrefixAndTail(0))],
            fan_out: None,
            script: vec![
                Step::Push(0, 749),
                Step::Push(0, 379),
                Step::Push(0, 539),
                Step::Request(2),
                Step::Fail(0),
                Step::Request(2),
            ],
        };
        let want = super::super::model::trace(&case);
        // In simulation, settled after each step: the tail's signals are in.
        let sim = weir_actor::sim::Simulation::new(0).expect("a simulation");
        let mat = weir_streams::prelude::Materializer::new(sim.system());
        let got = super::super::run::waiting(&case, false, &mat, sim.clock(), &want);
        sim.shutdown().expect("it terminates");
        let down = |t: &[super::super::script::StepTrace]| -> Vec<_> {
            t.iter().map(|s| s.down.clone()).collect()
        };
        assert_eq!(down(&got), down(&want));
    }

    /// interleave(2) of two probes, `limit(3)`, `split_after(x % 2 == 0)`,
    /// `concat_substreams`: the limit's failure overtakes 168, a
    /// substream's element on its way (`KNOWN_CONCAT_FAILURE`).
    #[test]
    #[ignore = "a divergence to settle: a failure overtakes a substream's element in Pekko (KNOWN_CONCAT_FAILURE)"]
    fn a_failure_before_concat_substreams_overtakes_an_element_on_its_way() {
        crate::check_all_forms(Case {
            sources: vec![Src::Probe, Src::Probe],
            join: Some(super::super::script::Join::Interleave2),
            ops: vec![
                Op::Limit(3),
                Op::Sub(Sub::Split {
                    after: true,
                    m: 2,
                    inner: Inner::Id,
                    merge: false,
                }),
            ],
            fan_out: None,
            script: vec![
                Step::Request(3),
                Step::Push(1, 168),
                Step::Push(1, 907),
                Step::PushMany(0, 260, 15),
            ],
        });
    }

    /// `split_when(x % 2 == 0).concat_substreams()`, `split_after` with a
    /// substream of `take(1)`, `split_when` with `fold`, and
    /// `group_by(2, x % 2).map(..).merge_substreams()`: the model's
    /// demand and ends, which every form shows (none is in
    /// `KNOWN_DEFECTS`, so `check` compares them).
    #[test]
    fn substreams_show_the_demand_and_ends_the_model_gives() {
        let split = |after, inner, merge| Sub::Split {
            after,
            m: 2,
            inner,
            merge,
        };
        for case in [
            probe(
                split(false, Inner::Id, false),
                vec![
                    Step::Request(2),
                    Step::Push(0, 1),
                    Step::Push(0, 2),
                    Step::Complete(0),
                ],
            ),
            probe(
                split(true, Inner::Take(1), true),
                vec![
                    Step::Request(3),
                    Step::Push(0, 2),
                    Step::Push(0, 3),
                    Step::Push(0, 5),
                ],
            ),
            probe(
                split(false, Inner::Fold, false),
                vec![
                    Step::Request(3),
                    Step::Push(0, 1),
                    Step::Push(0, 2),
                    Step::Complete(0),
                ],
            ),
            probe(
                Sub::GroupBy {
                    m: 2,
                    max: 2,
                    inner: Inner::Map(2),
                    merge: true,
                },
                vec![
                    Step::Request(1),
                    Step::Push(0, 1),
                    Step::Push(0, 2),
                    Step::Complete(0),
                ],
            ),
        ] {
            super::super::check(&case).expect("every form agrees");
        }
    }

    /// `group_by(2, x % 3).take(1).merge_substreams()` over 1, 2, 3:
    /// keys 1 and 2 are closed when 3 comes; Pekko counts closed keys
    /// against `max_substreams` (it fails with `TooManySubstreams`); Weir
    /// counted only open substreams and opened a third (while remembering
    /// every closed key, without bound).
    #[test]
    fn group_by_counts_closed_keys_against_max_substreams() {
        super::super::check_all_forms(probe(
            Sub::GroupBy {
                m: 3,
                max: 2,
                inner: Inner::Take(1),
                merge: true,
            },
            vec![
                Step::Request(5),
                Step::Push(0, 1),
                Step::Push(0, 2),
                Step::Push(0, 3),
            ],
        ));
    }

    /// `group_by(3, x % 3).take(1).concat_substreams()`, request(1), 300,
    /// then 928: Pekko's `FlattenMerge(1)` pulls the substream of 928 as
    /// soon as it takes it in (after 300 went out), so `take(1)` takes 928
    /// and cancels, and `group_by` pulls upstream again; Weir started that
    /// substream only when downstream asked (no request).
    #[test]
    fn concat_substreams_pulls_the_next_substream_once_taken_in() {
        super::super::check_all_forms(probe(
            Sub::GroupBy {
                m: 3,
                max: 3,
                inner: Inner::Take(1),
                merge: false,
            },
            vec![Step::Request(1), Step::Push(0, 300), Step::Push(0, 928)],
        ));
    }

    /// `limit(2)` then `split_after(x % 2 == 0).concat_substreams()`,
    /// request(1), 538, 539, 540: 538 ends its substream and goes out; the
    /// next substream is asked at once and takes 539, which waits for
    /// demand; Pekko's `Split` asks upstream only when its substream asks,
    /// so 540 is not requested and `limit` does not fail. Weir's splitting
    /// stage asked upstream whenever it held no element, one ahead of its
    /// substream (the limit failed once substreams were asked ahead).
    #[test]
    fn split_asks_upstream_only_when_its_substream_asks() {
        let mut case = probe(
            Sub::Split {
                after: true,
                m: 2,
                inner: Inner::Id,
                merge: false,
            },
            vec![
                Step::Request(1),
                Step::Push(0, 538),
                Step::Push(0, 539),
                Step::Push(0, 540),
            ],
        );
        case.ops.insert(0, Op::Limit(2));
        super::super::check_all_forms(case);
    }

    /// A probe `prefix_and_tail(0)` flattened (`flat_map_concat` of the
    /// prefix, then the tail); the probe sends 7, the sink asks for 1 (7
    /// comes through the tail), the probe completes: the stream completes
    /// (no demand needed). Weir did not complete: a flattening stage ran
    /// its inner island's events only when polled on demand, so the tail's
    /// end never reached it while the sink asked for nothing.
    #[test]
    fn a_tail_ends_without_demand() {
        let case = probe(
            Sub::PrefixAndTail(0),
            vec![Step::Push(0, 7), Step::Request(1), Step::Complete(0)],
        );
        let want = super::super::model::trace(&case);
        let (system, clock) = weir_tests::clocked_system("signals-tail");
        let mat = weir_streams::prelude::Materializer::new(&system);
        let got = super::super::run::waiting(&case, false, &mat, &clock, &want);
        weir_tests::shutdown(&system);
        assert_eq!(got, want);
    }

    /// `split_when(x % 2 == 0).concat_substreams()`, request(1), 1, then
    /// cancel: Pekko's `Split` (Drain) keeps its running substream's place
    /// and drains upstream up to the next split (no cancellation yet);
    /// Weir cancels upstream at once.
    #[test]
    #[ignore = "known divergence: split_* drains upstream after downstream cancels in Pekko"]
    fn split_drains_up_to_the_next_split_after_downstream_cancels() {
        super::super::check_all_forms(probe(
            Sub::Split {
                after: false,
                m: 2,
                inner: Inner::Id,
                merge: false,
            },
            vec![Step::Request(1), Step::Push(0, 1), Step::Cancel],
        ));
    }
}
