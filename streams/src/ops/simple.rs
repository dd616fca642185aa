//! The simple element-wise operators, each in its two fusable forms: a
//! step (for a stage) and the std iterator adapter (for an iterator source).

use crate::Flow;
use crate::blueprint::simple_flow;
use crate::fusion::{BoxIter, Step};

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
        move |it| Box::new(it.map(g.clone())) as BoxIter<O>,
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
        move |it| Box::new(it.filter(q.clone())) as BoxIter<T>,
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
        move |it| Box::new(it.filter_map(g.clone())) as BoxIter<O>,
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
        move |it| Box::new(it.inspect(g.clone())) as BoxIter<T>,
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
        move |it| Box::new(it.take(usize::try_from(n).unwrap_or(usize::MAX))) as BoxIter<T>,
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
        move |it| Box::new(it.take_while(q.clone())) as BoxIter<T>,
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
        move |it| Box::new(it.skip(usize::try_from(n).unwrap_or(usize::MAX))) as BoxIter<T>,
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
        move |it| Box::new(it.skip_while(q.clone())) as BoxIter<T>,
    )
}
