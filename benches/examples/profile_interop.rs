//! `from_stream -> map -> as_stream -> fold`, 50 M elements on futures'
//! executor, for a profiler:
//! `perf record target/release/examples/profile_interop`.

use futures_util::StreamExt;
use futures_util::future::ready;
use weir_interop::{SinkAsStream, SourceFromStream};
use weir_streams::prelude::*;

fn main() {
    let system = weir_actor::ActorSystem::new("profile").expect("valid name");
    let mat = Materializer::new(&system);
    let n = 50_000_000u64;
    let start = std::time::Instant::now();
    let out = Source::from_stream(futures_util::stream::iter(0..n))
        .map(|x: u64| x.wrapping_mul(3))
        .run_with(Sink::as_stream(), &mat);
    let sum = futures_executor::block_on(
        out.fold(0u64, |a, x| ready(a.wrapping_add(x.expect("no failure")))),
    );
    let weir = start.elapsed();
    let start = std::time::Instant::now();
    let alone = futures_executor::block_on(
        futures_util::stream::iter(0..n)
            .map(|x: u64| x.wrapping_mul(3))
            .fold(0u64, |a, x| ready(a.wrapping_add(x))),
    );
    let pure = start.elapsed();
    assert_eq!(sum, alone);
    println!(
        "through weir {:.2} ns/element, alone {:.2} ns/element",
        weir.as_nanos() as f64 / n as f64,
        pure.as_nanos() as f64 / n as f64
    );
    system.terminate().wait().expect("outside the system");
}
