//! [`Step`]: one fused element-wise operator.

use std::sync::Arc;

use crate::stage::{
    FlowShape, GraphStage, GraphStageLogic, InPort, MatContext, OutPort, StageContext, StageResult,
};

/// What a simple operator does with one element.
pub(crate) enum Step<O> {
    /// Emit this element.
    Emit(O),
    /// Emit nothing; ask for the next element.
    Skip,
    /// Emit this element, then complete.
    Last(O),
    /// Complete without emitting.
    Done,
}

pub(crate) type StepFn<I, O> = Box<dyn FnMut(I) -> Step<O> + Send>;

/// Makes a fresh step (fresh state) for each materialization.
pub(crate) type StepFactory<I, O> = Arc<dyn Fn() -> StepFn<I, O> + Send + Sync>;

/// A step run as a flow stage.
pub(crate) struct StepStage<I, O> {
    pub(crate) name: &'static str,
    pub(crate) step: StepFactory<I, O>,
}

struct StepLogic<I, O> {
    shape: FlowShape<I, O>,
    step: StepFn<I, O>,
}

impl<I: Send + 'static, O: Send + 'static> GraphStage for StepStage<I, O> {
    type Shape = FlowShape<I, O>;
    type Mat = ();

    fn name(&self) -> &'static str {
        self.name
    }

    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        let logic = StepLogic {
            shape: FlowShape::new(),
            step: (self.step)(),
        };
        (Box::new(logic), ())
    }
}

impl<I: Send + 'static, O: Send + 'static> GraphStageLogic for StepLogic<I, O> {
    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        match (self.step)(element) {
            Step::Emit(out) => ctx.push(self.shape.out, out),
            Step::Skip => ctx.pull(self.shape.inlet),
            Step::Last(out) => {
                ctx.push(self.shape.out, out)?;
                ctx.complete_stage();
                Ok(())
            }
            Step::Done => {
                ctx.complete_stage();
                Ok(())
            }
        }
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.pull(self.shape.inlet)
    }
}
