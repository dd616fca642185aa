//! Iterator sources as [`Chunks`]: pulled a batch at a time, so each
//! fused operator costs one indirect call per batch, not per element.
//!
//! A `fill(out, max)` appends at most `max` elements and makes no
//! element it does not append: elements are still produced only on
//! demand. `take_while` pulls one element at a time from upstream, so
//! nothing upstream runs past the first element that fails it.

use std::sync::Arc;

use crate::stage::{
    GraphStage, GraphStageLogic, MatContext, OutPort, SourceShape, StageContext, StageResult,
};

/// A source of elements in batches.
pub(crate) trait Chunks<T>: Send {
    /// Append at most `max` (at least 1) elements to `out`; `true` once
    /// the source is exhausted (it may still have appended some).
    fn fill(&mut self, out: &mut Vec<T>, max: usize) -> bool;
}

pub(crate) type BoxChunks<T> = Box<dyn Chunks<T>>;

/// Makes a fresh source for each materialization.
pub(crate) type IterFactory<T> = Arc<dyn Fn() -> BoxChunks<T> + Send + Sync>;

/// Wraps a source with fused operators (a fresh wrapping per run).
pub(crate) type IterAdapter<I, O> = Arc<dyn Fn(BoxChunks<I>) -> BoxChunks<O> + Send + Sync>;

/// Any iterator as a leaf source; its loop is compiled for its type.
pub(crate) struct IterChunks<I>(pub(crate) I);

impl<I: Iterator + Send> Chunks<I::Item> for IterChunks<I> {
    fn fill(&mut self, out: &mut Vec<I::Item>, max: usize) -> bool {
        for _ in 0..max {
            match self.0.next() {
                Some(element) => out.push(element),
                None => return true,
            }
        }
        false
    }
}

/// A leaf source from an iterator.
pub(crate) fn leaf<I>(iter: I) -> BoxChunks<I::Item>
where
    I: Iterator + Send + 'static,
{
    Box::new(IterChunks(iter))
}

/// One fused operator over an upstream source, with its own scratch batch.
pub(crate) struct Adapted<I, S> {
    pub(crate) inner: BoxChunks<I>,
    pub(crate) scratch: Vec<I>,
    pub(crate) state: S,
}

impl<I, S> Adapted<I, S> {
    pub(crate) fn new(inner: BoxChunks<I>, state: S) -> Self {
        Self {
            inner,
            scratch: Vec::new(),
            state,
        }
    }
}

/// A source stage that emits from a fused source, one element per pull.
pub(crate) struct IterSource<T> {
    pub(crate) name: &'static str,
    pub(crate) factory: IterFactory<T>,
}

struct IterLogic<T> {
    shape: SourceShape<T>,
    source: BoxChunks<T>,
    buf: Vec<T>,
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
            source: (self.factory)(),
            buf: Vec::with_capacity(1),
        };
        (Box::new(logic), ())
    }
}

impl<T: Send + 'static> GraphStageLogic for IterLogic<T> {
    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        loop {
            let exhausted = self.source.fill(&mut self.buf, 1);
            if let Some(element) = self.buf.pop() {
                ctx.push(self.shape.out, element)?;
                if exhausted {
                    ctx.complete(self.shape.out);
                }
                return Ok(());
            }
            if exhausted {
                ctx.complete(self.shape.out);
                return Ok(());
            }
        }
    }
}
