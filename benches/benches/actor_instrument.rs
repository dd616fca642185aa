//! What instrumentation costs: ping-pong and gated tell batches with no hook,
//! a no-op hook and a counting hook, in one run, interleaved, reporting
//! median ns per message and ratios against no hook, plus allocations per
//! message (counting global allocator).
//!
//! Hooks are installed as their concrete types (`Arc::new(Counting)`, as a
//! user installs one, and as `profile_instrument` counts instructions for),
//! so the hook's methods are called statically inside the guard; the last
//! row installs the counting hook as an `Arc<dyn Instrumentation>`, which
//! adds a second dynamic call per method.
//!
//! `cargo bench -p weir-benches --bench actor_instrument`
//!
//! The baseline without the machinery compiled in is the same bench built
//! with `RUSTFLAGS="--cfg weir_no_instrument"` (its own target dir keeps the
//! two builds apart); it runs the no-hook configuration only.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use weir_actor::{ActorSystem, ActorSystemBuilder, Instrumentation, MessageInfo};
use weir_benches::CountingAlloc;
use weir_benches::gated_tell::GatedTell;
use weir_benches::ping_pong::PingPong;

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc::new();

const HITS: u64 = 100_000;
const BATCH: u64 = 10_000;
const ROUNDS_DEFAULT: usize = 31;

struct NoOp;
impl Instrumentation for NoOp {}

#[derive(Default)]
struct Counting(AtomicU64);
impl Instrumentation for Counting {
    fn before_message(&self, _: &MessageInfo<'_>) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

struct Setup {
    name: &'static str,
    system: ActorSystem,
    ping_pong: PingPong,
    gated: GatedTell,
}

fn setup(name: &'static str, install: fn(ActorSystemBuilder) -> ActorSystemBuilder) -> Setup {
    let system = install(ActorSystem::builder().name(name).threads(1))
        .build()
        .unwrap();
    let ping_pong = PingPong::new(&system);
    let gated = GatedTell::new(&system);
    Setup {
        name,
        system,
        ping_pong,
        gated,
    }
}

/// ns per message of one ping-pong round.
fn ping_pong(s: &Setup) -> f64 {
    let start = Instant::now();
    s.ping_pong.play(HITS);
    start.elapsed().as_nanos() as f64 / (HITS + 1) as f64
}

/// ns per message of one gated batch (the mailbox is filled first).
fn gated_tell(s: &Setup) -> f64 {
    s.gated.run(BATCH)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn allocations_per_message(s: &Setup) -> f64 {
    for _ in 0..3 {
        ping_pong(s);
        gated_tell(s);
    }
    let before = ALLOC.allocations();
    ping_pong(s);
    gated_tell(s);
    (ALLOC.allocations() - before) as f64 / (HITS + 1 + BATCH + 2) as f64
}

fn main() {
    let compiled_in = !cfg!(weir_no_instrument);
    let mut setups = vec![setup("none", |b| b)];
    if compiled_in {
        setups.push(setup("noop", |b| b.instrumentation(Arc::new(NoOp))));
        setups.push(setup("counting", |b| {
            b.instrumentation(Arc::new(Counting::default()))
        }));
        setups.push(setup("count-dyn", |b| {
            let hook: Arc<dyn Instrumentation> = Arc::new(Counting::default());
            b.instrumentation(hook)
        }));
    }
    println!(
        "instrumentation machinery compiled in: {}",
        if compiled_in {
            "yes"
        } else {
            "no (--cfg weir_no_instrument)"
        }
    );
    let allocs: Vec<f64> = setups.iter().map(allocations_per_message).collect();
    let mut pp = vec![Vec::new(); setups.len()];
    let mut tell = vec![Vec::new(); setups.len()];
    let rounds: usize = std::env::var("WEIR_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(ROUNDS_DEFAULT);
    for round in 0..rounds {
        // Rotate the order each round so no configuration always goes first.
        for k in 0..setups.len() {
            let i = (k + round) % setups.len();
            pp[i].push(ping_pong(&setups[i]));
            tell[i].push(gated_tell(&setups[i]));
        }
    }
    let (pp, tell): (Vec<f64>, Vec<f64>) = (
        pp.into_iter().map(median).collect(),
        tell.into_iter().map(median).collect(),
    );
    println!(
        "medians over {rounds} interleaved rounds (ping-pong: {HITS} hits; gated tell: batches of {BATCH}):"
    );
    println!(
        "{:<10} {:>14} {:>10} {:>16} {:>10} {:>14}",
        "hook", "ping-pong ns", "ratio", "gated tell ns", "ratio", "allocs/msg"
    );
    for (i, s) in setups.iter().enumerate() {
        println!(
            "{:<10} {:>14.2} {:>10.3} {:>16.2} {:>10.3} {:>14.6}",
            s.name,
            pp[i],
            pp[i] / pp[0],
            tell[i],
            tell[i] / tell[0],
            allocs[i]
        );
    }
    for s in setups {
        s.system.terminate().wait().unwrap();
    }
}
