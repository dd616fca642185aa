//! [`Zip`] and [`ZipWith`]: one element of each input, combined.

use super::zip_row::ZipLogic;
use crate::stage::{FanInShape2, GraphStage, GraphStageLogic, MatContext};

/// Pairs the elements of its two inputs: `(a, b)` for each `a` and `b`
/// taken together; otherwise as [`ZipWith`].
#[derive(Debug, Clone, Copy)]
pub struct Zip<A, B> {
    _t: std::marker::PhantomData<fn(A, B)>,
}

impl<A, B> Zip<A, B> {
    /// The zip of two inputs into pairs.
    pub const fn new() -> Self {
        Self {
            _t: std::marker::PhantomData,
        }
    }
}

impl<A, B> Default for Zip<A, B> {
    fn default() -> Self {
        Self::new()
    }
}

fn pair<A, B>(a: A, b: B) -> (A, B) {
    (a, b)
}

impl<A: Send + 'static, B: Send + 'static> GraphStage for Zip<A, B> {
    type Shape = FanInShape2<A, B, (A, B)>;
    type Mat = ();

    fn name(&self) -> &'static str {
        "zip"
    }

    fn create_logic(&self, cx: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        ZipWith::new(pair::<A, B> as fn(A, B) -> (A, B)).create_logic(cx)
    }

    fn fused_fan_in(&self) -> Option<crate::fusion::FusedFanIn> {
        ZipWith::new(pair::<A, B> as fn(A, B) -> (A, B)).fused_fan_in()
    }
}

/// Combines one element of each of its two inputs with `f`. Both inputs
/// are asked when downstream asks (back-pressure: neither runs ahead by
/// more than one element); completes as soon as an input completes with
/// no element waiting (its partner's extra elements are dropped); fails
/// when either fails; cancels both when downstream cancels. When both
/// inputs are iterator sources with simple operators, the planner runs the
/// zip fused into one iterator (it asks both inputs for as many elements
/// as both are sure to make, so it makes none it drops).
///
/// # Examples
///
/// ```
/// use weir_streams::graph::JunctionOps;
/// use weir_streams::prelude::*;
///
/// let system = weir_actor::ActorSystem::new("zip").unwrap();
/// let mat = Materializer::new(&system);
/// let sums = Source::range(1u32..=3).zip_with(Source::range(10u32..), |a, b| a + b);
/// assert_eq!(sums.run_with(Sink::collect(), &mat).wait(), Ok(vec![11, 13, 15]));
/// system.terminate().wait().unwrap();
/// ```
pub struct ZipWith<A, B, O, F> {
    f: F,
    _t: std::marker::PhantomData<fn(A, B) -> O>,
}

impl<A, B, O, F: Fn(A, B) -> O> ZipWith<A, B, O, F> {
    /// The zip of two inputs with `f` (cloned for each run).
    pub fn new(f: F) -> Self {
        Self::new_mut(f)
    }
}

impl<A, B, O, F: FnMut(A, B) -> O> ZipWith<A, B, O, F> {
    /// The zip of two inputs with a stateful `f` (cloned for each run, so
    /// each run starts from the state it was given).
    pub fn new_mut(f: F) -> Self {
        Self {
            f,
            _t: std::marker::PhantomData,
        }
    }
}

impl<A, B, O, F> std::fmt::Debug for ZipWith<A, B, O, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ZipWith")
    }
}

impl<A, B, O, F> GraphStage for ZipWith<A, B, O, F>
where
    A: Send + 'static,
    B: Send + 'static,
    O: Send + 'static,
    F: FnMut(A, B) -> O + Clone + Send + Sync + 'static,
{
    type Shape = FanInShape2<A, B, O>;
    type Mat = ();

    fn name(&self) -> &'static str {
        "zip"
    }

    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        let mut f = self.f.clone();
        (ZipLogic::<(A, B), O, _>::boxed(move |(a, b)| f(a, b)), ())
    }

    /// Both inputs fused iterators: one element of each, combined.
    fn fused_fan_in(&self) -> Option<crate::fusion::FusedFanIn> {
        let mut f = self.f.clone();
        Some(crate::fusion::ZipFanIn::<(A, B), O, _>::hint(
            move |(a, b)| f(a, b),
        ))
    }
}
