//! `range -> map -> filter -> fold` on Weir (fused, one async boundary,
//! ten maps, ten unfused stages) next to a plain iterator and
//! `futures::stream` in one group, so one run gives the ratios.
//! `cargo bench -p weir-benches --bench streams_pipeline`
//! (add `--features peers` for datum-core). For the table with
//! allocations per element, run `weir-bench streams`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use weir_benches::streams_pipeline as p;

const N: u64 = 1_000_000;

fn pipeline(c: &mut Criterion) {
    let system = weir_actor::ActorSystem::new("bench-streams").expect("valid name");
    let mat = weir_streams::Materializer::new(&system);
    let expected = p::expected(N);
    let mut group = c.benchmark_group("streams_pipeline");
    group.throughput(Throughput::Elements(N));
    group.sample_size(20);
    group.bench_function("iterator", |b| {
        b.iter(|| assert_eq!(p::iterator(N), expected))
    });
    group.bench_function("futures_stream", |b| {
        b.iter(|| assert_eq!(p::futures_stream(N), expected))
    });
    group.bench_function("weir_fused", |b| {
        b.iter(|| assert_eq!(p::weir_fused(N, &mat), expected))
    });
    group.bench_function("weir_async_boundary", |b| {
        b.iter(|| assert_eq!(p::weir_async_boundary(N, &mat), expected))
    });
    group.bench_function("weir_ten_maps", |b| b.iter(|| p::weir_ten_maps(N, &mat)));
    group.bench_function("weir_ten_unfused_stages", |b| {
        b.iter(|| assert_eq!(p::weir_ten_unfused_stages(N, &mat), expected))
    });
    #[cfg(feature = "peers")]
    group.bench_function("datum", |b| b.iter(|| assert_eq!(p::datum(N), expected)));
    group.finish();
    system
        .terminate()
        .wait()
        .expect("called from outside the system");
}

criterion_group!(benches, pipeline);
criterion_main!(benches);
