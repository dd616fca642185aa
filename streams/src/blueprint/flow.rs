//! [`Flow`]: a blueprint with one input and one output.

use std::marker::PhantomData;
use std::sync::Arc;

use super::Sink;
use crate::fusion::{IterAdapter, SimpleOp, Step, StepFactory, StepNode};
use crate::plan::graph::{Graph, Kind, Node};
use crate::stage::{Attributes, FlowShape, GraphStage};

/// A blueprint that takes `In` and gives `Out`, materializing `Mat`.
/// Immutable: every composition returns a new blueprint, and one
/// blueprint can be materialized any number of times.
///
/// Build one from [`Flow::new`] (the identity) and the operators of
/// [`FlowOps`](crate::FlowOps), or from a custom stage with [`Flow::from_graph`].
///
/// # Examples
///
/// ```
/// use weir_streams::prelude::*;
///
/// let system = weir_actor::ActorSystem::new("flow").unwrap();
/// let materializer = Materializer::new(&system);
/// let double_evens = Flow::<u32>::new().filter(|x| x % 2 == 0).map(|x| x * 2);
/// let a = Source::range(0u32..5).via(double_evens.clone()).run_with(Sink::collect(), &materializer);
/// let b = Source::range(10u32..13).via(double_evens).run_with(Sink::collect(), &materializer);
/// assert_eq!(a.wait(), Ok(vec![0, 4, 8]));
/// assert_eq!(b.wait(), Ok(vec![20, 24]));
/// system.terminate().wait().unwrap();
/// ```
#[must_use = "a Flow does nothing until it is part of a graph that is run"]
pub struct Flow<In, Out = In, Mat = ()> {
    pub(crate) graph: Graph<Mat>,
    _types: PhantomData<fn(In) -> Out>,
}

impl<In, Out, Mat> Clone for Flow<In, Out, Mat> {
    fn clone(&self) -> Self {
        Self {
            graph: self.graph.clone(),
            _types: PhantomData,
        }
    }
}

impl<T: Send + 'static> Flow<T, T, ()> {
    /// The identity flow: passes every element on. It adds no stage.
    pub fn new() -> Self {
        Self::from_graph_parts(Graph::<()>::empty())
    }
}

impl<T: Send + 'static> Default for Flow<T, T, ()> {
    fn default() -> Self {
        Self::new()
    }
}

impl<In: Send + 'static, Out: Send + 'static> Flow<In, Out, ()> {
    pub(crate) fn from_simple(
        name: &'static str,
        step: StepFactory<In, Out>,
        adapt: IterAdapter<In, Out>,
    ) -> Self {
        Self::from_step_node(name, Arc::new(SimpleOp { step, adapt }))
    }

    /// A flow of one fusable operator node.
    pub(crate) fn from_step_node(name: &'static str, node: Arc<dyn StepNode>) -> Self {
        let kind = Kind::Step(node);
        Self::from_graph_parts(Graph::single(Node::new(kind, Attributes::named(name))))
    }
}

impl<In: Send + 'static, Out: Send + 'static, Mat: 'static> Flow<In, Out, Mat> {
    /// A flow made of one custom stage.
    pub fn from_graph<S>(stage: S) -> Self
    where
        S: GraphStage<Shape = FlowShape<In, Out>, Mat = Mat>,
    {
        let kind = Kind::Stage(Arc::new(stage));
        Self::from_graph_parts(Graph::single(Node::new(kind, Attributes::new())))
    }

    pub(crate) fn from_graph_parts(graph: Graph<Mat>) -> Self {
        Self {
            graph,
            _types: PhantomData,
        }
    }

    /// This flow, then `next`; the materialized value is this flow's.
    pub fn via<Next: Send + 'static, M2: 'static>(
        self,
        next: Flow<Out, Next, M2>,
    ) -> Flow<In, Next, Mat> {
        self.via_mat(next, super::Keep::left)
    }

    /// This flow, then `next`, with the two materialized values combined by `combine`.
    pub fn via_mat<Next: Send + 'static, M2: 'static, M3: 'static>(
        self,
        next: Flow<Out, Next, M2>,
        combine: impl Fn(Mat, M2) -> M3 + Send + Sync + 'static,
    ) -> Flow<In, Next, M3> {
        Flow::from_graph_parts(self.graph.then(next.graph, combine))
    }

    /// This flow, then `sink`: a sink that takes `In`.
    pub fn to<M2: 'static>(self, sink: Sink<Out, M2>) -> Sink<In, Mat> {
        self.to_mat(sink, super::Keep::left)
    }

    /// This flow, then `sink`, with the materialized values combined by `combine`.
    pub fn to_mat<M2: 'static, M3: 'static>(
        self,
        sink: Sink<Out, M2>,
        combine: impl Fn(Mat, M2) -> M3 + Send + Sync + 'static,
    ) -> Sink<In, M3> {
        Sink::from_graph_parts(self.graph.then(sink.graph, combine))
    }

    /// Transform the materialized value.
    pub fn map_materialized_value<M2: 'static>(
        self,
        f: impl Fn(Mat) -> M2 + Send + Sync + 'static,
    ) -> Flow<In, Out, M2> {
        Flow::from_graph_parts(self.graph.map_mat(f))
    }

    /// Name the last stage (used in errors and actor names).
    pub fn named(self, name: impl Into<std::borrow::Cow<'static, str>>) -> Self {
        let name = name.into();
        self.with_attributes(Attributes::named(name))
    }

    /// Set attributes on the last stage.
    pub fn with_attributes(self, attributes: Attributes) -> Self {
        Self::from_graph_parts(self.graph.with_outlet_attributes(|a| a.and(&attributes)))
    }

    /// End the island here: what comes after runs on another actor, joined
    /// by a bounded buffer (the next stage's input buffer, 16 by default)
    /// that requests in batches. See [`Source::async_boundary`](crate::Source::async_boundary) for sizing
    /// that buffer for throughput.
    pub fn async_boundary(self) -> Self {
        Self::from_graph_parts(
            self.graph
                .then(super::source::boundary::<Out>(), super::Keep::left),
        )
    }
}

impl<In, Out, Mat> std::fmt::Debug for Flow<In, Out, Mat> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Flow")
            .field("stages", &self.graph.nodes.len())
            .finish()
    }
}

/// A flow of one simple operator: `make` gives its step for a stage,
/// `adapt` wraps an iterator with it for fusion into an iterator source.
pub(crate) fn simple_flow<In: Send + 'static, Out: Send + 'static, F, G>(
    name: &'static str,
    make: F,
    adapt: G,
) -> Flow<In, Out, ()>
where
    F: Fn() -> Box<dyn FnMut(In) -> Step<Out> + Send> + Send + Sync + 'static,
    G: Fn(crate::fusion::BoxChunks<In>) -> crate::fusion::BoxChunks<Out> + Send + Sync + 'static,
{
    Flow::from_simple(name, Arc::new(make), Arc::new(adapt))
}
