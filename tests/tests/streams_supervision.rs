//! Stage supervision (`Attributes::with_supervision_strategy`): stop, resume and restart on each supervised operator, fused and unfused, against a model.

use std::sync::Once;

use proptest::prelude::*;
use weir_streams::prelude::*;
use weir_streams::{Attributes, Directive, ErrorKind, SupervisionStrategy};
use weir_tests::{shutdown, stream_system};

/// Injected panics (their messages say "injected") would print a line
/// each; keep the output readable, and every other panic as it was.
fn quiet_panics() {
    static QUIET: Once = Once::new();
    QUIET.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let payload = info.payload();
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            if !message.contains("injected") {
                default(info);
            }
        }));
    });
}

fn with(strategy: SupervisionStrategy) -> Attributes {
    Attributes::new().with_supervision_strategy(strategy)
}

/// Both materializers of `system`: fused (the default) and unfused.
fn both(system: &weir_actor::ActorSystem) -> [Materializer; 2] {
    [
        Materializer::new(system),
        Materializer::builder(system).fusion(false).build(),
    ]
}

fn is_panic(result: &Result<impl std::fmt::Debug, StreamError>, message: &str) -> bool {
    matches!(result, Err(e) if matches!(e.kind(), ErrorKind::Panicked(m) if m.contains(message)))
}

#[test]
fn map_stops_by_default_resumes_and_restarts_with_fresh_state() {
    quiet_panics();
    let (system, _) = stream_system("supervision-map");
    for mat in both(&system) {
        // A counter in the closure shows whether the step was made afresh.
        let counted = || {
            let mut calls = 0u32;
            move |x: u32| {
                calls += 1;
                assert!(x != 3, "three injected");
                (x, calls)
            }
        };
        let run = |attributes: Option<Attributes>| {
            let source = Source::range(1u32..=5).map(counted());
            let source = match attributes {
                Some(a) => source.with_attributes(a),
                None => source,
            };
            source.run_with(Sink::collect(), &mat).wait()
        };
        assert!(is_panic(&run(None), "three"));
        assert!(is_panic(
            &run(Some(with(SupervisionStrategy::stopping()))),
            "three"
        ));
        assert_eq!(
            run(Some(with(SupervisionStrategy::resuming()))),
            Ok(vec![(1, 1), (2, 2), (4, 4), (5, 5)])
        );
        assert_eq!(
            run(Some(with(SupervisionStrategy::restarting()))),
            Ok(vec![(1, 1), (2, 2), (4, 1), (5, 2)])
        );
    }
    shutdown(&system);
}

#[test]
fn filter_and_filter_map_resume_past_a_panicking_predicate() {
    quiet_panics();
    let (system, _) = stream_system("supervision-filter");
    for mat in both(&system) {
        let evens = Source::range(0u32..10)
            .filter(|x| {
                assert!(x % 3 != 0, "multiple of three injected");
                x % 2 == 0
            })
            .with_attributes(with(SupervisionStrategy::resuming()))
            .map(|x| x * 10)
            .run_with(Sink::collect(), &mat);
        assert_eq!(evens.wait(), Ok(vec![20, 40, 80]));
        let odd_tens = Source::range(1u32..=5)
            .filter_map(|x| {
                assert!(x != 3, "three injected");
                (x % 2 == 1).then_some(x * 10)
            })
            .with_attributes(with(SupervisionStrategy::resuming()))
            .run_with(Sink::collect(), &mat);
        assert_eq!(odd_tens.wait(), Ok(vec![10, 50]));
    }
    shutdown(&system);
}

#[test]
fn scan_and_fold_restart_from_their_seed_and_resume_with_their_value() {
    quiet_panics();
    let (system, _) = stream_system("supervision-scan");
    let add = |a: u32, x: u32| {
        assert!(x != 3, "three injected");
        a + x
    };
    for mat in both(&system) {
        let scan = |s| {
            Source::range(1u32..=5)
                .scan(0, add)
                .with_attributes(with(s))
                .run_with(Sink::collect(), &mat)
                .wait()
        };
        assert_eq!(
            scan(SupervisionStrategy::resuming()),
            Ok(vec![0, 1, 3, 7, 12])
        );
        // The seed is not emitted again.
        assert_eq!(
            scan(SupervisionStrategy::restarting()),
            Ok(vec![0, 1, 3, 4, 9])
        );
        assert!(is_panic(&scan(SupervisionStrategy::stopping()), "three"));
        let fold = |s| {
            Source::range(1u32..=5)
                .fold(0, add)
                .with_attributes(with(s))
                .run_with(Sink::collect(), &mat)
                .wait()
        };
        assert_eq!(fold(SupervisionStrategy::resuming()), Ok(vec![12]));
        assert_eq!(fold(SupervisionStrategy::restarting()), Ok(vec![9]));
        assert!(is_panic(&fold(SupervisionStrategy::stopping()), "three"));
        let unsupervised = Source::range(1u32..=5)
            .fold(0, add)
            .run_with(Sink::collect(), &mat)
            .wait();
        assert!(is_panic(&unsupervised, "three"));
    }
    shutdown(&system);
}

#[test]
fn map_concat_drops_the_rest_of_a_failing_elements_outputs() {
    quiet_panics();
    let (system, mat) = stream_system("supervision-map-concat");
    // A panic in `f` (for 2) and one inside the iterator it gave (for 3,
    // after its first output, found by the look-ahead).
    let out = Source::range(1u32..=4)
        .map_concat(|x| {
            assert!(x != 2, "two injected");
            (0..3).map(move |i| {
                assert!(!(x == 3 && i == 1), "inside injected");
                x * 10 + i
            })
        })
        .with_attributes(with(SupervisionStrategy::resuming()))
        .run_with(Sink::collect(), &mat);
    assert_eq!(out.wait(), Ok(vec![10, 11, 12, 30, 40, 41, 42]));
    let stopped = Source::range(1u32..=4)
        .map_concat(|x| {
            assert!(x != 2, "two injected");
            vec![x]
        })
        .run_with(Sink::collect(), &mat);
    assert!(is_panic(&stopped.wait(), "two"));
    shutdown(&system);
}

#[test]
fn map_async_drops_failed_futures_and_panics_under_resume_and_restart() {
    quiet_panics();
    let (system, mat) = stream_system("supervision-map-async");
    let job = |x: u32| {
        assert!(x != 2, "two injected");
        async move {
            if x == 4 {
                Err(StreamError::msg("four"))
            } else {
                Ok(x * 10)
            }
        }
    };
    let resume = with(SupervisionStrategy::resuming());
    let ordered = Source::range(1u32..=5)
        .map_async(2, job)
        .unwrap()
        .with_attributes(resume.clone())
        .run_with(Sink::collect(), &mat);
    assert_eq!(ordered.wait(), Ok(vec![10, 30, 50]));
    let unordered = Source::range(1u32..=5)
        .map_async_unordered(2, job)
        .unwrap()
        .with_attributes(with(SupervisionStrategy::restarting()))
        .run_with(Sink::collect(), &mat);
    let mut all = unordered.wait().unwrap();
    all.sort_unstable();
    assert_eq!(all, vec![10, 30, 50]);
    // Without a strategy the future's error fails the stream, as before.
    let failed = Source::range(3u32..=5)
        .map_async(2, job)
        .unwrap()
        .run_with(Sink::collect(), &mat);
    assert!(matches!(failed.wait(), Err(e) if e.to_string().contains("four")));
    // A decider that resumes only panics stops at the future's error.
    let only_panics = SupervisionStrategy::from_fn(|e: &StreamError| match e.kind() {
        ErrorKind::Panicked(_) => Directive::Resume,
        _ => Directive::Stop,
    });
    let out = Source::range(1u32..=5)
        .map_async(1, job)
        .unwrap()
        .with_attributes(with(only_panics))
        .run_with(Sink::collect(), &mat);
    assert!(matches!(out.wait(), Err(e) if e.to_string().contains("four")));
    shutdown(&system);
}

#[test]
fn a_panicking_decider_fails_the_stream_and_the_system_goes_on() {
    quiet_panics();
    let (system, _) = stream_system("supervision-decider");
    for mat in both(&system) {
        let broken = SupervisionStrategy::from_fn(|_| panic!("decider broke injected"));
        let out = Source::range(1u32..=3)
            .map(|x| {
                assert!(x != 2, "two injected");
                x
            })
            .with_attributes(with(broken.clone()))
            .run_with(Sink::collect(), &mat);
        assert!(is_panic(&out.wait(), "decider broke"));
        let scan = Source::range(1u32..=3)
            .scan(0, |a, x| {
                assert!(x != 2, "two injected");
                a + x
            })
            .with_attributes(with(broken))
            .run_with(Sink::collect(), &mat);
        assert!(is_panic(&scan.wait(), "decider broke"));
        let fine = Source::range(1u32..=3)
            .map(|x| x * 2)
            .run_with(Sink::collect(), &mat);
        assert_eq!(fine.wait(), Ok(vec![2, 4, 6]));
    }
    shutdown(&system);
}

#[test]
fn supervised_steps_fuse_into_runs_sinks_and_boundaries() {
    quiet_panics();
    let (system, mat) = stream_system("supervision-fused");
    let odd_panics = |x: u64| {
        assert!(x.is_multiple_of(2), "odd injected");
        x
    };
    // A run of steps with a supervised one inside, into a folding sink,
    // across a boundary (its downstream half runs the steps).
    let sum = Source::range(0u64..100)
        .map(|x| x + 1)
        .map(odd_panics)
        .with_attributes(with(SupervisionStrategy::resuming()))
        .map(|x| x / 2)
        .async_boundary()
        .map(|x| {
            assert!(x != 7, "seven injected");
            x
        })
        .with_attributes(with(SupervisionStrategy::resuming()))
        .run_with(Sink::fold(0, |a, x| a + x), &mat);
    assert_eq!(sum.wait(), Ok((1..=50).sum::<u64>() - 7));
    shutdown(&system);
}

/// One operator of a random chain: what it does, when it panics
/// (elements divisible by `panic_on`; 0: never) and its strategy.
#[derive(Debug, Clone)]
struct Op {
    kind: Kind,
    panic_on: u64,
    strategy: Option<Directive>,
}

#[derive(Debug, Clone)]
enum Kind {
    /// `(x * k + calls) % 1000`: the call count is state a restart resets.
    Map(u64),
    Filter(u64),
    TakeWhile(u64),
    SkipWhile(u64),
    Scan,
    /// `x, x + 1, ..` (`r` of them); panics on its first output.
    MapConcat(u64),
}

fn op() -> impl Strategy<Value = Op> {
    let kind = prop_oneof![
        3 => (1u64..5).prop_map(Kind::Map),
        2 => (2u64..4).prop_map(Kind::Filter),
        1 => (200u64..1000).prop_map(Kind::TakeWhile),
        1 => (0u64..300).prop_map(Kind::SkipWhile),
        1 => Just(Kind::Scan),
        1 => (0u64..3).prop_map(Kind::MapConcat),
    ];
    let strategy = prop_oneof![
        Just(None),
        Just(Some(Directive::Stop)),
        Just(Some(Directive::Resume)),
        Just(Some(Directive::Restart)),
    ];
    let panic_on = prop_oneof![Just(0u64), 5u64..13];
    (kind, panic_on, strategy).prop_map(|(kind, panic_on, strategy)| Op {
        kind,
        panic_on,
        strategy,
    })
}

fn panics(panic_on: u64, x: u64) -> bool {
    panic_on != 0 && x.is_multiple_of(panic_on)
}

fn build(ops: &[Op], input: Vec<u64>) -> Source<u64> {
    let mut source = Source::from_iter(input);
    for op in ops {
        let p = op.panic_on;
        let check = move |x: u64| assert!(!panics(p, x), "injected");
        source = match op.kind {
            Kind::Map(k) => {
                let mut calls = 0;
                source.map(move |x| {
                    calls += 1;
                    check(x);
                    (x * k + calls) % 1000
                })
            }
            Kind::Filter(d) => source.filter(move |x| {
                check(*x);
                x % d != 0
            }),
            Kind::TakeWhile(l) => source.take_while(move |x| {
                check(*x);
                *x < l
            }),
            Kind::SkipWhile(l) => source.skip_while(move |x| {
                check(*x);
                *x < l
            }),
            Kind::Scan => source.scan(0, move |a, x| {
                check(x);
                (a + x) % 1000
            }),
            Kind::MapConcat(r) => source.map_concat(move |x| {
                (0..r).map(move |i| {
                    check(x);
                    (x + i) % 1000
                })
            }),
        };
        if let Some(directive) = op.strategy {
            source = source.with_attributes(with(SupervisionStrategy::from_fn(move |_| directive)));
        }
    }
    source
}

/// Per-operator state of the model.
#[derive(Clone)]
struct State {
    calls: u64,
    acc: u64,
    skipping: bool,
}

/// What a failure does: `Err` stops; `Ok(restart)` drops the element.
fn decide(op: &Op) -> Result<bool, ()> {
    match op.strategy {
        None | Some(Directive::Stop) => Err(()),
        Some(Directive::Resume) => Ok(false),
        Some(Directive::Restart) => Ok(true),
    }
}

/// Push `x` into operator `i`; `Ok(true)` when the stream completed.
fn push(
    ops: &[Op],
    states: &mut [State],
    i: usize,
    x: u64,
    out: &mut Vec<u64>,
) -> Result<bool, ()> {
    let Some(op) = ops.get(i) else {
        out.push(x);
        return Ok(false);
    };
    let failed = panics(op.panic_on, x);
    let state = &mut states[i];
    match op.kind {
        Kind::Map(k) => {
            state.calls += 1;
            if failed {
                if decide(op)? {
                    state.calls = 0;
                }
                return Ok(false);
            }
            let y = (x * k + state.calls) % 1000;
            push(ops, states, i + 1, y, out)
        }
        Kind::Filter(d) => match (failed, !x.is_multiple_of(d)) {
            (true, _) => decide(op).map(|_| false),
            (false, true) => push(ops, states, i + 1, x, out),
            (false, false) => Ok(false),
        },
        Kind::TakeWhile(l) => match (failed, x < l) {
            (true, _) => decide(op).map(|_| false),
            (false, true) => push(ops, states, i + 1, x, out),
            (false, false) => Ok(true),
        },
        Kind::SkipWhile(l) => {
            if state.skipping {
                if failed {
                    // A restart makes a fresh step: skipping again (it is).
                    return decide(op).map(|_| false);
                }
                if x < l {
                    return Ok(false);
                }
                state.skipping = false;
            }
            push(ops, states, i + 1, x, out)
        }
        Kind::Scan => {
            if failed {
                if decide(op)? {
                    state.acc = 0;
                }
                return Ok(false);
            }
            state.acc = (state.acc + x) % 1000;
            let acc = state.acc;
            push(ops, states, i + 1, acc, out)
        }
        Kind::MapConcat(r) => {
            if r > 0 && failed {
                return decide(op).map(|_| false);
            }
            for j in 0..r {
                if push(ops, states, i + 1, (x + j) % 1000, out)? {
                    return Ok(true);
                }
            }
            Ok(false)
        }
    }
}

/// The chain run element by element, as the stream does.
fn model(ops: &[Op], input: &[u64]) -> Result<Vec<u64>, ()> {
    let mut states = vec![
        State {
            calls: 0,
            acc: 0,
            skipping: true
        };
        ops.len()
    ];
    let mut out = Vec::new();
    // Each scan emits its seed at the first pull, the most downstream first.
    for i in (0..ops.len()).rev() {
        if matches!(ops[i].kind, Kind::Scan) && push(ops, &mut states, i + 1, 0, &mut out)? {
            return Ok(out);
        }
    }
    for &x in input {
        if push(ops, &mut states, 0, x, &mut out)? {
            break;
        }
    }
    Ok(out)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn supervised_chains_agree_fused_unfused_and_with_the_model(
        input in prop::collection::vec(0u64..1000, 0..40),
        ops in prop::collection::vec(op(), 1..6),
    ) {
        quiet_panics();
        let (system, _) = stream_system("supervision-differential");
        let expected = model(&ops, &input);
        for mat in both(&system) {
            let got = build(&ops, input.clone()).run_with(Sink::collect(), &mat).wait();
            match (&expected, &got) {
                (Ok(want), Ok(got)) => prop_assert_eq!(want, got),
                (Err(()), Err(e)) => prop_assert!(is_panic(&got, "injected"), "{e}"),
                _ => prop_assert!(false, "model {expected:?}, stream {got:?} for {ops:?}"),
            }
        }
        shutdown(&system);
    }
}
