//! [`Flow`]: a blueprint with one input and one output.

use std::marker::PhantomData;
use std::sync::Arc;

use super::linear::Linear;
use super::{Sink, SinkKind};
use crate::Attributes;
use crate::fusion::{IterAdapter, Step, StepFactory, StepStage, compose};

/// A flow of simple operators in its two fusable forms: one step (run as
/// one stage) and one iterator adapter (fused into an iterator source).
pub(crate) struct Simple<In, Out> {
    pub(crate) step: StepFactory<In, Out>,
    pub(crate) adapt: IterAdapter<In, Out>,
    pub(crate) attributes: Attributes,
}

impl<In, Out> Clone for Simple<In, Out> {
    fn clone(&self) -> Self {
        Self {
            step: Arc::clone(&self.step),
            adapt: Arc::clone(&self.adapt),
            attributes: self.attributes.clone(),
        }
    }
}
use crate::interpreter::Node;
use crate::interpreter::boundary::Boundary;
use crate::stage::{FlowShape, GraphStage};

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
    pub(crate) linear: Linear<Mat>,
    /// Set when the flow is exactly one fused step (it may fuse further).
    pub(crate) step: Option<Simple<In, Out>>,
    _types: PhantomData<fn(In) -> Out>,
}

impl<In, Out, Mat> Clone for Flow<In, Out, Mat> {
    fn clone(&self) -> Self {
        Self {
            linear: self.linear.clone(),
            step: self.step.clone(),
            _types: PhantomData,
        }
    }
}

impl<T: Send + 'static> Flow<T, T, ()> {
    /// The identity flow: passes every element on. It adds no stage.
    pub fn new() -> Self {
        Self {
            linear: Linear {
                nodes: Vec::new(),
                values: 0,
                mat: Arc::new(|_| ()),
            },
            step: None,
            _types: PhantomData,
        }
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
        let attributes = Attributes::named(name);
        Self {
            linear: Linear::single(step_node(name, step.clone(), attributes.clone()), 1),
            step: Some(Simple {
                step,
                adapt,
                attributes,
            }),
            _types: PhantomData,
        }
    }
}

fn step_node<In: Send + 'static, Out: Send + 'static>(
    name: &'static str,
    step: StepFactory<In, Out>,
    attributes: Attributes,
) -> Node {
    Node::Stage {
        stage: Arc::new(StepStage { name, step }),
        attributes,
    }
}

impl<In: Send + 'static, Out: Send + 'static, Mat: 'static> Flow<In, Out, Mat> {
    /// A flow made of one custom stage.
    pub fn from_graph<S>(stage: S) -> Self
    where
        S: GraphStage<Shape = FlowShape<In, Out>, Mat = Mat>,
    {
        Self::from_linear(Linear::single(Node::stage(stage), 1))
    }

    pub(crate) fn from_linear(linear: Linear<Mat>) -> Self {
        Self {
            linear,
            step: None,
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
        if let (Some(a), Some(b)) = (&self.step, &next.step) {
            // Two fused steps become one.
            let step = compose(a.step.clone(), b.step.clone());
            let (adapt_a, adapt_b) = (a.adapt.clone(), b.adapt.clone());
            let adapt: IterAdapter<In, Next> = Arc::new(move |it| adapt_b(adapt_a(it)));
            let (attrs_a, attrs_b) = (&a.attributes, &b.attributes);
            let name = format!(
                "{}.{}",
                attrs_a.name().unwrap_or("step"),
                attrs_b.name().unwrap_or("step")
            );
            let attributes = attrs_a.clone().and(attrs_b).with_name(name);
            let node = step_node("fused", step.clone(), attributes.clone());
            let (left, right) = (self.linear.mat, next.linear.mat);
            return Flow {
                linear: Linear {
                    nodes: vec![node],
                    values: 1,
                    mat: Arc::new(move |v| {
                        // The fused node made one `()`; each side had one.
                        let mut one = [Some(Box::new(()) as Box<dyn std::any::Any + Send>)];
                        let l = left(v);
                        combine(l, right(&mut one))
                    }),
                },
                step: Some(Simple {
                    step,
                    adapt,
                    attributes,
                }),
                _types: PhantomData,
            };
        }
        let step = if self.linear.nodes.is_empty() {
            retype_step(next.step)
        } else {
            None
        };
        Flow {
            linear: self.linear.then(next.linear, combine),
            step,
            _types: PhantomData,
        }
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
        Sink::from_parts(self.linear.then(sink.linear, combine), SinkKind::Graph)
    }

    /// Transform the materialized value.
    pub fn map_materialized_value<M2: 'static>(
        self,
        f: impl Fn(Mat) -> M2 + Send + Sync + 'static,
    ) -> Flow<In, Out, M2> {
        Flow::from_linear(self.linear.map_mat(f))
    }

    /// Name the last stage (used in errors and actor names).
    pub fn named(self, name: impl Into<std::borrow::Cow<'static, str>>) -> Self {
        let name = name.into();
        self.with_attributes(Attributes::named(name))
    }

    /// Set attributes on the last stage.
    pub fn with_attributes(self, attributes: Attributes) -> Self {
        let step = self.step.map(|simple| Simple {
            attributes: simple.attributes.and(&attributes),
            ..simple
        });
        Self {
            linear: self.linear.with_last_attributes(|a| a.and(&attributes)),
            step,
            _types: PhantomData,
        }
    }

    /// End the island here: what comes after runs on another actor, joined
    /// by a bounded buffer (the next stage's input buffer, 16 by default)
    /// that requests in batches. See [`Source::async_boundary`](crate::Source::async_boundary) for sizing
    /// that buffer for throughput.
    pub fn async_boundary(mut self) -> Self {
        self.linear
            .nodes
            .push(Node::Boundary(Arc::new(Boundary::<Out>::new())));
        self.step = None;
        self
    }
}

/// A step typed `Out -> Next` seen as `In -> Next` when `In == Out` (the
/// identity flow before it). The types are equal exactly when the left
/// flow has no nodes, which only the identity flow has.
fn retype_step<A: 'static, B: 'static, C: 'static>(
    step: Option<Simple<B, C>>,
) -> Option<Simple<A, C>> {
    let any: Box<dyn std::any::Any> = Box::new(step?);
    any.downcast::<Simple<A, C>>().ok().map(|simple| *simple)
}

impl<In, Out, Mat> std::fmt::Debug for Flow<In, Out, Mat> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Flow")
            .field("stages", &self.linear.nodes.len())
            .field("fused", &self.step.is_some())
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
