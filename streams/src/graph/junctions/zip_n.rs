//! [`ZipN`] and [`ZipWithN`]: one element of each of `N` inputs, combined.

use crate::stage::{
    FanInShapeN, GraphStage, GraphStageLogic, InPort, MatContext, OutPort, StageContext,
    StageResult,
};

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
}

/// Combines one element of each of its `N` inputs with `f` (Akka's
/// `ZipWithN`; [`ZipWith`](super::ZipWith) is the two-input form with
/// inputs of different types). Every input is asked when downstream asks
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
        let logic = ZipNLogic {
            shape: FanInShapeN::new(),
            f: self.f.clone(),
            finishing: false,
        };
        (Box::new(logic), ())
    }
}

struct ZipNLogic<T, O, F, const N: usize> {
    shape: FanInShapeN<T, O, N>,
    f: F,
    /// An input completed while its element waited: complete after it.
    finishing: bool,
}

impl<T, O, F, const N: usize> GraphStageLogic for ZipNLogic<T, O, F, N>
where
    T: Send + 'static,
    O: Send + 'static,
    F: FnMut([T; N]) -> O + Send + 'static,
{
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        // No inputs: no row will ever be complete.
        if N == 0 {
            ctx.complete_stage();
        }
        Ok(())
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        if !self.shape.ins.iter().all(|inlet| ctx.is_available(*inlet)) {
            return Ok(());
        }
        let mut items: [Option<T>; N] = std::array::from_fn(|_| None);
        for (item, inlet) in items.iter_mut().zip(self.shape.ins) {
            *item = Some(ctx.grab(inlet)?);
        }
        let items = items.map(|item| item.expect("every input had an element"));
        ctx.push(self.shape.out, (self.f)(items))?;
        if self.finishing || self.shape.ins.iter().any(|inlet| ctx.is_closed(*inlet)) {
            ctx.complete_stage();
        }
        Ok(())
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        for inlet in self.shape.ins {
            if !ctx.has_been_pulled(inlet) && !ctx.is_available(inlet) {
                ctx.pull(inlet)?;
            }
        }
        Ok(())
    }

    fn on_upstream_finish(&mut self, port: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let inlet = self.shape.ins[usize::from(port.0)];
        if ctx.is_available(inlet) {
            self.finishing = true;
        } else {
            ctx.complete_stage();
        }
        Ok(())
    }
}
