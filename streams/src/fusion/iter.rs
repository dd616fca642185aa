//! Iterator sources as [`Chunks`]: pulled a batch at a time, so each
//! fused operator costs one indirect call per batch, not per element.
//!
//! A `fill(out, max)` appends at most `max` elements and makes no
//! element it does not append: elements are still produced only on
//! demand. `take_while` pulls one element at a time from upstream, so
//! nothing upstream runs past the first element that fails it.

use std::sync::Arc;

use crate::stage::{
    AsyncCallback, GraphStage, GraphStageLogic, MatContext, OutPort, SourceShape, StageContext, StageResult,
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
        // `extend` over `take` reserves once for iterators that know their
        // length (ranges, slices) instead of checking capacity per push.
        let before = out.len();
        out.extend(self.0.by_ref().take(max));
        out.len() - before < max
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
    /// Made the first time a pull has to yield (see [`FILLS_PER_TURN`]).
    resume: Option<AsyncCallback<()>>,
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
            resume: None,
        };
        (Box::new(logic), ())
    }
}

/// Fills one pull may try before the stage lets its island go on with
/// other work: a filter rejecting a long run of elements must not hold
/// the thread (nor keep a kill switch from being heard).
const FILLS_PER_TURN: usize = 64;

impl<T: Send + 'static> IterLogic<T> {
    /// Answer the pending pull: push the next element, or complete.
    fn emit_next(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        for _ in 0..FILLS_PER_TURN {
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
        // Nothing yet: go on after whatever else waits for this island.
        let out = self.shape.out;
        self.resume
            .get_or_insert_with(|| {
                ctx.async_callback(move |this: &mut Self, (), ctx| {
                    if ctx.is_available(out) {
                        this.emit_next(ctx)
                    } else {
                        Ok(())
                    }
                })
            })
            .invoke(());
        Ok(())
    }
}

impl<T: Send + 'static> GraphStageLogic for IterLogic<T> {
    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.emit_next(ctx)
    }
}
