//! Child lookup and path resolution, in the shape of Akka.NET's
//! GetChildBenchmark: a chain `food/ood/od/d` under `/user/parent`, each
//! lookup side by side with a baseline of plain `HashMap<String, _>` lookups.
//!
//! `cargo bench -p weir-benches --bench actor_paths` prints bytes and
//! allocations per lookup (counting global allocator), then criterion times.

use std::collections::HashMap;
use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group};
use weir_actor::{Actor, ActorHandle, ActorRef, ActorSystem, AskHandle, Context, Props, ask};
use weir_benches::CountingAlloc;

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc::new();

/// Spawns the chain below it (`"food/ood/od/d"`), one child per level.
struct Chain(String);

impl Actor for Chain {
    type Msg = ActorRef<u8>;
    fn pre_start(&mut self, ctx: &mut Context<Self>) {
        let (first, rest) = self.0.split_once('/').unwrap_or((&self.0, ""));
        if !first.is_empty() {
            let rest = rest.to_owned();
            ctx.spawn(Props::new(move || Chain(rest.clone())), first)
                .unwrap();
        }
    }
    /// Holds the reply address of an ask, so `/temp/$..` stays alive.
    fn receive(&mut self, _: &mut Context<Self>, _held: ActorRef<u8>) {
        std::mem::forget(_held);
    }
}

struct Fixture {
    system: ActorSystem,
    parent: ActorHandle,
    food: ActorHandle,
    temp_path: String,
    _pending: AskHandle<u8>,
    maps: [HashMap<String, u64>; 6],
}

fn fixture() -> Fixture {
    let system = ActorSystem::new("bench").unwrap();
    let parent = system
        .spawn(Props::new(|| Chain("food/ood/od/d".into())), "parent")
        .unwrap();
    let handle = parent.handle();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while handle.child("food/ood/od/d").is_none() {
        assert!(std::time::Instant::now() < deadline, "chain spawned");
        std::thread::sleep(Duration::from_millis(1));
    }
    let pending = ask(&parent, |r| r, Duration::from_secs(3600));
    let temp_path = loop {
        if let Some(t) = system.select("/temp/*").unwrap().resolve().first() {
            break t.path().to_string_without_uid()["weir://bench".len()..].to_owned();
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    // Baselines: maps of the same size as the real children maps (one entry
    // each), keyed like them.
    let maps =
        ["user", "parent", "food", "ood", "od", "d"].map(|k| HashMap::from([(k.to_owned(), 1u64)]));
    Fixture {
        food: handle.child("food").unwrap(),
        parent: handle,
        system,
        temp_path,
        _pending: pending,
        maps,
    }
}

fn lookups(maps: &[HashMap<String, u64>], keys: &[&str]) -> u64 {
    keys.iter()
        .zip(maps)
        .map(|(k, m)| *m.get(black_box(*k)).unwrap())
        .sum()
}

type Case<'a> = (&'static str, Box<dyn Fn() -> bool + 'a>);

fn cases(f: &Fixture) -> Vec<Case<'_>> {
    vec![
        (
            "resolve_child",
            Box::new(|| f.parent.child(black_box("food")).is_some()),
        ),
        (
            "resolve_3_deep_from_parent",
            Box::new(|| f.parent.child(black_box("food/ood/od")).is_some()),
        ),
        (
            "resolve_3_deep_from_food",
            Box::new(|| f.food.child(black_box("ood/od/d")).is_some()),
        ),
        (
            "resolve_temp",
            Box::new(|| f.system.resolve(black_box(&f.temp_path)).is_ok()),
        ),
        (
            "resolve_from_string",
            Box::new(|| {
                f.system
                    .resolve(black_box("weir://bench/user/parent/food/ood/od/d"))
                    .is_ok()
            }),
        ),
        (
            "baseline_1_hashmap_lookup",
            Box::new(|| lookups(&f.maps[2..], &["food"]) == 1),
        ),
        (
            "baseline_3_hashmap_lookups",
            Box::new(|| lookups(&f.maps[2..], &["food", "ood", "od"]) == 3),
        ),
        (
            "baseline_6_hashmap_lookups",
            Box::new(|| lookups(&f.maps, &["user", "parent", "food", "ood", "od", "d"]) == 6),
        ),
    ]
}

fn allocation_report(f: &Fixture) {
    const N: u64 = 100_000;
    println!("allocation report (counting global allocator, {N} lookups each):");
    for (name, case) in cases(f) {
        assert!(case(), "{name} finds its actor");
        let (allocs, bytes) = (ALLOC.allocations(), ALLOC.bytes());
        for _ in 0..N {
            black_box(case());
        }
        println!(
            "  {name:<28} {:.3} bytes/lookup, {:.5} allocations/lookup",
            (ALLOC.bytes() - bytes) as f64 / N as f64,
            (ALLOC.allocations() - allocs) as f64 / N as f64
        );
    }
}

fn bench_paths(c: &mut Criterion) {
    let f = fixture();
    allocation_report(&f);
    let mut group = c.benchmark_group("actor_paths");
    group
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_secs(1));
    for (name, case) in cases(&f) {
        group.bench_function(name, |b| b.iter(&case));
    }
    group.finish();
    f.system.terminate().wait().unwrap();
}

criterion_group!(benches, bench_paths);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
