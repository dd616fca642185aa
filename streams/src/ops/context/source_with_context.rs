//! [`SourceWithContext`]: a source whose elements carry a context.

use super::{ContextOps, FlowWithContext};
use crate::blueprint::{Flow, RunnableGraph, Sink, Source};
use crate::materializer::Materializer;
use crate::ops::FlowOps;
use crate::stage::Attributes;

/// A source of elements `Out`, each with a context `Ctx` beside it
/// (Pekko's `SourceWithContext`): a [`Source`] of `(Out, Ctx)` pairs
/// whose [`ContextOps`] operators work on the element and carry the
/// context along. Typical contexts are what a consumer must do once the
/// element is handled: an offset to commit, a message's ack handle.
///
/// Make one with [`Source::as_source_with_context`] or
/// [`SourceWithContext::from_tuples`]; end it with [`as_source`](Self::as_source)
/// (the pairs), [`to`](Self::to) or [`run_with`](Self::run_with).
///
/// # Examples
///
/// ```
/// use weir_streams::prelude::*;
/// use weir_streams::ContextOps;
///
/// let system = weir_actor::ActorSystem::new("source-with-context").unwrap();
/// let mat = Materializer::new(&system);
/// // Messages with the offset to commit once each is handled.
/// let messages = vec![(7u64, "a"), (8, "bad"), (9, "c")];
/// let committed = Source::from_iter(messages)
///     .as_source_with_context(|(offset, _)| *offset)
///     .map(|(_, body)| body)
///     .filter(|body| *body != "bad")
///     .run_with(Sink::collect(), &mat);
/// assert_eq!(committed.wait(), Ok(vec![("a", 7), ("c", 9)]));
/// system.terminate().wait().unwrap();
/// ```
#[must_use = "a SourceWithContext does nothing until it is run"]
pub struct SourceWithContext<Out, Ctx, Mat = ()> {
    source: Source<(Out, Ctx), Mat>,
}

impl<Out, Ctx, Mat> Clone for SourceWithContext<Out, Ctx, Mat> {
    fn clone(&self) -> Self {
        Self {
            source: self.source.clone(),
        }
    }
}

impl<Out, Ctx, Mat> std::fmt::Debug for SourceWithContext<Out, Ctx, Mat> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("SourceWithContext")
            .field(&self.source)
            .finish()
    }
}

impl<Out, Ctx, Mat> SourceWithContext<Out, Ctx, Mat>
where
    Out: Send + 'static,
    Ctx: Send + 'static,
    Mat: 'static,
{
    /// A source of `(element, context)` pairs, seen as elements with a
    /// context (Pekko's `SourceWithContext.fromTuples`).
    pub fn from_tuples(source: Source<(Out, Ctx), Mat>) -> Self {
        Self { source }
    }

    /// The pairs as a plain [`Source`] (Pekko's `asSource`).
    pub fn as_source(self) -> Source<(Out, Ctx), Mat> {
        self.source
    }

    /// Append a [`FlowWithContext`], combining the materialized values
    /// with `combine`.
    pub fn via_mat<U, C, M2, M3>(
        self,
        flow: FlowWithContext<Out, Ctx, U, C, M2>,
        combine: impl Fn(Mat, M2) -> M3 + Send + Sync + 'static,
    ) -> SourceWithContext<U, C, M3>
    where
        U: Send + 'static,
        C: Send + 'static,
        M2: 'static,
        M3: 'static,
    {
        SourceWithContext::from_tuples(self.source.via_mat(flow.as_flow(), combine))
    }

    /// End in `sink`, which takes the pairs; the materialized value is
    /// this source's.
    pub fn to<M2: 'static>(self, sink: Sink<(Out, Ctx), M2>) -> RunnableGraph<Mat> {
        self.source.to(sink)
    }

    /// End in `sink`, combining the materialized values with `combine`.
    pub fn to_mat<M2: 'static, M3: 'static>(
        self,
        sink: Sink<(Out, Ctx), M2>,
        combine: impl Fn(Mat, M2) -> M3 + Send + Sync + 'static,
    ) -> RunnableGraph<M3> {
        self.source.to_mat(sink, combine)
    }

    /// Run into `sink`, which takes the pairs; returns the sink's
    /// materialized value.
    pub fn run_with<M2: 'static>(
        self,
        sink: Sink<(Out, Ctx), M2>,
        materializer: &Materializer,
    ) -> M2 {
        self.source.run_with(sink, materializer)
    }

    /// Transform the materialized value.
    pub fn map_materialized_value<M2: 'static>(
        self,
        f: impl Fn(Mat) -> M2 + Send + Sync + 'static,
    ) -> SourceWithContext<Out, Ctx, M2> {
        SourceWithContext::from_tuples(self.source.map_materialized_value(f))
    }

    /// Set attributes on the last stage.
    pub fn with_attributes(self, attributes: Attributes) -> Self {
        Self::from_tuples(self.source.with_attributes(attributes))
    }

    /// End the island here (see [`Source::async_boundary`]).
    pub fn async_boundary(self) -> Self {
        Self::from_tuples(self.source.async_boundary())
    }
}

impl<Out, Ctx, Mat> ContextOps for SourceWithContext<Out, Ctx, Mat>
where
    Out: Send + 'static,
    Ctx: Send + 'static,
    Mat: 'static,
{
    type Out = Out;
    type Ctx = Ctx;
    type Repr<U: Send + 'static, C: Send + 'static> = SourceWithContext<U, C, Mat>;

    #[allow(clippy::type_complexity)] // a flow of (element, context) pairs is the point
    fn via_tuples<U, C, M>(self, flow: Flow<(Out, Ctx), (U, C), M>) -> SourceWithContext<U, C, Mat>
    where
        U: Send + 'static,
        C: Send + 'static,
        M: 'static,
    {
        SourceWithContext::from_tuples(self.source.via_flow(flow))
    }
}

impl<Out: Send + 'static, Mat: 'static> Source<Out, Mat> {
    /// Each element with the context `extract(&element)` beside it
    /// (Pekko's `asSourceWithContext`): a [`SourceWithContext`].
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// use weir_streams::ContextOps;
    ///
    /// let system = weir_actor::ActorSystem::new("as-source-with-context").unwrap();
    /// let mat = Materializer::new(&system);
    /// let got = Source::from_iter(vec!["x", "yy"])
    ///     .as_source_with_context(|s| s.len())
    ///     .map(str::to_uppercase)
    ///     .as_source()
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(got.wait(), Ok(vec![("X".to_owned(), 1), ("YY".to_owned(), 2)]));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn as_source_with_context<Ctx, F>(self, extract: F) -> SourceWithContext<Out, Ctx, Mat>
    where
        Ctx: Send + 'static,
        F: FnMut(&Out) -> Ctx + Clone + Send + Sync + 'static,
    {
        let mut extract = extract;
        SourceWithContext::from_tuples(self.map(move |x| {
            let c = extract(&x);
            (x, c)
        }))
    }
}
