//! One pipeline variant in a loop, for a profiler:
//! `cargo build --release -p weir-benches --example profile_streams`, then
//! `perf record target/release/examples/profile_streams fused` (or `boundary`,
//! `boundary=<input buffer>`, `unfused`, `maps`, `broadcast_merge`, `merge`,
//! `zip`). The interpreted variants (`unfused` on) run a hundredth of the
//! elements, for `valgrind --tool=callgrind`. A `+counters` suffix
//! (`unfused+counters`) runs the variant with per-stage counters on
//! (`MaterializerBuilder::stage_counters`), to measure what they cost.

fn main() {
    use weir_benches::streams_pipeline as p;
    let arg = std::env::args().nth(1).unwrap_or_else(|| "fused".into());
    let (which, counters) = match arg.strip_suffix("+counters") {
        Some(which) => (which.to_owned(), true),
        None => (arg, false),
    };
    let system = weir_actor::ActorSystem::new("profile").expect("valid name");
    let mat = weir_streams::Materializer::builder(&system)
        .stage_counters(counters)
        .build();
    let n = 10_000_000;
    for _ in 0..5 {
        let r = match which.as_str() {
            "fused" => p::weir_fused(n, &mat),
            "boundary" => p::weir_async_boundary(n, &mat),
            b if b.starts_with("boundary=") => {
                let buffer = b["boundary=".len()..].parse().expect("a buffer size");
                p::weir_async_boundary_buffer(n, buffer, &mat)
            }
            "unfused" => p::weir_ten_unfused_stages(n / 100, &mat),
            "maps" => p::weir_ten_maps(n, &mat),
            "broadcast_merge" => p::weir_broadcast_merge(n / 100, &mat),
            "merge" => weir_benches::streams_graph::weir_merge(n / 100, &mat),
            "zip" => weir_benches::streams_graph::weir_zip(n / 100, &mat),
            other => panic!("unknown variant {other}"),
        };
        std::hint::black_box(r);
    }
    system.terminate().wait().expect("outside the system");
}
