//! [`RateOps`]: operators that decouple rates or bound them (batch.rs,
//! limit.rs).

use super::{FlowOps, batch, limit};
use crate::ArgumentError;

/// Operators for a producer and a consumer that run at different rates
/// (batching, conflating, expanding) and for bounding what passes. Every
/// [`FlowOps`] type has them (they are in the prelude).
pub trait RateOps: FlowOps {
    /// While downstream is slower, fold elements into batches: `seed` starts
    /// one, `aggregate` adds to it, up to `max` elements (then back-pressure).
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` when `max` is 0.
    fn batch<S, W, A>(self, max: u64, seed: W, aggregate: A) -> Result<Self::Repr<S>, ArgumentError>
    where
        S: Send + 'static,
        W: FnMut(Self::Out) -> S + Clone + Send + Sync + 'static,
        A: FnMut(S, Self::Out) -> S + Clone + Send + Sync + 'static,
    {
        self.batch_weighted(max, |_| 1, seed, aggregate)
    }

    /// [`batch`](Self::batch) where each element weighs `cost_fn(&element)`.
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` when `max` is 0.
    fn batch_weighted<S, C, W, A>(self, max: u64, cost_fn: C, seed: W, aggregate: A) -> Result<Self::Repr<S>, ArgumentError>
    where
        S: Send + 'static,
        C: FnMut(&Self::Out) -> u64 + Clone + Send + Sync + 'static,
        W: FnMut(Self::Out) -> S + Clone + Send + Sync + 'static,
        A: FnMut(S, Self::Out) -> S + Clone + Send + Sync + 'static,
    {
        Ok(self.via_flow(batch::batch_weighted(max, cost_fn, seed, aggregate)?))
    }

    /// While downstream is slower, fold elements without limit (never
    /// back-pressures upstream).
    fn conflate_with_seed<S, W, A>(self, seed: W, aggregate: A) -> Self::Repr<S>
    where
        S: Send + 'static,
        W: FnMut(Self::Out) -> S + Clone + Send + Sync + 'static,
        A: FnMut(S, Self::Out) -> S + Clone + Send + Sync + 'static,
    {
        self.via_flow(batch::batch_weighted(u64::MAX, |_| 0, seed, aggregate).expect("a non-zero max"))
    }

    /// [`conflate_with_seed`](Self::conflate_with_seed) starting from the element itself.
    fn conflate<A>(self, aggregate: A) -> Self::Repr<Self::Out>
    where
        A: FnMut(Self::Out, Self::Out) -> Self::Out + Clone + Send + Sync + 'static,
    {
        self.conflate_with_seed(|x| x, aggregate)
    }

    /// While downstream is faster, emit further elements from
    /// `extrapolate(element)` until the next element arrives (the first is
    /// always emitted; an empty iterator emits nothing).
    fn expand<U, I, F>(self, extrapolate: F) -> Self::Repr<U>
    where
        U: Send + 'static,
        F: FnMut(Self::Out) -> I + Clone + Send + Sync + 'static,
        I: IntoIterator<Item = U>,
        I::IntoIter: Send + 'static,
    {
        self.via_flow(batch::expand(extrapolate))
    }

    /// Each element, then, while downstream is faster, `extrapolate(&element)`.
    fn extrapolate<I, F>(self, mut extrapolate: F) -> Self::Repr<Self::Out>
    where
        Self::Out: Clone,
        F: FnMut(&Self::Out) -> I + Clone + Send + Sync + 'static,
        I: IntoIterator<Item = Self::Out>,
        I::IntoIter: Send + 'static,
    {
        self.expand(move |x: Self::Out| std::iter::once(x.clone()).chain(extrapolate(&x)))
    }

    /// Fail with `ErrorKind::LimitExceeded` once more than `max` elements pass.
    fn limit(self, max: u64) -> Self::Repr<Self::Out> {
        self.limit_weighted(max, |_| 1)
    }

    /// Fail with `ErrorKind::LimitExceeded` once the elements' total
    /// `cost_fn` passes `max`.
    fn limit_weighted<C>(self, max: u64, cost_fn: C) -> Self::Repr<Self::Out>
    where
        C: FnMut(&Self::Out) -> u64 + Clone + Send + Sync + 'static,
    {
        self.via_flow(limit::limit_weighted(max, cost_fn))
    }
}

impl<T: FlowOps> RateOps for T {}
