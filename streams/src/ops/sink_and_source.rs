//! `Flow::from_sink_and_source` and its coupled form (Pekko's
//! `Flow.fromSinkAndSource` / `fromSinkAndSourceCoupled`): a flow whose
//! input goes into a sink and whose output comes from a source.
//!
//! The coupled form puts one bidirectional stage between the two sides,
//! with the stage contract's default handlers: any termination of one of
//! its four ports stops the stage, and so reaches the other three (a
//! completion or a cancel completes the outlets and cancels the inlets; a
//! failure fails both outlets, as Pekko's coupled flow does).

use crate::blueprint::{Flow, Sink, Source};
use crate::graph::GraphBuilder;
use crate::graph::bidi_flow::BidiFlow;
use crate::stage::{
    BidiShape, GraphStage, GraphStageLogic, InPort, MatContext, OutPort, StageContext, StageResult,
};

const WIRED: &str = "a sink-and-source flow has every other port connected";

impl<In: Send + 'static, Out: Send + 'static> Flow<In, Out, ()> {
    /// A flow that gives its input to `sink` and emits what `source`
    /// emits (Pekko's `Flow.fromSinkAndSource`). The two sides are not
    /// connected: either may end while the other goes on (see
    /// [`from_sink_and_source_coupled`](Self::from_sink_and_source_coupled)
    /// to tie their ends together). Their materialized values are
    /// dropped; [`from_sink_and_source_mat`](Flow::from_sink_and_source_mat)
    /// keeps them.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("sink-and-source").unwrap();
    /// let mat = Materializer::new(&system);
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// let flow = Flow::from_sink_and_source(
    ///     Sink::for_each(move |x: u32| tx.send(x).unwrap()),
    ///     Source::from_iter(["a", "b"]),
    /// );
    /// let out = Source::range(1u32..=3).via(flow).run_with(Sink::collect(), &mat);
    /// assert_eq!(out.wait(), Ok(vec!["a", "b"]));
    /// assert_eq!((0..3).map(|_| rx.recv().unwrap()).collect::<Vec<_>>(), vec![1, 2, 3]);
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn from_sink_and_source<M1: 'static, M2: 'static>(
        sink: Sink<In, M1>,
        source: Source<Out, M2>,
    ) -> Self {
        Flow::from_sink_and_source_mat(sink, source, |_, _| ())
    }

    /// [`from_sink_and_source`](Self::from_sink_and_source) with its ends
    /// coupled (Pekko's `Flow.fromSinkAndSourceCoupled`): when one side
    /// ends, so does the other.
    ///
    /// | cause | the sink | the source | the flow |
    /// |---|---|---|---|
    /// | upstream completes | completes | cancelled | completes downstream |
    /// | upstream fails | fails | cancelled | fails downstream |
    /// | downstream cancels | completes | cancelled | cancels upstream |
    /// | the source completes | completes | — | cancels upstream, completes downstream |
    /// | the source fails | fails | — | cancels upstream, fails downstream |
    /// | the sink cancels | — | cancelled | cancels upstream, completes downstream |
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("coupled").unwrap();
    /// let mat = Materializer::new(&system);
    /// // The source ends after two elements: the sink's side ends with it,
    /// // although upstream has more.
    /// let seen = Source::repeat(1u32)
    ///     .via(Flow::from_sink_and_source_coupled(Sink::ignore(), Source::from_iter([7u8, 8])))
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(seen.wait(), Ok(vec![7, 8]));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn from_sink_and_source_coupled<M1: 'static, M2: 'static>(
        sink: Sink<In, M1>,
        source: Source<Out, M2>,
    ) -> Self {
        Flow::from_sink_and_source_coupled_mat(sink, source, |_, _| ())
    }
}

impl<In: Send + 'static, Out: Send + 'static, Mat: 'static> Flow<In, Out, Mat> {
    /// [`Flow::from_sink_and_source`], with the sink's and the source's
    /// materialized values combined by `combine` (`Keep::both`, ...).
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("sink-and-source-mat").unwrap();
    /// let mat = Materializer::new(&system);
    /// let flow = Flow::from_sink_and_source_mat(Sink::count(), Source::single('x'), Keep::left);
    /// let (count, out) = Source::range(0u8..4).via_mat(flow, Keep::right).to_mat(Sink::collect(), Keep::both).run(&mat);
    /// assert_eq!(count.wait(), Ok(4));
    /// assert_eq!(out.wait(), Ok(vec!['x']));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn from_sink_and_source_mat<M1: 'static, M2: 'static>(
        sink: Sink<In, M1>,
        source: Source<Out, M2>,
        combine: impl Fn(M1, M2) -> Mat + Send + Sync + 'static,
    ) -> Self {
        let mut b = GraphBuilder::new();
        let (inlet, k1) = b.sink_mat(sink);
        let (out, k2) = b.source_mat(source);
        b.build_flow(inlet, out, move |m| combine(m.take(&k1), m.take(&k2)))
            .expect(WIRED)
    }

    /// [`Flow::from_sink_and_source_coupled`], with the sink's and the
    /// source's materialized values combined by `combine`.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("coupled-mat").unwrap();
    /// let mat = Materializer::new(&system);
    /// // Upstream's completion completes the sink (counted) and ends the source.
    /// let flow = Flow::from_sink_and_source_coupled_mat(Sink::count(), Source::<u8>::repeat(0), Keep::left);
    /// let (count, _) = Source::range(0u32..3).via_mat(flow, Keep::right).to_mat(Sink::ignore(), Keep::both).run(&mat);
    /// assert_eq!(count.wait(), Ok(3));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn from_sink_and_source_coupled_mat<M1: 'static, M2: 'static>(
        sink: Sink<In, M1>,
        source: Source<Out, M2>,
        combine: impl Fn(M1, M2) -> Mat + Send + Sync + 'static,
    ) -> Self {
        let mut b = GraphBuilder::new();
        let coupling = b.bidi(BidiFlow::from_graph(Coupled::<In, Out>::new()));
        let (sink, k1) = b.sink_mat(sink);
        let (source, k2) = b.source_mat(source);
        b.connect(coupling.out1, sink).expect(WIRED);
        b.connect(source, coupling.in2).expect(WIRED);
        b.build_flow(coupling.in1, coupling.out2, move |m| {
            combine(m.take(&k1), m.take(&k2))
        })
        .expect(WIRED)
    }
}

/// Passes `in1` to `out1` and `in2` to `out2`; any end of one port ends all four.
struct Coupled<I, O>(BidiShape<I, I, O, O>);

impl<I, O> Coupled<I, O> {
    const fn new() -> Self {
        Self(BidiShape::new())
    }
}

impl<I: Send + 'static, O: Send + 'static> GraphStage for Coupled<I, O> {
    type Shape = BidiShape<I, I, O, O>;
    type Mat = ();

    fn name(&self) -> &'static str {
        "coupled_termination"
    }

    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        (Box::new(Coupled::<I, O>::new()), ())
    }
}

/// The handlers not written here are the contract's defaults: an
/// upstream's completion or a downstream's cancel completes the stage, an
/// upstream's failure fails it.
impl<I: Send + 'static, O: Send + 'static> GraphStageLogic for Coupled<I, O> {
    fn on_push(&mut self, port: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let shape = &self.0;
        if port == shape.in1.port() {
            let element = ctx.grab(shape.in1)?;
            ctx.push(shape.out1, element)
        } else {
            let element = ctx.grab(shape.in2)?;
            ctx.push(shape.out2, element)
        }
    }

    fn on_pull(&mut self, port: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        let shape = &self.0;
        if port == shape.out1.port() {
            ctx.pull(shape.in1)
        } else {
            ctx.pull(shape.in2)
        }
    }
}
