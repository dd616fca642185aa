//! [`Zip`] and [`ZipWith`]: one element of each input, combined.

use crate::stage::{
    FanInShape2, GraphStage, GraphStageLogic, InPort, MatContext, OutPort, StageContext,
    StageResult,
};

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
        let logic = ZipLogic {
            shape: FanInShape2::new(),
            f: self.f.clone(),
            finishing: false,
        };
        (Box::new(logic), ())
    }

    /// Both inputs fused iterators: one element of each, combined.
    fn fused_fan_in(&self) -> Option<crate::fusion::FusedFanIn> {
        Some(crate::fusion::FusedFanIn::new(crate::fusion::ZipFanIn {
            f: self.f.clone(),
            _t: std::marker::PhantomData::<fn(A, B) -> O>,
        }))
    }
}

struct ZipLogic<A, B, O, F> {
    shape: FanInShape2<A, B, O>,
    f: F,
    /// An input completed while its element waited: complete after it.
    finishing: bool,
}

impl<A, B, O, F> GraphStageLogic for ZipLogic<A, B, O, F>
where
    A: Send + 'static,
    B: Send + 'static,
    O: Send + 'static,
    F: FnMut(A, B) -> O + Send + 'static,
{
    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let (in0, in1) = (self.shape.in0, self.shape.in1);
        if ctx.is_available(in0) && ctx.is_available(in1) {
            let (a, b) = (ctx.grab(in0)?, ctx.grab(in1)?);
            ctx.push(self.shape.out, (self.f)(a, b))?;
            if self.finishing || ctx.is_closed(in0) || ctx.is_closed(in1) {
                ctx.complete_stage();
            }
        }
        Ok(())
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        let (in0, in1) = (self.shape.in0, self.shape.in1);
        if !ctx.has_been_pulled(in0) && !ctx.is_available(in0) {
            ctx.pull(in0)?;
        }
        if !ctx.has_been_pulled(in1) && !ctx.is_available(in1) {
            ctx.pull(in1)?;
        }
        Ok(())
    }

    fn on_upstream_finish(&mut self, port: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let waiting = if port == self.shape.in0.port() {
            ctx.is_available(self.shape.in0)
        } else {
            ctx.is_available(self.shape.in1)
        };
        if waiting {
            self.finishing = true;
        } else {
            ctx.complete_stage();
        }
        Ok(())
    }
}
