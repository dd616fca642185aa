//! [`WireTap`]: the main output at full speed, a copy to a tap when it asks.

use crate::stage::{
    GraphStage, GraphStageLogic, InPort, MatContext, OutPort, StageContext, StageResult,
    UniformFanOutShape,
};

/// Emits every element on output 0 (the main line) and a copy on output 1
/// (the tap) only if the tap has asked: a slow tap misses elements instead
/// of slowing the main line, and a tap that cancels changes nothing.
/// Completion and failure reach both; the main line cancelling cancels
/// upstream.
///
/// # Examples
///
/// ```
/// use weir_streams::graph::JunctionOps;
/// use weir_streams::prelude::*;
///
/// let system = weir_actor::ActorSystem::new("wire-tap").unwrap();
/// let mat = Materializer::new(&system);
/// let tapped = Source::range(1u32..=3).wire_tap(Sink::cancelled()).run_with(Sink::collect(), &mat);
/// assert_eq!(tapped.wait(), Ok(vec![1, 2, 3]));
/// system.terminate().wait().unwrap();
/// ```
#[derive(Debug, Clone, Copy)]
pub struct WireTap<T> {
    _t: std::marker::PhantomData<fn(T)>,
}

impl<T> WireTap<T> {
    /// The tap junction.
    pub const fn new() -> Self {
        Self {
            _t: std::marker::PhantomData,
        }
    }
}

impl<T> Default for WireTap<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Clone + Send + 'static> GraphStage for WireTap<T> {
    type Shape = UniformFanOutShape<T, 2>;
    type Mat = ();

    fn name(&self) -> &'static str {
        "wire_tap"
    }

    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        let logic = WireTapLogic::<T> {
            shape: UniformFanOutShape::new(),
        };
        (Box::new(logic), ())
    }
}

struct WireTapLogic<T> {
    shape: UniformFanOutShape<T, 2>,
}

impl<T: Clone + Send + 'static> GraphStageLogic for WireTapLogic<T> {
    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        let [main, tap] = self.shape.outs;
        if ctx.is_available(tap) {
            ctx.push(tap, element.clone())?;
        }
        ctx.push(main, element)
    }

    fn on_pull(&mut self, port: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        let inlet = self.shape.inlet;
        if port == self.shape.outs[0].port() && !ctx.has_been_pulled(inlet) && !ctx.is_closed(inlet)
        {
            ctx.pull(inlet)?;
        }
        Ok(())
    }

    fn on_downstream_finish(&mut self, port: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        if port == self.shape.outs[0].port() {
            let cause = ctx.cancellation(port);
            ctx.cancel_stage(cause);
        }
        Ok(())
    }
}
