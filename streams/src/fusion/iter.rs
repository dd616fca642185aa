//! Iterator sources, and steps fused into them.

use std::sync::Arc;

use crate::stage::{
    GraphStage, GraphStageLogic, MatContext, OutPort, SourceShape, StageContext, StageResult,
};

pub(crate) type BoxIter<T> = Box<dyn Iterator<Item = T> + Send>;

/// Makes a fresh iterator for each materialization.
pub(crate) type IterFactory<T> = Arc<dyn Fn() -> BoxIter<T> + Send + Sync>;

/// Wraps an iterator with fused operators (a fresh wrapping per run).
pub(crate) type IterAdapter<I, O> = Arc<dyn Fn(BoxIter<I>) -> BoxIter<O> + Send + Sync>;

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
