//! One substream: its flow (and sink, for `SubFlow::to`) run as a
//! hosted island ([`SubIsland`]) driven by the splitting stage, which
//! writes elements straight into the connection out of a port-less feed
//! stage and reads them from the connection into a marking sink (Akka's
//! `SubSourceOutlet` and `SubSinkInlet`, with the substream sub-fused into
//! the running island). No actor per substream.

use std::sync::Arc;

use crate::blueprint::{Flow, Sink};
use crate::error::{ErrorKind, StreamError};
use crate::ops::sub_island::{Marker, SubEvent, SubIsland};
use crate::plan::graph::{Graph, Kind, Node};
use crate::stage::{
    AsyncCallback, Attributes, GraphStage, GraphStageLogic, IslandMsg, MatContext, OutPort,
    SourceShape, StageContext, StageResult,
};

/// What a substream ends in.
pub(crate) enum Tail<U> {
    /// Its elements go back to the splitting stage (merge, concat).
    Out,
    /// Its elements go into a fresh sink of its own.
    To(Sink<U, ()>),
}

impl<U> Clone for Tail<U> {
    fn clone(&self) -> Self {
        match self {
            Tail::Out => Tail::Out,
            Tail::To(s) => Tail::To(s.clone()),
        }
    }
}

/// Materialize `flow` then `tail` as substream `id`: a [`SubIsland`] fed
/// through a port-less [`Feed`] source and, for [`Tail::Out`], read from
/// a [`Marker`] sink.
pub(crate) fn start<T: Send + 'static, U: Send + 'static>(
    id: u64,
    flow: &Flow<T, U, ()>,
    tail: &Tail<U>,
    events: &AsyncCallback<SubEvent<U>>,
    wake: &AsyncCallback<u64>,
    ctx: &mut StageContext<'_>,
) -> Result<SubIsland, StreamError> {
    let feed_node = Node::new(
        Kind::Stage(Arc::new(Feed::<T>(std::marker::PhantomData))),
        Attributes::new(),
    );
    let head: Graph<()> = Graph::single(feed_node).then(flow.graph.clone(), |(), ()| ());
    let (graph, out_node) = match tail {
        Tail::Out => {
            let marker = Node::new(
                Kind::Stage(Arc::new(Marker::<U>::named("substream_sink"))),
                Attributes::new(),
            );
            let graph = head.then(Graph::single(marker), |(), ()| ());
            let last = graph.nodes.len() - 1;
            (graph, Some(last))
        }
        Tail::To(sink) => (head.then(sink.graph.clone(), |(), ()| ()), None),
    };
    let plan = SubIsland::plan(&graph, ctx);
    if !SubIsland::hostable(&plan) {
        return Err(StreamError::from_kind(ErrorKind::AsyncBoundaryInSubstream));
    }
    let events = events.clone();
    let forward = move |msg: IslandMsg| events.invoke(SubEvent::Island(id, msg));
    Ok(SubIsland::start(
        &graph,
        &plan,
        (Some(0), out_node),
        id,
        forward,
        wake,
        ctx,
    ))
}

/// The port-less source a substream starts with: the splitting stage
/// pushes into its connection.
struct Feed<T>(std::marker::PhantomData<fn() -> T>);

struct FeedLogic;

impl<T: Send + 'static> GraphStage for Feed<T> {
    type Shape = SourceShape<T>;
    type Mat = ();

    fn name(&self) -> &'static str {
        "substream_source"
    }

    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        (Box::new(FeedLogic), ())
    }
}

impl GraphStageLogic for FeedLogic {
    fn on_pull(&mut self, _: OutPort, _: &mut StageContext<'_>) -> StageResult {
        Ok(())
    }

    fn on_downstream_finish(&mut self, _: OutPort, _: &mut StageContext<'_>) -> StageResult {
        Ok(())
    }
}
