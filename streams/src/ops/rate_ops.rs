//! [`RateOps`]: operators that decouple rates or bound them (buffer.rs,
//! batch.rs, limit.rs).

use std::collections::VecDeque;

use super::util::{at_least_one, logic_flow, ports};
use super::{FlowOps, batch, buffer, limit};
use crate::error::ArgumentError;
use crate::overflow::{OverflowStrategy, upfront_capacity};

/// Operators for a producer and a consumer that run at different rates
/// (batching, conflating, expanding) and for bounding what passes. Every
/// [`FlowOps`] type has them (they are in the prelude).
pub trait RateOps: FlowOps {
    /// Hold up to `size` elements when downstream is slower, applying
    /// `strategy` when full. What the strategy drops is gone (it is the
    /// strategy's purpose); `size` is a bound, reserved as elements arrive.
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` when `size` is 0.
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// let out = Source::range(1u32..=3)
    ///     .buffer(16, OverflowStrategy::Backpressure)
    ///     .unwrap()
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(out.wait(), Ok(vec![1, 2, 3]));
    /// # system.terminate().wait().unwrap();
    /// ```
    fn buffer(
        self,
        size: usize,
        strategy: OverflowStrategy,
    ) -> Result<Self::Repr<Self::Out>, ArgumentError> {
        at_least_one(size, "size")?;
        Ok(
            self.via_flow(logic_flow("buffer", move || buffer::Buffer::<Self::Out> {
                shape: ports(),
                buf: VecDeque::with_capacity(upfront_capacity(size)),
                capacity: size,
                strategy,
                upstream_done: false,
            })),
        )
    }

    /// While downstream is slower, fold elements into batches: `seed` starts
    /// one, `aggregate` adds to it, up to `max` elements (then back-pressure).
    ///
    /// Supervision: a panic in `seed` or `aggregate` asks the stage's [`SupervisionStrategy`](crate::SupervisionStrategy): resume drops the element (and, after a panic in `aggregate`, which took the batch by value, that batch too), restart drops it, the batch being built and a pending element and goes on with fresh clones of the closures, stop fails the stream.
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` when `max` is 0.
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// // However the batches fall, they hold every element in order.
    /// let batches = Source::range(1u32..=4)
    ///     .batch(10, |x| vec![x], |mut v, x| {
    ///         v.push(x);
    ///         v
    ///     })
    ///     .unwrap()
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(batches.wait().unwrap().concat(), vec![1, 2, 3, 4]);
    /// # system.terminate().wait().unwrap();
    /// ```
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
    /// Supervision: a panic in `cost_fn`, `seed` or `aggregate` asks the stage's [`SupervisionStrategy`](crate::SupervisionStrategy): resume drops the element (and, after a panic in `aggregate`, which took the batch by value, that batch too), restart drops it, the batch being built and a pending element and goes on with fresh clones of the closures, stop fails the stream.
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` when `max` is 0.
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// let out = Source::from_iter(vec!["ab", "c", "de"])
    ///     .batch_weighted(4, |s| s.len() as u64, |s| s.to_owned(), |mut acc, s| {
    ///         acc.push_str(s);
    ///         acc
    ///     })
    ///     .unwrap()
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(out.wait().unwrap().concat(), "abcde");
    /// # system.terminate().wait().unwrap();
    /// ```
    fn batch_weighted<S, C, W, A>(
        self,
        max: u64,
        cost_fn: C,
        seed: W,
        aggregate: A,
    ) -> Result<Self::Repr<S>, ArgumentError>
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
    ///
    /// Supervision: a panic in `seed` or `aggregate` asks the stage's [`SupervisionStrategy`](crate::SupervisionStrategy): resume drops the element (and, after a panic in `aggregate`, which took the batch by value, that batch too), restart drops it, the batch being built and a pending element and goes on with fresh clones of the closures, stop fails the stream.
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// // However much is conflated, the total is kept.
    /// let total = Source::range(1u64..=4)
    ///     .conflate_with_seed(|x| x * 10, |acc, x| acc + x * 10)
    ///     .run_with(Sink::fold(0, |a, x| a + x), &mat);
    /// assert_eq!(total.wait(), Ok(100));
    /// # system.terminate().wait().unwrap();
    /// ```
    fn conflate_with_seed<S, W, A>(self, seed: W, aggregate: A) -> Self::Repr<S>
    where
        S: Send + 'static,
        W: FnMut(Self::Out) -> S + Clone + Send + Sync + 'static,
        A: FnMut(S, Self::Out) -> S + Clone + Send + Sync + 'static,
    {
        self.via_flow(
            batch::batch_weighted(u64::MAX, |_| 0, seed, aggregate).expect("a non-zero max"),
        )
    }

    /// [`conflate_with_seed`](Self::conflate_with_seed) starting from the element itself.
    ///
    /// Supervision: a panic in `aggregate` asks the stage's [`SupervisionStrategy`](crate::SupervisionStrategy): resume drops the element (and, after a panic in `aggregate`, which took the batch by value, that batch too), restart drops it, the batch being built and a pending element and goes on with fresh clones of the closures, stop fails the stream.
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// let total = Source::range(1u64..=4).conflate(|a, x| a + x).run_with(Sink::fold(0, |a, x| a + x), &mat);
    /// assert_eq!(total.wait(), Ok(10));
    /// # system.terminate().wait().unwrap();
    /// ```
    fn conflate<A>(self, aggregate: A) -> Self::Repr<Self::Out>
    where
        A: FnMut(Self::Out, Self::Out) -> Self::Out + Clone + Send + Sync + 'static,
    {
        self.conflate_with_seed(|x| x, aggregate)
    }

    /// While downstream is faster, emit further elements from
    /// `extrapolate(element)` until the next element arrives (the first is
    /// always emitted; an empty iterator emits nothing).
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// use std::time::Duration;
    ///
    /// // One element, then upstream is silent: it is repeated meanwhile.
    /// let silent_after_one = Source::single(1u32).concat(Source::repeat(9).initial_delay(Duration::from_secs(60)));
    /// let out = silent_after_one
    ///     .expand(|x| std::iter::repeat(x))
    ///     .take(3)
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(out.wait(), Ok(vec![1, 1, 1]));
    /// # system.terminate().wait().unwrap();
    /// ```
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
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// use std::time::Duration;
    ///
    /// let silent_after_one = Source::single(5u32).concat(Source::repeat(9).initial_delay(Duration::from_secs(60)));
    /// let out = silent_after_one
    ///     .extrapolate(|x| std::iter::successors(Some(x + 1), |y| Some(y + 1)))
    ///     .take(3)
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(out.wait(), Ok(vec![5, 6, 7]));
    /// # system.terminate().wait().unwrap();
    /// ```
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
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// use weir_streams::ErrorKind;
    ///
    /// assert_eq!(Source::range(1u32..=3).limit(5).run_with(Sink::collect(), &mat).wait(), Ok(vec![1, 2, 3]));
    /// let too_many = Source::range(1u32..=10).limit(5).run_with(Sink::collect(), &mat);
    /// assert!(matches!(too_many.wait().unwrap_err().kind(), ErrorKind::LimitExceeded { .. }));
    /// # system.terminate().wait().unwrap();
    /// ```
    fn limit(self, max: u64) -> Self::Repr<Self::Out> {
        self.limit_weighted(max, |_| 1)
    }

    /// Fail with `ErrorKind::LimitExceeded` once the elements' total
    /// `cost_fn` passes `max`.
    ///
    /// Supervision: a panic in `cost_fn` asks the stage's [`SupervisionStrategy`](crate::SupervisionStrategy): resume drops the element, restart drops it, gives back the whole of `max` and goes on with a fresh clone of `cost_fn`, stop fails the stream.
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// let too_heavy = Source::from_iter(vec![3u64, 4]).limit_weighted(5, |x| *x).run_with(Sink::collect(), &mat);
    /// assert!(too_heavy.wait().is_err());
    /// # system.terminate().wait().unwrap();
    /// ```
    fn limit_weighted<C>(self, max: u64, cost_fn: C) -> Self::Repr<Self::Out>
    where
        C: FnMut(&Self::Out) -> u64 + Clone + Send + Sync + 'static,
    {
        self.via_flow(limit::limit_weighted(max, cost_fn))
    }
}

impl<T: FlowOps> RateOps for T {}
