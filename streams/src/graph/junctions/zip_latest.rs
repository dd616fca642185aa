//! [`ZipLatest`] and [`ZipLatestWith`]: the latest element of each input,
//! combined whenever one of them changes.

use crate::stage::{
    FanInShape2, GraphStage, GraphStageLogic, InPort, Inlet, MatContext, OutPort, StageContext,
    StageResult,
};

/// Pairs the latest elements of its two inputs: `(a, b)` as
/// [`ZipLatestWith`] combines them.
///
/// # Examples
///
/// ```
/// use weir_streams::graph::JunctionOps;
/// use weir_streams::prelude::*;
///
/// let system = weir_actor::ActorSystem::new("zip-latest").unwrap();
/// let mat = Materializer::new(&system);
/// // Either side completing completes the zip: these never do.
/// let pairs = Source::repeat(1u32).zip_latest(Source::repeat('x')).take(2);
/// assert_eq!(pairs.run_with(Sink::collect(), &mat).wait(), Ok(vec![(1, 'x'), (1, 'x')]));
/// system.terminate().wait().unwrap();
/// ```
#[derive(Debug, Clone, Copy)]
pub struct ZipLatest<A, B> {
    _t: std::marker::PhantomData<fn(A, B)>,
}

impl<A, B> ZipLatest<A, B> {
    /// The zip of the latest elements of two inputs into pairs.
    pub const fn new() -> Self {
        Self {
            _t: std::marker::PhantomData,
        }
    }
}

impl<A, B> Default for ZipLatest<A, B> {
    fn default() -> Self {
        Self::new()
    }
}

fn pair<A, B>(a: A, b: B) -> (A, B) {
    (a, b)
}

impl<A: Clone + Send + 'static, B: Clone + Send + 'static> GraphStage for ZipLatest<A, B> {
    type Shape = FanInShape2<A, B, (A, B)>;
    type Mat = ();

    fn name(&self) -> &'static str {
        "zip_latest"
    }

    fn create_logic(&self, cx: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        ZipLatestWith::new(pair::<A, B> as fn(A, B) -> (A, B)).create_logic(cx)
    }
}

/// Combines the latest element of each of its two inputs with `f` (Akka's
/// `ZipLatestWith`): nothing is emitted until both inputs have given an
/// element; from then on, each new element on either input is combined
/// with the latest of the other, once (a pull with nothing new emits
/// nothing). Back-pressure: until both inputs have given an element, an
/// input is asked again after each one (only its latest is kept); after
/// that, an input is asked again only once its element has gone out.
/// Completes as soon as either input completes (after emitting a
/// combination still waiting for demand); fails when either fails;
/// cancels both when downstream cancels.
///
/// # Examples
///
/// ```
/// use weir_streams::graph::JunctionOps;
/// use weir_streams::prelude::*;
///
/// let system = weir_actor::ActorSystem::new("zip-latest-with").unwrap();
/// let mat = Materializer::new(&system);
/// let sums = Source::repeat(2u32).zip_latest_with(Source::repeat(100u32), |a, b| a + b);
/// assert_eq!(sums.take(2).run_with(Sink::collect(), &mat).wait(), Ok(vec![102, 102]));
/// system.terminate().wait().unwrap();
/// ```
pub struct ZipLatestWith<A, B, O, F> {
    f: F,
    _t: std::marker::PhantomData<fn(A, B) -> O>,
}

impl<A, B, O, F: FnMut(A, B) -> O> ZipLatestWith<A, B, O, F> {
    /// The zip of the latest elements of two inputs with `f` (cloned for
    /// each run).
    pub fn new(f: F) -> Self {
        Self {
            f,
            _t: std::marker::PhantomData,
        }
    }
}

impl<A, B, O, F> std::fmt::Debug for ZipLatestWith<A, B, O, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ZipLatestWith")
    }
}

impl<A, B, O, F> GraphStage for ZipLatestWith<A, B, O, F>
where
    A: Clone + Send + 'static,
    B: Clone + Send + 'static,
    O: Send + 'static,
    F: FnMut(A, B) -> O + Clone + Send + Sync + 'static,
{
    type Shape = FanInShape2<A, B, O>;
    type Mat = ();

    fn name(&self) -> &'static str {
        "zip_latest"
    }

    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        let logic = ZipLatestLogic {
            shape: FanInShape2::new(),
            f: self.f.clone(),
            a: None,
            b: None,
            fresh: false,
            finishing: false,
        };
        (Box::new(logic), ())
    }
}

struct ZipLatestLogic<A, B, O, F> {
    shape: FanInShape2<A, B, O>,
    f: F,
    a: Option<A>,
    b: Option<B>,
    /// An element arrived since the last emission.
    fresh: bool,
    /// An input completed: complete once the fresh combination is out.
    finishing: bool,
}

impl<A, B, O, F> ZipLatestLogic<A, B, O, F>
where
    A: Clone + Send + 'static,
    B: Clone + Send + 'static,
    O: Send + 'static,
    F: FnMut(A, B) -> O + Send + 'static,
{
    fn pull_if_idle<T: Send + 'static>(inlet: Inlet<T>, ctx: &mut StageContext<'_>) -> StageResult {
        if !ctx.has_been_pulled(inlet) && !ctx.is_closed(inlet) {
            ctx.pull(inlet)?;
        }
        Ok(())
    }

    /// Emit the fresh combination if downstream waits; then ask both
    /// inputs again (or complete, when finishing).
    fn emit_if_ready(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let (Some(a), Some(b)) = (&self.a, &self.b) else {
            return Ok(());
        };
        if !self.fresh || !ctx.is_available(self.shape.out) {
            return Ok(());
        }
        let element = (self.f)(a.clone(), b.clone());
        self.fresh = false;
        ctx.push(self.shape.out, element)?;
        if self.finishing {
            ctx.complete_stage();
            return Ok(());
        }
        Self::pull_if_idle(self.shape.in0, ctx)?;
        Self::pull_if_idle(self.shape.in1, ctx)
    }
}

impl<A, B, O, F> GraphStageLogic for ZipLatestLogic<A, B, O, F>
where
    A: Clone + Send + 'static,
    B: Clone + Send + 'static,
    O: Send + 'static,
    F: FnMut(A, B) -> O + Send + 'static,
{
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.pull(self.shape.in0)?;
        ctx.pull(self.shape.in1)
    }

    fn on_push(&mut self, port: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        if port == self.shape.in0.port() {
            self.a = Some(ctx.grab(self.shape.in0)?);
        } else {
            self.b = Some(ctx.grab(self.shape.in1)?);
        }
        self.fresh = true;
        if self.a.is_none() || self.b.is_none() {
            // Still waiting for the other input: keep only the latest.
            if port == self.shape.in0.port() {
                return Self::pull_if_idle(self.shape.in0, ctx);
            }
            return Self::pull_if_idle(self.shape.in1, ctx);
        }
        self.emit_if_ready(ctx)
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.emit_if_ready(ctx)
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        if self.fresh && self.a.is_some() && self.b.is_some() {
            // Emit what waits, and nothing newer.
            self.finishing = true;
            if !ctx.is_closed(self.shape.in0) {
                ctx.cancel(self.shape.in0);
            }
            if !ctx.is_closed(self.shape.in1) {
                ctx.cancel(self.shape.in1);
            }
        } else {
            ctx.complete_stage();
        }
        Ok(())
    }
}
