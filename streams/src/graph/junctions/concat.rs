//! [`Concat`]: all of the first input, then all of the next.

use crate::stage::{
    GraphStage, GraphStageLogic, InPort, Inlet, MatContext, OutPort, StageContext, StageResult,
    UniformFanInShape,
};

/// Emits every element of its first input, then of its second, and so on:
/// an input is asked for elements only once the ones before it have
/// completed. Every input runs from the start, though (as in Akka): one
/// that fails, even before its turn, fails the concatenation at once.
/// Completes after the last input; cancels every input when downstream
/// cancels. To start a later input only when its turn comes, see
/// [`JunctionOps::concat_lazy`](crate::graph::JunctionOps::concat_lazy).
///
/// # Examples
///
/// ```
/// use weir_streams::graph::JunctionOps;
/// use weir_streams::prelude::*;
///
/// let system = weir_actor::ActorSystem::new("concat").unwrap();
/// let mat = Materializer::new(&system);
/// let all = Source::range(1u32..=2).concat(Source::range(7u32..=8)).prepend(Source::single(0));
/// assert_eq!(all.run_with(Sink::collect(), &mat).wait(), Ok(vec![0, 1, 2, 7, 8]));
/// system.terminate().wait().unwrap();
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Concat<T, const N: usize> {
    _t: std::marker::PhantomData<fn(T)>,
}

impl<T, const N: usize> Concat<T, N> {
    /// The concatenation of `N` inputs, in port order.
    pub const fn new() -> Self {
        Self {
            _t: std::marker::PhantomData,
        }
    }
}

impl<T, const N: usize> Default for Concat<T, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Send + 'static, const N: usize> GraphStage for Concat<T, N> {
    type Shape = UniformFanInShape<T, N>;
    type Mat = ();

    fn name(&self) -> &'static str {
        "concat"
    }

    fn fused_fan_in(&self) -> Option<crate::fusion::FusedFanIn> {
        use crate::fusion::{Uniform, UniformFanIn};
        Some(UniformFanIn::<T>::hint(Uniform::Concat))
    }

    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        let logic = ConcatLogic::<T, N> {
            shape: UniformFanInShape::new(),
            current: 0,
            finished: [false; N],
        };
        (Box::new(logic), ())
    }
}

struct ConcatLogic<T, const N: usize> {
    shape: UniformFanInShape<T, N>,
    current: usize,
    finished: [bool; N],
}

impl<T: Send + 'static, const N: usize> ConcatLogic<T, N> {
    fn current(&self) -> Inlet<T> {
        self.shape.ins[self.current]
    }

    /// Ask the current input, once: downstream's demand may be seen (an
    /// input completing) before its pull is delivered here.
    fn pull_current(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let inlet = self.current();
        if ctx.has_been_pulled(inlet) || ctx.is_closed(inlet) {
            return Ok(());
        }
        ctx.pull(inlet)
    }
}

impl<T: Send + 'static, const N: usize> GraphStageLogic for ConcatLogic<T, N> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        if N == 0 {
            ctx.complete_stage();
        }
        Ok(())
    }

    fn on_push(&mut self, port: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.ins[usize::from(port.0)])?;
        ctx.push(self.shape.out, element)
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.pull_current(ctx)
    }

    fn on_upstream_finish(&mut self, port: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.finished[usize::from(port.0)] = true;
        if usize::from(port.0) != self.current {
            return Ok(());
        }
        while self.current < N && self.finished[self.current] {
            self.current += 1;
        }
        if self.current == N {
            ctx.complete_stage();
        } else if ctx.is_available(self.shape.out) {
            self.pull_current(ctx)?;
        }
        Ok(())
    }
}
