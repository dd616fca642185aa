//! Closing substreams is linear in their number (a work counter, not a
//! timing).

use super::stage::EXTRA_CLOSE_WORK;
use crate::prelude::*;
use crate::sync::Ordering;

/// After upstream ends, each substream's input is closed once: the
/// work is linear in the keys (it was quadratic with `usize::MAX`
/// keys and a fold per key).
#[test]
fn closing_many_substreams_is_linear() {
    let system = weir_actor::ActorSystem::new("close-linear").unwrap();
    let mat = Materializer::new(&system);
    let keys = 50_000u32;
    let count = Source::range(0..keys)
        .group_by(usize::MAX, |x| *x)
        .unwrap()
        .fold(0u32, |a, x| a + x)
        .merge_substreams()
        .run_with(Sink::fold(0u32, |n, _| n + 1), &mat);
    assert_eq!(count.wait(), Ok(keys));
    system.terminate().wait().unwrap();
    assert_eq!(EXTRA_CLOSE_WORK.load(Ordering::Relaxed), 0);
}
