//! [`Source`]: a blueprint with one output.

use std::marker::PhantomData;
use std::sync::Arc;

use super::flow::Flow;
use super::linear::Linear;
use super::runnable::RunnableGraph;
use super::sink::{Sink, SinkKind};
use crate::fusion::{HostsConsumer, IterConsumerStage, IterFactory, IterSource, SteppedHost};
use crate::interpreter::boundary::Boundary;
use crate::interpreter::{ErasedStage, Node, stage_attributes};
use crate::pull::Pull;
use crate::stage::{GraphStage, SourceShape};
use crate::{Attributes, Materializer};

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
    pub(crate) linear: Linear<Mat>,
    /// Set when the source is exactly one iterator stage: simple
    /// operators then fuse into the iterator.
    pub(crate) iter: Option<(IterFactory<Out>, Attributes)>,
    /// Set when the source is exactly one stage that can run a folding
    /// sink inside itself (`Source::actor_ref`), with its attributes.
    pub(crate) host: Option<(Arc<dyn HostsConsumer<Out>>, Attributes)>,
    _out: PhantomData<fn() -> Out>,
}

impl<Out, Mat> Clone for Source<Out, Mat> {
    fn clone(&self) -> Self {
        Self {
            linear: self.linear.clone(),
            iter: self.iter.clone(),
            host: self.host.clone(),
            _out: PhantomData,
        }
    }
}

fn iter_node<Out: Send + 'static>(
    name: &'static str,
    factory: IterFactory<Out>,
    attributes: Attributes,
) -> Node {
    Node::Stage {
        stage: Arc::new(IterSource { name, factory }),
        attributes,
    }
}

impl<Out: Send + 'static> Source<Out, ()> {
    /// A source of the elements of a fresh iterator for each run.
    pub(crate) fn from_iter_factory(name: &'static str, factory: IterFactory<Out>) -> Self {
        let attributes = Attributes::named(name);
        Self {
            linear: Linear::single(iter_node(name, factory.clone(), attributes.clone()), 1),
            iter: Some((factory, attributes)),
            host: None,
            _out: PhantomData,
        }
    }
}

impl<Out: Send + 'static, Mat: 'static> Source<Out, Mat> {
    /// A source made of one custom stage.
    pub fn from_graph<S>(stage: S) -> Self
    where
        S: GraphStage<Shape = SourceShape<Out>, Mat = Mat>,
    {
        Self::from_linear(Linear::single(Node::stage(stage), 1))
    }

    pub(crate) fn from_linear(linear: Linear<Mat>) -> Self {
        Self {
            linear,
            iter: None,
            host: None,
            _out: PhantomData,
        }
    }

    /// This one-stage source can also run a folding sink inside itself.
    pub(crate) fn hosting(mut self, host: Arc<dyn HostsConsumer<Out>>) -> Self {
        debug_assert_eq!(self.linear.nodes.len(), 1, "one stage");
        self.host = Some((host, node_attributes(&self.linear.nodes)));
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
        if let (Some((iter, attrs)), Some(simple)) = (&self.iter, &flow.step) {
            // Fuse the operators into the iterator as iterator adapters.
            let (iter, adapt) = (iter.clone(), simple.adapt.clone());
            let factory: IterFactory<Next> = Arc::new(move || adapt(iter()));
            let attributes = attrs.clone().with_name(step_name(attrs, &simple.attributes));
            let (left, right) = (self.linear.mat, flow.linear.mat);
            return Source {
                linear: Linear {
                    nodes: vec![iter_node("fused", factory.clone(), attributes.clone())],
                    values: 1,
                    mat: Arc::new(move |v| {
                        let mut one = [Some(Box::new(()) as Box<dyn std::any::Any + Send>)];
                        let l = left(v);
                        combine(l, right(&mut one))
                    }),
                },
                iter: Some((factory, attributes)),
                host: None,
                _out: PhantomData,
            };
        }
        // A host keeps its unfused stages (other sinks need them) and
        // takes the operators into the consumer it will be given.
        let host = match (&self.host, &flow.step) {
            (Some((host, attrs)), Some(simple)) => {
                let name = step_name(attrs, &simple.attributes);
                let stepped = SteppedHost {
                    host: Arc::clone(host),
                    before: attrs.clone(),
                    step: Arc::clone(&simple.step),
                };
                Some((Arc::new(stepped) as Arc<dyn HostsConsumer<Next>>, attrs.clone().with_name(name)))
            }
            _ => None,
        };
        let keeps_iter = flow.linear.nodes.is_empty();
        let iter = if keeps_iter {
            retype_iter(self.iter)
        } else {
            None
        };
        Source {
            linear: self.linear.then(flow.linear, combine),
            iter,
            host,
            _out: PhantomData,
        }
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
        if let (Some(Node::Boundary(boundary)), SinkKind::Consumer(consumer)) =
            (self.linear.nodes.last(), &sink.kind)
            && let Some(boundary) = boundary.as_any().downcast_ref::<Boundary<Out>>()
            && let Some(fused) = boundary.with_sink(
                consumer.clone(),
                &node_name(&sink.linear.nodes),
                node_buffer(&sink.linear.nodes),
            )
        {
            // A folding sink right after an async boundary runs inside the
            // boundary's downstream half.
            let mut nodes = self.linear.nodes;
            *nodes.last_mut().expect("matched above") = Node::Boundary(Arc::new(fused));
            let split = self.linear.values;
            let (left, right) = (self.linear.mat, sink.linear.mat);
            return RunnableGraph::from_linear(Linear {
                nodes,
                values: split + sink.linear.values,
                mat: Arc::new(move |v| {
                    let (l, r) = v.split_at_mut(split);
                    combine(left(l), right(r))
                }),
            });
        }
        if let (Some((iter, attrs)), SinkKind::Pull(pull)) = (&self.iter, &sink.kind) {
            // A fused source handed to a sink that drives it: no island.
            let (iter, pull) = (iter.clone(), pull.clone());
            let sink_attributes = node_attributes(&sink.linear.nodes);
            let name: Arc<str> = fused_name(attrs, &sink.linear.nodes).into();
            let left = self.linear.mat;
            return RunnableGraph::from_linear(Linear {
                nodes: Vec::new(),
                values: 0,
                mat: Arc::new(move |_| {
                    let mut source_value = [Some(Box::new(()) as Box<dyn std::any::Any + Send>)];
                    let source = Pull::new(iter(), Arc::clone(&name), sink_attributes.clone());
                    let value = pull(source)
                        .downcast::<M2>()
                        .expect("a pull gives the sink's materialized value");
                    combine(left(&mut source_value), *value)
                }),
            });
        }
        // A folding sink run inside the source's stage: an iterator driven
        // in a loop, or a host (`Source::actor_ref`) that feeds it.
        let fused = match (&self.iter, &self.host, &sink.kind) {
            (Some((iter, attrs)), _, SinkKind::Consumer(consumer)) => {
                let stage = IterConsumerStage {
                    name: "fused",
                    source: iter.clone(),
                    sink: consumer.clone(),
                };
                Some((Arc::new(stage) as Arc<dyn ErasedStage>, attrs))
            }
            (_, Some((host, attrs)), SinkKind::Consumer(consumer)) => {
                Some((host.with_consumer(attrs, consumer.clone()), attrs))
            }
            _ => None,
        };
        if let Some((stage, attrs)) = fused {
            let node = Node::Stage {
                stage,
                attributes: attrs.clone().with_name(fused_name(attrs, &sink.linear.nodes)),
            };
            // The fused stage makes the source's value and the sink's; the
            // operators a host took in (each `()`) made none.
            let (left, right, before) = (self.linear.mat, sink.linear.mat, self.linear.values);
            return RunnableGraph::from_linear(Linear {
                nodes: vec![node],
                values: 2,
                mat: Arc::new(move |v| {
                    let (source, sink) = v.split_at_mut(1);
                    let mut values = Vec::with_capacity(before);
                    values.push(source[0].take());
                    values.resize_with(before, || Some(Box::new(()) as Box<dyn std::any::Any + Send>));
                    combine(left(&mut values), right(sink))
                }),
            });
        }
        RunnableGraph::from_linear(self.linear.then(sink.linear, combine))
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
        Source {
            linear: self.linear.map_mat(f),
            iter: self.iter,
            host: self.host,
            _out: PhantomData,
        }
    }

    /// Name the last stage (used in errors and actor names).
    pub fn named(self, name: impl Into<std::borrow::Cow<'static, str>>) -> Self {
        self.with_attributes(Attributes::named(name))
    }

    /// Set attributes on the last stage.
    pub fn with_attributes(self, attributes: Attributes) -> Self {
        let iter = self
            .iter
            .map(|(iter, attrs)| (iter, attrs.and(&attributes)));
        let host = self
            .host
            .map(|(host, attrs)| (host, attrs.and(&attributes)));
        Self {
            linear: self.linear.with_last_attributes(|a| a.and(&attributes)),
            iter,
            host,
            _out: PhantomData,
        }
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
    pub fn async_boundary(mut self) -> Self {
        let boundary = match self.iter.take() {
            // The iterator runs inside the boundary's upstream half.
            Some((iter, attrs)) => {
                self.linear.nodes.clear();
                Boundary::with_source(iter, attrs.name().unwrap_or("iter"))
            }
            None => Boundary::<Out>::new(),
        };
        self.linear.nodes.push(Node::Boundary(Arc::new(boundary)));
        self
    }
}

/// An iterator factory typed `A` seen as `B` when the types are equal
/// (an identity flow was appended).
fn retype_iter<A: 'static, B: 'static>(
    iter: Option<(IterFactory<A>, Attributes)>,
) -> Option<(IterFactory<B>, Attributes)> {
    let (iter, attributes) = iter?;
    let any: Box<dyn std::any::Any> = Box::new(iter);
    any.downcast::<IterFactory<B>>()
        .ok()
        .map(|iter| (*iter, attributes))
}

impl<Out, Mat> std::fmt::Debug for Source<Out, Mat> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Source")
            .field("stages", &self.linear.nodes.len())
            .field("fused", &self.iter.is_some())
            .finish()
    }
}

/// The name of the first stage of `nodes` (its attributes, else its default).
fn node_name(nodes: &[Node]) -> String {
    nodes
        .first()
        .and_then(|n| match n {
            Node::Stage { attributes, stage } => {
                Some(attributes.name().unwrap_or(stage.name()).to_owned())
            }
            Node::Boundary(_) => None,
        })
        .unwrap_or_default()
}

/// The attributes of the first stage of `nodes`, with its own defaults.
fn node_attributes(nodes: &[Node]) -> Attributes {
    match nodes.first() {
        Some(Node::Stage { attributes, stage }) => stage_attributes(&**stage, attributes),
        _ => Attributes::new(),
    }
}

/// The input buffer of the first stage of `nodes`.
fn node_buffer(nodes: &[Node]) -> usize {
    node_attributes(nodes).input_buffer()
}

/// The name of a source with a simple operator fused in: `range.map`.
fn step_name(source: &Attributes, step: &Attributes) -> String {
    format!("{}.{}", source.name().unwrap_or("iter"), step.name().unwrap_or("step"))
}

/// The name of a fused source followed by the first stage of `sink`:
/// `range.map.fold`.
fn fused_name(source: &Attributes, sink: &[Node]) -> String {
    format!("{}.{}", source.name().unwrap_or("iter"), node_name(sink))
}
