//! [`GraphBuilder`]: Akka's GraphDSL in Rust terms.

use std::any::Any;
use std::collections::HashSet;
use std::marker::PhantomData;
use std::sync::Arc;

mod fan_in_ports;
mod handles;
mod shape_ports;

pub use handles::{In, MatKey, Mats, Out, StagePorts};

use crate::blueprint::{Flow, RunnableGraph, Sink, Source};
use crate::error::GraphError;
use crate::ops::FlowOps;
use crate::plan::graph::{Edge, Fuses, Graph, Kind, MatFn, MatValues, Node, PortRef};
use crate::stage::{Attributes, GraphStage};
use crate::sync::{Ordering, StaticAtomicU64};

static BUILDERS: StaticAtomicU64 = StaticAtomicU64::new(0);

/// Builds a graph of stages and nested blueprints: add them, connect their
/// typed ports, then close the graph into a [`RunnableGraph`] or keep
/// ports open to make a [`Source`], [`Flow`] or [`Sink`].
///
/// Connecting an outlet to an inlet of another element type does not
/// compile. A port connected twice, a port of another builder, and (when
/// building) a port left unconnected are a [`GraphError`]. Each added
/// blueprint's materialized value is reached through the [`MatKey`] it
/// was added with; the function given to `build_*` combines them, once per
/// run. As in Akka, every added blueprint's value is made in each run, in
/// the order they were added, before that function runs, whether it takes
/// the value or not (a `map_materialized_value` inside always runs). A
/// built graph runs any number of times, each run independent.
///
/// Cycles are allowed; as in Akka, a cycle without a buffer in it may
/// deadlock (every stage in it waits for the next one's demand).
///
/// # Examples
///
/// A broadcast to two flows whose results merge into one sink:
///
/// ```
/// use weir_streams::graph::{Broadcast, GraphBuilder, Merge};
/// use weir_streams::prelude::*;
///
/// # fn main() -> Result<(), weir_streams::GraphError> {
/// let system = weir_actor::ActorSystem::new("graph").unwrap();
/// let materializer = Materializer::new(&system);
/// let mut b = GraphBuilder::new();
/// let source = b.source(Source::range(1u64..=3));
/// let broadcast = b.add(Broadcast::<u64, 2>::new());
/// let merge = b.add(Merge::<u64, 2>::new());
/// let tens = b.flow(Flow::new().map(|x: u64| x * 10));
/// let hundreds = b.flow(Flow::new().map(|x: u64| x * 100));
/// let (sink, sum) = b.sink_mat(Sink::fold(0u64, |a, x| a + x));
/// let [to_tens, to_hundreds] = broadcast.outs();
/// let [from_tens, from_hundreds] = merge.ins();
/// b.connect(source, broadcast.inlet())?;
/// b.connect(to_tens, tens.0)?;
/// b.connect(to_hundreds, hundreds.0)?;
/// b.connect(tens.1, from_tens)?;
/// b.connect(hundreds.1, from_hundreds)?;
/// b.connect(merge.out(), sink)?;
/// let graph = b.build(move |mats| mats.take(&sum))?;
/// assert_eq!(graph.run(&materializer).wait(), Ok(660));
/// assert_eq!(graph.run(&materializer).wait(), Ok(660));
/// system.terminate().wait().unwrap();
/// # Ok(())
/// # }
/// ```
#[must_use = "a GraphBuilder does nothing until it is built and run"]
pub struct GraphBuilder {
    id: u64,
    nodes: Vec<Node>,
    edges: Vec<Edge>,
    /// Every port of every added node or blueprint that was open when added.
    inlets: Vec<PortRef>,
    outlets: Vec<PortRef>,
    connected_in: HashSet<PortRef>,
    connected_out: HashSet<PortRef>,
    /// Every added blueprint's value function, in the order added.
    imports: Vec<Import>,
}

/// An added blueprint's value function, its value type erased.
type ValueFn = Arc<dyn Fn(MatValues<'_>) -> Box<dyn Any> + Send + Sync>;

/// An added blueprint's nodes and the function making its value of them.
struct Import {
    offset: usize,
    len: usize,
    mat: ValueFn,
}

impl Default for GraphBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl GraphBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self {
            id: BUILDERS.fetch_add(1, Ordering::Relaxed),
            nodes: Vec::new(),
            edges: Vec::new(),
            inlets: Vec::new(),
            outlets: Vec::new(),
            connected_in: HashSet::new(),
            connected_out: HashSet::new(),
            imports: Vec::new(),
        }
    }

    /// Add a blueprint graph; its open ports and its value's key.
    pub(super) fn import<M: 'static>(
        &mut self,
        graph: Graph<M>,
    ) -> (Vec<PortRef>, Vec<PortRef>, MatKey<M>) {
        let offset = self.nodes.len();
        let shift = u32::try_from(offset).expect("fewer than 2^32 nodes");
        let at = |(n, p): PortRef| (n + shift, p);
        let key = MatKey {
            builder: self.id,
            index: self.imports.len(),
            offset,
            _m: PhantomData,
        };
        let mat = graph.mat;
        self.imports.push(Import {
            offset,
            len: graph.nodes.len(),
            mat: Arc::new(move |values| Box::new(mat(values))),
        });
        self.nodes.extend(graph.nodes);
        self.edges.extend(graph.edges.iter().map(|e| Edge {
            from: at(e.from),
            to: at(e.to),
        }));
        let inlets: Vec<PortRef> = graph.inlets.iter().copied().map(at).collect();
        let outlets: Vec<PortRef> = graph.outlets.iter().copied().map(at).collect();
        self.inlets.extend(&inlets);
        self.outlets.extend(&outlets);
        (inlets, outlets, key)
    }

    pub(super) fn in_port<T>(&self, port: PortRef) -> In<T> {
        In {
            builder: self.id,
            port,
            _t: PhantomData,
        }
    }

    pub(super) fn out_port<T>(&self, port: PortRef) -> Out<T> {
        Out {
            builder: self.id,
            port,
            _t: PhantomData,
        }
    }

    /// Add a custom stage or junction; its ports, typed by its shape.
    pub fn add<S: GraphStage>(&mut self, stage: S) -> StagePorts<S::Shape> {
        self.add_mat(stage).0
    }

    /// Add a custom stage or junction; its ports and its value's key.
    pub fn add_mat<S: GraphStage>(&mut self, stage: S) -> (StagePorts<S::Shape>, MatKey<S::Mat>) {
        self.add_mat_with_attributes(stage, Attributes::new())
    }

    /// Add a custom stage or junction with `attributes` (a name, a
    /// supervision strategy, an input buffer, a dispatcher); its ports.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::graph::{GraphBuilder, Partition};
    /// use weir_streams::prelude::*;
    /// use weir_streams::{Attributes, SupervisionStrategy};
    ///
    /// # fn main() -> Result<(), weir_streams::GraphError> {
    /// let system = weir_actor::ActorSystem::new("builder-attributes").unwrap();
    /// let mat = Materializer::new(&system);
    /// let mut b = GraphBuilder::new();
    /// let source = b.source(Source::from_iter(vec![4u32, 0, 3]));
    /// // 12 / 0 panics: under a resuming strategy that element is dropped.
    /// let resume = Attributes::named("by-share")
    ///     .with_supervision_strategy(SupervisionStrategy::resuming());
    /// let split = b.add_with_attributes(
    ///     Partition::<u32, 2, _>::new(|x: &u32| (12 / x % 2) as usize),
    ///     resume,
    /// );
    /// let (even, even_key) = b.sink_mat(Sink::collect());
    /// let (odd, odd_key) = b.sink_mat(Sink::collect());
    /// let [to_even, to_odd] = split.outs();
    /// b.connect(source, split.inlet())?;
    /// b.connect(to_even, even)?;
    /// b.connect(to_odd, odd)?;
    /// let (even, odd) = b.build(move |m| (m.take(&even_key), m.take(&odd_key)))?.run(&mat);
    /// assert_eq!(even.wait(), Ok(vec![3])); // 12 / 3 = 4
    /// assert_eq!(odd.wait(), Ok(vec![4])); // 12 / 4 = 3
    /// system.terminate().wait().unwrap();
    /// # Ok(())
    /// # }
    /// ```
    pub fn add_with_attributes<S: GraphStage>(
        &mut self,
        stage: S,
        attributes: Attributes,
    ) -> StagePorts<S::Shape> {
        self.add_mat_with_attributes(stage, attributes).0
    }

    /// [`add_with_attributes`](Self::add_with_attributes), also giving the
    /// stage's value's key.
    pub fn add_mat_with_attributes<S: GraphStage>(
        &mut self,
        stage: S,
        attributes: Attributes,
    ) -> (StagePorts<S::Shape>, MatKey<S::Mat>) {
        let fuses = stage.fused_fan_in().map(|hint| Fuses::FanIn(hint.0));
        let mut node = Node::new(Kind::Stage(Arc::new(stage)), attributes);
        node.fuses = fuses;
        let (_, _, key) = self.import(Graph::<S::Mat>::single(node));
        let node = u32::try_from(key.offset).expect("fewer than 2^32 nodes");
        let ports = StagePorts {
            builder: self.id,
            node,
            _shape: PhantomData,
        };
        (ports, key)
    }

    /// Add a source; its outlet.
    pub fn source<T: Send + 'static, M: 'static>(&mut self, source: Source<T, M>) -> Out<T> {
        self.source_mat(source).0
    }

    /// Add a source; its outlet and its value's key.
    pub fn source_mat<T: Send + 'static, M: 'static>(
        &mut self,
        source: Source<T, M>,
    ) -> (Out<T>, MatKey<M>) {
        let (_, outlets, key) = self.import(source.graph);
        (self.out_port(outlets[0]), key)
    }

    /// Add a flow; its inlet and outlet.
    pub fn flow<I: Send + 'static, O: Send + 'static, M: 'static>(
        &mut self,
        flow: Flow<I, O, M>,
    ) -> (In<I>, Out<O>) {
        let (ports, _) = self.flow_mat(flow);
        ports
    }

    /// Add a flow; its inlet and outlet, and its value's key.
    pub fn flow_mat<I: Send + 'static, O: Send + 'static, M: 'static>(
        &mut self,
        flow: Flow<I, O, M>,
    ) -> ((In<I>, Out<O>), MatKey<M>) {
        // The identity flow has no node: give it one so it has ports.
        let graph = if flow.graph.nodes.is_empty() {
            Flow::<I>::new()
                .map(|x| x)
                .graph
                .then(flow.graph, |(), m| m)
        } else {
            flow.graph
        };
        let (inlets, outlets, key) = self.import(graph);
        ((self.in_port(inlets[0]), self.out_port(outlets[0])), key)
    }

    /// Add a sink; its inlet.
    pub fn sink<T: Send + 'static, M: 'static>(&mut self, sink: Sink<T, M>) -> In<T> {
        self.sink_mat(sink).0
    }

    /// Add a sink; its inlet and its value's key.
    pub fn sink_mat<T: Send + 'static, M: 'static>(
        &mut self,
        sink: Sink<T, M>,
    ) -> (In<T>, MatKey<M>) {
        let (inlets, _, key) = self.import(sink.graph);
        (self.in_port(inlets[0]), key)
    }

    fn describe(&self, (node, port): PortRef, side: &'static str) -> (String, &'static str, u16) {
        (self.nodes[node as usize].name().into_owned(), side, port)
    }

    /// Connect `from` to `to`.
    ///
    /// # Errors
    ///
    /// [`GraphError::AlreadyConnected`] when either port is connected
    /// already, [`GraphError::ForeignPort`] when either is of another builder.
    pub fn connect<T>(&mut self, from: Out<T>, to: In<T>) -> Result<(), GraphError> {
        if from.builder != self.id || to.builder != self.id {
            return Err(GraphError::ForeignPort);
        }
        for (port, side, done) in [
            (from.port, "outlet", &self.connected_out),
            (to.port, "inlet", &self.connected_in),
        ] {
            if done.contains(&port) {
                let (stage, side, port) = self.describe(port, side);
                return Err(GraphError::AlreadyConnected { stage, side, port });
            }
        }
        self.connected_out.insert(from.port);
        self.connected_in.insert(to.port);
        self.edges.push(Edge {
            from: from.port,
            to: to.port,
        });
        Ok(())
    }

    /// Every port connected except `open_in` and `open_out`.
    fn check(&self, open_in: &[PortRef], open_out: &[PortRef]) -> Result<(), GraphError> {
        for (all, connected, open, side) in [
            (&self.inlets, &self.connected_in, open_in, "inlet"),
            (&self.outlets, &self.connected_out, open_out, "outlet"),
        ] {
            for port in all {
                let left_open = open.contains(port);
                if connected.contains(port) == left_open {
                    let (stage, side, port) = self.describe(*port, side);
                    return Err(if left_open {
                        GraphError::AlreadyConnected { stage, side, port }
                    } else {
                        GraphError::Unconnected { stage, side, port }
                    });
                }
            }
        }
        Ok(())
    }

    pub(super) fn finish<M: 'static>(
        self,
        inlets: Vec<PortRef>,
        outlets: Vec<PortRef>,
        mat: impl Fn(&mut Mats<'_>) -> M + Send + Sync + 'static,
    ) -> Result<Graph<M>, GraphError> {
        self.check(&inlets, &outlets)?;
        let builder = self.id;
        let imports = self.imports;
        Ok(Graph {
            nodes: self.nodes,
            edges: self.edges,
            inlets: inlets.into_iter().collect(),
            outlets: outlets.into_iter().collect(),
            mat: MatFn::new(move |values| {
                // Every value is made, whether `mat` takes it or not.
                let mut made: Vec<Option<Box<dyn Any>>> = imports
                    .iter()
                    .map(|i| Some((i.mat)(&mut values[i.offset..i.offset + i.len])))
                    .collect();
                mat(&mut Mats {
                    builder,
                    values: &mut made,
                })
            }),
        })
    }

    pub(super) fn own<P>(&self, builder: u64, port: P) -> Result<P, GraphError> {
        if builder == self.id {
            Ok(port)
        } else {
            Err(GraphError::ForeignPort)
        }
    }

    /// Close the graph; `mat` makes its materialized value from the added
    /// blueprints' (see [`Mats::take`]).
    ///
    /// # Errors
    ///
    /// [`GraphError::Unconnected`] when a port is not connected.
    pub fn build<M: 'static>(
        self,
        mat: impl Fn(&mut Mats<'_>) -> M + Send + Sync + 'static,
    ) -> Result<RunnableGraph<M>, GraphError> {
        Ok(RunnableGraph::from_graph(self.finish(
            Vec::new(),
            Vec::new(),
            mat,
        )?))
    }

    /// A source whose elements leave through `out`, every other port connected.
    ///
    /// # Errors
    ///
    /// As [`build`](Self::build); [`GraphError::AlreadyConnected`] when
    /// `out` is connected, [`GraphError::ForeignPort`] when it is of
    /// another builder.
    pub fn build_source<T: Send + 'static, M: 'static>(
        self,
        out: Out<T>,
        mat: impl Fn(&mut Mats<'_>) -> M + Send + Sync + 'static,
    ) -> Result<Source<T, M>, GraphError> {
        let out = self.own(out.builder, out.port)?;
        Ok(Source::from_graph_parts(self.finish(
            Vec::new(),
            vec![out],
            mat,
        )?))
    }

    /// A flow from `inlet` to `out`, every other port connected.
    ///
    /// # Errors
    ///
    /// As [`build_source`](Self::build_source).
    pub fn build_flow<I: Send + 'static, O: Send + 'static, M: 'static>(
        self,
        inlet: In<I>,
        out: Out<O>,
        mat: impl Fn(&mut Mats<'_>) -> M + Send + Sync + 'static,
    ) -> Result<Flow<I, O, M>, GraphError> {
        let inlet = self.own(inlet.builder, inlet.port)?;
        let out = self.own(out.builder, out.port)?;
        Ok(Flow::from_graph_parts(self.finish(
            vec![inlet],
            vec![out],
            mat,
        )?))
    }

    /// A sink taking elements at `inlet`, every other port connected.
    ///
    /// # Errors
    ///
    /// As [`build_source`](Self::build_source).
    pub fn build_sink<T: Send + 'static, M: 'static>(
        self,
        inlet: In<T>,
        mat: impl Fn(&mut Mats<'_>) -> M + Send + Sync + 'static,
    ) -> Result<Sink<T, M>, GraphError> {
        let inlet = self.own(inlet.builder, inlet.port)?;
        Ok(Sink::from_graph_parts(self.finish(
            vec![inlet],
            Vec::new(),
            mat,
        )?))
    }
}

impl std::fmt::Debug for GraphBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraphBuilder")
            .field("stages", &self.nodes.len())
            .field("edges", &self.edges.len())
            .finish()
    }
}
