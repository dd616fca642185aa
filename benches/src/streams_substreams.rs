//! Nesting benchmarks: `flat_map_concat` of many small inner sources
//! beside `futures::StreamExt::flatten` on the same data, and `group_by`
//! with a fold per substream merged back beside one stage folding into a
//! `HashMap`.
//!
//! Every variant returns a checksum of the same work, so none can skip it.

use std::collections::HashMap;

use weir_streams::prelude::*;

fn add(a: u64, x: u64) -> u64 {
    a.wrapping_add(x)
}

/// The checksum of `outer` inner ranges of `inner` elements each.
pub fn flatten_expected(outer: u64, inner: u64) -> u64 {
    (0..outer * inner).fold(0, add)
}

/// `outer` inner ranges of `inner` elements, flattened into a fold, on Weir.
pub fn weir_flat_map_concat(outer: u64, inner: u64, mat: &Materializer) -> u64 {
    Source::range(0..outer)
        .flat_map_concat(move |i| Source::range(i * inner..(i + 1) * inner))
        .run_with(Sink::fold(0u64, add), mat)
        .wait()
        .expect("the stream completes")
}

/// The same with `futures::StreamExt::flatten` under `block_on`.
pub fn futures_flatten(outer: u64, inner: u64) -> u64 {
    use futures_util::future::ready;
    use futures_util::stream::{self, StreamExt};
    futures_executor::block_on(
        stream::iter(0..outer)
            .map(|i| stream::iter(i * inner..(i + 1) * inner))
            .flatten()
            .fold(0u64, |a, x| ready(add(a, x))),
    )
}

/// The checksum of `0..n` summed per key `x % keys`, then over the keys.
pub fn group_expected(n: u64) -> u64 {
    (0..n).fold(0, add)
}

/// `0..n` grouped by `x % keys`, a fold per substream, merged into a sum.
pub fn weir_group_by(n: u64, keys: u64, mat: &Materializer) -> u64 {
    Source::range(0..n)
        .group_by(keys as usize, move |x: &u64| x % keys)
        .expect("keys > 0")
        .fold(0u64, add)
        .merge_substreams()
        .run_with(Sink::fold(0u64, add), mat)
        .wait()
        .expect("the stream completes")
}

/// `0..n` folded into a `HashMap` of per-key sums in one stage; their sum.
pub fn weir_hashmap_fold(n: u64, keys: u64, mat: &Materializer) -> u64 {
    Source::range(0..n)
        .run_with(
            Sink::fold(HashMap::<u64, u64>::new(), move |mut sums, x| {
                let sum = sums.entry(x % keys).or_insert(0);
                *sum = add(*sum, x);
                sums
            }),
            mat,
        )
        .wait()
        .expect("the stream completes")
        .values()
        .fold(0, |a, x| add(a, *x))
}
