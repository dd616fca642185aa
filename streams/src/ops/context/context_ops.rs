//! [`ContextOps`]: the operators of [`SourceWithContext`](super::SourceWithContext)
//! and [`FlowWithContext`](super::FlowWithContext), each built on a plain
//! operator over `(element, context)` pairs.

use std::future::Future;

use super::FlowWithContext;
use crate::blueprint::Flow;
use crate::error::{ArgumentError, StreamError};
use crate::ops::{AsyncOps, FlowOps};

/// The operators that keep one context beside each element (Pekko's
/// `FlowWithContextOps`). Each works on the element and carries its
/// context along; an element that is dropped (by `filter`, `filter_map`,
/// or a [`SupervisionStrategy`](crate::SupervisionStrategy) resuming past
/// a panic) drops its context with it, so a context that reaches the end
/// always belongs to an element that did.
///
/// Operators that could not say which context goes with an output
/// (`fold`, `scan`, `merge`, a dropping `buffer`, ...) are not here: reach
/// them through [`via_tuples`](Self::via_tuples) with a flow of pairs,
/// taking care to keep one context per element.
///
/// # Examples
///
/// ```
/// use weir_streams::prelude::*;
/// use weir_streams::{ContextOps, SourceWithContext};
///
/// let system = weir_actor::ActorSystem::new("context-ops").unwrap();
/// let mat = Materializer::new(&system);
/// // Each line keeps its line number as context; dropped lines drop theirs.
/// let lines = Source::from_iter(vec![("a", 1u64), ("", 2), ("b", 3)]);
/// let got = SourceWithContext::from_tuples(lines)
///     .filter(|line| !line.is_empty())
///     .map(str::to_uppercase)
///     .as_source()
///     .run_with(Sink::collect(), &mat);
/// assert_eq!(got.wait(), Ok(vec![("A".to_owned(), 1), ("B".to_owned(), 3)]));
/// system.terminate().wait().unwrap();
/// ```
pub trait ContextOps: Sized {
    /// The element type.
    type Out: Send + 'static;
    /// The context type beside each element.
    type Ctx: Send + 'static;
    /// The same kind of blueprint, with elements `U` and contexts `C`.
    type Repr<U: Send + 'static, C: Send + 'static>;

    /// Append a flow of `(element, context)` pairs (keeping this
    /// blueprint's materialized value): the one method an implementor
    /// writes. The flow must keep each context with its element; nothing
    /// checks that it does.
    #[allow(clippy::type_complexity)] // a flow of (element, context) pairs is the point
    fn via_tuples<U, C, M>(self, flow: Flow<(Self::Out, Self::Ctx), (U, C), M>) -> Self::Repr<U, C>
    where
        U: Send + 'static,
        C: Send + 'static,
        M: 'static;

    /// Append a [`FlowWithContext`] (keeping this blueprint's
    /// materialized value).
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// use weir_streams::{ContextOps, FlowWithContext};
    ///
    /// let system = weir_actor::ActorSystem::new("context-via").unwrap();
    /// let mat = Materializer::new(&system);
    /// let parse = FlowWithContext::<&str, u64>::new().filter_map(|s| s.parse::<u32>().ok());
    /// let got = Source::from_iter(vec!["1", "x", "3"])
    ///     .as_source_with_context(|s| s.len() as u64)
    ///     .via(parse)
    ///     .as_source()
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(got.wait(), Ok(vec![(1, 1), (3, 1)]));
    /// system.terminate().wait().unwrap();
    /// ```
    fn via<U, C, M>(self, flow: FlowWithContext<Self::Out, Self::Ctx, U, C, M>) -> Self::Repr<U, C>
    where
        U: Send + 'static,
        C: Send + 'static,
        M: 'static,
    {
        self.via_tuples(flow.as_flow())
    }

    /// Transform every element with `f`; its context goes with the result.
    ///
    /// Supervision: as [`FlowOps::map`]; a dropped element drops its context.
    fn map<U, F>(self, f: F) -> Self::Repr<U, Self::Ctx>
    where
        U: Send + 'static,
        F: FnMut(Self::Out) -> U + Clone + Send + Sync + 'static,
    {
        let mut f = f;
        self.via_tuples(Flow::new().map(move |(x, c)| (f(x), c)))
    }

    /// Keep the elements for which `p` holds; a dropped element's context
    /// is dropped too.
    ///
    /// Supervision: as [`FlowOps::filter`].
    fn filter<F>(self, p: F) -> Self::Repr<Self::Out, Self::Ctx>
    where
        F: FnMut(&Self::Out) -> bool + Clone + Send + Sync + 'static,
    {
        let mut p = p;
        self.via_tuples(Flow::new().filter(move |(x, _)| p(x)))
    }

    /// Keep the elements for which `p` does not hold (Pekko's `filterNot`).
    ///
    /// Supervision: as [`FlowOps::filter`].
    fn filter_not<F>(self, p: F) -> Self::Repr<Self::Out, Self::Ctx>
    where
        F: FnMut(&Self::Out) -> bool + Clone + Send + Sync + 'static,
    {
        let mut p = p;
        self.filter(move |x| !p(x))
    }

    /// Transform with `f`, keeping the `Some`s with their contexts
    /// (Pekko's `collect`).
    ///
    /// Supervision: as [`FlowOps::filter_map`].
    fn filter_map<U, F>(self, f: F) -> Self::Repr<U, Self::Ctx>
    where
        U: Send + 'static,
        F: FnMut(Self::Out) -> Option<U> + Clone + Send + Sync + 'static,
    {
        let mut f = f;
        self.via_tuples(Flow::new().filter_map(move |(x, c)| f(x).map(|u| (u, c))))
    }

    /// Transform every context with `f`, leaving the elements alone.
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// use weir_streams::ContextOps;
    ///
    /// let system = weir_actor::ActorSystem::new("context-map").unwrap();
    /// let mat = Materializer::new(&system);
    /// let got = Source::from_iter(vec![10u32, 20])
    ///     .as_source_with_context(|x| *x / 10)
    ///     .map_context(|offset| format!("offset {offset}"))
    ///     .as_source()
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(got.wait(), Ok(vec![(10, "offset 1".to_owned()), (20, "offset 2".into())]));
    /// system.terminate().wait().unwrap();
    /// ```
    fn map_context<C, F>(self, f: F) -> Self::Repr<Self::Out, C>
    where
        C: Send + 'static,
        F: FnMut(Self::Ctx) -> C + Clone + Send + Sync + 'static,
    {
        let mut f = f;
        self.via_tuples(Flow::new().map(move |(x, c)| (x, f(c))))
    }

    /// [`AsyncOps::map_async`] on the elements: up to `parallelism`
    /// futures at once, results in input order, each with its element's
    /// context. A future that fails fails the stream (or, under a
    /// supervision strategy that resumes, drops its element and context).
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` when `parallelism` is 0.
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// use weir_streams::ContextOps;
    ///
    /// let system = weir_actor::ActorSystem::new("context-map-async").unwrap();
    /// let mat = Materializer::new(&system);
    /// let got = Source::from_iter(vec![1u32, 2, 3])
    ///     .as_source_with_context(|x| *x)
    ///     .map_async(2, |x| async move { Ok::<_, StreamError>(x * 100) })
    ///     .unwrap()
    ///     .as_source()
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(got.wait(), Ok(vec![(100, 1), (200, 2), (300, 3)]));
    /// system.terminate().wait().unwrap();
    /// ```
    fn map_async<U, F, Fut>(
        self,
        parallelism: usize,
        f: F,
    ) -> Result<Self::Repr<U, Self::Ctx>, ArgumentError>
    where
        U: Send + 'static,
        F: FnMut(Self::Out) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Result<U, StreamError>> + Send + 'static,
    {
        let mut f = f;
        let flow =
            Flow::<(Self::Out, Self::Ctx)>::new().map_async(parallelism, move |(x, c)| {
                let future = f(x);
                async move { future.await.map(|u| (u, c)) }
            })?;
        Ok(self.via_tuples(flow))
    }

    /// [`AsyncOps::map_async_partitioned`] on the elements: ordered
    /// results, at most one future in flight per partition, each result
    /// with its element's context.
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` when `parallelism` is 0.
    fn map_async_partitioned<U, P, PF, F, Fut>(
        self,
        parallelism: usize,
        partition: PF,
        f: F,
    ) -> Result<Self::Repr<U, Self::Ctx>, ArgumentError>
    where
        U: Send + 'static,
        P: Clone + Eq + std::hash::Hash + Send + 'static,
        PF: FnMut(&Self::Out) -> P + Clone + Send + Sync + 'static,
        F: FnMut(Self::Out, P) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Result<U, StreamError>> + Send + 'static,
    {
        let (mut partition, mut f) = (partition, f);
        let flow = Flow::<(Self::Out, Self::Ctx)>::new().map_async_partitioned(
            parallelism,
            move |(x, _): &(Self::Out, Self::Ctx)| partition(x),
            move |(x, c), p| {
                let future = f(x, p);
                async move { future.await.map(|u| (u, c)) }
            },
        )?;
        Ok(self.via_tuples(flow))
    }

    /// Each element becomes the items of `f(element)`, each with a clone
    /// of the element's context (Pekko's `mapConcat`); an element that
    /// becomes no item drops its context.
    ///
    /// Supervision: as [`FlowOps::map_concat`].
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// use weir_streams::ContextOps;
    ///
    /// let system = weir_actor::ActorSystem::new("context-map-concat").unwrap();
    /// let mat = Materializer::new(&system);
    /// let got = Source::from_iter(vec!["ab", "", "c"])
    ///     .as_source_with_context(|s| s.len())
    ///     .map_concat(|s: &str| s.chars().collect::<Vec<_>>())
    ///     .as_source()
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(got.wait(), Ok(vec![('a', 2), ('b', 2), ('c', 1)]));
    /// system.terminate().wait().unwrap();
    /// ```
    fn map_concat<I, F>(self, f: F) -> Self::Repr<I::Item, Self::Ctx>
    where
        Self::Ctx: Clone,
        I: IntoIterator + 'static,
        I::Item: Send + 'static,
        I::IntoIter: Send,
        F: FnMut(Self::Out) -> I + Clone + Send + Sync + 'static,
    {
        let mut f = f;
        self.via_tuples(
            Flow::new().map_concat(move |(x, c): (Self::Out, Self::Ctx)| {
                f(x).into_iter().map(move |u| (u, c.clone()))
            }),
        )
    }

    /// Groups of up to `size` elements, with the contexts of the group's
    /// elements, in order (Pekko's `grouped`): the last group may be
    /// smaller.
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` when `size` is 0.
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// use weir_streams::ContextOps;
    ///
    /// let system = weir_actor::ActorSystem::new("context-grouped").unwrap();
    /// let mat = Materializer::new(&system);
    /// let got = Source::from_iter(vec![1u32, 2, 3])
    ///     .as_source_with_context(|x| *x * 10)
    ///     .grouped(2)
    ///     .unwrap()
    ///     .as_source()
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(got.wait(), Ok(vec![(vec![1, 2], vec![10, 20]), (vec![3], vec![30])]));
    /// system.terminate().wait().unwrap();
    /// ```
    #[allow(clippy::type_complexity)] // the pair of vectors is the operator's point
    fn grouped(
        self,
        size: usize,
    ) -> Result<Self::Repr<Vec<Self::Out>, Vec<Self::Ctx>>, ArgumentError> {
        let flow = Flow::<(Self::Out, Self::Ctx)>::new()
            .grouped(size)?
            .map(|group| group.into_iter().unzip());
        Ok(self.via_tuples(flow))
    }
}
