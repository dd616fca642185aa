//! The simple element-wise operators, each in its two fusable forms: a
//! step (run as a stage) and a batch adapter (fused into an iterator source).

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::Arc;
use std::task::Context;

use crate::Flow;
use crate::blueprint::simple_flow;
use crate::fusion::{Adapted, BoxChunks, Chunks, Fill, IterAdapter, Step, StepFactory, StepFn};

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

/// Rounds one `fill` may ask upstream for more when an operator dropped
/// elements (a filter): enough to fill most batches in one call, few
/// enough that a filter rejecting everything still returns (and its
/// island yields) after a bounded number of upstream elements.
const FILL_ROUNDS: usize = 8;

impl<I: Send, O, S: BatchOp<I, O>> Chunks<O> for Adapted<I, S> {
    /// Asks upstream for what is still missing until `max` outputs are
    /// there: the same requests, in the same order, that a caller calling
    /// again would make, without the round trip through the caller.
    fn fill(&mut self, cx: &mut Context<'_>, out: &mut Vec<O>, max: usize) -> Fill {
        let start = out.len();
        for _ in 0..FILL_ROUNDS {
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
        for _ in 0..FILL_ROUNDS {
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

    fn cancel(&mut self, cause: &crate::StreamError) {
        self.inner.cancel(cause);
    }
}

fn adapt<I: Send + 'static, O: 'static, S: BatchOp<I, O> + 'static>(
    inner: BoxChunks<I>,
    state: S,
) -> BoxChunks<O> {
    Box::new(Adapted::new(inner, state))
}

struct MapOp<F>(F);
impl<I, O, F: FnMut(I) -> O + Send> BatchOp<I, O> for MapOp<F> {
    fn apply(&mut self, batch: &mut Vec<I>, out: &mut Vec<O>) -> bool {
        out.extend(batch.drain(..).map(&mut self.0));
        false
    }
    fn one(&mut self, element: I) -> Step<O> {
        Step::Emit((self.0)(element))
    }
    fn at_least(&self, upstream: usize) -> usize {
        upstream
    }
}

struct FilterOp<F>(F);
impl<T, F: FnMut(&T) -> bool + Send> BatchOp<T, T> for FilterOp<F> {
    fn apply(&mut self, batch: &mut Vec<T>, out: &mut Vec<T>) -> bool {
        // Compact in place, then move the survivors in one copy: cheaper
        // than a capacity check per pushed element.
        batch.retain(&mut self.0);
        out.append(batch);
        false
    }
    fn one(&mut self, element: T) -> Step<T> {
        if (self.0)(&element) {
            Step::Emit(element)
        } else {
            Step::Skip
        }
    }
}

struct FilterMapOp<F>(F);
impl<I, O, F: FnMut(I) -> Option<O> + Send> BatchOp<I, O> for FilterMapOp<F> {
    fn apply(&mut self, batch: &mut Vec<I>, out: &mut Vec<O>) -> bool {
        out.extend(batch.drain(..).filter_map(&mut self.0));
        false
    }
    fn one(&mut self, element: I) -> Step<O> {
        (self.0)(element).map_or(Step::Skip, Step::Emit)
    }
}

struct InspectOp<F>(F);
impl<T, F: FnMut(&T) + Send> BatchOp<T, T> for InspectOp<F> {
    fn apply(&mut self, batch: &mut Vec<T>, out: &mut Vec<T>) -> bool {
        for x in batch.drain(..) {
            (self.0)(&x);
            out.push(x);
        }
        false
    }
    fn one(&mut self, element: T) -> Step<T> {
        (self.0)(&element);
        Step::Emit(element)
    }
    fn at_least(&self, upstream: usize) -> usize {
        upstream
    }
}

struct TakeOp(u64);
impl<T: Send> BatchOp<T, T> for TakeOp {
    fn upstream(&mut self, max: usize) -> Option<usize> {
        (self.0 > 0).then(|| max.min(usize::try_from(self.0).unwrap_or(usize::MAX)))
    }
    fn apply(&mut self, batch: &mut Vec<T>, out: &mut Vec<T>) -> bool {
        self.0 -= batch.len() as u64;
        out.append(batch);
        self.0 == 0
    }
    fn one(&mut self, element: T) -> Step<T> {
        self.0 -= 1;
        if self.0 == 0 {
            Step::Last(element)
        } else {
            Step::Emit(element)
        }
    }
    fn at_least(&self, upstream: usize) -> usize {
        upstream.min(usize::try_from(self.0).unwrap_or(usize::MAX))
    }
}

/// Pulls one element at a time, so upstream never runs past the first
/// element that fails the predicate.
struct TakeWhileOp<F>(F, bool);
impl<T, F: FnMut(&T) -> bool + Send> BatchOp<T, T> for TakeWhileOp<F> {
    fn upstream(&mut self, _: usize) -> Option<usize> {
        (!self.1).then_some(1)
    }
    fn apply(&mut self, batch: &mut Vec<T>, out: &mut Vec<T>) -> bool {
        for x in batch.drain(..) {
            if !self.1 && (self.0)(&x) {
                out.push(x);
            } else {
                self.1 = true;
            }
        }
        self.1
    }
    fn one(&mut self, element: T) -> Step<T> {
        if !self.1 && (self.0)(&element) {
            Step::Emit(element)
        } else {
            self.1 = true;
            Step::Done
        }
    }
}

struct SkipOp(u64);
impl<T> BatchOp<T, T> for SkipOp {
    fn apply(&mut self, batch: &mut Vec<T>, out: &mut Vec<T>) -> bool {
        let skip = batch
            .len()
            .min(usize::try_from(self.0).unwrap_or(usize::MAX));
        self.0 -= skip as u64;
        out.extend(batch.drain(skip..));
        false
    }
    fn one(&mut self, element: T) -> Step<T> {
        if self.0 > 0 {
            self.0 -= 1;
            Step::Skip
        } else {
            Step::Emit(element)
        }
    }
}

struct SkipWhileOp<F>(F, bool);
impl<T, F: FnMut(&T) -> bool + Send> BatchOp<T, T> for SkipWhileOp<F> {
    fn apply(&mut self, batch: &mut Vec<T>, out: &mut Vec<T>) -> bool {
        for x in batch.drain(..) {
            if self.1 && (self.0)(&x) {
                continue;
            }
            self.1 = false;
            out.push(x);
        }
        false
    }
    fn one(&mut self, element: T) -> Step<T> {
        if self.1 && (self.0)(&element) {
            Step::Skip
        } else {
            self.1 = false;
            Step::Emit(element)
        }
    }
}

pub(crate) fn map<I, O, F>(f: F) -> Flow<I, O>
where
    I: Send + 'static,
    O: Send + 'static,
    F: FnMut(I) -> O + Clone + Send + Sync + 'static,
{
    let g = f.clone();
    simple_flow(
        "map",
        move || {
            let mut f = f.clone();
            Box::new(move |x| Step::Emit(f(x)))
        },
        move |it| adapt(it, MapOp(g.clone())),
    )
}

pub(crate) fn filter<T, F>(p: F) -> Flow<T, T>
where
    T: Send + 'static,
    F: FnMut(&T) -> bool + Clone + Send + Sync + 'static,
{
    let q = p.clone();
    simple_flow(
        "filter",
        move || {
            let mut p = p.clone();
            Box::new(move |x| if p(&x) { Step::Emit(x) } else { Step::Skip })
        },
        move |it| adapt(it, FilterOp(q.clone())),
    )
}

pub(crate) fn filter_map<I, O, F>(f: F) -> Flow<I, O>
where
    I: Send + 'static,
    O: Send + 'static,
    F: FnMut(I) -> Option<O> + Clone + Send + Sync + 'static,
{
    let g = f.clone();
    simple_flow(
        "filter_map",
        move || {
            let mut f = f.clone();
            Box::new(move |x| f(x).map_or(Step::Skip, Step::Emit))
        },
        move |it| adapt(it, FilterMapOp(g.clone())),
    )
}

pub(crate) fn inspect<T, F>(f: F) -> Flow<T, T>
where
    T: Send + 'static,
    F: FnMut(&T) + Clone + Send + Sync + 'static,
{
    let g = f.clone();
    simple_flow(
        "inspect",
        move || {
            let mut f = f.clone();
            Box::new(move |x| {
                f(&x);
                Step::Emit(x)
            })
        },
        move |it| adapt(it, InspectOp(g.clone())),
    )
}

/// `n` must be at least 1 (`take(0)` is a stage that completes at once).
pub(crate) fn take<T: Send + 'static>(n: u64) -> Flow<T, T> {
    simple_flow(
        "take",
        move || {
            let mut left = n;
            Box::new(move |x| match left {
                0 => Step::Done,
                1 => {
                    left = 0;
                    Step::Last(x)
                }
                _ => {
                    left -= 1;
                    Step::Emit(x)
                }
            })
        },
        move |it| adapt(it, TakeOp(n)),
    )
}

pub(crate) fn take_while<T, F>(p: F) -> Flow<T, T>
where
    T: Send + 'static,
    F: FnMut(&T) -> bool + Clone + Send + Sync + 'static,
{
    let q = p.clone();
    simple_flow(
        "take_while",
        move || {
            let mut p = p.clone();
            Box::new(move |x| if p(&x) { Step::Emit(x) } else { Step::Done })
        },
        move |it| adapt(it, TakeWhileOp(q.clone(), false)),
    )
}

pub(crate) fn skip<T: Send + 'static>(n: u64) -> Flow<T, T> {
    simple_flow(
        "skip",
        move || {
            let mut left = n;
            Box::new(move |x| {
                if left > 0 {
                    left -= 1;
                    Step::Skip
                } else {
                    Step::Emit(x)
                }
            })
        },
        move |it| adapt(it, SkipOp(n)),
    )
}

pub(crate) fn skip_while<T, F>(p: F) -> Flow<T, T>
where
    T: Send + 'static,
    F: FnMut(&T) -> bool + Clone + Send + Sync + 'static,
{
    let q = p.clone();
    simple_flow(
        "skip_while",
        move || {
            let mut p = p.clone();
            let mut skipping = true;
            Box::new(move |x| {
                if skipping && p(&x) {
                    Step::Skip
                } else {
                    skipping = false;
                    Step::Emit(x)
                }
            })
        },
        move |it| adapt(it, SkipWhileOp(q.clone(), true)),
    )
}

/// One step applied element by element, pulling one upstream element at
/// a time (a step may complete after any element, and nothing upstream
/// may run past it): the adapter of an operator whose step was wrapped
/// after construction (a supervised one, `crate::fusion::supervised`).
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
