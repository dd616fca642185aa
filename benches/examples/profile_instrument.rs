//! The gated-tell workload of the `actor_instrument` bench in a loop, with no
//! hook, a no-op hook or a counting hook (one relaxed atomic add per
//! message), for a profiler, and the instruction counts per message of each
//! under callgrind.
//!
//! ```sh
//! cargo build --release -p weir-benches --example profile_instrument
//! # one workload, for perf or callgrind: RUNS batches of 10,000 tells
//! target/release/examples/profile_instrument [none|noop|counting] [RUNS]
//! # instructions per message of each hook, counted by callgrind
//! target/release/examples/profile_instrument report [--baseline NAME=PATH]...
//! ```
//!
//! `report` runs each workload under `valgrind --tool=callgrind` at two run
//! counts and divides the difference in instructions by the difference in
//! messages, so start-up and shut-down cancel out. `--baseline NAME=PATH`
//! measures another build of this example in the same report (e.g. the
//! previous commit's, or one built with `RUSTFLAGS="--cfg
//! weir_no_instrument"`, which runs `none` only).

use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use weir_actor::{ActorSystem, Instrumentation, MessageInfo};
use weir_benches::gated_tell::GatedTell;

const BATCH: u64 = 10_000;
/// Messages the worker handles per run: the gate, the batch, the reply.
const PER_RUN: u64 = BATCH + 2;
/// The two run counts of `report`.
const FEW: u64 = 20;
const MANY: u64 = 120;

struct NoOp;
impl Instrumentation for NoOp {}

#[derive(Default)]
struct Counting(AtomicU64);
impl Instrumentation for Counting {
    fn before_message(&self, _: &MessageInfo<'_>) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

fn workload(hook: &str, runs: u64) {
    let mut builder = ActorSystem::builder().name("profile").threads(1);
    match hook {
        "none" => {}
        "noop" => builder = builder.instrumentation(Arc::new(NoOp)),
        "counting" => builder = builder.instrumentation(Arc::new(Counting::default())),
        other => panic!("unknown hook {other}: none, noop or counting"),
    }
    let system = builder.build().expect("valid settings");
    let gated = GatedTell::new(&system);
    let total: f64 = (0..runs).map(|_| gated.run(BATCH)).sum();
    println!("{:.2} ns/msg", total / runs as f64);
    system.terminate().wait().expect("outside the system");
}

/// Instructions callgrind counts for one workload.
fn instructions(binary: &str, hook: &str, runs: u64) -> u64 {
    let out = Command::new("valgrind")
        .args([
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            binary,
            hook,
        ])
        .arg(runs.to_string())
        .output()
        .expect("valgrind runs (install it with apt-get install valgrind)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{binary} {hook} {runs} failed:\n{stderr}"
    );
    stderr
        .lines()
        .find_map(|l| {
            l.split_once("Collected :")
                .map(|(_, n)| n.trim().parse().expect("a count"))
        })
        .expect("callgrind reports the instructions collected")
}

fn report(args: &[String]) {
    let this = std::env::current_exe().expect("the path of this binary");
    let mut builds = vec![("this".to_owned(), this.to_string_lossy().into_owned())];
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        let spec = match arg.as_str() {
            "--baseline" => rest.next().expect("--baseline NAME=PATH"),
            other => panic!("unknown argument {other}"),
        };
        let (name, path) = spec.split_once('=').expect("--baseline NAME=PATH");
        builds.push((name.to_owned(), path.to_owned()));
    }
    println!(
        "instructions per message (gated tell: send + handle), callgrind, (I({MANY} runs) - I({FEW} runs)) / ({} messages):",
        (MANY - FEW) * PER_RUN
    );
    println!("  valgrind --tool=callgrind --callgrind-out-file=/dev/null <binary> <hook> <runs>");
    println!(
        "{:<16} {:<10} {:>12} {:>14}",
        "build", "hook", "instr/msg", "vs none"
    );
    for (name, binary) in &builds {
        let compiled_out = Command::new(binary)
            .arg("compiled-in")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "no")
            .unwrap_or(false);
        let hooks: &[&str] = if compiled_out {
            &["none"]
        } else {
            &["none", "noop", "counting"]
        };
        let mut none = None;
        for hook in hooks {
            let (few, many) = (
                instructions(binary, hook, FEW),
                instructions(binary, hook, MANY),
            );
            let per = many.saturating_sub(few) as f64 / ((MANY - FEW) * PER_RUN) as f64;
            let base = *none.get_or_insert(per);
            println!("{name:<16} {hook:<10} {per:>12.1} {:>+14.1}", per - base);
        }
        println!("  ({name}: {binary})");
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("report") => report(&args[1..]),
        Some("compiled-in") => println!(
            "{}",
            if cfg!(weir_no_instrument) {
                "no"
            } else {
                "yes"
            }
        ),
        hook => {
            let runs = args.get(1).map_or(200, |r| r.parse().expect("a run count"));
            workload(hook.unwrap_or("none"), runs);
        }
    }
}
