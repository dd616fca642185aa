//! [`Partition`]: each element to the output its partitioner names.

use crate::error::StreamError;
use crate::stage::{
    GraphStage, GraphStageLogic, InPort, MatContext, OutPort, StageContext, StageResult,
    SupervisionStrategy, UniformFanOutShape, supervised,
};

/// Why a [`Partition`] failed its stream: the partitioner named an output
/// the partition does not have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartitionOutOfRange {
    /// The output the partitioner returned.
    pub index: usize,
    /// How many outputs the partition has.
    pub outputs: usize,
}

impl std::fmt::Display for PartitionOutOfRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "partitioner returned output {} of {}",
            self.index, self.outputs
        )
    }
}

impl std::error::Error for PartitionOutOfRange {}

/// Emits each element to the output `partitioner(&element)` names, when
/// that output has asked (back-pressure: one slow output holds the rest).
/// An element for an output that cancelled is dropped; upstream is
/// cancelled when every output has (or, with
/// [`eager_cancel`](Self::eager_cancel), when the first one does). An
/// index out of range fails the
/// stream with [`ErrorKind::Custom`](crate::ErrorKind::Custom) holding a
/// [`PartitionOutOfRange`].
///
/// Supervision: a panic in the partitioner asks the stage's
/// [`SupervisionStrategy`] (an attribute given with
/// [`GraphBuilder::add_with_attributes`](crate::graph::GraphBuilder::add_with_attributes)):
/// resume and restart drop the element, stop fails the stream.
///
/// # Examples
///
/// ```
/// use weir_streams::graph::{GraphBuilder, Partition};
/// use weir_streams::prelude::*;
///
/// # fn main() -> Result<(), weir_streams::GraphError> {
/// let system = weir_actor::ActorSystem::new("partition").unwrap();
/// let mat = Materializer::new(&system);
/// let mut b = GraphBuilder::new();
/// let source = b.source(Source::range(1u32..=6));
/// let split = b.add(Partition::<u32, 2, _>::new(|x: &u32| (x % 2) as usize));
/// let (evens, even_key) = b.sink_mat(Sink::collect());
/// let (odds, odd_key) = b.sink_mat(Sink::collect());
/// let [to_evens, to_odds] = split.outs();
/// b.connect(source, split.inlet())?;
/// b.connect(to_evens, evens)?;
/// b.connect(to_odds, odds)?;
/// let (evens, odds) = b.build(move |m| (m.take(&even_key), m.take(&odd_key)))?.run(&mat);
/// assert_eq!(evens.wait(), Ok(vec![2, 4, 6]));
/// assert_eq!(odds.wait(), Ok(vec![1, 3, 5]));
/// system.terminate().wait().unwrap();
/// # Ok(())
/// # }
/// ```
pub struct Partition<T, const N: usize, F> {
    partitioner: F,
    eager_cancel: bool,
    _t: std::marker::PhantomData<fn(T)>,
}

impl<T, const N: usize, F: Fn(&T) -> usize> Partition<T, N, F> {
    /// A partition into `N` outputs by `partitioner`.
    pub fn new(partitioner: F) -> Self {
        Self {
            partitioner,
            eager_cancel: false,
            _t: std::marker::PhantomData,
        }
    }

    /// A partition that stops as soon as any output cancels: it cancels
    /// upstream and completes the other outputs (Akka's `eagerCancel`).
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::graph::{GraphBuilder, Partition};
    /// use weir_streams::prelude::*;
    ///
    /// # fn main() -> Result<(), weir_streams::GraphError> {
    /// let system = weir_actor::ActorSystem::new("partition-eager").unwrap();
    /// let mat = Materializer::new(&system);
    /// let mut b = GraphBuilder::new();
    /// let source = b.source(Source::from_iter(0u32..));
    /// let split = b.add(Partition::<u32, 2, _>::new(|x: &u32| (x % 2) as usize).eager_cancel());
    /// let (evens, even_key) = b.sink_mat(Sink::collect());
    /// let (first_odd, odd_key) = b.sink_mat(Sink::head());
    /// let [to_evens, to_odds] = split.outs();
    /// b.connect(source, split.inlet())?;
    /// b.connect(to_evens, evens)?;
    /// b.connect(to_odds, first_odd)?;
    /// let (evens, odd) = b.build(move |m| (m.take(&even_key), m.take(&odd_key)))?.run(&mat);
    /// // The head cancels after 1: the endless source stops.
    /// assert_eq!(odd.wait(), Ok(1));
    /// assert!(evens.wait().is_ok());
    /// system.terminate().wait().unwrap();
    /// # Ok(())
    /// # }
    /// ```
    pub fn eager_cancel(mut self) -> Self {
        self.eager_cancel = true;
        self
    }
}

impl<T, const N: usize, F> std::fmt::Debug for Partition<T, N, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Partition")
            .field("outputs", &N)
            .field("eager_cancel", &self.eager_cancel)
            .finish()
    }
}

impl<T, const N: usize, F> GraphStage for Partition<T, N, F>
where
    T: Send + 'static,
    F: Fn(&T) -> usize + Clone + Send + Sync + 'static,
{
    type Shape = UniformFanOutShape<T, N>;
    type Mat = ();

    fn name(&self) -> &'static str {
        "partition"
    }

    fn create_logic(&self, cx: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        let logic = PartitionLogic::<T, N, F> {
            shape: UniformFanOutShape::new(),
            partitioner: self.partitioner.clone(),
            strategy: cx.attributes().supervision_strategy().cloned(),
            held: None,
            running: if self.eager_cancel { 1 } else { N },
            upstream_done: false,
        };
        (Box::new(logic), ())
    }
}

struct PartitionLogic<T, const N: usize, F> {
    shape: UniformFanOutShape<T, N>,
    partitioner: F,
    strategy: Option<SupervisionStrategy>,
    /// An element waiting for its output to ask.
    held: Option<(usize, T)>,
    /// Outputs whose cancelling is not yet the end: all of them, or one
    /// (eager cancel).
    running: usize,
    /// Upstream's completion has been delivered. (`is_closed` on the inlet
    /// turns true as soon as upstream completes, while its last element
    /// may still be on its way: completing on that dropped the element.)
    upstream_done: bool,
}

impl<T, const N: usize, F> PartitionLogic<T, N, F>
where
    T: Send + 'static,
    F: Fn(&T) -> usize + Send + 'static,
{
    /// Push the held element if its output asked (dropping it if that
    /// output cancelled), then ask for the next one.
    fn advance(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        if let Some((index, _)) = &self.held {
            let out = self.shape.outs[*index];
            if ctx.is_closed(out) {
                self.held = None;
            } else if ctx.is_available(out) {
                let (_, element) = self.held.take().expect("held");
                ctx.push(out, element)?;
            }
        }
        let inlet = self.shape.inlet;
        if self.held.is_none() && !ctx.has_been_pulled(inlet) && !ctx.is_closed(inlet) {
            let any_asked = self.shape.outs.iter().any(|o| ctx.is_available(*o));
            if any_asked {
                ctx.pull(inlet)?;
            }
        }
        if self.held.is_none() && self.upstream_done {
            ctx.complete_stage();
        }
        Ok(())
    }
}

impl<T, const N: usize, F> GraphStageLogic for PartitionLogic<T, N, F>
where
    T: Send + 'static,
    F: Fn(&T) -> usize + Send + 'static,
{
    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        let partitioner = &self.partitioner;
        let Ok(index) = supervised(self.strategy.as_ref(), || partitioner(&element)) else {
            // Resumed or restarted (the partitioner is a `Fn`, nothing to
            // reset): the element is dropped; ask for the next.
            return self.advance(ctx);
        };
        if index >= N {
            let error = PartitionOutOfRange { index, outputs: N };
            return Err(StreamError::custom(error));
        }
        self.held = Some((index, element));
        self.advance(ctx)
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.advance(ctx)
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.upstream_done = true;
        if self.held.is_none() {
            ctx.complete_stage();
        }
        Ok(())
    }

    fn on_downstream_finish(&mut self, port: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.running -= 1;
        if self.running == 0 {
            // The last cause (or the first, when eager) goes upstream.
            let cause = ctx.cancellation(port);
            ctx.cancel_stage(cause);
            return Ok(());
        }
        self.advance(ctx)
    }
}
