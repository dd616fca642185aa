//! [`FlowWithContext`]: a flow whose elements carry a context.

use super::ContextOps;
use crate::blueprint::{Flow, Sink};
use crate::ops::FlowOps;
use crate::stage::Attributes;

/// A flow from elements `In` with contexts `CtxIn` to elements `Out` with
/// contexts `CtxOut` (Pekko's `FlowWithContext`): a [`Flow`] of pairs
/// whose [`ContextOps`] operators work on the element and carry the
/// context along.
///
/// Make one with [`FlowWithContext::new`] (the identity, then its
/// operators), [`FlowWithContext::from_tuples`] or
/// [`Flow::as_flow_with_context`]; attach it with
/// [`ContextOps::via`]; get the flow of pairs back with
/// [`as_flow`](Self::as_flow).
///
/// # Examples
///
/// ```
/// use weir_streams::prelude::*;
/// use weir_streams::{ContextOps, FlowWithContext};
///
/// let system = weir_actor::ActorSystem::new("flow-with-context").unwrap();
/// let mat = Materializer::new(&system);
/// // A reusable step: parse the body, keeping whatever context it came with.
/// let parse = FlowWithContext::<String, u64>::new().filter_map(|s| s.parse::<i32>().ok());
/// let got = Source::from_iter(vec![("4".to_owned(), 1u64), ("x".into(), 2), ("-1".into(), 3)])
///     .via(parse.as_flow())
///     .run_with(Sink::collect(), &mat);
/// assert_eq!(got.wait(), Ok(vec![(4, 1), (-1, 3)]));
/// system.terminate().wait().unwrap();
/// ```
#[must_use = "a FlowWithContext does nothing until it is part of a graph that is run"]
pub struct FlowWithContext<In, CtxIn, Out = In, CtxOut = CtxIn, Mat = ()> {
    flow: Flow<(In, CtxIn), (Out, CtxOut), Mat>,
}

impl<In, CtxIn, Out, CtxOut, Mat> Clone for FlowWithContext<In, CtxIn, Out, CtxOut, Mat> {
    fn clone(&self) -> Self {
        Self {
            flow: self.flow.clone(),
        }
    }
}

impl<In, CtxIn, Out, CtxOut, Mat> std::fmt::Debug for FlowWithContext<In, CtxIn, Out, CtxOut, Mat> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("FlowWithContext").field(&self.flow).finish()
    }
}

impl<T: Send + 'static, C: Send + 'static> FlowWithContext<T, C, T, C, ()> {
    /// The identity: passes every element and its context on (Pekko's
    /// `FlowWithContext[In, Ctx]`). It adds no stage.
    pub fn new() -> Self {
        Self::from_tuples(Flow::new())
    }
}

impl<T: Send + 'static, C: Send + 'static> Default for FlowWithContext<T, C, T, C, ()> {
    fn default() -> Self {
        Self::new()
    }
}

impl<In, CtxIn, Out, CtxOut, Mat> FlowWithContext<In, CtxIn, Out, CtxOut, Mat>
where
    In: Send + 'static,
    CtxIn: Send + 'static,
    Out: Send + 'static,
    CtxOut: Send + 'static,
    Mat: 'static,
{
    /// A flow of `(element, context)` pairs, seen as elements with a
    /// context (Pekko's `FlowWithContext.fromTuples`). The flow must keep
    /// one context per element.
    pub fn from_tuples(flow: Flow<(In, CtxIn), (Out, CtxOut), Mat>) -> Self {
        Self { flow }
    }

    /// The flow of pairs (Pekko's `asFlow`).
    pub fn as_flow(self) -> Flow<(In, CtxIn), (Out, CtxOut), Mat> {
        self.flow
    }

    /// Append another [`FlowWithContext`], combining the materialized
    /// values with `combine`.
    pub fn via_mat<U, C, M2, M3>(
        self,
        next: FlowWithContext<Out, CtxOut, U, C, M2>,
        combine: impl Fn(Mat, M2) -> M3 + Send + Sync + 'static,
    ) -> FlowWithContext<In, CtxIn, U, C, M3>
    where
        U: Send + 'static,
        C: Send + 'static,
        M2: 'static,
        M3: 'static,
    {
        FlowWithContext::from_tuples(self.flow.via_mat(next.flow, combine))
    }

    /// End in `sink`, which takes the pairs: a sink of pairs.
    pub fn to<M2: 'static>(self, sink: Sink<(Out, CtxOut), M2>) -> Sink<(In, CtxIn), Mat> {
        self.flow.to(sink)
    }

    /// Transform the materialized value.
    pub fn map_materialized_value<M2: 'static>(
        self,
        f: impl Fn(Mat) -> M2 + Send + Sync + 'static,
    ) -> FlowWithContext<In, CtxIn, Out, CtxOut, M2> {
        FlowWithContext::from_tuples(self.flow.map_materialized_value(f))
    }

    /// Set attributes on the last stage.
    pub fn with_attributes(self, attributes: Attributes) -> Self {
        Self::from_tuples(self.flow.with_attributes(attributes))
    }

    /// End the island here (see [`Flow::async_boundary`]).
    pub fn async_boundary(self) -> Self {
        Self::from_tuples(self.flow.async_boundary())
    }
}

impl<In, CtxIn, Out, CtxOut, Mat> ContextOps for FlowWithContext<In, CtxIn, Out, CtxOut, Mat>
where
    In: Send + 'static,
    CtxIn: Send + 'static,
    Out: Send + 'static,
    CtxOut: Send + 'static,
    Mat: 'static,
{
    type Out = Out;
    type Ctx = CtxOut;
    type Repr<U: Send + 'static, C: Send + 'static> = FlowWithContext<In, CtxIn, U, C, Mat>;

    #[allow(clippy::type_complexity)] // a flow of (element, context) pairs is the point
    fn via_tuples<U, C, M>(
        self,
        flow: Flow<(Out, CtxOut), (U, C), M>,
    ) -> FlowWithContext<In, CtxIn, U, C, Mat>
    where
        U: Send + 'static,
        C: Send + 'static,
        M: 'static,
    {
        FlowWithContext::from_tuples(self.flow.via_flow(flow))
    }
}

impl<In: Send + 'static, Out: Send + 'static, Mat: 'static> Flow<In, Out, Mat> {
    /// This flow as a [`FlowWithContext`] (Pekko's `asFlowWithContext`):
    /// each incoming pair becomes this flow's input by `collapse(element,
    /// context)`, and each output gets the context `extract(&output)`.
    /// Suits a flow that carries what it needs inside its elements (a
    /// request holding its own correlation id).
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// use weir_streams::ContextOps;
    ///
    /// let system = weir_actor::ActorSystem::new("as-flow-with-context").unwrap();
    /// let mat = Materializer::new(&system);
    /// // A service that answers (id, reply): the id is the context.
    /// let service = Flow::<(u32, String)>::new().map(|(id, q)| (id, q.len()));
    /// let with_context = service.as_flow_with_context(|q: String, id: u32| (id, q), |out| out.0);
    /// let got = Source::from_iter(vec![("ab".to_owned(), 1u32), ("xyz".into(), 2)])
    ///     .via(with_context.map(|(_, n)| n).as_flow())
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(got.wait(), Ok(vec![(2, 1), (3, 2)]));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn as_flow_with_context<U, CtxU, CtxOut, F, G>(
        self,
        collapse: F,
        extract: G,
    ) -> FlowWithContext<U, CtxU, Out, CtxOut, Mat>
    where
        U: Send + 'static,
        CtxU: Send + 'static,
        CtxOut: Send + 'static,
        F: FnMut(U, CtxU) -> In + Clone + Send + Sync + 'static,
        G: FnMut(&Out) -> CtxOut + Clone + Send + Sync + 'static,
    {
        let (mut collapse, mut extract) = (collapse, extract);
        let flow = Flow::<(U, CtxU)>::new()
            .map(move |(x, c)| collapse(x, c))
            .via_mat(self, |(), m| m)
            .map(move |out| {
                let c = extract(&out);
                (out, c)
            });
        FlowWithContext::from_tuples(flow)
    }
}
