//! Iterator sources, and steps fused into them.

use std::sync::Arc;

use super::step::{Step, StepFn};
use crate::stage::{
    GraphStage, GraphStageLogic, MatContext, OutPort, SourceShape, StageContext, StageResult,
};

pub(crate) type BoxIter<T> = Box<dyn Iterator<Item = T> + Send>;

/// Makes a fresh iterator for each materialization.
pub(crate) type IterFactory<T> = Arc<dyn Fn() -> BoxIter<T> + Send + Sync>;

/// An iterator with a step applied: what `Source::from_iter(..).map(..)` runs.
pub(crate) struct StepIter<I, O> {
    pub(crate) inner: BoxIter<I>,
    pub(crate) step: StepFn<I, O>,
    pub(crate) done: bool,
}

impl<I, O> Iterator for StepIter<I, O> {
    type Item = O;

    #[inline]
    fn next(&mut self) -> Option<O> {
        if self.done {
            return None;
        }
        loop {
            let element = self.inner.next()?;
            match (self.step)(element) {
                Step::Emit(out) => return Some(out),
                Step::Skip => {}
                Step::Last(out) => {
                    self.done = true;
                    return Some(out);
                }
                Step::Done => {
                    self.done = true;
                    return None;
                }
            }
        }
    }
}

/// A source stage that pulls its elements from an iterator, one per pull.
pub(crate) struct IterSource<T> {
    pub(crate) name: &'static str,
    pub(crate) factory: IterFactory<T>,
}

struct IterLogic<T> {
    shape: SourceShape<T>,
    iter: BoxIter<T>,
}

impl<T: Send + 'static> GraphStage for IterSource<T> {
    type Shape = SourceShape<T>;
    type Mat = ();

    fn name(&self) -> &'static str {
        self.name
    }

    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        let logic = IterLogic {
            shape: SourceShape::new(),
            iter: (self.factory)(),
        };
        (Box::new(logic), ())
    }
}

impl<T: Send + 'static> GraphStageLogic for IterLogic<T> {
    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        match self.iter.next() {
            Some(element) => ctx.push(self.shape.out, element),
            None => {
                ctx.complete(self.shape.out);
                Ok(())
            }
        }
    }
}
