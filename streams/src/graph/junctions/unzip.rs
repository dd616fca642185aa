//! [`Unzip`] and [`UnzipWith`]: each element split into two outputs.

use crate::stage::{
    FanOutShape2, GraphStage, GraphStageLogic, InPort, MatContext, OutPort, StageContext,
    StageResult,
};

/// Splits each `(a, b)` into `a` on its first output and `b` on its
/// second, at the speed of the slower: the next pair is asked for when
/// every output still running has taken its part. An output that cancels
/// is left out (its parts are dropped); upstream is cancelled when both
/// have. Completion and failure reach both outputs.
///
/// # Examples
///
/// ```
/// use weir_streams::graph::{GraphBuilder, Unzip};
/// use weir_streams::prelude::*;
///
/// # fn main() -> Result<(), weir_streams::GraphError> {
/// let system = weir_actor::ActorSystem::new("unzip").unwrap();
/// let mat = Materializer::new(&system);
/// let mut b = GraphBuilder::new();
/// let pairs = b.source(Source::from_iter(vec![(1, 'a'), (2, 'b')]));
/// let unzip = b.add(Unzip::<i32, char>::new());
/// let (numbers, n) = b.sink_mat(Sink::collect());
/// let (letters, l) = b.sink_mat(Sink::collect());
/// b.connect(pairs, unzip.inlet())?;
/// b.connect(unzip.out0(), numbers)?;
/// b.connect(unzip.out1(), letters)?;
/// let (n, l) = b.build(move |m| (m.take(&n), m.take(&l)))?.run(&mat);
/// assert_eq!(n.wait(), Ok(vec![1, 2]));
/// assert_eq!(l.wait(), Ok(vec!['a', 'b']));
/// system.terminate().wait().unwrap();
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Unzip<A, B> {
    _t: std::marker::PhantomData<fn(A, B)>,
}

impl<A, B> Unzip<A, B> {
    /// The unzip of pairs.
    pub const fn new() -> Self {
        Self {
            _t: std::marker::PhantomData,
        }
    }
}

impl<A, B> Default for Unzip<A, B> {
    fn default() -> Self {
        Self::new()
    }
}

impl<A: Send + 'static, B: Send + 'static> GraphStage for Unzip<A, B> {
    type Shape = FanOutShape2<(A, B), A, B>;
    type Mat = ();

    fn name(&self) -> &'static str {
        "unzip"
    }

    fn create_logic(&self, cx: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        UnzipWith::new(same::<A, B> as fn((A, B)) -> (A, B)).create_logic(cx)
    }
}

fn same<A, B>(pair: (A, B)) -> (A, B) {
    pair
}

/// Splits each element with `f` into a part for each of its two outputs
/// (Akka's `UnzipWith`); otherwise as [`Unzip`]: at the speed of the
/// slower output, an output that cancels is left out, upstream is
/// cancelled when both have. A panic in `f` fails the stream.
///
/// # Examples
///
/// ```
/// use weir_streams::graph::{GraphBuilder, UnzipWith};
/// use weir_streams::prelude::*;
///
/// # fn main() -> Result<(), weir_streams::GraphError> {
/// let system = weir_actor::ActorSystem::new("unzip-with").unwrap();
/// let mat = Materializer::new(&system);
/// let mut b = GraphBuilder::new();
/// let words = b.source(Source::from_iter(vec!["a", "bcd"]));
/// let split = b.add(UnzipWith::new(|w: &'static str| (w.len(), w.to_uppercase())));
/// let (lengths, l) = b.sink_mat(Sink::collect());
/// let (upper, u) = b.sink_mat(Sink::collect());
/// b.connect(words, split.inlet())?;
/// b.connect(split.out0(), lengths)?;
/// b.connect(split.out1(), upper)?;
/// let (l, u) = b.build(move |m| (m.take(&l), m.take(&u)))?.run(&mat);
/// assert_eq!(l.wait(), Ok(vec![1, 3]));
/// assert_eq!(u.wait(), Ok(vec!["A".to_owned(), "BCD".to_owned()]));
/// system.terminate().wait().unwrap();
/// # Ok(())
/// # }
/// ```
pub struct UnzipWith<I, A, B, F> {
    f: F,
    _t: std::marker::PhantomData<fn(I) -> (A, B)>,
}

impl<I, A, B, F: FnMut(I) -> (A, B)> UnzipWith<I, A, B, F> {
    /// The split of each element by `f` (cloned for each run).
    pub fn new(f: F) -> Self {
        Self {
            f,
            _t: std::marker::PhantomData,
        }
    }
}

impl<I, A, B, F> std::fmt::Debug for UnzipWith<I, A, B, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("UnzipWith")
    }
}

impl<I, A, B, F> GraphStage for UnzipWith<I, A, B, F>
where
    I: Send + 'static,
    A: Send + 'static,
    B: Send + 'static,
    F: FnMut(I) -> (A, B) + Clone + Send + Sync + 'static,
{
    type Shape = FanOutShape2<I, A, B>;
    type Mat = ();

    fn name(&self) -> &'static str {
        "unzip"
    }

    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        let logic = UnzipLogic {
            shape: FanOutShape2::new(),
            f: self.f.clone(),
            pulled: [false; 2],
            cancelled: [false; 2],
        };
        (Box::new(logic), ())
    }
}

struct UnzipLogic<I, A, B, F> {
    shape: FanOutShape2<I, A, B>,
    f: F,
    pulled: [bool; 2],
    cancelled: [bool; 2],
}

impl<I, A, B, F> UnzipLogic<I, A, B, F>
where
    I: Send + 'static,
    A: Send + 'static,
    B: Send + 'static,
{
    fn pull_if_all_pulled(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let ready = (0..2).all(|i| self.pulled[i] || self.cancelled[i]);
        let inlet = self.shape.inlet;
        if ready && !ctx.has_been_pulled(inlet) && !ctx.is_closed(inlet) {
            ctx.pull(inlet)?;
        }
        Ok(())
    }
}

impl<I, A, B, F> GraphStageLogic for UnzipLogic<I, A, B, F>
where
    I: Send + 'static,
    A: Send + 'static,
    B: Send + 'static,
    F: FnMut(I) -> (A, B) + Send + 'static,
{
    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let (a, b) = (self.f)(ctx.grab(self.shape.inlet)?);
        self.pulled = [false; 2];
        if !self.cancelled[0] {
            ctx.push(self.shape.out0, a)?;
        }
        if !self.cancelled[1] {
            ctx.push(self.shape.out1, b)?;
        }
        Ok(())
    }

    fn on_pull(&mut self, port: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.pulled[usize::from(port.0)] = true;
        self.pull_if_all_pulled(ctx)
    }

    fn on_downstream_finish(&mut self, port: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.cancelled[usize::from(port.0)] = true;
        if self.cancelled.iter().all(|c| *c) {
            // The last cause (or the first, when eager) goes upstream.
            let cause = ctx.cancellation(port);
            ctx.cancel_stage(cause);
            return Ok(());
        }
        self.pull_if_all_pulled(ctx)
    }
}
