//! [`Broadcast`]: every element to each of `N` outputs.

use crate::stage::{
    GraphStage, GraphStageLogic, InPort, MatContext, OutPort, StageContext, StageResult,
    UniformFanOutShape,
};

/// Emits every element to each of its `N` outputs, at the speed of the
/// slowest: the next element is asked for when every output still running
/// has taken the last one. An output that cancels is left out; the
/// broadcast cancels upstream when all have (or, with
/// [`eager_cancel`](Self::eager_cancel), when the first does). Completion
/// and failure reach every output.
///
/// # Examples
///
/// ```
/// use weir_streams::graph::{Broadcast, GraphBuilder};
/// use weir_streams::prelude::*;
///
/// # fn main() -> Result<(), weir_streams::GraphError> {
/// let system = weir_actor::ActorSystem::new("broadcast").unwrap();
/// let mat = Materializer::new(&system);
/// // One pass, two results: the sum and the count.
/// let mut b = GraphBuilder::new();
/// let source = b.source(Source::range(1u64..=4));
/// let broadcast = b.add(Broadcast::<u64, 2>::new());
/// let (sum, sum_key) = b.sink_mat(Sink::fold(0u64, |a, x| a + x));
/// let (count, count_key) = b.sink_mat(Sink::fold(0u64, |n, _| n + 1));
/// let [to_sum, to_count] = broadcast.outs();
/// b.connect(source, broadcast.inlet())?;
/// b.connect(to_sum, sum)?;
/// b.connect(to_count, count)?;
/// let graph = b.build(move |m| (m.take(&sum_key), m.take(&count_key)))?;
/// let (sum, count) = graph.run(&mat);
/// assert_eq!((sum.wait(), count.wait()), (Ok(10), Ok(4)));
/// system.terminate().wait().unwrap();
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Broadcast<T, const N: usize> {
    eager_cancel: bool,
    _t: std::marker::PhantomData<fn(T)>,
}

impl<T, const N: usize> Broadcast<T, N> {
    /// A broadcast that cancels upstream when all its outputs have.
    pub const fn new() -> Self {
        Self {
            eager_cancel: false,
            _t: std::marker::PhantomData,
        }
    }

    /// A broadcast that cancels upstream as soon as one output cancels.
    pub const fn eager_cancel(mut self) -> Self {
        self.eager_cancel = true;
        self
    }
}

impl<T, const N: usize> Default for Broadcast<T, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Clone + Send + 'static, const N: usize> GraphStage for Broadcast<T, N> {
    type Shape = UniformFanOutShape<T, N>;
    type Mat = ();

    fn name(&self) -> &'static str {
        "broadcast"
    }

    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        let logic = BroadcastLogic::<T, N> {
            shape: UniformFanOutShape::new(),
            pulled: [false; N],
            cancelled: [false; N],
            running: N,
            eager_cancel: self.eager_cancel,
        };
        (Box::new(logic), ())
    }
}

struct BroadcastLogic<T, const N: usize> {
    shape: UniformFanOutShape<T, N>,
    pulled: [bool; N],
    cancelled: [bool; N],
    running: usize,
    eager_cancel: bool,
}

impl<T: Clone + Send + 'static, const N: usize> BroadcastLogic<T, N> {
    /// Ask upstream once every running output has asked.
    fn pull_if_all_pulled(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let ready = (0..N).all(|i| self.pulled[i] || self.cancelled[i]);
        let inlet = self.shape.inlet;
        if ready && !ctx.has_been_pulled(inlet) && !ctx.is_closed(inlet) {
            ctx.pull(inlet)?;
        }
        Ok(())
    }
}

impl<T: Clone + Send + 'static, const N: usize> GraphStageLogic for BroadcastLogic<T, N> {
    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        let mut last = None;
        for i in 0..N {
            if !self.cancelled[i] {
                self.pulled[i] = false;
                if let Some(previous) = last.replace(i) {
                    ctx.push(self.shape.outs[previous], element.clone())?;
                }
            }
        }
        if let Some(i) = last {
            ctx.push(self.shape.outs[i], element)?;
        }
        Ok(())
    }

    fn on_pull(&mut self, port: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.pulled[usize::from(port.0)] = true;
        self.pull_if_all_pulled(ctx)
    }

    fn on_downstream_finish(&mut self, port: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        let i = usize::from(port.0);
        if !self.cancelled[i] {
            self.cancelled[i] = true;
            self.running -= 1;
        }
        if self.eager_cancel || self.running == 0 {
            // The last cause (or the first, when eager) goes upstream.
            let cause = ctx.cancellation(port);
            ctx.cancel_stage(cause);
            return Ok(());
        }
        self.pull_if_all_pulled(ctx)
    }
}
