//! [`Sink`]: a blueprint with one input.

use std::marker::PhantomData;
use std::sync::Arc;

use crate::fusion::{
    Consumer, ConsumerFactory, FusedConsumer, Pull, PullFactory, PullResult, PullSink,
};
use crate::plan::graph::{Graph, Kind, MatFn, Node};
use crate::stage::{Attributes, GraphStage, SinkShape};

/// A blueprint that takes `In` and materializes `Mat` (usually a
/// [`Completion`](crate::Completion)). Immutable and reusable.
///
/// # Examples
///
/// ```
/// use weir_streams::prelude::*;
///
/// let system = weir_actor::ActorSystem::new("sink").unwrap();
/// let materializer = Materializer::new(&system);
/// let longest = Sink::fold(0usize, |m, s: &str| m.max(s.len()));
/// let done = Source::from_iter(["a", "abc", "ab"]).run_with(longest, &materializer);
/// assert_eq!(done.wait(), Ok(3));
/// system.terminate().wait().unwrap();
/// ```
#[must_use = "a Sink does nothing until it is part of a graph that is run"]
pub struct Sink<In, Mat = ()> {
    pub(crate) graph: Graph<Mat>,
    _in: PhantomData<fn(In)>,
}

impl<In, Mat> Clone for Sink<In, Mat> {
    fn clone(&self) -> Self {
        Self {
            graph: self.graph.clone(),
            _in: PhantomData,
        }
    }
}

impl<In: Send + 'static, Mat: Send + 'static> Sink<In, Mat> {
    /// A sink made of one custom stage.
    pub fn from_graph<S>(stage: S) -> Self
    where
        S: GraphStage<Shape = SinkShape<In>, Mat = Mat>,
    {
        let kind = Kind::Stage(Arc::new(stage));
        Self::from_graph_parts(Graph::single(Node::new(kind, Attributes::new())))
    }

    /// This sink, plus a way to run a fused source itself: when the source
    /// before it is one fused stage (an iterator or
    /// [`Source::from_poll_fn`](crate::Source::from_poll_fn) source with
    /// simple operators), running the graph spawns no actor and gives
    /// `pull` that source as a [`Pull`] to drive; its result is the
    /// materialized value. Other graphs run this sink's stage on an island
    /// as usual, so both forms must behave alike. This is how
    /// `weir-interop`'s `Sink::as_stream` hands a fused source straight to
    /// the task that polls it.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::task::{Context, Waker};
    /// use weir_streams::prelude::*;
    /// use weir_streams::{Completer, Pulled};
    ///
    /// let system = weir_actor::ActorSystem::new("pull").unwrap();
    /// let materializer = Materializer::new(&system);
    /// // Sum on the thread that runs the graph when the source is fused
    /// // (and never pending), else on an island.
    /// let sum = Sink::fold(0u64, |a, x| a + x).with_pull(|mut pull| {
    ///     let (mut completer, completion) = Completer::new();
    ///     let (mut batch, mut sum) = (Vec::new(), 0u64);
    ///     let mut cx = Context::from_waker(Waker::noop());
    ///     loop {
    ///         let pulled = pull.poll_fill(&mut cx, &mut batch, 256);
    ///         sum += batch.drain(..).sum::<u64>();
    ///         match pulled {
    ///             Pulled::More => continue,
    ///             Pulled::Completed => completer.complete(Ok(sum)),
    ///             Pulled::Failed(error) => completer.complete(Err(error)),
    ///             _ => unreachable!("a range is never pending"),
    ///         }
    ///         return completion;
    ///     }
    /// });
    /// let fused = Source::range(1u64..=100).map(|x| x * 2).run_with(sum.clone(), &materializer);
    /// assert_eq!(fused.wait(), Ok(10_100));
    /// let on_an_island = Source::range(1u64..=100).async_boundary().run_with(sum, &materializer);
    /// assert_eq!(on_an_island.wait(), Ok(5_050));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn with_pull<F>(self, pull: F) -> Self
    where
        F: Fn(Pull<In>) -> Mat + Send + Sync + 'static,
    {
        let factory: PullFactory<In> = Arc::new(move |source| Box::new(pull(source)));
        let mut graph = self.graph;
        let Some(&(node, _)) = graph.inlets.first() else {
            return Self::from_graph_parts(graph);
        };
        let slot = node as usize;
        graph.nodes[slot].pull = Some(Arc::new(PullSink(factory)));
        // When the planner ran the pull, the value of the node it marks is
        // the pull's result: the sink's value, whatever its stages are.
        let inner = graph.mat;
        graph.mat = MatFn::new(move |v| {
            if v[slot].as_ref().is_some_and(|b| b.is::<PullResult>()) {
                let pulled = v[slot]
                    .take()
                    .expect("checked")
                    .downcast::<PullResult>()
                    .expect("checked");
                *pulled
                    .0
                    .downcast::<Mat>()
                    .expect("a pull gives the sink's materialized value")
            } else {
                inner(v)
            }
        });
        Self::from_graph_parts(graph)
    }

    /// A sink of one folding stage, made fresh per run by `make`.
    pub(crate) fn from_consumer<C, F>(name: &'static str, make: F) -> Self
    where
        C: Consumer<In>,
        F: Fn() -> (C, Mat) + Send + Sync + 'static,
    {
        let factory: ConsumerFactory<In> = Arc::new(move || {
            let (consumer, mat) = make();
            (
                Box::new(consumer) as Box<dyn Consumer<In>>,
                Box::new(mat) as Box<dyn std::any::Any + Send>,
            )
        });
        let kind = Kind::Consumer(Arc::new(FusedConsumer(factory)));
        Self::from_graph_parts(Graph::single(Node::new(kind, Attributes::named(name))))
    }
}

impl<In: 'static, Mat: 'static> Sink<In, Mat> {
    pub(crate) fn from_graph_parts(graph: Graph<Mat>) -> Self {
        Self {
            graph,
            _in: PhantomData,
        }
    }

    /// Transform the materialized value.
    pub fn map_materialized_value<M2: 'static>(
        self,
        f: impl Fn(Mat) -> M2 + Send + Sync + 'static,
    ) -> Sink<In, M2> {
        Sink::from_graph_parts(self.graph.map_mat(f))
    }

    /// Name the sink's stage (used in errors and actor names).
    pub fn named(self, name: impl Into<std::borrow::Cow<'static, str>>) -> Self {
        self.with_attributes(Attributes::named(name))
    }

    /// Set attributes on the sink's first stage.
    pub fn with_attributes(self, attributes: Attributes) -> Self {
        Self::from_graph_parts(self.graph.with_inlet_attributes(|a| a.and(&attributes)))
    }
}

impl<In, Mat> std::fmt::Debug for Sink<In, Mat> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sink")
            .field("stages", &self.graph.nodes.len())
            .finish()
    }
}
