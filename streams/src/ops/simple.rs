//! The simple element-wise operators, each in its two fusable forms: a
//! step (run as a stage) and a batch adapter (fused into an iterator source).

use crate::blueprint::{Flow, simple_flow};
use crate::fusion::{BatchOp, Step, adapt};

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
