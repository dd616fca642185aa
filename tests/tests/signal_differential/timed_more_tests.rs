//! The random cases of `timed_more.rs`' operators (a proptest and a
//! survey of their own: the cases of `script.rs` seldom move the clock
//! far enough to reach their timers) and the hand-written regressions.

use super::super::script::{Case, Op};
use super::timed;

/// A case around one operator of this module, its script rich in ticks
/// (the random cases of `script.rs` seldom move the clock far enough).
fn timed_case() -> impl proptest::strategy::Strategy<Value = Case> {
    use super::super::script::{Src, Step, legal, op};
    use proptest::prelude::*;
    let source = prop_oneof![
        3 => Just(Src::Probe),
        1 => prop::collection::vec(0u64..1000, 0..6).prop_map(Src::Iter),
    ];
    let step = prop_oneof![
        3 => (1u64..4).prop_map(Step::Request),
        3 => Just(Step::Tick),
        4 => (0u64..1000).prop_map(|x| Step::Push(0, x)),
        1 => (0u64..1000, 5u64..21).prop_map(|(x, n)| Step::PushMany(0, x, n)),
        1 => Just(Step::Complete(0)),
        1 => Just(Step::Fail(0)),
        1 => Just(Step::Cancel),
    ];
    let ops = || prop::collection::vec(op(), 0..2);
    (
        source,
        ops(),
        timed(),
        ops(),
        prop::collection::vec(step, 0..16),
    )
        .prop_map(|(source, before, timed, after, script)| {
            let probes = usize::from(matches!(source, Src::Probe));
            let script = script
                .into_iter()
                .filter(|s| {
                    probes == 1 || matches!(s, Step::Request(_) | Step::Tick | Step::Cancel)
                })
                .collect();
            Case {
                sources: vec![source],
                join: None,
                ops: before
                    .into_iter()
                    .chain([Op::Timed(timed)])
                    .chain(after)
                    .collect(),
                fan_out: None,
                script: legal(script, probes),
            }
        })
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 300, ..Default::default() })]

    /// The operators of this module, with ticks enough to reach their
    /// timers, fused and unfused.
    #[test]
    fn time_and_rate_operators_show_the_signals_the_model_gives(case in timed_case()) {
        if let Err(e) = super::super::check(&case) {
            proptest::prop_assert!(false, "{}", e);
        }
    }
}

/// A survey of [`timed_case`]s (as `survey` in the main file).
#[test]
#[ignore = "a tool for finding divergences, not a check"]
fn survey_timed() {
    use proptest::strategy::{Strategy, ValueTree};
    let n: usize = std::env::var("SIGNAL_SURVEY_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(2000);
    let mut runner = proptest::test_runner::TestRunner::default();
    let strategy = timed_case();
    let mut found = Vec::new();
    for _ in 0..n {
        let case = strategy.new_tree(&mut runner).expect("a case").current();
        if let Err(e) = super::super::surveyed(&case) {
            found.push((case.script.len() + case.ops.len(), e));
        }
    }
    found.sort_by_key(|(size, _)| *size);
    for (_, e) in &found {
        println!("{e}\n");
    }
    println!("{} of {n} cases diverge", found.len());
}

#[cfg(test)]
mod regressions {
    use super::super::super::script::{Join, Op, Src, Step};

    /// A probe `or_else` an iterator, `fold`, `buffer(2)`,
    /// `initial_delay(2 ticks)`: the sink's requests stop at the delay,
    /// so the buffer keeps pulling the fold, and the fold (as Pekko's,
    /// which pulls again in `onPush`) takes each element and asks for the
    /// next. The model's buffer stopped pulling while the sink asked.
    #[test]
    fn a_fold_behind_a_buffer_and_an_initial_delay_asks_after_each_element() {
        super::super::super::check_all_forms(super::super::super::case(
            vec![Src::Probe, Src::Iter(vec![962, 510, 532, 518])],
            Some(Join::OrElse),
            vec![Op::Fold, Op::Buffer(2), Op::InitialDelay(2)],
            vec![
                Step::Push(0, 800),
                Step::Push(0, 747),
                Step::Request(3),
                Step::Request(1),
                Step::Push(0, 815),
                Step::Fail(0),
                Step::Request(3),
            ],
        ));
    }

    /// `from_iter([775, 504, 197, 545]).limit(2).grouped_within(1, 1 tick)`,
    /// request(2): the second group, full as the sink waits for it, goes
    /// at once, before the limit fails on the element pulled after it.
    #[test]
    fn a_full_group_reaches_a_waiting_sink_before_a_failure_behind_it() {
        super::super::super::check_all_forms(super::super::super::case(
            vec![Src::Iter(vec![775, 504, 197, 545])],
            None,
            vec![
                Op::Limit(2),
                Op::Timed(super::super::Timed::GroupedWithin(1, 1)),
            ],
            vec![Step::Request(2)],
        ));
    }

    /// `from_iter([365, 131, 708, 272, 702]).map(..)` throttled to 4 per
    /// tick with no burst, cost `x % 3`: at tick 1 the first element is
    /// held until 1.25 ticks, released at tick 2; the second (cost 2) is
    /// then due at 2.5 ticks, so it comes at tick 3. Some runs (fused or
    /// unfused, from run to run) release it at tick 2 already. Suspected:
    /// the timer the stage sets as the first release runs, while the test
    /// clock's advance is still firing timers, counts from the scheduler's
    /// time of that earlier timer, not the clock's `now`. Run 20 times.
    #[test]
    #[ignore = "known defect: a timer set during a test clock advance may count from the advance's intermediate time"]
    fn a_throttle_holds_its_second_element_until_its_own_time() {
        for _ in 0..20 {
            super::super::super::check_all_forms(super::super::super::case(
                vec![Src::Iter(vec![365, 131, 708, 272, 702])],
                None,
                vec![
                    Op::Map(5),
                    Op::Timed(super::super::Timed::Throttle {
                        elements: 4,
                        per: 1,
                        burst: 0,
                        cost: true,
                        enforcing: false,
                    }),
                ],
                vec![Step::Tick, Step::Request(3), Step::Tick, Step::Tick],
            ));
        }
    }

    /// `delay(1 tick, DropHead)` after a probe: 1 at tick 0 (its timer
    /// fires at tick 1 with no demand), then at tick 1 sixteen more, the
    /// last dropping 1: the new head, 100, is due at tick 2. The sink asks
    /// at tick 1 (not due yet), the clock moves to tick 2: Weir emitted
    /// nothing, ever: its `on_push` armed the timer only when the head
    /// changed, comparing with the head after the drop.
    #[test]
    fn delay_drop_head_sets_a_timer_for_the_new_head() {
        super::super::super::check_all_forms(super::super::super::case(
            vec![Src::Probe],
            None,
            vec![Op::Timed(super::super::Timed::Delay(
                1,
                super::super::Overflow::DropHead,
            ))],
            vec![
                Step::Push(0, 1),
                Step::Tick,
                Step::PushMany(0, 100, 16),
                Step::Request(1),
                Step::Tick,
            ],
        ));
    }

    /// `delay(1 tick, EmitEarly)` after a probe that sends 17 elements
    /// with no demand: Pekko's stage holds its 16 and pulls the 17th only
    /// when downstream waits (then the head goes early to make room);
    /// Weir's pulled it at once and held one over its buffer.
    #[test]
    fn delay_emit_early_pulls_past_a_full_buffer_only_when_downstream_waits() {
        super::super::super::check_all_forms(super::super::super::case(
            vec![Src::Probe],
            None,
            vec![Op::Timed(super::super::Timed::Delay(
                1,
                super::super::Overflow::EmitEarly,
            ))],
            vec![Step::PushMany(0, 1, 17), Step::Request(1)],
        ));
    }
}
