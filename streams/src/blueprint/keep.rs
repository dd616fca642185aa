//! [`Keep`]: which materialized value a composition keeps.

/// Combiners for `via_mat` / `to_mat`: keep the left value, the right one,
/// both, or neither.
///
/// # Examples
///
/// ```
/// use weir_streams::prelude::*;
///
/// let system = weir_actor::ActorSystem::new("keep").unwrap();
/// let materializer = Materializer::new(&system);
/// let ((), count) = Source::range(0u32..5)
///     .to_mat(Sink::fold(0, |n, _| n + 1), Keep::both)
///     .run(&materializer);
/// assert_eq!(count.wait(), Ok(5));
/// system.terminate().wait().unwrap();
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Keep;

impl Keep {
    /// Keep the left (upstream) value.
    pub fn left<L, R>(left: L, _right: R) -> L {
        left
    }
    /// Keep the right (downstream) value.
    pub fn right<L, R>(_left: L, right: R) -> R {
        right
    }
    /// Keep both, as a pair.
    pub fn both<L, R>(left: L, right: R) -> (L, R) {
        (left, right)
    }
    /// Keep neither.
    pub fn none<L, R>(_left: L, _right: R) {}
}
