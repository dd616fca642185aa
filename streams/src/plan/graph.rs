//! The one representation of every blueprint: a graph of nodes (stages
//! with port counts, and async boundaries), edges between their ports,
//! the ports left open, and a function that picks the materialized value
//! out of the values the nodes produced.
//!
//! Constructors only record what the user asked for, as nodes of one
//! [`Kind`] each; what runs is decided at materialization by the planner
//! (`crate::plan`), which fuses and cuts islands.

use std::any::Any;
use std::borrow::Cow;
use std::sync::Arc;

use arrayvec::ArrayVec;

use super::BoundaryFactory;
use crate::fusion::{
    ConsumerNode, FanInNode, FlattenNode, FoldNode, HostNode, IterNode, PullNode, SplitNode,
    StepNode,
};
use crate::stage::Attributes;
use crate::stage::ErasedStage;

/// The materialized values of a run, one per node in node order; each
/// blueprint's function takes the values of its own nodes.
pub(crate) type MatValues<'a> = &'a mut [Option<Box<dyn Any + Send>>];

pub(crate) use super::mat::MatFn;

/// What a node is, as its constructor recorded it.
#[derive(Clone)]
pub(crate) enum Kind {
    /// A stage the planner does not look into.
    Stage(Arc<dyn ErasedStage>),
    /// A source that is a batch iterator (or poll function).
    Iter(Arc<dyn IterNode>),
    /// A simple element-wise operator.
    Step(Arc<dyn StepNode>),
    /// A folding sink.
    Consumer(Arc<dyn ConsumerNode>),
    /// A source stage that can also run a folding sink inside itself.
    Host(Arc<dyn ErasedStage>, Arc<dyn HostNode>),
    /// An async boundary: the graph is cut into islands here.
    Boundary(Arc<dyn BoundaryFactory>),
}

impl Kind {
    /// Inlets and outlets.
    pub(crate) fn ports(&self) -> (u16, u16) {
        match self {
            Kind::Stage(stage) | Kind::Host(stage, _) => stage.ports(),
            Kind::Iter(_) => (0, 1),
            Kind::Step(_) | Kind::Boundary(_) => (1, 1),
            Kind::Consumer(_) => (1, 0),
        }
    }

    /// The node as an ordinary stage (`None` for a boundary).
    pub(crate) fn stage(&self) -> Option<Arc<dyn ErasedStage>> {
        match self {
            Kind::Stage(stage) | Kind::Host(stage, _) => Some(Arc::clone(stage)),
            Kind::Iter(iter) => Some(iter.stage()),
            Kind::Step(step) => Some(step.stage()),
            Kind::Consumer(consumer) => Some(consumer.stage()),
            Kind::Boundary(_) => None,
        }
    }
}

#[derive(Clone)]
pub(crate) struct Node {
    pub(crate) kind: Kind,
    /// What the user set (a name at least, for the fusable kinds).
    pub(crate) attributes: Attributes,
    /// Set on the first node of a sink made with `Sink::with_pull`: this
    /// node and everything after it may be replaced by the pull.
    pub(crate) pull: Option<Arc<dyn PullNode>>,
    /// What the planner may fuse this node into beyond its kind.
    pub(crate) fuses: Option<Fuses>,
}

/// How a node of an opaque stage can fuse with its neighbours.
#[derive(Clone)]
pub(crate) enum Fuses {
    /// A junction that runs as one fused iterator when all its inputs are
    /// fused iterator sources (the planner's fan-in rule).
    FanIn(Arc<dyn FanInNode>),
    /// A stage that makes several elements of each one (`flat_map_concat`,
    /// a framing stage cutting chunks into frames) and can run a folding
    /// sink after it inside itself (the planner's flatten rule).
    Flatten(Arc<dyn FlattenNode>),
    /// A flow `fold`, which a substream made of simple operators and the
    /// fold runs as a per-substream consumer (`ops::substreams::direct`).
    Fold(Arc<dyn FoldNode>),
    /// A splitting stage (`group_by`, `split_when`, `split_after`) that
    /// can take its elements from an iterator source before it itself
    /// (the planner's split rule).
    Split(Arc<dyn SplitNode>),
}

impl Node {
    pub(crate) fn new(kind: Kind, attributes: Attributes) -> Self {
        Self {
            kind,
            attributes,
            pull: None,
            fuses: None,
        }
    }

    /// The node's attributes over its stage's defaults.
    pub(crate) fn full_attributes(&self) -> Attributes {
        match self.kind.stage() {
            Some(stage) => crate::stage::stage_attributes(&*stage, &self.attributes),
            None => self.attributes.clone(),
        }
    }

    /// The name errors and actor names give the node. Fusable nodes are
    /// named by their constructors, so this makes no stage for them.
    pub(crate) fn name(&self) -> Cow<'_, str> {
        if let Some(name) = self.attributes.name() {
            return Cow::Borrowed(name);
        }
        match self.kind.stage() {
            Some(stage) => Cow::Owned(stage.name().to_owned()),
            None => Cow::Borrowed("async-boundary"),
        }
    }
}

/// A port of a node: `(node, port number)`.
pub(crate) type PortRef = (u32, u16);

/// The open ports of one side of a blueprint. Sources, flows and sinks
/// have one port a side and junctions a few, so up to two are kept
/// inline: building a linear blueprint allocates nothing for its ports.
#[derive(Clone, Debug)]
pub(crate) enum Ports {
    Few(ArrayVec<PortRef, 2>),
    Many(Vec<PortRef>),
}

impl Default for Ports {
    fn default() -> Self {
        Self::Few(ArrayVec::new())
    }
}

impl Ports {
    pub(crate) fn push(&mut self, port: PortRef) {
        match self {
            Self::Few(few) => {
                if let Err(full) = few.try_push(port) {
                    let mut many = few.to_vec();
                    many.push(full.element());
                    *self = Self::Many(many);
                }
            }
            Self::Many(many) => many.push(port),
        }
    }

    pub(crate) fn remove(&mut self, index: usize) -> PortRef {
        match self {
            Self::Few(few) => few.remove(index),
            Self::Many(many) => many.remove(index),
        }
    }
}

impl std::ops::Deref for Ports {
    type Target = [PortRef];

    fn deref(&self) -> &[PortRef] {
        match self {
            Self::Few(few) => few,
            Self::Many(many) => many,
        }
    }
}

impl std::ops::DerefMut for Ports {
    fn deref_mut(&mut self) -> &mut [PortRef] {
        match self {
            Self::Few(few) => few,
            Self::Many(many) => many,
        }
    }
}

impl Extend<PortRef> for Ports {
    fn extend<I: IntoIterator<Item = PortRef>>(&mut self, ports: I) {
        for port in ports {
            self.push(port);
        }
    }
}

impl FromIterator<PortRef> for Ports {
    fn from_iter<I: IntoIterator<Item = PortRef>>(ports: I) -> Self {
        let mut all = Self::default();
        all.extend(ports);
        all
    }
}

/// An outlet joined to an inlet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Edge {
    pub(crate) from: PortRef,
    pub(crate) to: PortRef,
}

pub(crate) struct Graph<M> {
    pub(crate) nodes: Vec<Node>,
    pub(crate) edges: Vec<Edge>,
    /// Open inlets, in the blueprint's shape order.
    pub(crate) inlets: Ports,
    /// Open outlets, in the blueprint's shape order.
    pub(crate) outlets: Ports,
    pub(crate) mat: MatFn<M>,
}

impl<M> Clone for Graph<M> {
    fn clone(&self) -> Self {
        Self {
            nodes: self.nodes.clone(),
            edges: self.edges.clone(),
            inlets: self.inlets.clone(),
            outlets: self.outlets.clone(),
            mat: self.mat.clone(),
        }
    }
}

/// Take value `index` as an `M`.
pub(crate) fn take_value<M: 'static>(values: MatValues<'_>, index: usize) -> M {
    *values[index]
        .take()
        .expect("each materialized value is taken once")
        .downcast::<M>()
        .expect("the materialized value has its stage's type")
}

fn node_index(index: usize) -> u32 {
    u32::try_from(index).expect("fewer than 2^32 nodes")
}

impl<M: 'static> Graph<M> {
    /// The graph with no nodes (the identity flow), materializing `()`.
    pub(crate) fn empty() -> Graph<()> {
        Graph {
            nodes: Vec::new(),
            edges: Vec::new(),
            inlets: Ports::default(),
            outlets: Ports::default(),
            mat: MatFn::plain(|_| ()),
        }
    }

    /// One node with all its ports open; its value is the `M`.
    pub(crate) fn single(node: Node) -> Self {
        let (ins, outs) = node.kind.ports();
        Self {
            nodes: vec![node],
            edges: Vec::new(),
            inlets: (0..ins).map(|p| (0, p)).collect(),
            outlets: (0..outs).map(|p| (0, p)).collect(),
            mat: MatFn::plain(|v| take_value::<M>(v, 0)),
        }
    }

    /// `self` then `next`: `self`'s first open outlet joined to `next`'s
    /// first open inlet (an empty side joins nothing), the values combined
    /// by `combine`.
    pub(crate) fn then<M2: 'static, M3: 'static>(
        self,
        next: Graph<M2>,
        combine: impl Fn(M, M2) -> M3 + Send + Sync + 'static,
    ) -> Graph<M3> {
        let split = self.nodes.len();
        let offset = node_index(split);
        let shift = |(n, p): PortRef| (n + offset, p);
        let (left, right) = (self.mat, next.mat);
        let mut nodes = self.nodes;
        nodes.extend(next.nodes);
        let mut edges = self.edges;
        edges.extend(next.edges.iter().map(|e| Edge {
            from: shift(e.from),
            to: shift(e.to),
        }));
        let mut inlets = self.inlets;
        let mut outlets = self.outlets;
        let mut next_inlets = next.inlets.iter().copied().map(shift);
        let next_outlets = next.outlets.iter().copied().map(shift);
        if split > 0
            && !outlets.is_empty()
            && let Some(to) = next_inlets.next()
        {
            let from = outlets.remove(0);
            edges.push(Edge { from, to });
        }
        inlets.extend(next_inlets);
        outlets.extend(next_outlets);
        Graph {
            nodes,
            edges,
            inlets,
            outlets,
            mat: left.pair(split, &right, combine),
        }
    }

    pub(crate) fn map_mat<M2: 'static>(
        self,
        f: impl Fn(M) -> M2 + Send + Sync + 'static,
    ) -> Graph<M2> {
        Graph {
            nodes: self.nodes,
            edges: self.edges,
            inlets: self.inlets,
            outlets: self.outlets,
            mat: self.mat.map(f),
        }
    }

    /// Apply `f` to the attributes of the node of the first open outlet
    /// (the last stage of a source or flow).
    pub(crate) fn with_outlet_attributes(
        mut self,
        f: impl FnOnce(Attributes) -> Attributes,
    ) -> Self {
        if let Some(&(node, _)) = self.outlets.first() {
            let attributes = &mut self.nodes[node as usize].attributes;
            *attributes = f(std::mem::take(attributes));
        }
        self
    }

    /// Apply `f` to the attributes of the node of the first open inlet
    /// (the first stage of a sink).
    pub(crate) fn with_inlet_attributes(
        mut self,
        f: impl FnOnce(Attributes) -> Attributes,
    ) -> Self {
        if let Some(&(node, _)) = self.inlets.first() {
            let attributes = &mut self.nodes[node as usize].attributes;
            *attributes = f(std::mem::take(attributes));
        }
        self
    }
}
