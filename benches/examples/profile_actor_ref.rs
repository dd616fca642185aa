//! `Source::actor_ref` no_buffer in a loop, for a profiler; prints each rate.

fn main() {
    let threads: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(2);
    let system = weir_actor::ActorSystem::builder()
        .name("profile")
        .threads(threads)
        .build()
        .expect("valid name");
    let mat = weir_streams::Materializer::new(&system);
    let mut rates = Vec::new();
    for _ in 0..10 {
        let run = weir_benches::actor_ref_source::weir_no_buffer(1_000_000, &mat);
        rates.push(format!(
            "{:.1}",
            run.sent as f64 / run.elapsed.as_secs_f64() / 1e6
        ));
    }
    println!("M tells/s: {}", rates.join(" "));
    system.terminate().wait().expect("outside the system");
}
