//! [`Sink`]: a blueprint with one input.

use std::marker::PhantomData;
use std::sync::Arc;

use super::linear::Linear;
use crate::Attributes;
use crate::fusion::{Consumer, ConsumerFactory, ConsumerStage};
use crate::interpreter::Node;
use crate::pull::{Pull, PullFactory};
use crate::stage::{GraphStage, SinkShape};

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
    pub(crate) linear: Linear<Mat>,
    pub(crate) kind: SinkKind<In>,
    _in: PhantomData<fn(In)>,
}

pub(crate) enum SinkKind<In> {
    Graph,
    /// Exactly one folding stage: it fuses with an iterator source.
    Consumer(ConsumerFactory<In>),
    /// One stage that can also run a fused source itself (its value is the
    /// sink's materialized value, already mapped).
    Pull(PullFactory<In>),
}

impl<In> Clone for SinkKind<In> {
    fn clone(&self) -> Self {
        match self {
            SinkKind::Graph => SinkKind::Graph,
            SinkKind::Consumer(c) => SinkKind::Consumer(Arc::clone(c)),
            SinkKind::Pull(p) => SinkKind::Pull(Arc::clone(p)),
        }
    }
}

impl<In, Mat> Clone for Sink<In, Mat> {
    fn clone(&self) -> Self {
        Self {
            linear: self.linear.clone(),
            kind: self.kind.clone(),
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
        Self::from_parts(Linear::single(Node::stage(stage), 1), SinkKind::Graph)
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
        Self::from_parts(self.linear, SinkKind::Pull(factory))
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
        let node = Node::Stage {
            stage: Arc::new(ConsumerStage {
                name,
                factory: Arc::clone(&factory),
            }),
            attributes: Attributes::named(name),
        };
        Self::from_parts(Linear::single(node, 1), SinkKind::Consumer(factory))
    }
}

impl<In: 'static, Mat: 'static> Sink<In, Mat> {
    pub(crate) fn from_parts(linear: Linear<Mat>, kind: SinkKind<In>) -> Self {
        Self {
            linear,
            kind,
            _in: PhantomData,
        }
    }

    /// Transform the materialized value.
    pub fn map_materialized_value<M2: 'static>(
        self,
        f: impl Fn(Mat) -> M2 + Send + Sync + 'static,
    ) -> Sink<In, M2> {
        // A consumer's value goes through the blueprint's mat function, so
        // it still fuses; a pull's value is the sink's, so it is mapped too.
        let f = Arc::new(f);
        let kind = match self.kind {
            SinkKind::Pull(pull) => {
                let f = Arc::clone(&f);
                SinkKind::Pull(Arc::new(move |source| {
                    let value = pull(source)
                        .downcast::<Mat>()
                        .expect("a pull gives the sink's materialized value");
                    Box::new(f(*value)) as Box<dyn std::any::Any>
                }))
            }
            SinkKind::Graph => SinkKind::Graph,
            SinkKind::Consumer(consumer) => SinkKind::Consumer(consumer),
        };
        Sink::from_parts(self.linear.map_mat(move |m| f(m)), kind)
    }

    /// Name the sink's stage (used in errors and actor names).
    pub fn named(self, name: impl Into<std::borrow::Cow<'static, str>>) -> Self {
        self.with_attributes(Attributes::named(name))
    }

    /// Set attributes on the sink's first stage.
    pub fn with_attributes(mut self, attributes: Attributes) -> Self {
        if let Some(Node::Stage { attributes: a, .. }) = self.linear.nodes.first_mut() {
            *a = std::mem::take(a).and(&attributes);
        }
        self
    }
}

impl<In, Mat> std::fmt::Debug for Sink<In, Mat> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sink")
            .field("stages", &self.linear.nodes.len())
            .field("fused", &matches!(self.kind, SinkKind::Consumer(_)))
            .finish()
    }
}
