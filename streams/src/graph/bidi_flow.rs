//! [`BidiFlow`]: a blueprint with two directions, a layer of a protocol.

use std::marker::PhantomData;
use std::sync::Arc;

use super::bidi::BidiPorts;
use super::builder::GraphBuilder;
use crate::blueprint::{Flow, Keep};
use crate::ops::FlowOps;
use crate::plan::graph::{Graph, Kind, Node};
use crate::stage::{Attributes, BidiShape, GraphStage};

const WIRED: &str = "a bidi composition has every other port connected";

/// The element types of a [`BidiFlow`], as a marker.
type Directions<I1, O1, I2, O2> = PhantomData<(fn(I1) -> O1, fn(I2) -> O2)>;

/// A blueprint with two open directions (Akka's `BidiFlow`): elements go
/// `I1 -> O1` one way and `I2 -> O2` the other, as a protocol layer
/// encodes outgoing messages and decodes incoming ones. Stack layers with
/// [`atop`](Self::atop), close the stack with a flow with
/// [`join`](Self::join), or add one to a
/// [`GraphBuilder`] with
/// [`bidi`](crate::graph::GraphBuilder::bidi). Immutable, and runs any
/// number of times, like every blueprint.
///
/// # Examples
///
/// A codec layer joined to an echo: what goes down encoded comes back up
/// decoded.
///
/// ```
/// use weir_streams::prelude::*;
/// use weir_streams::BidiFlow;
///
/// let system = weir_actor::ActorSystem::new("bidi").unwrap();
/// let mat = Materializer::new(&system);
/// let codec = BidiFlow::from_functions(|n: u32| n.to_string(), |s: String| s.parse::<u32>().unwrap());
/// let echo = Flow::<String>::new().map(|s| format!("{s}0"));
/// let got = Source::range(1u32..=3).via(codec.join(echo)).run_with(Sink::collect(), &mat);
/// assert_eq!(got.wait(), Ok(vec![10, 20, 30]));
/// system.terminate().wait().unwrap();
/// ```
#[must_use = "a BidiFlow does nothing until it is part of a graph that is run"]
pub struct BidiFlow<I1, O1, I2, O2, Mat = ()> {
    pub(crate) graph: Graph<Mat>,
    _types: Directions<I1, O1, I2, O2>,
}

impl<I1, O1, I2, O2, Mat> Clone for BidiFlow<I1, O1, I2, O2, Mat> {
    fn clone(&self) -> Self {
        Self {
            graph: self.graph.clone(),
            _types: PhantomData,
        }
    }
}

impl<I1, O1, I2, O2, Mat> std::fmt::Debug for BidiFlow<I1, O1, I2, O2, Mat> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BidiFlow")
            .field("stages", &self.graph.nodes.len())
            .finish()
    }
}

impl<I1, O1, I2, O2> BidiFlow<I1, O1, I2, O2, ()>
where
    I1: Send + 'static,
    O1: Send + 'static,
    I2: Send + 'static,
    O2: Send + 'static,
{
    /// `top` for the first direction, `bottom` for the second; their
    /// materialized values are dropped (see [`from_flows_mat`](Self::from_flows_mat)).
    pub fn from_flows<M1: 'static, M2: 'static>(
        top: Flow<I1, O1, M1>,
        bottom: Flow<I2, O2, M2>,
    ) -> Self {
        Self::from_flows_mat(top, bottom, |_, _| ())
    }

    /// `f` on each element of the first direction, `g` on each of the
    /// second.
    pub fn from_functions<F, G>(f: F, g: G) -> Self
    where
        F: FnMut(I1) -> O1 + Clone + Send + Sync + 'static,
        G: FnMut(I2) -> O2 + Clone + Send + Sync + 'static,
    {
        Self::from_flows(Flow::new().map(f), Flow::new().map(g))
    }
}

impl<I1, O1, I2, O2, Mat> BidiFlow<I1, O1, I2, O2, Mat>
where
    I1: Send + 'static,
    O1: Send + 'static,
    I2: Send + 'static,
    O2: Send + 'static,
    Mat: 'static,
{
    /// A bidirectional flow made of one custom stage with a [`BidiShape`].
    pub fn from_graph<S>(stage: S) -> Self
    where
        S: GraphStage<Shape = BidiShape<I1, O1, I2, O2>, Mat = Mat>,
    {
        let kind = Kind::Stage(Arc::new(stage));
        Self::from_graph_parts(Graph::single(Node::new(kind, Attributes::new())))
    }

    /// `top` for the first direction, `bottom` for the second, their
    /// materialized values combined by `combine`.
    pub fn from_flows_mat<M1: 'static, M2: 'static>(
        top: Flow<I1, O1, M1>,
        bottom: Flow<I2, O2, M2>,
        combine: impl Fn(M1, M2) -> Mat + Send + Sync + 'static,
    ) -> Self {
        let mut b = GraphBuilder::new();
        let ((in1, out1), k1) = b.flow_mat(top);
        let ((in2, out2), k2) = b.flow_mat(bottom);
        let ports = BidiPorts {
            in1,
            out1,
            in2,
            out2,
        };
        b.build_bidi(ports, move |m| combine(m.take(&k1), m.take(&k2)))
            .expect(WIRED)
    }

    pub(crate) fn from_graph_parts(graph: Graph<Mat>) -> Self {
        Self {
            graph,
            _types: PhantomData,
        }
    }

    /// This layer above `below`: the first direction goes through this
    /// layer, then `below`; the second through `below`, then this one.
    /// The materialized value is this layer's.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// use weir_streams::BidiFlow;
    ///
    /// let system = weir_actor::ActorSystem::new("atop").unwrap();
    /// let mat = Materializer::new(&system);
    /// let add = BidiFlow::from_functions(|x: u32| x + 1, |x: u32| x - 1);
    /// let double = BidiFlow::from_functions(|x: u32| x * 2, |x: u32| x / 2);
    /// // Down: (x + 1) * 2; up: y / 2 - 1. The stack is the identity.
    /// let stack = add.atop(double);
    /// let got = Source::range(0u32..4).via(stack.join(Flow::new())).run_with(Sink::collect(), &mat);
    /// assert_eq!(got.wait(), Ok(vec![0, 1, 2, 3]));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn atop<P1, P2, M2>(
        self,
        below: BidiFlow<O1, P1, P2, I2, M2>,
    ) -> BidiFlow<I1, P1, P2, O2, Mat>
    where
        P1: Send + 'static,
        P2: Send + 'static,
        M2: 'static,
    {
        self.atop_mat(below, Keep::left)
    }

    /// As [`atop`](Self::atop), with the materialized values combined by `combine`.
    pub fn atop_mat<P1, P2, M2, M3>(
        self,
        below: BidiFlow<O1, P1, P2, I2, M2>,
        combine: impl Fn(Mat, M2) -> M3 + Send + Sync + 'static,
    ) -> BidiFlow<I1, P1, P2, O2, M3>
    where
        P1: Send + 'static,
        P2: Send + 'static,
        M2: 'static,
        M3: 'static,
    {
        let mut b = GraphBuilder::new();
        let (top, k1) = b.bidi_mat(self);
        let (bottom, k2) = b.bidi_mat(below);
        b.connect(top.out1, bottom.in1).expect(WIRED);
        b.connect(bottom.out2, top.in2).expect(WIRED);
        let ports = BidiPorts {
            in1: top.in1,
            out1: bottom.out1,
            in2: bottom.in2,
            out2: top.out2,
        };
        b.build_bidi(ports, move |m| combine(m.take(&k1), m.take(&k2)))
            .expect(WIRED)
    }

    /// Close the bottom of this layer with `flow` (its first direction's
    /// output goes through `flow` into the second direction's input): a
    /// flow from `I1` to `O2`. The materialized value is this layer's.
    pub fn join<M2: 'static>(self, flow: Flow<O1, I2, M2>) -> Flow<I1, O2, Mat> {
        self.join_mat(flow, Keep::left)
    }

    /// As [`join`](Self::join), with the materialized values combined by `combine`.
    pub fn join_mat<M2: 'static, M3: 'static>(
        self,
        flow: Flow<O1, I2, M2>,
        combine: impl Fn(Mat, M2) -> M3 + Send + Sync + 'static,
    ) -> Flow<I1, O2, M3> {
        let mut b = GraphBuilder::new();
        let (bidi, k1) = b.bidi_mat(self);
        let ((inlet, out), k2) = b.flow_mat(flow);
        b.connect(bidi.out1, inlet).expect(WIRED);
        b.connect(out, bidi.in2).expect(WIRED);
        b.build_flow(bidi.in1, bidi.out2, move |m| {
            combine(m.take(&k1), m.take(&k2))
        })
        .expect(WIRED)
    }

    /// The same layer upside down: its second direction becomes the first.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// use weir_streams::BidiFlow;
    ///
    /// let system = weir_actor::ActorSystem::new("reversed").unwrap();
    /// let mat = Materializer::new(&system);
    /// let codec = BidiFlow::from_functions(|n: u32| n.to_string(), |s: String| s.len());
    /// let got = Source::single("abc".to_owned())
    ///     .via(codec.reversed().join(Flow::new().map(|n: usize| n as u32 * 7)))
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(got.wait(), Ok(vec!["21".to_owned()]));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn reversed(self) -> BidiFlow<I2, O2, I1, O1, Mat> {
        let mut graph = self.graph;
        graph.inlets.swap(0, 1);
        graph.outlets.swap(0, 1);
        BidiFlow::from_graph_parts(graph)
    }

    /// Transform the materialized value.
    pub fn map_materialized_value<M2: 'static>(
        self,
        f: impl Fn(Mat) -> M2 + Send + Sync + 'static,
    ) -> BidiFlow<I1, O1, I2, O2, M2> {
        BidiFlow::from_graph_parts(self.graph.map_mat(f))
    }
}

impl<In: Send + 'static, Out: Send + 'static, Mat: 'static> Flow<In, Out, Mat> {
    /// Close the top of `bidi` with this flow: `bidi`'s second direction
    /// feeds this flow, whose output feeds `bidi`'s first direction (Akka's
    /// `Flow.join(BidiFlow)`). The materialized value is this flow's.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// use weir_streams::BidiFlow;
    ///
    /// let system = weir_actor::ActorSystem::new("flow-join").unwrap();
    /// let mat = Materializer::new(&system);
    /// let codec = BidiFlow::from_functions(|s: String| s.len(), |n: u32| n.to_string());
    /// let server = Flow::<String>::new().map(|s| s.repeat(2)).join_bidi(codec);
    /// let got = Source::single(21u32).via(server).run_with(Sink::collect(), &mat);
    /// assert_eq!(got.wait(), Ok(vec![4]));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn join_bidi<I2, O2, M2>(self, bidi: BidiFlow<Out, I2, O2, In, M2>) -> Flow<O2, I2, Mat>
    where
        I2: Send + 'static,
        O2: Send + 'static,
        M2: 'static,
    {
        bidi.reversed().join_mat(self, Keep::right)
    }
}
