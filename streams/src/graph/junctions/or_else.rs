//! [`OrElse`]: the primary input, or the secondary if the primary is empty.

use crate::stage::{
    GraphStage, GraphStageLogic, InPort, Inlet, MatContext, OutPort, StageContext, StageResult,
    UniformFanInShape,
};

/// Emits the elements of its primary input (0); if that completes without
/// emitting any, emits the elements of its secondary input (1) instead.
/// The secondary is asked for nothing unless it is needed, and is
/// cancelled as soon as the primary emits. Fails when the input in use
/// fails; cancels both when downstream cancels.
///
/// # Examples
///
/// ```
/// use weir_streams::graph::JunctionOps;
/// use weir_streams::prelude::*;
///
/// let system = weir_actor::ActorSystem::new("or-else").unwrap();
/// let mat = Materializer::new(&system);
/// let fallback = Source::empty().or_else(Source::single(7u32));
/// assert_eq!(fallback.run_with(Sink::collect(), &mat).wait(), Ok(vec![7]));
/// let primary = Source::single(1u32).or_else(Source::single(7));
/// assert_eq!(primary.run_with(Sink::collect(), &mat).wait(), Ok(vec![1]));
/// system.terminate().wait().unwrap();
/// ```
#[derive(Debug, Clone, Copy)]
pub struct OrElse<T> {
    _t: std::marker::PhantomData<fn(T)>,
}

impl<T> OrElse<T> {
    /// The primary-or-secondary junction.
    pub const fn new() -> Self {
        Self {
            _t: std::marker::PhantomData,
        }
    }
}

impl<T> Default for OrElse<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Send + 'static> GraphStage for OrElse<T> {
    type Shape = UniformFanInShape<T, 2>;
    type Mat = ();

    fn name(&self) -> &'static str {
        "or_else"
    }

    /// Both inputs fused iterators: the primary, or the secondary if the
    /// primary ends empty.
    fn fused_fan_in(&self) -> Option<crate::fusion::FusedFanIn> {
        use crate::fusion::{Uniform, UniformFanIn};
        Some(UniformFanIn::<T>::hint(Uniform::OrElse))
    }

    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        let logic = OrElseLogic::<T> {
            shape: UniformFanInShape::new(),
            current: 0,
            emitted: false,
            secondary_failed: None,
            secondary_done: false,
        };
        (Box::new(logic), ())
    }
}

struct OrElseLogic<T> {
    shape: UniformFanInShape<T, 2>,
    /// The input in use: 0 (primary) or 1 (secondary).
    current: usize,
    emitted: bool,
    /// The secondary failed before it was needed.
    secondary_failed: Option<crate::error::StreamError>,
    /// The secondary completed before it was needed.
    secondary_done: bool,
}

impl<T: Send + 'static> OrElseLogic<T> {
    fn current(&self) -> Inlet<T> {
        self.shape.ins[self.current]
    }
}

impl<T: Send + 'static> GraphStageLogic for OrElseLogic<T> {
    fn on_push(&mut self, port: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.ins[usize::from(port.0)])?;
        if !self.emitted && self.current == 0 {
            ctx.cancel(self.shape.ins[1]);
        }
        self.emitted = true;
        ctx.push(self.shape.out, element)
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        let inlet = self.current();
        if !ctx.has_been_pulled(inlet) && !ctx.is_closed(inlet) {
            ctx.pull(inlet)?;
        }
        Ok(())
    }

    fn on_upstream_finish(&mut self, port: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        match (usize::from(port.0), self.current, self.emitted) {
            // The primary ended empty: switch to the secondary.
            (0, 0, false) => {
                self.current = 1;
                if let Some(error) = self.secondary_failed.take() {
                    ctx.fail_stage(error);
                } else if self.secondary_done {
                    ctx.complete_stage();
                } else if ctx.is_available(self.shape.out) && !ctx.is_closed(self.shape.ins[1]) {
                    // (A closed secondary's end is on its way here.)
                    ctx.pull(self.shape.ins[1])?;
                }
            }
            // The secondary ended before it was needed: wait for the primary.
            (1, 0, _) => self.secondary_done = true,
            _ => ctx.complete_stage(),
        }
        Ok(())
    }

    fn on_upstream_failure(
        &mut self,
        port: InPort,
        error: crate::error::StreamError,
        ctx: &mut StageContext<'_>,
    ) -> StageResult {
        // A failure of the secondary before it is needed does not matter
        // unless the primary turns out empty.
        if usize::from(port.0) == 1 && self.current == 0 {
            if !self.emitted {
                self.secondary_failed = Some(error);
            }
            return Ok(());
        }
        ctx.fail_stage(error);
        Ok(())
    }
}
