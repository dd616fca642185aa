//! [`MergeSorted`]: two sorted inputs into one sorted output.

use crate::stage::{
    GraphStage, GraphStageLogic, InPort, MatContext, OutPort, StageContext, StageResult,
    UniformFanInShape,
};

/// Merges two inputs that are each sorted into one sorted output: it waits
/// until both inputs have an element (or one has completed) and emits the
/// smaller (input 0 first on ties). Completes when both inputs have; fails
/// when either fails; cancels both when downstream cancels.
///
/// # Examples
///
/// ```
/// use weir_streams::graph::JunctionOps;
/// use weir_streams::prelude::*;
///
/// let system = weir_actor::ActorSystem::new("merge-sorted").unwrap();
/// let mat = Materializer::new(&system);
/// let sorted = Source::from_iter(vec![1, 4, 9]).merge_sorted(Source::from_iter(vec![2, 3, 10]));
/// assert_eq!(sorted.run_with(Sink::collect(), &mat).wait(), Ok(vec![1, 2, 3, 4, 9, 10]));
/// system.terminate().wait().unwrap();
/// ```
#[derive(Debug, Clone, Copy)]
pub struct MergeSorted<T> {
    _t: std::marker::PhantomData<fn(T)>,
}

impl<T> MergeSorted<T> {
    /// The sorted merge of two sorted inputs.
    pub const fn new() -> Self {
        Self {
            _t: std::marker::PhantomData,
        }
    }
}

impl<T> Default for MergeSorted<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Ord + Send + 'static> GraphStage for MergeSorted<T> {
    type Shape = UniformFanInShape<T, 2>;
    type Mat = ();

    fn name(&self) -> &'static str {
        "merge_sorted"
    }

    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        let logic = MergeSortedLogic::<T> {
            shape: UniformFanInShape::new(),
            heads: [None, None],
            finished: [false; 2],
        };
        (Box::new(logic), ())
    }
}

struct MergeSortedLogic<T> {
    shape: UniformFanInShape<T, 2>,
    /// The next element of each input, once it arrived.
    heads: [Option<T>; 2],
    finished: [bool; 2],
}

impl<T: Ord + Send + 'static> MergeSortedLogic<T> {
    /// Emit what can be emitted, ask for what is missing, complete at the end.
    fn advance(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        if ctx.is_available(self.shape.out) {
            let pick = match (&self.heads[0], &self.heads[1]) {
                (Some(a), Some(b)) => Some(usize::from(b < a)),
                (Some(_), None) if self.finished[1] => Some(0),
                (None, Some(_)) if self.finished[0] => Some(1),
                _ => None,
            };
            if let Some(side) = pick {
                let element = self.heads[side].take().expect("picked a head");
                ctx.push(self.shape.out, element)?;
            }
        }
        if self.finished.iter().all(|f| *f) && self.heads.iter().all(Option::is_none) {
            ctx.complete_stage();
            return Ok(());
        }
        for side in 0..2 {
            let inlet = self.shape.ins[side];
            if self.heads[side].is_none()
                && !self.finished[side]
                && !ctx.has_been_pulled(inlet)
                && !ctx.is_closed(inlet)
            {
                ctx.pull(inlet)?;
            }
        }
        Ok(())
    }
}

impl<T: Ord + Send + 'static> GraphStageLogic for MergeSortedLogic<T> {
    fn on_push(&mut self, port: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let side = usize::from(port.0);
        self.heads[side] = Some(ctx.grab(self.shape.ins[side])?);
        self.advance(ctx)
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.advance(ctx)
    }

    fn on_upstream_finish(&mut self, port: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.finished[usize::from(port.0)] = true;
        self.advance(ctx)
    }
}
