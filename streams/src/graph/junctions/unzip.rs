//! [`Unzip`]: pairs split into two outputs.

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

    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        let logic = UnzipLogic::<A, B> {
            shape: FanOutShape2::new(),
            pulled: [false; 2],
            cancelled: [false; 2],
        };
        (Box::new(logic), ())
    }
}

struct UnzipLogic<A, B> {
    shape: FanOutShape2<(A, B), A, B>,
    pulled: [bool; 2],
    cancelled: [bool; 2],
}

impl<A: Send + 'static, B: Send + 'static> UnzipLogic<A, B> {
    fn pull_if_all_pulled(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let ready = (0..2).all(|i| self.pulled[i] || self.cancelled[i]);
        let inlet = self.shape.inlet;
        if ready && !ctx.has_been_pulled(inlet) && !ctx.is_closed(inlet) {
            ctx.pull(inlet)?;
        }
        Ok(())
    }
}

impl<A: Send + 'static, B: Send + 'static> GraphStageLogic for UnzipLogic<A, B> {
    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let (a, b) = ctx.grab(self.shape.inlet)?;
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
            ctx.complete_stage();
            return Ok(());
        }
        self.pull_if_all_pulled(ctx)
    }
}
