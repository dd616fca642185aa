//! `RetryFlow`'s no-retry path and the plain `map_async(1)` it is held
//! against (the `weir-bench async-ops` rows, ready futures), one variant per
//! run, for callgrind:
//! `cargo build --release -p weir-benches --example profile_retry`, then
//! `valgrind --tool=callgrind target/release/examples/profile_retry retry 100000`
//! (or `plain`). Instructions per element are the difference between two
//! element counts divided by the difference of the counts, so the fixed
//! cost of starting the system drops out.

use std::future::ready;
use std::time::Duration;

use weir_streams::RetryFlow;
use weir_streams::prelude::*;

fn plain(n: u64, mat: &Materializer) -> u64 {
    Source::range(0..n)
        .map_async(1, |x: u64| ready(Ok::<_, StreamError>(x + 1)))
        .expect("parallelism is not zero")
        .run_with(Sink::fold(0u64, u64::wrapping_add), mat)
        .wait()
        .expect("the pipeline completes")
}

fn retry(n: u64, mat: &Materializer) -> u64 {
    let service = Flow::<u64>::new()
        .map_async(1, |x: u64| ready(Ok::<_, StreamError>(x + 1)))
        .expect("parallelism is not zero");
    let retried = RetryFlow::with_backoff(
        Duration::from_millis(1),
        Duration::from_millis(100),
        0.0,
        3,
        service,
        |_: &u64, _: &u64| None,
    )
    .expect("valid backoff");
    Source::range(0..n)
        .via(retried)
        .run_with(Sink::fold(0u64, u64::wrapping_add), mat)
        .wait()
        .expect("the pipeline completes")
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
