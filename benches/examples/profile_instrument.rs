//! The gated-tell workload of the `actor_instrument` bench with a no-op
//! hook, in a loop, for a profiler:
//! `perf record target/release/examples/profile_instrument [none|noop]`.

use std::sync::Arc;

use weir_actor::{ActorSystem, Instrumentation};
use weir_benches::gated_tell::GatedTell;

struct NoOp;
impl Instrumentation for NoOp {}

fn main() {
    let hooked = std::env::args().nth(1).as_deref() == Some("noop");
    let mut builder = ActorSystem::builder().name("profile").threads(1);
    if hooked {
        builder = builder.instrumentation(Arc::new(NoOp));
    }
    let system = builder.build().expect("valid settings");
    let gated = GatedTell::new(&system);
    let runs = 200;
    let total: f64 = (0..runs).map(|_| gated.run(10_000)).sum();
    println!("{:.2} ns/msg", total / f64::from(runs));
    system.terminate().wait().expect("outside the system");
}
