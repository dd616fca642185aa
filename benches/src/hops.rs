//! The interpreter hop (issue 17): rows for `weir-bench streams` beside
//! the pipeline rows, and the summary printed under its table: ns per hop
//! for Weir's 10 unfused stages and datum-core's 10 `scan`s (each minus
//! its own fused chain, over the 10 extra connections), the ratios the
//! issue sets targets for, the like-for-like ratios, and a broadcast +
//! merge graph.
//!
//! Like for like: datum-core runs a linear `Flow` chain, its `scan`s
//! included, as nested boxed iterators, so its "10 scans" row is an
//! iterator hop (compare Weir's 10 scans and the boxed-map iterator); its
//! graph interpreter runs when a graph is built with `GraphDsl` and fusion
//! off ("10 interpreted", ten `Identity` stages), the peer of Weir's 10
//! unfused custom stages.

use weir_streams::Materializer;

use crate::streams_pipeline as p;

/// A named row: a closure that runs the work once and returns a checksum.
pub type Variant<'a> = (&'static str, Box<dyn Fn() -> u64 + 'a>);

/// Row names the summary looks up.
const FUSED: &str = "weir fused";
const UNFUSED: &str = "weir, 10 unfused stages";
const BOXED: &str = "iterator, 10 boxed maps";
const DATUM: &str = "datum-core 0.11";
const DATUM_TEN: &str = "datum-core, 10 scans";
const DATUM_INTERPRETED: &str = "datum-core, 10 interpreted";
const SCANS: &str = "weir, 10 scans";
const BROADCAST: &str = "weir broadcast + merge";
const ITER_BROADCAST: &str = "iterator broadcast + merge";

/// The broadcast + merge rows (Weir's graph and the iterator doing the same work).
pub fn variants<'a>(n: u64, mat: &'a Materializer) -> Vec<Variant<'a>> {
    vec![
        (BROADCAST, Box::new(move || p::weir_broadcast_merge(n, mat))),
        (
            ITER_BROADCAST,
            Box::new(move || p::iterator_broadcast_merge(n)),
        ),
    ]
}

/// Print ns per hop and the target ratios from `rows` (name, elements/s,
/// allocations per element); rows that did not run are skipped.
pub fn report(rows: &[(&str, f64, f64)]) {
    let rate = |name: &str| rows.iter().find(|r| r.0 == name).map(|r| r.1);
    let ns = |r: f64| 1e9 / r;
    let hop = |ten: Option<f64>, base: Option<f64>| Some((ns(ten?) - ns(base?)) / 10.0);
    println!("interpreter hop (10 extra connections per element):");
    if let Some(h) = hop(rate(UNFUSED), rate(FUSED)) {
        println!("  weir 10 unfused stages   {h:>6.2} ns per hop");
    }
    if let Some(h) = hop(rate(DATUM_TEN), rate(DATUM)) {
        println!("  datum-core 10 scans      {h:>6.2} ns per hop");
    }
    let ratio = |a: &str, b: &str| Some(rate(a)? / rate(b)?);
    if let Some(r) = ratio(UNFUSED, DATUM_TEN) {
        println!("  10 unfused vs datum-core 10 scans   {r:>6.2}x (target >= 2x)");
    }
    if let Some(r) = ratio(UNFUSED, BOXED) {
        println!("  10 unfused vs 10 boxed-map iterator {r:>6.2}x (target >= 0.2x)");
    }
    println!("like for like (datum-core's scans are boxed iterators, see the module doc):");
    if let Some(h) = hop(rate(DATUM_INTERPRETED), rate(DATUM)) {
        println!("  datum-core interpreter   {h:>6.2} ns per hop");
    }
    if let Some(r) = ratio(UNFUSED, DATUM_INTERPRETED) {
        println!("  10 unfused vs datum-core 10 interpreted stages {r:>6.2}x");
    }
    if let Some(r) = ratio(SCANS, DATUM_TEN) {
        println!("  10 scans vs datum-core 10 scans                {r:>6.2}x");
    }
    if let Some(r) = rate(BROADCAST) {
        // source -> broadcast once, broadcast -> merge twice, merge -> fold
        // twice: five hops per source element.
        println!(
            "  broadcast + merge        {:>6.2} ns per hop (5 hops per element, all-in)",
            ns(r) / 5.0
        );
    }
    if let Some(r) = ratio(BROADCAST, ITER_BROADCAST) {
        println!("  broadcast + merge vs iterator       {r:>6.2}x");
    }
    let allocs: Vec<String> = rows
        .iter()
        .filter(|r| r.0 == UNFUSED || r.0 == BROADCAST)
        .map(|r| format!("{} {:.6}", r.0, r.2))
        .collect();
    println!("  allocations per element: {}", allocs.join(", "));
}
