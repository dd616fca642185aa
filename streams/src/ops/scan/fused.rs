//! `scan` as a node the planner can fuse: after a fused source (an
//! iterator, a poll function, a boundary's hand-over, other adapters) it
//! runs as an adapter of that source, emitting the seed on the first
//! demand, then one accumulation per element; anywhere else it is the
//! [`Scan`](super::Scan) stage.
//!
//! It [leads](StepNode::leads): its seed comes before any input, which a
//! step, a continuation or a consumer (each a function of one input)
//! cannot express, so the planner asks it for those forms never.

use std::any::Any;
use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::Arc;
use std::task::Context;

use super::{Accumulator, Scan};
use crate::fusion::{
    BoxChunks, Chunks, ConsumerNode, Fill, FusedIter, HeadFactory, IterFactory, IterNode, StepNode,
};
use crate::ops::util::LogicFlow;
use crate::stage::{Attributes, ErasedStage, SupervisionStrategy};

/// `scan(zero, f)` from `T` to `A`, and the supervision strategy the
/// planner swapped in (`None` until then: the stage form reads its own
/// from its attributes).
pub(crate) struct ScanNode<T, A, F> {
    pub(super) zero: A,
    pub(super) f: F,
    pub(super) strategy: Option<SupervisionStrategy>,
    pub(super) _input: PhantomData<fn(T)>,
}

const LEADS: &str = "scan leads: the planner asks it only for its stage and adapter forms";

impl<T, A, F> StepNode for ScanNode<T, A, F>
where
    T: Send + 'static,
    A: Clone + Send + Sync + 'static,
    F: FnMut(A, T) -> A + Clone + Send + Sync + 'static,
{
    fn stage(&self) -> Arc<dyn ErasedStage> {
        let (zero, f) = (self.zero.clone(), self.f.clone());
        Arc::new(LogicFlow::<T, A, _>::new(
            "scan",
            move |attributes: &Attributes| Scan::new(&zero, &f, attributes),
        ))
    }

    fn after_iter(&self, iter: &dyn IterNode) -> Arc<dyn IterNode> {
        let iter = FusedIter::<T>::of(iter);
        let (zero, f, strategy) = (self.zero.clone(), self.f.clone(), self.strategy.clone());
        let factory: IterFactory<A> = Arc::new(move || {
            Box::new(ScanChunks {
                inner: iter(),
                acc: Accumulator::new(&zero, &f, strategy.as_ref()),
                zero_sent: false,
                scratch: Vec::new(),
            }) as BoxChunks<A>
        });
        Arc::new(FusedIter(factory))
    }

    fn before_consumer(&self, _: &dyn ConsumerNode) -> Arc<dyn ConsumerNode> {
        unreachable!("{LEADS}")
    }

    fn before(&self, _: Option<Box<dyn Any>>) -> Box<dyn Any> {
        unreachable!("{LEADS}")
    }

    fn head(&self, _: Box<dyn Any>) -> HeadFactory {
        unreachable!("{LEADS}")
    }

    fn run_stage(&self, _: HeadFactory) -> Arc<dyn ErasedStage> {
        unreachable!("{LEADS}")
    }

    fn supervised(&self, strategy: &SupervisionStrategy) -> Arc<dyn StepNode> {
        Arc::new(ScanNode {
            zero: self.zero.clone(),
            f: self.f.clone(),
            strategy: Some(strategy.clone()),
            _input: PhantomData,
        })
    }

    fn leads(&self) -> bool {
        true
    }
}

/// The adapter: the seed first, then the accumulation of each element
/// `inner` makes, with the unfused stage's supervision (see
/// [`Accumulator::step`]).
struct ScanChunks<T, A, F> {
    inner: BoxChunks<T>,
    acc: Accumulator<A, F>,
    zero_sent: bool,
    scratch: Vec<T>,
}

impl<T, A: Clone, F: FnMut(A, T) -> A + Clone> ScanChunks<T, A, F> {
    /// The seed, the first time.
    fn seed(&mut self) -> Option<A> {
        (!std::mem::replace(&mut self.zero_sent, true)).then(|| self.acc.get().clone())
    }

    /// The accumulation of `element`; `None` when supervision dropped it.
    #[inline]
    fn accumulate(&mut self, element: T) -> Option<A> {
        self.acc.step(element).then(|| self.acc.get().clone())
    }

    /// How a fill that made only the seed ended.
    fn after_seed(&self) -> Fill {
        if self.inner.is_exhausted() {
            Fill::Exhausted
        } else {
            Fill::More
        }
    }
}

impl<T, A, F> Chunks<A> for ScanChunks<T, A, F>
where
    T: Send,
    A: Clone + Send,
    F: FnMut(A, T) -> A + Clone + Send,
{
    fn fill(&mut self, cx: &mut Context<'_>, out: &mut Vec<A>, max: usize) -> Fill {
        let mut room = max;
        if let Some(seed) = self.seed() {
            out.push(seed);
            room -= 1;
            if room == 0 {
                return self.after_seed();
            }
        }
        let mut scratch = std::mem::take(&mut self.scratch);
        // What upstream made before it panicked goes through, ahead of the
        // failure (as through the unfused stages).
        let upstream = catch_unwind(AssertUnwindSafe(|| self.inner.fill(cx, &mut scratch, room)));
        out.reserve(scratch.len());
        if self.acc.supervised() {
            // A dropped element leaves the batch short: within the
            // contract (the caller asks again while the fill says `More`).
            out.extend(scratch.drain(..).filter_map(|x| self.accumulate(x)));
        } else {
            // Every element makes one value, in one loop.
            for x in scratch.drain(..) {
                self.acc.step(x);
                out.push(self.acc.get().clone());
            }
        }
        self.scratch = scratch;
        upstream.unwrap_or_else(|panic| resume_unwind(panic))
    }

    fn next_one(&mut self, cx: &mut Context<'_>, _: &mut Vec<A>) -> (Option<A>, Fill) {
        if let Some(seed) = self.seed() {
            return (Some(seed), self.after_seed());
        }
        let (element, fill) = self.inner.next_one(cx, &mut self.scratch);
        (element.and_then(|x| self.accumulate(x)), fill)
    }

    fn is_exhausted(&self) -> bool {
        self.zero_sent && self.inner.is_exhausted()
    }

    fn at_least(&self) -> usize {
        let upstream = if self.acc.supervised() {
            0 // a panic drops an element
        } else {
            self.inner.at_least()
        };
        // An endless source says `usize::MAX`.
        upstream.saturating_add(usize::from(!self.zero_sent))
    }

    fn cancel(&mut self, cause: &crate::error::StreamError) {
        self.inner.cancel(cause);
    }
}
