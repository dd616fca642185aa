//! [`Interleave`]: segments of each input in turn.

use crate::error::ArgumentError;
use crate::stage::{
    GraphStage, GraphStageLogic, InPort, Inlet, MatContext, OutPort, StageContext, StageResult,
    UniformFanInShape,
};

/// Emits `segment_size` elements of input 0, then `segment_size` of input
/// 1, and so on in turn; an input that completes is skipped from then on
/// (with [`eager_close`](Self::eager_close), the first completion completes
/// the stage). Only the input whose turn it is is asked for elements.
/// Fails when any input fails; cancels every input when downstream cancels.
///
/// # Examples
///
/// ```
/// use weir_streams::graph::JunctionOps;
/// use weir_streams::prelude::*;
///
/// let system = weir_actor::ActorSystem::new("interleave").unwrap();
/// let mat = Materializer::new(&system);
/// let mixed = Source::range(1u32..=4).interleave(Source::range(10u32..=11), 2).unwrap();
/// assert_eq!(mixed.run_with(Sink::collect(), &mat).wait(), Ok(vec![1, 2, 10, 11, 3, 4]));
/// system.terminate().wait().unwrap();
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Interleave<T, const N: usize> {
    segment_size: usize,
    eager_close: bool,
    _t: std::marker::PhantomData<fn(T)>,
}

impl<T, const N: usize> Interleave<T, N> {
    /// Take turns of `segment_size` elements.
    ///
    /// # Errors
    ///
    /// [`ArgumentError::Zero`] when `segment_size` is 0.
    pub fn new(segment_size: usize) -> Result<Self, ArgumentError> {
        if segment_size == 0 {
            return Err(ArgumentError::Zero {
                argument: "segment_size",
            });
        }
        Ok(Self {
            segment_size,
            eager_close: false,
            _t: std::marker::PhantomData,
        })
    }

    /// Complete as soon as one input completes.
    pub const fn eager_close(mut self) -> Self {
        self.eager_close = true;
        self
    }
}

impl<T: Send + 'static, const N: usize> GraphStage for Interleave<T, N> {
    type Shape = UniformFanInShape<T, N>;
    type Mat = ();

    fn name(&self) -> &'static str {
        "interleave"
    }

    fn fused_fan_in(&self) -> Option<crate::fusion::FusedFanIn> {
        use crate::fusion::{Uniform, UniformFanIn};
        let kind = Uniform::Interleave {
            segment: self.segment_size,
            eager: self.eager_close,
        };
        Some(UniformFanIn::<T>::hint(kind))
    }

    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        let logic = InterleaveLogic::<T, N> {
            shape: UniformFanInShape::new(),
            segment_size: self.segment_size,
            eager_close: self.eager_close,
            current: 0,
            emitted: 0,
            finished: [false; N],
        };
        (Box::new(logic), ())
    }
}

struct InterleaveLogic<T, const N: usize> {
    shape: UniformFanInShape<T, N>,
    segment_size: usize,
    eager_close: bool,
    current: usize,
    /// Elements of the current segment emitted so far.
    emitted: usize,
    finished: [bool; N],
}

impl<T: Send + 'static, const N: usize> InterleaveLogic<T, N> {
    fn current(&self) -> Inlet<T> {
        self.shape.ins[self.current]
    }

    /// Move the turn to the next input still running; `false` if none is.
    fn next_turn(&mut self) -> bool {
        self.emitted = 0;
        for step in 1..=N {
            let candidate = (self.current + step) % N;
            if !self.finished[candidate] {
                self.current = candidate;
                return true;
            }
        }
        false
    }

    fn pull_current(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let inlet = self.current();
        if ctx.is_available(self.shape.out) && !ctx.has_been_pulled(inlet) && !ctx.is_closed(inlet)
        {
            ctx.pull(inlet)?;
        }
        Ok(())
    }
}

impl<T: Send + 'static, const N: usize> GraphStageLogic for InterleaveLogic<T, N> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        if N == 0 {
            ctx.complete_stage();
        }
        Ok(())
    }

    fn on_push(&mut self, port: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.ins[usize::from(port.0)])?;
        ctx.push(self.shape.out, element)?;
        self.emitted += 1;
        if self.emitted == self.segment_size && !self.next_turn() {
            ctx.complete_stage();
        }
        Ok(())
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.pull_current(ctx)
    }

    fn on_upstream_finish(&mut self, port: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let index = usize::from(port.0);
        self.finished[index] = true;
        if self.eager_close {
            ctx.complete_stage();
            return Ok(());
        }
        if index == self.current && !self.next_turn() {
            ctx.complete_stage();
            return Ok(());
        }
        if self.finished.iter().all(|f| *f) {
            ctx.complete_stage();
            return Ok(());
        }
        self.pull_current(ctx)
    }
}
