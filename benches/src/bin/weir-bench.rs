//! The `weir-bench` report.
//!
//! ```sh
//! cargo run --release -p weir-benches --bin weir-bench -- pingpong [--messages N] [--pairs N] [--threads N] [--throughput N]
//! cargo run --release -p weir-benches --features peers --bin weir-bench -- peers [--messages N] [--async-messages N] [--runs N] [--only sync|async] [--rows TEXT] [--await ready|yield-once]
//! cargo run --release -p weir-benches --features peers --bin weir-bench -- async-ops [--elements N] [--parallelism N] [--runs N] [--work ready|tokio] [--only TEXT]
//! cargo run --release -p weir-benches --bin weir-bench -- idle [--actors N] [--seconds S] [--streams N] [--kind idle-timeout|actor-ref|queue]
//! cargo run --release -p weir-benches --bin weir-bench -- time [--elements N] [--runs N]
//! cargo run --release -p weir-benches [--features peers] --bin weir-bench -- io [--mib N] [--runs N] [--only TEXT]
//! cargo run --release -p weir-benches [--features peers] --bin weir-bench -- materialize [--graphs N] [--runs N] [--batch N] [--only TEXT]
//! cargo run --release -p weir-benches [--features peers] --bin weir-bench -- islands [--elements N] [--runs N] [--only TEXT]
//! cargo run --release -p weir-benches --features nats --bin weir-bench -- remote [--messages N] [--runs N] [--reliable-messages N] [--js-messages N] [--batch N] [--ref-messages N] [--ref-window N]
//! cargo run --release -p weir-benches --features sim --bin weir-bench -- sim [--pairs N] [--hits N] [--elements N] [--runs N]
//! ```
//!
//! `sim` reports the steps per second of the deterministic simulation on
//! ping-pong rallies (one step per message) and on a stream of three
//! islands.
//!
//! `pingpong` is Akka.NET's PingPong: `pairs` client/echo pairs (default: one
//! per core), each client sends a burst of 1000, then one more per reply until
//! its share of `messages` (default 10,000,000, counting both directions) is
//! done. One row per dispatcher throughput setting, each on a new system.
//!
//! `idle` spawns `actors` actors (default 10,000), sends each one message,
//! then measures the CPU time the process uses over `seconds` (default 5) of
//! idleness, and its thread count. With `--streams N` it first starts N
//! streams, each `queue -> idle_timeout(1 h) -> ignore`, and reports their
//! memory (resident set growth) and the idle CPU with them running.
//!
//! `time` runs `range -> map -> throttle -> fold` (a throttle that never
//! delays) against the same pipeline with a plain interpreted map stage in
//! its place: medians of `--runs`, and the ratio.

use std::time::{Duration, Instant};

use weir_actor::{Actor, ActorSystem, Context, Props};
use weir_benches::akka_pingpong::{self, BURST, Load, threads_now};

const THROUGHPUTS: [usize; 8] = [1, 5, 10, 20, 50, 100, 200, 500];

fn pingpong(args: &Args) {
    let pairs = args
        .get("--pairs")
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from) as u64);
    let messages = args.get("--messages").unwrap_or(10_000_000);
    println!(
        "PingPong: {pairs} pairs ({} actors), {messages} messages, burst {BURST}",
        pairs * 2
    );
    println!(
        "{:>10} {:>14} {:>10} {:>14} {:>12}",
        "throughput", "msgs/s", "total ms", "threads start", "threads end"
    );
    let threads = args.get("--threads").map(|t| t as usize);
    let load = Load {
        pairs: pairs as usize,
        messages,
    };
    let rows: Vec<usize> = match args.get("--throughput") {
        Some(t) => vec![t as usize],
        None => THROUGHPUTS.to_vec(),
    };
    for throughput in rows {
        let m = akka_pingpong::weir(load, Some(throughput), threads);
        let rate = (load.total() as f64 / m.elapsed.as_secs_f64()) as u64;
        let ms = m.elapsed.as_millis();
        println!(
            "{throughput:>10} {rate:>14} {ms:>10} {:>14} {:>12}",
            m.threads_start, m.threads_end
        );
    }
}

/// CPU seconds (user + system) this process has used so far.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    // After the command name: state is field 0, utime 11, stime 12 (clock ticks).
    let ticks: f64 = fields.get(11..13).map_or(0.0, |f| {
        f.iter().filter_map(|v| v.parse::<f64>().ok()).sum()
    });
    ticks / 100.0 // USER_HZ is 100 on Linux
}

struct Quiet;
impl Actor for Quiet {
    type Msg = ();
    fn receive(&mut self, _: &mut Context<Self>, _: ()) {}
}

fn idle(args: &Args) {
    let actors = args.get("--actors").unwrap_or(10_000);
    let seconds = args.get("--seconds").unwrap_or(5);
    let system = ActorSystem::new("idle").expect("valid name");
    let refs: Vec<_> = (0..actors)
        .map(|i| {
            system
                .spawn(Props::new(|| Quiet), &format!("q{i}"))
                .expect("valid name")
        })
        .collect();
    for r in &refs {
        r.tell(());
    }
    let streams = args.get("--streams").unwrap_or(0) as usize;
    let kind = args.kind();
    let mat = weir_streams::Materializer::new(&system);
    // One stream first: the materializer's own set-up is not a stream's cost.
    drop(weir_benches::idle_streams::start(kind, 1, &mat));
    let rss_before = rss_kib();
    let started = Instant::now();
    let queues = weir_benches::idle_streams::start(kind, streams, &mat);
    let start_ms = started.elapsed().as_millis();
    std::thread::sleep(Duration::from_millis(500)); // let them all process and go idle
    let (cpu_before, wall) = (cpu_seconds(), Instant::now());
    std::thread::sleep(Duration::from_secs(seconds));
    let (cpu, wall) = (cpu_seconds() - cpu_before, wall.elapsed().as_secs_f64());
    println!(
        "idle: {actors} actors, {streams} idle {} streams, {seconds} s",
        kind.label()
    );
    if streams > 0 {
        let grown = rss_kib().saturating_sub(rss_before);
        println!(
            "  streams       started in {start_ms} ms; resident memory +{:.1} MiB ({:.2} KiB per stream)",
            grown as f64 / 1024.0,
            grown as f64 / streams as f64
        );
    }
    println!(
        "  CPU used      {cpu:.3} s ({:.2}% of one core)",
        cpu / wall * 100.0
    );
    println!(
        "  threads       {} (process total, main thread included)",
        threads_now()
    );
    drop(queues);
    system
        .terminate()
        .wait()
        .expect("called from outside the system");
}

/// Resident memory of this process, KiB.
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// `throttle` (never delaying) against a plain interpreted map stage.
fn time(args: &Args) {
    use weir_benches::time_ops as t;
    let n = args.get("--elements").unwrap_or(5_000_000);
    let runs = args.get("--runs").unwrap_or(5).max(1) as usize;
    let system = ActorSystem::new("bench-time").expect("valid name");
    let mat = weir_streams::Materializer::new(&system);
    let median = |run: &dyn Fn() -> u64| {
        std::hint::black_box(run()); // warm-up
        let mut rates: Vec<f64> = (0..runs)
            .map(|_| {
                let start = Instant::now();
                std::hint::black_box(run());
                n as f64 / start.elapsed().as_secs_f64()
            })
            .collect();
        rates.sort_by(f64::total_cmp);
        rates[runs / 2]
    };
    let map = median(&|| t::weir_map_stage(n, &mat));
    let throttle = median(&|| t::weir_throttle(n, &mat));
    println!("range(0..{n}) -> map -> X -> fold, median of {runs} runs");
    println!("{:<36} {:>14}", "X", "elements/s");
    println!("{:<36} {:>12.1} M", "interpreted map stage", map / 1e6);
    println!(
        "{:<36} {:>12.1} M",
        "throttle (1e9/s, burst 1e6)",
        throttle / 1e6
    );
    println!(
        "throttle costs {:.2}x the map stage's time per element",
        map / throttle
    );
    system
        .terminate()
        .wait()
        .expect("called from outside the system");
}

struct Args(Vec<String>);

/// The rows whose name contains `--only TEXT` (all without it), e.g. to
/// count one row's instructions under callgrind.
fn only<R>(args: &Args, rows: Vec<R>, name: impl Fn(&R) -> &str) -> Vec<R> {
    match args
        .0
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.0.get(i + 1))
    {
        Some(text) => rows
            .into_iter()
            .filter(|r| name(r).contains(text.as_str()))
            .collect(),
        None => rows,
    }
}

impl Args {
    fn get(&self, flag: &str) -> Option<u64> {
        let i = self.0.iter().position(|a| a == flag)?;
        self.0.get(i + 1)?.replace('_', "").parse().ok()
    }

    /// `--kind actor-ref|queue|idle-timeout` for `idle --streams`.
    fn kind(&self) -> weir_benches::idle_streams::Kind {
        use weir_benches::idle_streams::Kind;
        let i = self.0.iter().position(|a| a == "--kind");
        match i.and_then(|i| self.0.get(i + 1)).map(String::as_str) {
            Some("actor-ref") => Kind::ActorRef,
            Some("queue") => Kind::Queue,
            _ => Kind::IdleTimeout,
        }
    }
}

#[global_allocator]
static ALLOC: weir_benches::CountingAlloc = weir_benches::CountingAlloc::new();

/// `range -> map -> filter -> fold`: Weir against an iterator, futures and
/// (with `--features peers`) datum-core; medians of `--runs` runs.
fn streams(args: &Args) {
    use weir_benches::streams_pipeline as p;
    let n = args.get("--elements").unwrap_or(10_000_000);
    let runs = args.get("--runs").unwrap_or(5).max(1) as usize;
    let system = ActorSystem::new("bench-streams").expect("valid name");
    let mat = weir_streams::Materializer::new(&system);
    let expected = p::expected(n);
    type Variant<'a> = (&'static str, Box<dyn Fn() -> u64 + 'a>);
    let mut variants: Vec<Variant<'_>> = vec![
        ("iterator", Box::new(|| p::iterator(n))),
        (
            "futures::stream (block_on)",
            Box::new(|| p::futures_stream(n)),
        ),
        ("weir fused", Box::new(|| p::weir_fused(n, &mat))),
        (
            "weir, one async boundary",
            Box::new(|| p::weir_async_boundary(n, &mat)),
        ),
        (
            "weir, boundary, buffer 1024",
            Box::new(|| p::weir_async_boundary_buffer(n, 1024, &mat)),
        ),
        (
            "weir, 10 maps (fused)",
            Box::new(|| p::weir_ten_maps(n, &mat)),
        ),
        (
            "iterator, 10 boxed maps",
            Box::new(|| p::iterator_ten_maps(n)),
        ),
        (
            "weir, 10 unfused stages",
            Box::new(|| p::weir_ten_unfused_stages(n, &mat)),
        ),
        ("weir, 10 scans", Box::new(|| p::weir_ten_scans(n, &mat))),
    ];
    variants.extend(weir_benches::hops::variants(n, &mat));
    // Their checksums (another pipeline) are checked by the module's test.
    variants.extend(
        weir_benches::islands::variants(n, &mat)
            .into_iter()
            .map(|(_, variant)| variant),
    );
    #[cfg(feature = "peers")]
    variants.push(("datum-core 0.11", Box::new(|| p::datum(n))));
    #[cfg(feature = "peers")]
    variants.push(("datum-core, 10 scans", Box::new(|| p::datum_ten_scans(n))));
    #[cfg(feature = "peers")]
    variants.push((
        "datum-core, 10 interpreted",
        Box::new(|| p::datum_ten_interpreted(n, datum::Fusion::ErasedOnly)),
    ));
    #[cfg(feature = "peers")]
    variants.push((
        "datum-core, 10 identity, auto",
        Box::new(|| p::datum_ten_interpreted(n, datum::Fusion::Auto)),
    ));
    println!("range(0..{n}) -> map -> filter -> fold, median of {runs} runs, 2-core box");
    println!(
        "{:<30} {:>14} {:>12} {:>14}",
        "variant", "elements/s", "vs futures", "allocs/element"
    );
    let mut futures_rate = None;
    let mut rows = Vec::new();
    for (name, run) in variants.iter_mut() {
        let checksum = run(); // warm-up, and the checksum check
        let other_work = name.contains("10")
            || name.contains("broadcast")
            || name.contains("boundaries")
            || name.contains("tasks");
        assert!(
            other_work || checksum == expected,
            "{name} computed {checksum}, expected {expected}"
        );
        let allocs_before = ALLOC.allocations();
        let _ = run();
        let allocs = (ALLOC.allocations() - allocs_before) as f64 / n as f64;
        let mut rates: Vec<f64> = (0..runs)
            .map(|_| {
                let start = Instant::now();
                std::hint::black_box(run());
                n as f64 / start.elapsed().as_secs_f64()
            })
            .collect();
        rates.sort_by(f64::total_cmp);
        let median = rates[runs / 2];
        if name.starts_with("futures") {
            futures_rate = Some(median);
        }
        rows.push((*name, median, allocs));
    }
    for &(name, rate, allocs) in &rows {
        let ratio = futures_rate.map_or(String::new(), |f| format!("{:.2}x", rate / f));
        println!(
            "{name:<30} {:>12.1} M {ratio:>12} {allocs:>14.6}",
            rate / 1e6
        );
    }
    weir_benches::hops::report(&rows);
    weir_benches::islands::report(&rows);
    system
        .terminate()
        .wait()
        .expect("called from outside the system");
}

/// Graphs: junctions beside `futures::stream`, and the planner's fusion of
/// maps appended after a `scan` (`weir-bench graph`); medians of `--runs`.
/// Nesting: `flat_map_concat` of 1,000 inner ranges of 1,000 elements
/// beside `futures::StreamExt::flatten`, and `group_by` over 64 keys with a
/// fold per substream merged back beside one stage folding into a
/// `HashMap` (`--elements`, 10 M by default). The rows are timed in
/// turn, round after round; each weir row's ratio is the median of its
/// per-round ratios to the row above it.
fn substreams(args: &Args) {
    use weir_benches::streams_substreams as s;
    let n = args.get("--elements").unwrap_or(10_000_000);
    let runs = args.get("--runs").unwrap_or(5).max(1) as usize;
    let system = ActorSystem::new("bench-substreams").expect("valid name");
    let mat = weir_streams::Materializer::new(&system);
    type Row<'a> = (&'static str, u64, u64, Box<dyn Fn() -> u64 + 'a>);
    let (outer, inner) = (1_000, 1_000);
    let rows: Vec<Row<'_>> = vec![
        (
            "futures flatten 1000x1000",
            outer * inner,
            s::flatten_expected(outer, inner),
            Box::new(|| s::futures_flatten(outer, inner)),
        ),
        (
            "weir flat_map_concat 1000x1000",
            outer * inner,
            s::flatten_expected(outer, inner),
            Box::new(|| s::weir_flat_map_concat(outer, inner, &mat)),
        ),
        (
            "weir fold into HashMap, 64 keys",
            n,
            s::group_expected(n),
            Box::new(|| s::weir_hashmap_fold(n, 64, &mat)),
        ),
        (
            "weir group_by 64 + fold + merge",
            n,
            s::group_expected(n),
            Box::new(|| s::weir_group_by(n, 64, &mat)),
        ),
    ];
    let rows = only(args, rows, |row| row.0);
    // Every row is checked and run once (warm-up) before any is timed;
    // then the rows are timed in turn, round after round, so a change of
    // load on the box (other builds, frequency) falls on every row alike.
    // A ratio is the median of the per-round ratios to the row above.
    let mut allocs = Vec::with_capacity(rows.len());
    for (name, elements, expected, run) in &rows {
        let checksum = run();
        assert_eq!(
            checksum, *expected,
            "{name} computed {checksum}, expected {expected}"
        );
        let allocs_before = ALLOC.allocations();
        let _ = run();
        allocs.push((ALLOC.allocations() - allocs_before) as f64 / *elements as f64);
    }
    let mut rates: Vec<Vec<f64>> = vec![Vec::with_capacity(runs); rows.len()];
    for _ in 0..runs {
        for ((_, elements, _, run), rates) in rows.iter().zip(&mut rates) {
            let start = Instant::now();
            std::hint::black_box(run());
            rates.push(*elements as f64 / start.elapsed().as_secs_f64());
        }
    }
    let median = |mut xs: Vec<f64>| {
        xs.sort_by(f64::total_cmp);
        xs[xs.len() / 2]
    };
    println!("substreams, median of {runs} interleaved runs, 2-core box");
    println!(
        "{:<34} {:>14} {:>14} {:>14}",
        "variant", "elements/s", "vs row above", "allocs/element"
    );
    for (i, (name, ..)) in rows.iter().enumerate() {
        let ratio = match i.checked_sub(1) {
            Some(before) if name.starts_with("weir") && !name.contains("HashMap") => {
                let ratios = rates[i].iter().zip(&rates[before]).map(|(r, b)| r / b);
                format!("{:.2}x", median(ratios.collect()))
            }
            _ => String::new(),
        };
        println!(
            "{name:<34} {:>12.1} M {ratio:>14} {:>14.6}",
            median(rates[i].clone()) / 1e6,
            allocs[i]
        );
    }
    system.terminate().wait().expect("the system terminates");
}

/// The islands rows alone: async boundaries and the queue rows, beside
/// tokio (with `--features peers`); medians of `--runs` runs. `--only
/// queue` keeps the queue rows (e.g. under callgrind).
fn islands(args: &Args) {
    use weir_benches::islands as i;
    let n = args.get("--elements").unwrap_or(1_000_000);
    let runs = args.get("--runs").unwrap_or(5).max(1) as usize;
    let system = ActorSystem::new("bench-islands").expect("valid name");
    let mat = weir_streams::Materializer::new(&system);
    let rows: Vec<(u64, weir_benches::hops::Variant<'_>)> = i::variants(n, &mat)
        .into_iter()
        .map(|(boundaries, variant)| (i::expected(n, boundaries), variant))
        .chain(
            i::queue_variants(n, &mat)
                .into_iter()
                .map(|variant| (i::queue_expected(n), variant)),
        )
        .collect();
    let rows = only(args, rows, |row| row.1.0);
    println!("islands over {n} elements, median of {runs} runs, 2-core box");
    println!(
        "{:<38} {:>14} {:>14}",
        "variant", "elements/s", "allocs/element"
    );
    let mut measured = Vec::new();
    for (expected, (name, run)) in &rows {
        let checksum = run();
        assert_eq!(checksum, *expected, "{name}");
        let allocs_before = ALLOC.allocations();
        let _ = run();
        let allocs = (ALLOC.allocations() - allocs_before) as f64 / n as f64;
        let mut rates: Vec<f64> = (0..runs)
            .map(|_| {
                let start = Instant::now();
                std::hint::black_box(run());
                n as f64 / start.elapsed().as_secs_f64()
            })
            .collect();
        rates.sort_by(f64::total_cmp);
        let median = rates[runs / 2];
        println!("{name:<38} {:>12.1} M {allocs:>14.6}", median / 1e6);
        measured.push((*name, median, allocs));
    }
    i::report(&measured);
    system
        .terminate()
        .wait()
        .expect("called from outside the system");
}

fn graph(args: &Args) {
    use weir_benches::streams_graph as g;
    let n = args.get("--elements").unwrap_or(2_000_000);
    let runs = args.get("--runs").unwrap_or(5).max(1) as usize;
    let system = ActorSystem::new("bench-graph").expect("valid name");
    let mat = weir_streams::Materializer::new(&system);
    // Fusion off runs `scan` then nine appended maps as 11 stages, as every
    // release before the planner did.
    let unfused = weir_streams::Materializer::builder(&system)
        .fusion(false)
        .build();
    #[cfg(feature = "peers")]
    let tokio_mt = tokio::runtime::Builder::new_multi_thread()
        .build()
        .expect("a tokio runtime");
    type Row<'a> = (&'static str, u64, Box<dyn Fn() -> u64 + 'a>);
    let rows: Vec<Row<'_>> = vec![
        (
            "futures::stream::select",
            g::merge_expected(n),
            Box::new(|| g::futures_select(n)),
        ),
        (
            "weir merge",
            g::merge_expected(n),
            Box::new(|| g::weir_merge(n, &mat)),
        ),
        (
            "futures::stream::zip",
            g::zip_expected(n),
            Box::new(|| g::futures_zip(n)),
        ),
        (
            "weir zip_with",
            g::zip_expected(n),
            Box::new(|| g::weir_zip(n, &mat)),
        ),
        (
            "futures::stream::zip of 3",
            g::zip3_expected(n),
            Box::new(|| g::futures_zip3(n)),
        ),
        (
            "weir zip_n of 3",
            g::zip3_expected(n),
            Box::new(|| g::weir_zip_n(n, &mat)),
        ),
        (
            "futures::stream::iter",
            g::merge_expected(n),
            Box::new(|| g::futures_iter(n)),
        ),
        (
            "weir or_else (primary)",
            g::merge_expected(n),
            Box::new(|| g::weir_or_else(n, &mat)),
        ),
        (
            "weir broadcast to 2 folds",
            g::broadcast_expected(n),
            Box::new(|| g::weir_broadcast(n, &mat)),
        ),
        #[cfg(feature = "peers")]
        (
            "tokio 4 tasks, shared mpsc(16)",
            g::balance_expected(n),
            Box::new(move || g::tokio_balance(n, &tokio_mt)),
        ),
        (
            "weir balance over 4 islands",
            g::balance_expected(n),
            Box::new(|| g::weir_balance(n, &mat)),
        ),
        (
            "weir scan + 9 maps, unfused",
            0,
            Box::new(|| g::weir_scan_then_maps(n, &unfused)),
        ),
        (
            "weir scan + 9 maps appended",
            0,
            Box::new(|| g::weir_scan_then_maps(n, &mat)),
        ),
        (
            "weir scan + 9 maps composed",
            0,
            Box::new(|| g::weir_scan_via_composed_maps(n, &mat)),
        ),
    ];
    let rows = only(args, rows, |row| row.0);
    println!("graphs over {n} elements, median of {runs} runs, 2-core box");
    println!(
        "{:<30} {:>14} {:>14} {:>14}",
        "variant", "elements/s", "vs baseline", "allocs/element"
    );
    let mut previous: Option<f64> = None;
    for (name, expected, run) in &rows {
        let checksum = run();
        assert!(
            *expected == 0 || checksum == *expected,
            "{name} computed {checksum}, expected {expected}"
        );
        let allocs_before = ALLOC.allocations();
        let _ = run();
        let allocs = (ALLOC.allocations() - allocs_before) as f64 / n as f64;
        let mut rates: Vec<f64> = (0..runs)
            .map(|_| {
                let start = Instant::now();
                std::hint::black_box(run());
                n as f64 / start.elapsed().as_secs_f64()
            })
            .collect();
        rates.sort_by(f64::total_cmp);
        let median = rates[runs / 2];
        // Peers and the unfused row are baselines; weir rows compare with
        // the last baseline above them (the broadcast row has none).
        let baseline = !name.starts_with("weir") || name.ends_with("unfused");
        let ratio = match previous {
            // Without the peers the balance row has no baseline of its own.
            Some(before)
                if !baseline
                    && !name.contains("broadcast")
                    && (cfg!(feature = "peers") || !name.contains("balance")) =>
            {
                format!("{:.2}x", median / before)
            }
            _ => String::new(),
        };
        if baseline {
            previous = Some(median);
        }
        println!(
            "{name:<30} {:>12.1} M {ratio:>14} {allocs:>14.6}",
            median / 1e6
        );
    }
    system
        .terminate()
        .wait()
        .expect("called from outside the system");
}

/// `Source::actor_ref`: no_buffer and pingpong, beside crossbeam and tokio
/// (with `--features peers`); medians of `--runs` runs.
fn actor_ref(args: &Args) {
    use weir_benches::actor_ref_source::{self as a, Run};
    let n = args.get("--elements").unwrap_or(1_000_000);
    let rounds = args.get("--round-trips").unwrap_or(100_000);
    let runs = args.get("--runs").unwrap_or(5).max(1) as usize;
    let system = ActorSystem::new("bench-actor-ref").expect("valid name");
    let mat = weir_streams::Materializer::new(&system);
    type Variant<'a> = (&'static str, u64, Box<dyn Fn() -> Run + 'a>);
    #[allow(unused_mut)] // peers add rows
    let mut variants: Vec<Variant<'_>> = vec![
        (
            "no_buffer: weir actor_ref (buffer 0)",
            n,
            Box::new(|| a::weir_no_buffer(n, &mat)),
        ),
        (
            "pingpong: weir actor_ref (buffer 1)",
            rounds,
            Box::new(|| a::weir_pingpong(rounds, &mat)),
        ),
    ];
    #[cfg(feature = "peers")]
    variants.extend([
        (
            "no_buffer: tokio mpsc(1024) + task",
            n,
            Box::new(|| a::tokio_no_buffer(n)) as Box<dyn Fn() -> Run>,
        ),
        (
            "no_buffer: crossbeam channel",
            n,
            Box::new(|| a::crossbeam_no_buffer(n)),
        ),
        (
            "pingpong: tokio mpsc(1024) + task",
            rounds,
            Box::new(|| a::tokio_pingpong(rounds)),
        ),
        (
            "pingpong: crossbeam channel",
            rounds,
            Box::new(|| a::crossbeam_pingpong(rounds)),
        ),
        (
            "no_buffer: datum-core ActorSource",
            n,
            Box::new(|| a::datum_no_buffer(n)),
        ),
        (
            "pingpong: datum-core ActorSource",
            rounds,
            Box::new(|| a::datum_pingpong(rounds)),
        ),
    ]);
    println!("Source::actor_ref, median of {runs} runs, 2-core box");
    println!(
        "{:<40} {:>14} {:>12} {:>16}",
        "variant", "elements/s", "delivered", "allocs/element"
    );
    for (name, count, run) in &variants {
        let _ = run(); // warm-up
        let before = ALLOC.allocations();
        let _ = run();
        let allocs = (ALLOC.allocations() - before) as f64 / *count as f64;
        let mut results: Vec<Run> = (0..runs).map(|_| run()).collect();
        results.sort_by_key(|r| r.elapsed);
        let median = results[runs / 2];
        let rate = median.sent as f64 / median.elapsed.as_secs_f64();
        println!(
            "{name:<40} {:>12.2} M {:>12} {allocs:>16.6}",
            rate / 1e6,
            format!("{}/{}", median.delivered, median.sent)
        );
    }
    system
        .terminate()
        .wait()
        .expect("called from outside the system");
}

/// An async stream through a Weir map and back, beside the async stream
/// alone (needs `--features peers` for tokio).
fn interop(args: &Args) {
    #[cfg(feature = "peers")]
    {
        use weir_benches::interop as i;
        let n = args.get("--elements").unwrap_or(1_000_000);
        let runs = args.get("--runs").unwrap_or(5).max(1) as usize;
        let system = ActorSystem::new("bench-interop").expect("valid name");
        let mat = weir_streams::Materializer::new(&system);
        let median = |f: &dyn Fn() -> (u64, Duration)| {
            let _ = f();
            let before = ALLOC.allocations();
            let _ = f();
            let allocs = (ALLOC.allocations() - before) as f64 / n as f64;
            let mut times: Vec<Duration> = (0..runs).map(|_| f().1).collect();
            times.sort();
            (n as f64 / times[runs / 2].as_secs_f64(), allocs)
        };
        println!("input -> map -> fold in a tokio task, {n} elements, median of {runs} runs");
        println!("(each ratio against the same input alone)");
        for input in [
            i::Input::TokioIter,
            i::Input::FuturesIter,
            i::Input::Channel,
        ] {
            let (alone, alone_allocs) = median(&|| i::alone(input, n));
            let (fused, fused_allocs) = median(&|| i::through_weir(input, n, false, &mat));
            let (islands, islands_allocs) = median(&|| i::through_weir(input, n, true, &mat));
            let rows = [
                (input.name(), alone, alone_allocs),
                (
                    "  through Weir, fused (from_stream, map, as_stream)",
                    fused,
                    fused_allocs,
                ),
                (
                    "  through Weir on islands (async boundary)",
                    islands,
                    islands_allocs,
                ),
            ];
            for (name, rate, allocs) in rows {
                println!(
                    "{:<52} {:>10.2} M/s {:>7.2}x {:>10.4} allocs/element",
                    name,
                    rate / 1e6,
                    rate / alone,
                    allocs
                );
            }
        }
        system
            .terminate()
            .wait()
            .expect("called from outside the system");
    }
    #[cfg(not(feature = "peers"))]
    {
        let _ = args;
        eprintln!("weir-bench interop needs --features peers (tokio)");
        std::process::exit(2);
    }
}

/// Lines of a generated file, counted by Weir, a `read_until` loop and
/// (with `--features peers`) tokio_util; then a file copy by Weir and
/// `std::io::copy`. Medians of `--runs` runs, the variants taking turns;
/// `--only TEXT` keeps the rows whose name contains TEXT (and skips the
/// TCP rows), e.g. to count one row's instructions under callgrind.
fn io(args: &Args) {
    use weir_benches::io as b;
    let mib = args.get("--mib").unwrap_or(256);
    let runs = args.get("--runs").unwrap_or(3).max(1) as usize;
    let dir = std::env::temp_dir();
    let input = dir.join(format!("weir-bench-io-{}", std::process::id()));
    let copy = dir.join(format!("weir-bench-io-copy-{}", std::process::id()));
    b::generate(&input, mib << 20).expect("the input file is written");
    let size = std::fs::metadata(&input).expect("the input exists").len();
    let system = ActorSystem::new("bench-io").expect("valid name");
    let mat = weir_streams::Materializer::new(&system);
    let expected = b::std_lines(&input);
    type Variant<'a> = (&'static str, Box<dyn Fn() -> (u64, u64) + 'a>);
    #[allow(unused_mut)] // peers add a row
    let mut lines: Vec<Variant<'_>> = vec![
        ("std read_until loop", Box::new(|| b::std_lines(&input))),
        (
            "weir FileIO + Framing::delimiter",
            Box::new(|| b::weir_lines(&input, &mat)),
        ),
    ];
    #[cfg(feature = "peers")]
    lines.push((
        "tokio_util FramedRead + LinesCodec",
        Box::new(|| b::tokio_lines(&input)),
    ));
    let lines = only(args, lines, |(name, _)| name);
    let mib = size as f64 / f64::from(1u32 << 20);
    // Wall-clock and CPU (user + system, all threads) rates: the CPU rate
    // is what the box's other load disturbs least. The variants take turns
    // run by run (interleaved), so a burst of load elsewhere hits them all
    // alike and the ratios hold even when the rates move.
    let medians = |variants: &[&dyn Fn() -> u64]| {
        let mut allocs = Vec::with_capacity(variants.len());
        for run in variants {
            let _ = run(); // warm-up (and the page cache)
            let before = ALLOC.allocations();
            let _ = run();
            allocs.push(ALLOC.allocations() - before);
        }
        let mut walls = vec![Vec::with_capacity(runs); variants.len()];
        let mut cpus = vec![Vec::with_capacity(runs); variants.len()];
        for _ in 0..runs {
            for (v, run) in variants.iter().enumerate() {
                let (start, cpu) = (Instant::now(), cpu_seconds());
                std::hint::black_box(run());
                walls[v].push(start.elapsed().as_secs_f64());
                cpus[v].push((cpu_seconds() - cpu).max(0.01));
            }
        }
        let median = |mut times: Vec<f64>| {
            times.sort_by(f64::total_cmp);
            mib / times[runs / 2]
        };
        let rates = walls
            .into_iter()
            .zip(cpus)
            .map(|(w, c)| (median(w), median(c)));
        rates
            .zip(allocs)
            .map(|((w, c), a)| (w, c, a))
            .collect::<Vec<_>>()
    };
    println!(
        "{} MiB file, {} lines, chunks of {} KiB, median of {runs} interleaved runs, 2-core box",
        size >> 20,
        expected.0,
        b::CHUNK >> 10
    );
    let header = |first: &str, per: &str| {
        println!(
            "{first:<36} {:>8} {:>7} {:>10} {:>7} {per:>12}",
            "MiB/s", "vs 1st", "MiB/CPU-s", "vs 1st"
        );
    };
    let row = |name: &str, (rate, cpu): (f64, f64), (base, cpu_base): (f64, f64), per: f64| {
        println!(
            "{name:<36} {rate:>8.0} {:>6.2}x {cpu:>10.0} {:>6.2}x {per:>12.4}",
            rate / base,
            cpu / cpu_base
        );
    };
    header("lines: variant", "allocs/line");
    for (name, run) in &lines {
        assert_eq!(run(), expected, "{name} counts the same lines and bytes");
    }
    type Count<'a> = Box<dyn Fn() -> u64 + 'a>;
    let counts: Vec<Count<'_>> = lines
        .iter()
        .map(|(_, run)| Box::new(move || run().0) as Count<'_>)
        .collect();
    let runs_of: Vec<&dyn Fn() -> u64> = counts.iter().map(|run| &**run).collect();
    let results = medians(&runs_of);
    let mut weir = None;
    for ((name, _), &(rate, cpu, allocs)) in lines.iter().zip(&results) {
        let base = (results[0].0, results[0].1);
        row(name, (rate, cpu), base, allocs as f64 / expected.0 as f64);
        if name.starts_with("weir") {
            weir = Some((rate, cpu));
        } else if let (Some((w, wc)), true) = (weir, name.starts_with("tokio")) {
            println!(
                "{:<36} {:>15.2}x {:>17.2}x",
                "  weir vs tokio_util",
                w / rate,
                wc / cpu
            );
        }
    }
    header("copy: variant", "allocs/MiB");
    type Copy<'a> = (&'static str, Box<dyn Fn() -> u64 + 'a>);
    let copies: Vec<Copy<'_>> = vec![
        ("std::io::copy", Box::new(|| b::std_copy(&input, &copy))),
        (
            "weir FileIO::from_path -> to_path",
            Box::new(|| b::weir_copy(&input, &copy, &mat)),
        ),
    ];
    let copies = only(args, copies, |(name, _)| name);
    let runs_of: Vec<&dyn Fn() -> u64> = copies.iter().map(|(_, run)| &**run).collect();
    for (name, run) in &copies {
        assert_eq!(run(), size, "{name} copies every byte");
    }
    let results = medians(&runs_of);
    for ((name, _), &(rate, cpu, allocs)) in copies.iter().zip(&results) {
        let base = (results[0].0, results[0].1);
        row(name, (rate, cpu), base, allocs as f64 / (size >> 20) as f64);
    }
    let _ = std::fs::remove_file(&input);
    let _ = std::fs::remove_file(&copy);
    if args.0.iter().all(|a| a != "--only") {
        tcp_echo(args, &mat);
    }
    system
        .terminate()
        .wait()
        .expect("called from outside the system");
}

/// TCP echo over loopback, Weir against tokio_util (`--features peers`).
fn tcp_echo(args: &Args, mat: &weir_streams::Materializer) {
    #[cfg(feature = "peers")]
    {
        use weir_benches::tcp_echo as t;
        let n = args.get("--messages").unwrap_or(200_000);
        let runs = args.get("--runs").unwrap_or(3).max(1) as usize;
        let rt = t::runtime();
        let weir_addr = t::weir_server(&rt, mat);
        let tokio_addr = t::tokio_server(&rt);
        let median = |run: &dyn Fn() -> u64| {
            assert_eq!(run(), n, "every message comes back");
            let mut rates: Vec<f64> = (0..runs)
                .map(|_| {
                    let start = Instant::now();
                    std::hint::black_box(run());
                    n as f64 / start.elapsed().as_secs_f64()
                })
                .collect();
            rates.sort_by(f64::total_cmp);
            rates[runs / 2]
        };
        let tokio_rate = median(&|| t::tokio_client(&rt, tokio_addr, n));
        let weir_rate = median(&|| t::weir_client(&rt, weir_addr, n, mat));
        println!(
            "tcp echo: {n} messages of {} B, length-prefixed, loopback, median of {runs} runs",
            t::MESSAGE
        );
        println!("{:<36} {:>12}", "variant", "messages/s");
        println!(
            "{:<36} {:>12.0} {:>6.2}x",
            "tokio_util LengthDelimitedCodec", tokio_rate, 1.0
        );
        println!(
            "{:<36} {:>12.0} {:>6.2}x",
            "weir Tcp + simple framing",
            weir_rate,
            weir_rate / tokio_rate
        );
    }
    #[cfg(not(feature = "peers"))]
    {
        let _ = (args, mat);
        println!("tcp echo: needs --features peers (tokio)");
    }
}

fn main() {
    let args = Args(std::env::args().skip(1).collect());
    match args.0.first().map(String::as_str) {
        Some("pingpong") => pingpong(&args),
        Some("idle") => idle(&args),
        Some("time") => time(&args),
        Some("peers") => weir_benches::peers::run(&args.0[1..]),
        Some("streams") => streams(&args),
        Some("graph") => graph(&args),
        Some("islands") => islands(&args),
        Some("hubs") => weir_benches::hubs::report(
            args.get("--elements").unwrap_or(1_000_000),
            args.get("--runs").unwrap_or(5) as usize,
            args.get("--buffer").unwrap_or(256) as usize,
            &|| ALLOC.allocations(),
        ),
        Some("materialize") => {
            weir_benches::materialize::run(&args.0[1..], &|| ALLOC.allocations())
        }
        Some("substreams") => substreams(&args),
        Some("actor-ref") => actor_ref(&args),
        Some("interop") => interop(&args),
        Some("io") => io(&args),
        Some("routers") => weir_benches::routers::run(&args.0[1..]),
        #[cfg(feature = "tokio")]
        Some("async-ops") => weir_benches::async_ops::run(&args.0[1..]),
        #[cfg(not(feature = "tokio"))]
        Some("async-ops") => {
            eprintln!("weir-bench async-ops needs --features peers (tokio)");
            std::process::exit(2);
        }
        #[cfg(feature = "sim")]
        Some("sim") => weir_benches::sim::report(
            args.get("--pairs").unwrap_or(4),
            args.get("--hits").unwrap_or(250_000),
            args.get("--elements").unwrap_or(1_000_000),
            args.get("--runs").unwrap_or(3) as usize,
        ),
        #[cfg(not(feature = "sim"))]
        Some("sim") => {
            eprintln!("weir-bench sim needs --features sim");
            std::process::exit(2);
        }
        #[cfg(feature = "nats")]
        Some("remote") => weir_benches::remote::run(&args.0[1..]),
        #[cfg(feature = "nats")]
        Some("remote-echo") => weir_benches::remote::echo_main(&args.0[1..]),
        #[cfg(not(feature = "nats"))]
        Some("remote") => {
            eprintln!("weir-bench remote needs --features nats (and nats-server installed)");
            std::process::exit(2);
        }
        _ => {
            eprintln!(
                "usage: weir-bench pingpong [--messages N] [--pairs N] [--threads N] [--throughput N] | idle [--actors N] [--seconds S] [--streams N] [--kind idle-timeout|actor-ref|queue] | time [--elements N] [--runs N] | peers [--messages N] [--async-messages N] [--runs N] [--only sync|async] [--rows TEXT] [--await ready|yield-once] | async-ops [--elements N] [--parallelism N] [--runs N] [--work ready|tokio] [--only TEXT] (--features peers) | streams [--elements N] [--runs N] | actor-ref [--elements N] [--round-trips N] [--runs N] | interop [--elements N] [--runs N] | io [--mib N] [--runs N] [--messages N] | graph [--elements N] [--runs N] [--only TEXT] | islands [--elements N] [--runs N] [--only TEXT] | hubs [--elements N] [--runs N] [--buffer N] | substreams [--elements N] [--runs N] [--only TEXT] | materialize [--graphs N] [--runs N] [--batch N] [--only TEXT] | routers [--requests N] [--runs N] [--only TEXT] | remote [--messages N] [--runs N] [--reliable-messages N] [--js-messages N] [--batch N] [--ref-messages N] [--ref-window N] (--features nats) | sim [--pairs N] [--hits N] [--elements N] [--runs N] (--features sim)"
            );
            std::process::exit(2);
        }
    }
}
