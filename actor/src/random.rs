//! A small per-thread random source (xorshift64*), for random routing and
//! backoff jitter: fast, not cryptographic, seeded once per thread.

use std::cell::Cell;
use std::hash::BuildHasher;

thread_local! {
    static STATE: Cell<u64> = Cell::new(seed());
}

fn seed() -> u64 {
    // A randomly keyed hash of the thread id: distinct per thread and per run.
    foldhash::fast::RandomState::default().hash_one(std::thread::current().id()) | 1
}

/// Seed this thread's source (a simulation's thread: every random choice
/// of the system it drives is made here).
#[cfg(feature = "testkit")]
pub(crate) fn reseed(seed: u64) {
    STATE.with(|state| state.set(seed | 1));
}

/// The next random number of this thread.
pub(crate) fn next_u64() -> u64 {
    random_u64()
}

/// The next number of the calling thread's random source: the one Weir's
/// own random choices draw from (random routing, backoff jitter), fast and
/// not cryptographic. On a simulation's thread it is seeded from the
/// simulation's seed (`weir_actor::sim`, feature `testkit`), so a choice
/// drawn from it replays with the seed; code that wants that (a stage's
/// jitter, say) should draw from here rather than from the clock.
///
/// # Examples
///
/// ```
/// let a = weir_actor::random_u64();
/// let b = weir_actor::random_u64();
/// assert_ne!(a, b);
/// ```
pub fn random_u64() -> u64 {
    STATE.with(|state| {
        let mut x = state.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        state.set(x);
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    })
}

/// A random index below `len` (`len > 0`), without a division.
pub(crate) fn below(len: usize) -> usize {
    ((u128::from(next_u64()) * len as u128) >> 64) as usize
}

/// A random number in `[0, 1)`.
pub(crate) fn unit() -> f64 {
    (next_u64() >> 11) as f64 / (1u64 << 53) as f64
}
