//! `Source::actor_ref` no_buffer in a loop, for a profiler.

fn main() {
    let system = weir_actor::ActorSystem::new("profile").expect("valid name");
    let mat = weir_streams::Materializer::new(&system);
    for _ in 0..10 {
        std::hint::black_box(weir_benches::actor_ref_source::weir_no_buffer(
            1_000_000, &mat,
        ));
    }
    system.terminate().wait().expect("outside the system");
}
