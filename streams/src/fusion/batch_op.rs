//! Operators fused into an iterator source: each one a [`BatchOp`] that
//! turns an upstream batch into its own, run by [`Adapted`].

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::Arc;
use std::task::Context;

use super::iter::{Adapted, BoxChunks, Chunks, Fill, IterAdapter};
use super::step::{Step, StepFactory, StepFn};
use crate::tuning::FILTER_FILL_ROUNDS;

/// How one operator turns an upstream batch into its output batch.
/// `Adapted<I, S>` is a `Chunks<O>` for every `S: BatchOp<I, O>`.
pub(crate) trait BatchOp<I, O>: Send {
    /// How many upstream elements to ask for, for at most `max` outputs
    /// (`None`: this operator is done).
    fn upstream(&mut self, max: usize) -> Option<usize> {
        Some(max)
    }
    /// Turn `batch` into outputs; `true` when this operator is done.
    fn apply(&mut self, batch: &mut Vec<I>, out: &mut Vec<O>) -> bool;
    /// `apply` for a batch of one element: what comes of it (`Last` and
    /// `Done` when this operator is done after it).
    fn one(&mut self, element: I) -> Step<O>;
    /// Outputs sure to come from `upstream` elements sure to come (see
    /// [`Chunks::at_least`]): 0 unless the operator keeps them all.
    fn at_least(&self, upstream: usize) -> usize {
        let _ = upstream;
        0
    }
}

impl<I: Send, O, S: BatchOp<I, O>> Chunks<O> for Adapted<I, S> {
    /// Asks upstream for what is still missing until `max` outputs are
    /// there: the same requests, in the same order, that a caller calling
    /// again would make, without the round trip through the caller.
    fn fill(&mut self, cx: &mut Context<'_>, out: &mut Vec<O>, max: usize) -> Fill {
        let start = out.len();
        for _ in 0..FILTER_FILL_ROUNDS {
            let missing = max.saturating_sub(out.len() - start);
            let Some(want) = self.state.upstream(missing) else {
                return Fill::Exhausted;
            };
            let upstream = catch_unwind(AssertUnwindSafe(|| {
                self.inner.fill(cx, &mut self.scratch, want.max(1))
            }));
            // Even when upstream panicked, what it made goes through this
            // operator and on, ahead of the failure.
            let done = self.state.apply(&mut self.scratch, out);
            self.scratch.clear();
            let fill = upstream.unwrap_or_else(|panic| resume_unwind(panic));
            match fill {
                _ if done => return Fill::Exhausted,
                Fill::More if out.len() - start < max => {}
                other => return other,
            }
        }
        Fill::More
    }

    /// `fill(cx, .., 1)` an element at a time: the same upstream requests
    /// and the same rounds, without a batch. Upstream makes at most one
    /// element per request, so when it panics there is nothing to pass on
    /// ahead of the failure (as `fill` does) and the panic simply unwinds.
    fn next_one(&mut self, cx: &mut Context<'_>, _: &mut Vec<O>) -> (Option<O>, Fill) {
        for _ in 0..FILTER_FILL_ROUNDS {
            if self.state.upstream(1).is_none() {
                return (None, Fill::Exhausted);
            }
            let (element, fill) = self.inner.next_one(cx, &mut self.scratch);
            let (out, done) = match element.map(|x| self.state.one(x)) {
                None | Some(Step::Skip) => (None, false),
                Some(Step::Emit(o)) => (Some(o), false),
                Some(Step::Last(o)) => (Some(o), true),
                Some(Step::Done) => (None, true),
            };
            match fill {
                _ if done => return (out, Fill::Exhausted),
                Fill::More if out.is_none() => {}
                other => return (out, other),
            }
        }
        (None, Fill::More)
    }

    fn at_least(&self) -> usize {
        self.state.at_least(self.inner.at_least())
    }

    /// No operator here holds an element between fills, so the chain has
    /// none left when its source has none: `Source::empty().map(f)` ends
    /// at once, fused as unfused, without waiting for a pull.
    fn is_exhausted(&self) -> bool {
        self.inner.is_exhausted()
    }

    fn cancel(&mut self, cause: &crate::error::StreamError) {
        self.inner.cancel(cause);
    }
}

pub(crate) fn adapt<I: Send + 'static, O: 'static, S: BatchOp<I, O> + 'static>(
    inner: BoxChunks<I>,
    state: S,
) -> BoxChunks<O> {
    Box::new(Adapted::new(inner, state))
}

/// One step applied element by element, pulling one upstream element at
/// a time (a step may complete after any element, and nothing upstream
/// may run past it): the adapter of an operator whose step was wrapped
/// after construction (a supervised one, `crate::plan::supervise`).
struct StepOp<I, O> {
    step: StepFn<I, O>,
    done: bool,
}

impl<I: Send, O> BatchOp<I, O> for StepOp<I, O> {
    fn upstream(&mut self, _: usize) -> Option<usize> {
        (!self.done).then_some(1)
    }
    fn apply(&mut self, batch: &mut Vec<I>, out: &mut Vec<O>) -> bool {
        for x in batch.drain(..) {
            if self.done {
                continue;
            }
            match (self.step)(x) {
                Step::Emit(o) => out.push(o),
                Step::Skip => {}
                Step::Last(o) => {
                    out.push(o);
                    self.done = true;
                }
                Step::Done => self.done = true,
            }
        }
        self.done
    }
    fn one(&mut self, element: I) -> Step<O> {
        if self.done {
            return Step::Done;
        }
        let step = (self.step)(element);
        self.done = matches!(step, Step::Last(_) | Step::Done);
        step
    }
}

/// The iterator adapter that runs `step` (a fresh one per run) per element.
pub(crate) fn step_adapter<I: Send + 'static, O: Send + 'static>(
    step: StepFactory<I, O>,
) -> IterAdapter<I, O> {
    Arc::new(move |it| {
        adapt(
            it,
            StepOp {
                step: step(),
                done: false,
            },
        )
    })
}
