//! [`Source`]: a blueprint with one output.

use std::marker::PhantomData;
use std::sync::Arc;

use super::flow::Flow;
use super::runnable::RunnableGraph;
use super::sink::Sink;
use crate::fusion::{FusedIter, Hosting, HostsConsumer, IterFactory};
use crate::interpreter::boundary::Boundary;
use crate::materializer::Materializer;
use crate::plan::graph::{Graph, Kind, Node};
use crate::stage::{Attributes, GraphStage, SourceShape};

/// A blueprint that emits `Out` and materializes `Mat`. Immutable: every
/// composition returns a new blueprint, and one blueprint can be
/// materialized any number of times, each run independent.
///
/// # Examples
///
/// ```
/// use weir_streams::prelude::*;
///
/// let system = weir_actor::ActorSystem::new("source").unwrap();
/// let materializer = Materializer::new(&system);
/// let squares = Source::range(1u64..=4).map(|x| x * x);
/// assert_eq!(squares.clone().run_with(Sink::collect(), &materializer).wait(), Ok(vec![1, 4, 9, 16]));
/// assert_eq!(squares.run_with(Sink::fold(0, |a, x| a + x), &materializer).wait(), Ok(30));
/// system.terminate().wait().unwrap();
/// ```
#[must_use = "a Source does nothing until it is run"]
pub struct Source<Out, Mat = ()> {
    pub(crate) graph: Graph<Mat>,
    _out: PhantomData<fn() -> Out>,
}

impl<Out, Mat> Clone for Source<Out, Mat> {
    fn clone(&self) -> Self {
        Self {
            graph: self.graph.clone(),
            _out: PhantomData,
        }
    }
}

impl<Out: Send + 'static> Source<Out, ()> {
    /// A source of the elements of a fresh iterator for each run.
    pub(crate) fn from_iter_factory(name: &'static str, factory: IterFactory<Out>) -> Self {
        let kind = Kind::Iter(Arc::new(FusedIter(factory)));
        Self::from_graph_parts(Graph::single(Node::new(kind, Attributes::named(name))))
    }
}

impl<Out: Send + 'static, Mat: 'static> Source<Out, Mat> {
    /// A source made of one custom stage.
    pub fn from_graph<S>(stage: S) -> Self
    where
        S: GraphStage<Shape = SourceShape<Out>, Mat = Mat>,
    {
        let kind = Kind::Stage(Arc::new(stage));
        Self::from_graph_parts(Graph::single(Node::new(kind, Attributes::new())))
    }

    pub(crate) fn from_graph_parts(graph: Graph<Mat>) -> Self {
        Self {
            graph,
            _out: PhantomData,
        }
    }

    /// This one-stage source can also run a folding sink inside itself.
    pub(crate) fn hosting(mut self, host: Arc<dyn HostsConsumer<Out>>) -> Self {
        debug_assert_eq!(self.graph.nodes.len(), 1, "one stage");
        let node = &mut self.graph.nodes[0];
        if let Kind::Stage(stage) = &node.kind {
            node.kind = Kind::Host(Arc::clone(stage), Arc::new(Hosting(host)));
        }
        self
    }

    /// This source, then `flow`; the materialized value is the source's.
    pub fn via<Next: Send + 'static, M2: 'static>(
        self,
        flow: Flow<Out, Next, M2>,
    ) -> Source<Next, Mat> {
        self.via_mat(flow, super::Keep::left)
    }

    /// This source, then `flow`, with the materialized values combined by `combine`.
    pub fn via_mat<Next: Send + 'static, M2: 'static, M3: 'static>(
        self,
        flow: Flow<Out, Next, M2>,
        combine: impl Fn(Mat, M2) -> M3 + Send + Sync + 'static,
    ) -> Source<Next, M3> {
        Source::from_graph_parts(self.graph.then(flow.graph, combine))
    }

    /// This source, then `sink`: a runnable graph materializing the source's value.
    pub fn to<M2: 'static>(self, sink: Sink<Out, M2>) -> RunnableGraph<Mat> {
        self.to_mat(sink, super::Keep::left)
    }

    /// This source, then `sink`, with the materialized values combined by `combine`.
    pub fn to_mat<M2: 'static, M3: 'static>(
        self,
        sink: Sink<Out, M2>,
        combine: impl Fn(Mat, M2) -> M3 + Send + Sync + 'static,
    ) -> RunnableGraph<M3> {
        RunnableGraph::from_graph(self.graph.then(sink.graph, combine))
    }

    /// Run this source into `sink`; the sink's materialized value.
    pub fn run_with<M2: 'static>(self, sink: Sink<Out, M2>, materializer: &Materializer) -> M2 {
        self.to_mat(sink, super::Keep::right).run(materializer)
    }

    /// Transform the materialized value.
    pub fn map_materialized_value<M2: 'static>(
        self,
        f: impl Fn(Mat) -> M2 + Send + Sync + 'static,
    ) -> Source<Out, M2> {
        Source::from_graph_parts(self.graph.map_mat(f))
    }

    /// Name the last stage (used in errors and actor names).
    pub fn named(self, name: impl Into<std::borrow::Cow<'static, str>>) -> Self {
        self.with_attributes(Attributes::named(name))
    }

    /// Set attributes on the last stage.
    pub fn with_attributes(self, attributes: Attributes) -> Self {
        Self::from_graph_parts(self.graph.with_outlet_attributes(|a| a.and(&attributes)))
    }

    /// End the island here: what comes after runs on another actor, joined
    /// by a bounded buffer (the next stage's input buffer, 16 by default)
    /// that requests in batches.
    ///
    /// At most one input buffer of elements is between the islands, and
    /// each hand-over is an actor message: with the default 16, crossing
    /// costs two actor turns per 16 elements, which suits latency. For
    /// throughput give the stage after the boundary a larger input buffer
    /// (`weir-bench streams`: about a tenth of the fused rate at 16, about
    /// nine tenths at 1024).
    ///
    /// ```
    /// use weir_streams::Attributes;
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("boundary").unwrap();
    /// let mat = Materializer::new(&system);
    /// let wide = Attributes::new().with_input_buffer(1024).unwrap();
    /// let sum = Source::range(0u64..100_000)
    ///     .map(|x| x * 2)
    ///     .async_boundary()
    ///     .run_with(Sink::fold(0u64, |a, x| a + x).with_attributes(wide), &mat);
    /// assert_eq!(sum.wait(), Ok(9_999_900_000));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn async_boundary(self) -> Self {
        Self::from_graph_parts(self.graph.then(boundary::<Out>(), super::Keep::left))
    }
}

/// An async boundary node for elements of type `T`.
pub(crate) fn boundary<T: Send + 'static>() -> Graph<()> {
    let kind = Kind::Boundary(Arc::new(Boundary::<T>::new()));
    Graph::single(Node::new(kind, Attributes::new()))
}

impl<Out, Mat> std::fmt::Debug for Source<Out, Mat> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Source")
            .field("stages", &self.graph.nodes.len())
            .finish()
    }
}
