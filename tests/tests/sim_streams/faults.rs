//! Stream faults in simulation: a stage's supervised user code panics at
//! seeded steps (`stage_panics`), boundaries hand over one element at a
//! time (`small_batches`); supervision and failure propagation hold.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use weir_actor::sim::{Simulation, SimulationBuilder, seeds};
use weir_streams::prelude::*;
use weir_streams::{Attributes, Directive, ErrorKind, SupervisionStrategy};

use super::SEEDS;

/// The panic message of an injected stage fault.
const INJECTED: &str = "a panic injected by the simulation";

/// Every seed injects stage panics; odd seeds also hand over one element
/// at a time.
fn faulty(seed: u64) -> SimulationBuilder {
    Simulation::builder(seed)
        .system(|s| s.throughput(1 + (seed % 3) as usize))
        .stage_panics(0.03)
        .small_batches(if seed % 2 == 1 { 1.0 } else { 0.0 })
}

/// `directive` for every failure, counted in `decided`.
fn counting(directive: Directive, decided: &Arc<AtomicU64>) -> Attributes {
    let decided = decided.clone();
    Attributes::new().with_supervision_strategy(SupervisionStrategy::from_fn(move |error| {
        assert!(
            matches!(error.kind(), ErrorKind::Panicked(m) if m.contains(INJECTED)),
            "only injected panics here: {error}"
        );
        decided.fetch_add(1, Ordering::Relaxed);
        directive
    }))
}

/// Three streams across boundaries, run together, each with a supervised
/// stage the faults hit: a resuming `map` loses exactly the elements
/// whose call panicked, in order, nothing doubled; a restarting `scan`
/// (of ones) starts again from its seed after each panic, dropping that
/// element; a stopping `map` fails its stream with the panic, cancels its
/// endless upstream (watched) and reaches the sink, or, not hit, passes
/// everything. Over every seed, the faults must have hit.
#[test]
fn supervision_and_failure_propagation_hold_under_stage_faults() {
    let n = 300u64;
    let mut injected = 0;
    for seed in seeds(SEEDS) {
        let sim = faulty(seed).build().unwrap();
        let mat = Materializer::new(sim.system());
        let [resumed, restarted, stopped, calls] = [(); 4].map(|()| Arc::new(AtomicU64::new(0)));

        let counted = calls.clone();
        let resuming = Source::from_iter(0..n)
            .async_boundary()
            .map(move |x| {
                counted.fetch_add(1, Ordering::Relaxed);
                x * 2
            })
            .with_attributes(counting(Directive::Resume, &resumed))
            .async_boundary()
            .run_with(Sink::collect(), &mat);
        let restarting = Source::repeat(1u64)
            .take(n)
            .async_boundary()
            .scan(0u64, |a, x| a + x)
            .with_attributes(counting(Directive::Restart, &restarted))
            .async_boundary()
            .run_with(Sink::collect(), &mat);
        let (upstream_ended, stopping) = Source::from_iter(0u64..)
            .via_mat(Flow::watch_termination(), Keep::right)
            .async_boundary()
            .map(|x| x)
            .with_attributes(counting(Directive::Stop, &stopped))
            .async_boundary()
            .take(n)
            .to_mat(Sink::collect(), Keep::both)
            .run(&mat);

        let got = resuming
            .wait()
            .expect("a resuming stage never fails its stream");
        let resumed = resumed.load(Ordering::Relaxed);
        assert!(
            got.windows(2).all(|w| w[0] < w[1]),
            "seed {seed}: in order, once"
        );
        assert!(got.iter().all(|x| x % 2 == 0 && *x < 2 * n), "seed {seed}");
        assert_eq!(
            got.len() as u64,
            calls.load(Ordering::Relaxed),
            "seed {seed}"
        );
        assert_eq!(
            got.len() as u64 + resumed,
            n,
            "seed {seed}: each panic drops one"
        );

        let got = restarting
            .wait()
            .expect("a restarting stage never fails its stream");
        let restarted = restarted.load(Ordering::Relaxed);
        assert_eq!(got.first(), Some(&0), "seed {seed}: the seed first");
        let resets = got.windows(2).filter(|w| w[1] != w[0] + 1).count() as u64;
        assert!(
            got.windows(2).all(|w| w[1] == w[0] + 1 || w[1] == 1),
            "seed {seed}: counting on, or again from the seed: {got:?}"
        );
        assert!(resets <= restarted, "seed {seed}");
        assert_eq!(got.len() as u64, 1 + n - restarted, "seed {seed}");

        let stopped = stopped.load(Ordering::Relaxed);
        match stopping.wait() {
            Ok(got) => {
                assert_eq!(stopped, 0, "seed {seed}: a stopped stage fails its stream");
                assert_eq!(got, (0..n).collect::<Vec<_>>(), "seed {seed}");
            }
            Err(error) => {
                assert_eq!(stopped, 1, "seed {seed}: one panic stops it");
                assert!(
                    matches!(error.kind(), ErrorKind::Panicked(m) if m.contains(INJECTED)),
                    "seed {seed}: the sink sees the panic: {error}"
                );
                // The endless upstream is cancelled with the failure
                // (a wait that never ended would panic: the simulation
                // falls quiet first).
                let cause = upstream_ended
                    .wait()
                    .expect_err("cancelled with the failure");
                assert!(
                    matches!(cause.kind(), ErrorKind::Panicked(m) if m.contains(INJECTED)),
                    "seed {seed}: {cause}"
                );
            }
        }
        injected += resumed + restarted + stopped;
        sim.shutdown().unwrap();
    }
    if std::env::var_os(weir_actor::sim::SEED_VAR).is_none() {
        assert!(injected > 0, "the faults hit no stage over {SEEDS} seeds");
    }
}

/// One element per hand-over changes nothing a subscriber sees: two
/// sources across boundaries into a merge, a small buffer and more
/// boundaries deliver everything once, in order per source, with and
/// without the fault; with it the runs take other turns (the fault is
/// on: a hand-over per element, not per batch).
#[test]
fn boundaries_in_the_smallest_pieces_deliver_everything_once() {
    let mut changed = 0;
    for seed in seeds(SEEDS) {
        let n = 100 + seed * 13 % 200;
        let run = |small: bool| {
            let sim = faulty(seed)
                .stage_panics(0.0)
                .small_batches(if small { 1.0 } else { 0.0 })
                .build()
                .unwrap();
            let mat = Materializer::new(sim.system());
            let merged = Source::from_iter(0..n)
                .async_boundary()
                .merge(Source::from_iter(n..2 * n).async_boundary())
                .async_boundary()
                .buffer(3, OverflowStrategy::Backpressure)
                .unwrap()
                .async_boundary()
                .run_with(Sink::collect(), &mat);
            let mut got = merged.wait().unwrap();
            let (low, high): (Vec<u64>, Vec<u64>) = got.iter().partition(|x| **x < n);
            assert_eq!(
                low,
                (0..n).collect::<Vec<_>>(),
                "seed {seed}: in order, once"
            );
            assert_eq!(high, (n..2 * n).collect::<Vec<_>>(), "seed {seed}");
            got.sort_unstable();
            assert_eq!(got, (0..2 * n).collect::<Vec<_>>(), "seed {seed}");
            let trace = sim.trace();
            sim.shutdown().unwrap();
            trace
        };
        if run(false) != run(true) {
            changed += 1;
        }
    }
    if std::env::var_os(weir_actor::sim::SEED_VAR).is_none() {
        assert!(changed > 0, "the fault changed no run over {SEEDS} seeds");
    }
}
