//! `RetryFlow`'s no-retry path and the plain `map_async(1)` it is held
//! against (the `weir-bench async-ops` rows, ready futures), one variant per
//! run, for callgrind:
//! `cargo build --release -p weir-benches --features tokio --example profile_retry`, then
//! `valgrind --tool=callgrind target/release/examples/profile_retry retry 100000`
//! (or `plain`). Instructions per element are the difference between two
//! element counts divided by the difference of the counts, so the fixed
//! cost of starting the system drops out.

use weir_benches::async_ops::{Work, weir_map_async, weir_retry_no_retry};
use weir_streams::prelude::*;

/// The two rows of `weir-bench async-ops`, with ready futures.
fn plain(n: u64, mat: &Materializer) -> u64 {
    weir_map_async(n, 1, Work::Ready, mat)
}

fn retry(n: u64, mat: &Materializer) -> u64 {
    weir_retry_no_retry(n, Work::Ready, mat)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let which = args.next().unwrap_or_else(|| "retry".into());
    let n: u64 = args
        .next()
        .map_or(1_000_000, |s| s.parse().expect("a count"));
    let runs: u32 = args.next().map_or(1, |s| s.parse().expect("a count"));
    let system = weir_actor::ActorSystem::new("profile").expect("valid name");
    let mat = Materializer::new(&system);
    let run = |which: &str| match which {
        "plain" => plain(n, &mat),
        "retry" => retry(n, &mat),
        other => panic!("unknown variant {other} (plain or retry)"),
    };
    if which == "both" {
        // Wall-clock rates, interleaved, for a quick ratio.
        let (mut p, mut r) = (Vec::new(), Vec::new());
        for _ in 0..runs {
            for (name, rates) in [("plain", &mut p), ("retry", &mut r)] {
                let start = std::time::Instant::now();
                std::hint::black_box(run(name));
                rates.push(start.elapsed().as_secs_f64());
            }
        }
        p.sort_by(f64::total_cmp);
        r.sort_by(f64::total_cmp);
        let (p, r) = (p[p.len() / 2], r[r.len() / 2]);
        println!("plain {p:.3}s retry {r:.3}s ratio {:.2}x", r / p);
    } else {
        for _ in 0..runs {
            std::hint::black_box(run(&which));
        }
    }
    system.terminate().wait().expect("outside the system");
}
