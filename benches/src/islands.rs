//! Islands joined by async boundaries (issue 17): `range -> map ->
//! (async_boundary -> map) x k -> fold` at default buffers, beside the same
//! pipeline as `k + 1` tokio tasks joined by `mpsc(16)` channels on the
//! multi-thread and the current-thread runtime. Rows for `weir-bench
//! streams`; the summary under its table gives the ratio the issue sets a
//! target for (at least 2x the faster tokio variant).
//!
//! The queue rows (issue 16, `weir-bench islands`): one thread feeds
//! `Source::queue(16)` with `send` into a fold, beside one thread feeding
//! tokio's `mpsc::channel(16)` with `blocking_send` into a task that sums.

use weir_streams::Materializer;
use weir_streams::prelude::*;

use crate::hops::Variant;

/// The per-stage work: cheap, and different per stage so nothing folds away.
fn stage(x: u64, k: u64) -> u64 {
    x.wrapping_mul(3) ^ k
}

/// The checksum every variant computes for `n` elements and `boundaries`
/// boundaries.
pub fn expected(n: u64, boundaries: u64) -> u64 {
    (0..n)
        .map(|x| (0..=boundaries).fold(x, stage))
        .fold(0u64, u64::wrapping_add)
}

/// Weir: `boundaries` async boundaries, a map before each and one after
/// the last, default buffers.
pub fn weir(n: u64, boundaries: u64, mat: &Materializer) -> u64 {
    let mut source = Source::range(0..n).map(|x| stage(x, 0));
    for k in 1..=boundaries {
        source = source.async_boundary().map(move |x| stage(x, k));
    }
    source
        .run_with(Sink::fold(0u64, u64::wrapping_add), mat)
        .wait()
        .expect("the stream completes")
}

/// The same pipeline as `boundaries + 1` tokio tasks joined by `mpsc(16)`.
#[cfg(feature = "peers")]
pub fn tokio_tasks(n: u64, boundaries: u64, rt: &tokio::runtime::Runtime) -> u64 {
    use tokio::sync::mpsc;
    rt.block_on(async move {
        let (tx, mut rx) = mpsc::channel::<u64>(16);
        tokio::spawn(async move {
            for x in 0..n {
                if tx.send(stage(x, 0)).await.is_err() {
                    return;
                }
            }
        });
        for k in 1..boundaries {
            let (next_tx, next_rx) = mpsc::channel::<u64>(16);
            let mut from = std::mem::replace(&mut rx, next_rx);
            tokio::spawn(async move {
                while let Some(x) = from.recv().await {
                    if next_tx.send(stage(x, k)).await.is_err() {
                        return;
                    }
                }
            });
        }
        let last = boundaries;
        tokio::spawn(async move {
            let mut sum = 0u64;
            while let Some(x) = rx.recv().await {
                sum = sum.wrapping_add(stage(x, last));
            }
            sum
        })
        .await
        .expect("the folding task completes")
    })
}

/// The sum every queue row computes for `n` elements (`0..n`).
pub fn queue_expected(n: u64) -> u64 {
    (0..n).fold(0u64, u64::wrapping_add)
}

/// Weir: a thread sends `0..n` into `Source::queue(16)`, waiting for room
/// (`send`), and the stream folds them.
pub fn weir_queue(n: u64, mat: &Materializer) -> u64 {
    let (queue, done) = Source::queue(16)
        .expect("a buffer of 16")
        .to_mat(Sink::fold(0u64, u64::wrapping_add), Keep::both)
        .run(mat);
    let feeder = std::thread::spawn(move || {
        for x in 0..n {
            futures_executor::block_on(queue.send(x)).expect("the stream runs");
        }
        queue.complete();
    });
    let sum = done.wait().expect("the stream completes");
    feeder.join().expect("the feeder returns");
    sum
}

/// Tokio: a thread sends `0..n` into `mpsc::channel(16)` with
/// `blocking_send`, and a task sums them.
#[cfg(feature = "peers")]
pub fn tokio_queue(n: u64, rt: &tokio::runtime::Runtime) -> u64 {
    let (tx, mut rx) = tokio::sync::mpsc::channel::<u64>(16);
    let summing = rt.spawn(async move {
        let mut sum = 0u64;
        while let Some(x) = rx.recv().await {
            sum = sum.wrapping_add(x);
        }
        sum
    });
    let feeder = std::thread::spawn(move || {
        for x in 0..n {
            tx.blocking_send(x).expect("the task runs");
        }
    });
    let sum = rt.block_on(summing).expect("the summing task completes");
    feeder.join().expect("the feeder returns");
    sum
}

const WEIR_QUEUE: &str = "queue: weir Source::queue(16), send";
const TOKIO_QUEUE: &str = "queue: tokio mpsc(16), blocking_send";

/// The queue rows; each computes [`queue_expected`].
pub fn queue_variants<'a>(n: u64, mat: &'a Materializer) -> Vec<Variant<'a>> {
    #[cfg_attr(not(feature = "peers"), allow(unused_mut))] // the peer pushes its row
    let mut rows: Vec<Variant<'a>> = vec![(WEIR_QUEUE, Box::new(move || weir_queue(n, mat)))];
    #[cfg(feature = "peers")]
    {
        let mt = tokio::runtime::Builder::new_multi_thread()
            .build()
            .expect("a tokio runtime");
        rows.push((TOKIO_QUEUE, Box::new(move || tokio_queue(n, &mt))));
    }
    rows
}

const WEIR_2: &str = "weir, 2 boundaries (islands)";
const WEIR_4: &str = "weir, 4 boundaries (islands)";
const TOKIO_MT_2: &str = "tokio mt, 3 tasks mpsc(16)";
const TOKIO_CT_2: &str = "tokio ct, 3 tasks mpsc(16)";
const TOKIO_MT_4: &str = "tokio mt, 5 tasks mpsc(16)";
const TOKIO_CT_4: &str = "tokio ct, 5 tasks mpsc(16)";

/// Rows that compute [`expected`] with `boundaries` boundaries (the
/// caller checks their checksums against it).
pub fn variants<'a>(n: u64, mat: &'a Materializer) -> Vec<(u64, Variant<'a>)> {
    #[cfg_attr(not(feature = "peers"), allow(unused_mut))] // the peers push theirs
    let mut rows: Vec<(u64, Variant<'a>)> = vec![
        (2, (WEIR_2, Box::new(move || weir(n, 2, mat)))),
        (4, (WEIR_4, Box::new(move || weir(n, 4, mat)))),
    ];
    #[cfg(feature = "peers")]
    {
        let mt = std::rc::Rc::new(
            tokio::runtime::Builder::new_multi_thread()
                .build()
                .expect("a tokio runtime"),
        );
        let ct = std::rc::Rc::new(
            tokio::runtime::Builder::new_current_thread()
                .build()
                .expect("a tokio runtime"),
        );
        for (b, mt_name, ct_name) in [(2, TOKIO_MT_2, TOKIO_CT_2), (4, TOKIO_MT_4, TOKIO_CT_4)] {
            let (mt, ct) = (mt.clone(), ct.clone());
            rows.push((b, (mt_name, Box::new(move || tokio_tasks(n, b, &mt)))));
            rows.push((b, (ct_name, Box::new(move || tokio_tasks(n, b, &ct)))));
        }
    }
    rows
}

/// Print the ratios of the Weir rows to the faster tokio variant.
pub fn report(rows: &[(&str, f64, f64)]) {
    let rate = |name: &str| rows.iter().find(|r| r.0 == name).map(|r| r.1);
    println!("islands joined by async boundaries (default buffers):");
    for (weir, mt, ct) in [
        (WEIR_2, TOKIO_MT_2, TOKIO_CT_2),
        (WEIR_4, TOKIO_MT_4, TOKIO_CT_4),
    ] {
        let Some(w) = rate(weir) else { continue };
        print!("  {weir:<32} {:>7.1} ns per element", 1e9 / w);
        let faster = rate(mt).into_iter().chain(rate(ct)).reduce(f64::max);
        match faster {
            Some(t) => println!("   {:.2}x the faster tokio variant (target >= 2x)", w / t),
            None => println!(),
        }
    }
    if let Some(w) = rate(WEIR_QUEUE) {
        print!("  {WEIR_QUEUE:<32} {:>7.1} ns per element", 1e9 / w);
        match rate(TOKIO_QUEUE) {
            Some(t) => println!("   {:.2}x tokio's rate", w / t),
            None => println!(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_computes_the_same_sum() {
        let system = weir_actor::ActorSystem::new("islands").expect("valid name");
        let mat = Materializer::new(&system);
        for (boundaries, (name, run)) in variants(1_000, &mat) {
            assert_eq!(run(), expected(1_000, boundaries), "{name}");
        }
        system.terminate().wait().expect("outside the system");
    }

    #[test]
    fn every_queue_variant_computes_the_same_sum() {
        let system = weir_actor::ActorSystem::new("islands-queue").expect("valid name");
        let mat = Materializer::new(&system);
        for (name, run) in queue_variants(1_000, &mat) {
            assert_eq!(run(), queue_expected(1_000), "{name}");
        }
        system.terminate().wait().expect("outside the system");
    }
}
