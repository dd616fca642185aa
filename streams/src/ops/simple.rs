//! The simple element-wise operators, as fusable steps.

use crate::Flow;
use crate::blueprint::step_flow;
use crate::fusion::Step;

pub(crate) fn map<I, O, F>(f: F) -> Flow<I, O>
where
    I: Send + 'static,
    O: Send + 'static,
    F: FnMut(I) -> O + Clone + Send + Sync + 'static,
{
    step_flow("map", move || {
        let mut f = f.clone();
        Box::new(move |x| Step::Emit(f(x)))
    })
}

pub(crate) fn filter<T, F>(p: F) -> Flow<T, T>
where
    T: Send + 'static,
    F: FnMut(&T) -> bool + Clone + Send + Sync + 'static,
{
    step_flow("filter", move || {
        let mut p = p.clone();
        Box::new(move |x| if p(&x) { Step::Emit(x) } else { Step::Skip })
    })
}

pub(crate) fn filter_map<I, O, F>(f: F) -> Flow<I, O>
where
    I: Send + 'static,
    O: Send + 'static,
    F: FnMut(I) -> Option<O> + Clone + Send + Sync + 'static,
{
    step_flow("filter_map", move || {
        let mut f = f.clone();
        Box::new(move |x| f(x).map_or(Step::Skip, Step::Emit))
    })
}

pub(crate) fn inspect<T, F>(f: F) -> Flow<T, T>
where
    T: Send + 'static,
    F: FnMut(&T) + Clone + Send + Sync + 'static,
{
    step_flow("inspect", move || {
        let mut f = f.clone();
        Box::new(move |x| {
            f(&x);
            Step::Emit(x)
        })
    })
}

pub(crate) fn take<T: Send + 'static>(n: u64) -> Flow<T, T> {
    step_flow("take", move || {
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
    })
}

pub(crate) fn take_while<T, F>(p: F) -> Flow<T, T>
where
    T: Send + 'static,
    F: FnMut(&T) -> bool + Clone + Send + Sync + 'static,
{
    step_flow("take_while", move || {
        let mut p = p.clone();
        Box::new(move |x| if p(&x) { Step::Emit(x) } else { Step::Done })
    })
}

pub(crate) fn skip<T: Send + 'static>(n: u64) -> Flow<T, T> {
    step_flow("skip", move || {
        let mut left = n;
        Box::new(move |x| {
            if left > 0 {
                left -= 1;
                Step::Skip
            } else {
                Step::Emit(x)
            }
        })
    })
}

pub(crate) fn skip_while<T, F>(p: F) -> Flow<T, T>
where
    T: Send + 'static,
    F: FnMut(&T) -> bool + Clone + Send + Sync + 'static,
{
    step_flow("skip_while", move || {
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
    })
}
