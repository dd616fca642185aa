//! Bidirectional blueprints in a [`GraphBuilder`]: add a [`BidiFlow`],
//! connect its four ports, or build one from a graph with four open ports.

use super::builder::{GraphBuilder, In, MatKey, Mats, Out};
use crate::error::GraphError;
use crate::graph::bidi_flow::BidiFlow;

/// The ports of a [`BidiFlow`] (or a stage with a
/// [`BidiShape`](crate::stage::BidiShape)) in a [`GraphBuilder`]: the
/// first direction goes `in1 -> out1`, the second `in2 -> out2`.
///
/// # Examples
///
/// A layer added to a builder and closed by hand, then a layer built from
/// two flows' ports:
///
/// ```
/// use weir_streams::graph::{BidiPorts, GraphBuilder};
/// use weir_streams::prelude::*;
/// use weir_streams::BidiFlow;
///
/// # fn main() -> Result<(), weir_streams::GraphError> {
/// let system = weir_actor::ActorSystem::new("bidi-ports").unwrap();
/// let mat = Materializer::new(&system);
/// let mut b = GraphBuilder::new();
/// let layer = b.bidi(BidiFlow::from_functions(|x: u32| x + 1, |x: u32| x * 10));
/// let source = b.source(Source::range(1u32..=2));
/// let (sink, got) = b.sink_mat(Sink::collect());
/// b.connect(source, layer.in1)?;
/// b.connect(layer.out1, layer.in2)?;
/// b.connect(layer.out2, sink)?;
/// assert_eq!(b.build(move |m| m.take(&got))?.run(&mat).wait(), Ok(vec![20, 30]));
///
/// let mut b = GraphBuilder::new();
/// let (in1, out1) = b.flow(Flow::new().map(|x: u32| x * 2));
/// let (in2, out2) = b.flow(Flow::new().map(|s: String| s.len()));
/// let layer = b.build_bidi(BidiPorts { in1, out1, in2, out2 }, |_| ())?;
/// let flow = layer.join(Flow::new().map(|x: u32| "x".repeat(x as usize)));
/// assert_eq!(Source::single(3u32).via(flow).run_with(Sink::collect(), &mat).wait(), Ok(vec![6]));
/// system.terminate().wait().unwrap();
/// # Ok(())
/// # }
/// ```
pub struct BidiPorts<I1, O1, I2, O2> {
    /// The first direction's input.
    pub in1: In<I1>,
    /// The first direction's output.
    pub out1: Out<O1>,
    /// The second direction's input.
    pub in2: In<I2>,
    /// The second direction's output.
    pub out2: Out<O2>,
}

impl<I1, O1, I2, O2> Clone for BidiPorts<I1, O1, I2, O2> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<I1, O1, I2, O2> Copy for BidiPorts<I1, O1, I2, O2> {}

impl<I1, O1, I2, O2> std::fmt::Debug for BidiPorts<I1, O1, I2, O2> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BidiPorts")
            .field("in1", &self.in1)
            .field("out1", &self.out1)
            .field("in2", &self.in2)
            .field("out2", &self.out2)
            .finish()
    }
}

impl GraphBuilder {
    /// Add a bidirectional flow; its ports.
    pub fn bidi<I1, O1, I2, O2, M>(
        &mut self,
        bidi: BidiFlow<I1, O1, I2, O2, M>,
    ) -> BidiPorts<I1, O1, I2, O2>
    where
        I1: Send + 'static,
        O1: Send + 'static,
        I2: Send + 'static,
        O2: Send + 'static,
        M: 'static,
    {
        self.bidi_mat(bidi).0
    }

    /// Add a bidirectional flow; its ports and its value's key.
    pub fn bidi_mat<I1, O1, I2, O2, M>(
        &mut self,
        bidi: BidiFlow<I1, O1, I2, O2, M>,
    ) -> (BidiPorts<I1, O1, I2, O2>, MatKey<M>)
    where
        I1: Send + 'static,
        O1: Send + 'static,
        I2: Send + 'static,
        O2: Send + 'static,
        M: 'static,
    {
        let (inlets, outlets, key) = self.import(bidi.graph);
        let ports = BidiPorts {
            in1: self.in_port(inlets[0]),
            out1: self.out_port(outlets[0]),
            in2: self.in_port(inlets[1]),
            out2: self.out_port(outlets[1]),
        };
        (ports, key)
    }

    /// A bidirectional flow with these four ports open, every other port
    /// connected.
    ///
    /// # Errors
    ///
    /// As [`build_source`](Self::build_source).
    pub fn build_bidi<I1, O1, I2, O2, M>(
        self,
        ports: BidiPorts<I1, O1, I2, O2>,
        mat: impl Fn(&mut Mats<'_>) -> M + Send + Sync + 'static,
    ) -> Result<BidiFlow<I1, O1, I2, O2, M>, GraphError>
    where
        I1: Send + 'static,
        O1: Send + 'static,
        I2: Send + 'static,
        O2: Send + 'static,
        M: 'static,
    {
        let in1 = self.own(ports.in1.builder, ports.in1.port)?;
        let in2 = self.own(ports.in2.builder, ports.in2.port)?;
        let out1 = self.own(ports.out1.builder, ports.out1.port)?;
        let out2 = self.own(ports.out2.builder, ports.out2.port)?;
        let graph = self.finish(vec![in1, in2], vec![out1, out2], mat)?;
        Ok(BidiFlow::from_graph_parts(graph))
    }
}
