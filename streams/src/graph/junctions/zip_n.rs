//! [`ZipN`] and [`ZipWithN`]: one element of each of `N` inputs, combined.

use super::zip_row::ZipLogic;
use crate::stage::{FanInShapeN, GraphStage, GraphStageLogic, MatContext};

/// Gathers one element of each of its `N` inputs into an array `[T; N]`
/// (Akka's `ZipN`); otherwise as [`ZipWithN`].
///
/// # Examples
///
/// ```
/// use weir_streams::prelude::*;
///
/// let system = weir_actor::ActorSystem::new("zip-n").unwrap();
/// let mat = Materializer::new(&system);
/// let rows = Source::zip_n([Source::range(0u32..3), Source::range(10u32..), Source::range(20u32..)]);
/// let got = rows.run_with(Sink::collect(), &mat).wait();
/// assert_eq!(got, Ok(vec![[0, 10, 20], [1, 11, 21], [2, 12, 22]]));
/// system.terminate().wait().unwrap();
/// ```
#[derive(Debug, Clone, Copy)]
pub struct ZipN<T, const N: usize> {
    _t: std::marker::PhantomData<fn(T)>,
}

impl<T, const N: usize> ZipN<T, N> {
    /// The zip of `N` inputs into arrays.
    pub const fn new() -> Self {
        Self {
            _t: std::marker::PhantomData,
        }
    }
}

impl<T, const N: usize> Default for ZipN<T, N> {
    fn default() -> Self {
        Self::new()
    }
}

fn same<T, const N: usize>(items: [T; N]) -> [T; N] {
    items
}

impl<T: Send + 'static, const N: usize> GraphStage for ZipN<T, N> {
    type Shape = FanInShapeN<T, [T; N], N>;
    type Mat = ();

    fn name(&self) -> &'static str {
        "zip"
    }

    fn create_logic(&self, cx: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        ZipWithN::new(same::<T, N> as fn([T; N]) -> [T; N]).create_logic(cx)
    }

    fn fused_fan_in(&self) -> Option<crate::fusion::FusedFanIn> {
        ZipWithN::new(same::<T, N> as fn([T; N]) -> [T; N]).fused_fan_in()
    }
}

/// Combines one element of each of its `N` inputs with `f` (Akka's
/// `ZipWithN`; [`ZipWith`](super::ZipWith) and
/// [`ZipWith3`](super::ZipWith3) .. [`ZipWith5`](super::ZipWith5) are the
/// two- to five-input forms with inputs of their own types). Every input is asked when downstream asks
/// (back-pressure: no input runs ahead by more than one element);
/// completes as soon as an input completes with no element waiting (the
/// other inputs' extra elements are dropped); fails when any input fails;
/// cancels every input when downstream cancels.
///
/// # Examples
///
/// ```
/// use weir_streams::prelude::*;
///
/// let system = weir_actor::ActorSystem::new("zip-with-n").unwrap();
/// let mat = Materializer::new(&system);
/// let sums = Source::zip_with_n([Source::range(1u32..=3), Source::range(10u32..), Source::repeat(100)], |xs| {
///     xs.iter().sum::<u32>()
/// });
/// assert_eq!(sums.run_with(Sink::collect(), &mat).wait(), Ok(vec![111, 113, 115]));
/// system.terminate().wait().unwrap();
/// ```
pub struct ZipWithN<T, O, F, const N: usize> {
    f: F,
    _t: std::marker::PhantomData<fn([T; N]) -> O>,
}

impl<T, O, F: FnMut([T; N]) -> O, const N: usize> ZipWithN<T, O, F, N> {
    /// The zip of `N` inputs with `f` (cloned for each run, so each run
    /// starts from the state it was given).
    pub fn new(f: F) -> Self {
        Self {
            f,
            _t: std::marker::PhantomData,
        }
    }
}

impl<T, O, F, const N: usize> std::fmt::Debug for ZipWithN<T, O, F, N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ZipWithN<{N}>")
    }
}

impl<T, O, F, const N: usize> GraphStage for ZipWithN<T, O, F, N>
where
    T: Send + 'static,
    O: Send + 'static,
    F: FnMut([T; N]) -> O + Clone + Send + Sync + 'static,
{
    type Shape = FanInShapeN<T, O, N>;
    type Mat = ();

    fn name(&self) -> &'static str {
        "zip"
    }

    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        (ZipLogic::<[T; N], O, F>::boxed(self.f.clone()), ())
    }

    /// All inputs fused iterators: one element of each, combined.
    fn fused_fan_in(&self) -> Option<crate::fusion::FusedFanIn> {
        Some(crate::fusion::ZipFanIn::<[T; N], O, F>::hint(
            self.f.clone(),
        ))
    }
}
