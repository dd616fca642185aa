//! Fused sources as [`Chunks`]: pulled a batch at a time, so each fused
//! operator costs one indirect call per batch, not per element.
//!
//! A `fill(cx, out, max)` appends at most `max` elements and makes no
//! element it does not append: elements are still produced only on
//! demand. `take_while` pulls one element at a time from upstream, so
//! nothing upstream runs past the first element that fails it. A stage
//! that emits one element per pull asks with [`Chunks::next_one`], which
//! the leaves and the simple operators answer without a batch.
//!
//! A leaf is an iterator (never pending) or a poll function
//! ([`Source::from_poll_fn`](crate::Source::from_poll_fn)), which may have
//! nothing ready: then `fill` says [`Fill::Pending`] and the waker in `cx`
//! is woken when it has. Every driver (the source stage below, the fused
//! source-to-sink loop, the async boundary, [`Pull`](crate::Pull)) passes
//! a waker that runs it again.

use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use crate::error::StreamError;
use crate::stage::{
    AsyncCallback, GraphStage, GraphStageLogic, MatContext, OutPort, SourceShape, StageContext,
    StageResult,
};
use crate::tuning::FILLS_PER_TURN;

/// How one [`Chunks::fill`] ended. Whatever it appended comes first, in
/// every case.
#[derive(Debug)]
pub(crate) enum Fill {
    /// Call again for more.
    More,
    /// The source is done.
    Exhausted,
    /// Nothing more is ready; the waker of the fill's context will be woken.
    Pending,
    /// The source failed.
    Failed(StreamError),
}

/// A source of elements in batches.
pub(crate) trait Chunks<T>: Send {
    /// Append at most `max` (at least 1) elements to `out`.
    fn fill(&mut self, cx: &mut Context<'_>, out: &mut Vec<T>, max: usize) -> Fill;

    /// `fill(cx, .., 1)` without the batch: at most one element, then how
    /// the fill ended (the element, if any, comes first, as for `fill`).
    /// A stage that emits one element per pull calls this; sources and
    /// operators that can make one element cheaply override it, the rest
    /// fill `spare` (left empty on return) and take the element from it.
    fn next_one(&mut self, cx: &mut Context<'_>, spare: &mut Vec<T>) -> (Option<T>, Fill) {
        spare.clear();
        let fill = self.fill(cx, spare, 1);
        (spare.pop(), fill)
    }

    /// Start: make what the source makes before it is asked (a fused
    /// merge makes each input's next element, as the merge stage asks
    /// every input as it starts). A failure met then is returned; a
    /// pending source wakes the waker in `cx`. Most sources make nothing.
    fn prime(&mut self, cx: &mut Context<'_>) -> Option<Fill> {
        let _ = cx;
        None
    }

    /// Whether the source knows, without making an element, that it has
    /// none left (an iterator whose `size_hint` says so). A source stage
    /// completes at once then, without waiting for a pull.
    fn is_exhausted(&self) -> bool {
        false
    }

    /// How many elements the source is sure to make on demand, without
    /// failing or waiting (an iterator's `size_hint` lower bound through
    /// operators that keep one output per input). A fused zip asks its
    /// inputs for this many at once and one at a time beyond it, so it
    /// makes no element it then drops.
    fn at_least(&self) -> usize {
        0
    }

    /// Downstream failed with `cause` and the source is about to be
    /// dropped: a source that stands for something outside the island (a
    /// relayed boundary's hand-over) passes the cause on. Dropping alone
    /// is a normal cancel. Operators forward it to their upstream.
    fn cancel(&mut self, cause: &StreamError) {
        let _ = cause;
    }
}

pub(crate) type BoxChunks<T> = Box<dyn Chunks<T>>;

/// Makes a fresh source for each materialization.
pub(crate) type IterFactory<T> = Arc<dyn Fn() -> BoxChunks<T> + Send + Sync>;

/// Wraps a source with fused operators (a fresh wrapping per run).
pub(crate) type IterAdapter<I, O> = Arc<dyn Fn(BoxChunks<I>) -> BoxChunks<O> + Send + Sync>;

/// Any iterator as a leaf source; its loop is compiled for its type.
pub(crate) struct IterChunks<I>(pub(crate) I);

impl<I: Iterator + Send> Chunks<I::Item> for IterChunks<I> {
    fn fill(&mut self, _: &mut Context<'_>, out: &mut Vec<I::Item>, max: usize) -> Fill {
        // `extend` over `take` reserves once for iterators that know their
        // length (ranges, slices) instead of checking capacity per push.
        let before = out.len();
        out.extend(self.0.by_ref().take(max));
        // An iterator that reports its end (ranges, vectors, `once`) ends
        // the source with its last element, not on the next demand: a
        // sink sees the completion without asking for more (Akka's
        // `request(n); expect_next(..); expect_complete()`).
        if out.len() - before < max || self.is_exhausted() {
            Fill::Exhausted
        } else {
            Fill::More
        }
    }

    fn next_one(&mut self, _: &mut Context<'_>, _: &mut Vec<I::Item>) -> (Option<I::Item>, Fill) {
        match self.0.next() {
            Some(element) if self.is_exhausted() => (Some(element), Fill::Exhausted),
            Some(element) => (Some(element), Fill::More),
            None => (None, Fill::Exhausted),
        }
    }

    fn is_exhausted(&self) -> bool {
        // The upper bound is a promise: no element is made to learn it.
        self.0.size_hint().1 == Some(0)
    }

    fn at_least(&self) -> usize {
        self.0.size_hint().0
    }
}

/// A poll function as a leaf source; its loop is compiled for its type.
pub(crate) struct PollChunks<F>(pub(crate) F);

impl<T, F> Chunks<T> for PollChunks<F>
where
    F: FnMut(&mut Context<'_>) -> Poll<Option<Result<T, StreamError>>> + Send,
{
    fn fill(&mut self, cx: &mut Context<'_>, out: &mut Vec<T>, max: usize) -> Fill {
        out.reserve(max);
        for _ in 0..max {
            match (self.0)(cx) {
                Poll::Ready(Some(Ok(element))) => out.push(element),
                Poll::Ready(Some(Err(error))) => return Fill::Failed(error),
                Poll::Ready(None) => return Fill::Exhausted,
                Poll::Pending => return Fill::Pending,
            }
        }
        Fill::More
    }

    fn next_one(&mut self, cx: &mut Context<'_>, _: &mut Vec<T>) -> (Option<T>, Fill) {
        match (self.0)(cx) {
            Poll::Ready(Some(Ok(element))) => (Some(element), Fill::More),
            Poll::Ready(Some(Err(error))) => (None, Fill::Failed(error)),
            Poll::Ready(None) => (None, Fill::Exhausted),
            Poll::Pending => (None, Fill::Pending),
        }
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
    /// The spare batch of a source that makes one element through `fill`.
    buf: Vec<T>,
    /// Runs a pull again: after a yield (see [`FILLS_PER_TURN`]) or when
    /// a pending source wakes. Made on the first pull.
    resume: Option<(AsyncCallback<()>, Waker)>,
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
            buf: Vec::new(),
            resume: None,
        };
        (Box::new(logic), ())
    }
}

impl<T: Send + 'static> IterLogic<T> {
    /// Answer the pending pull: push the next element, complete, fail, or
    /// wait for the source's wake-up.
    /// The callback that runs a pull again, and its waker (made once).
    fn resume(&mut self, ctx: &mut StageContext<'_>) -> &(AsyncCallback<()>, Waker) {
        let out = self.shape.out;
        self.resume.get_or_insert_with(|| {
            let resume = ctx.async_callback(move |this: &mut Self, (), ctx| {
                if ctx.is_available(out) {
                    this.emit_next(ctx)
                } else {
                    Ok(())
                }
            });
            let waker = resume.waker(());
            (resume, waker)
        })
    }

    fn emit_next(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let out = self.shape.out;
        self.resume(ctx);
        let (resume, waker) = self.resume.as_ref().expect("made above");
        let mut cx = Context::from_waker(waker);
        for _ in 0..FILLS_PER_TURN {
            let (element, fill) = self.source.next_one(&mut cx, &mut self.buf);
            let pushed = element.is_some();
            if let Some(element) = element {
                ctx.push(out, element)?;
            }
            match fill {
                // Nothing pushed (an operator dropped the element): the
                // pull is still open, nothing else ran meanwhile.
                Fill::More if !pushed => continue,
                Fill::More | Fill::Pending => return Ok(()),
                Fill::Exhausted => {
                    ctx.complete(out);
                    return Ok(());
                }
                Fill::Failed(error) => {
                    ctx.fail(out, error);
                    return Ok(());
                }
            }
        }
        // Nothing yet: go on after whatever else waits for this island.
        resume.invoke(());
        Ok(())
    }
}

impl<T: Send + 'static> GraphStageLogic for IterLogic<T> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let waker = self.resume(ctx).1.clone();
        if let Some(Fill::Failed(error)) = self.source.prime(&mut Context::from_waker(&waker)) {
            ctx.fail(self.shape.out, error);
            return Ok(());
        }
        // Completion needs no demand (Reactive Streams 1.5 and 2.9): an
        // empty source completes a sink that never pulls.
        if self.source.is_exhausted() {
            ctx.complete(self.shape.out);
        }
        Ok(())
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.emit_next(ctx)
    }

    fn on_downstream_finish(&mut self, port: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        let cause = ctx.cancellation(port);
        if let Some(error) = cause.failure() {
            self.source.cancel(error);
        }
        ctx.cancel_stage(cause);
        Ok(())
    }
}
