//! One substream: its flow (and sink, for `SubFlow::to`) run as a
//! sub-island driven by the splitting stage, which writes elements
//! straight into the connection out of a port-less feed stage and reads
//! them from the connection into a marking sink (Akka's
//! `SubSourceOutlet` and `SubSinkInlet`, with the substream sub-fused into
//! the running island). No actor per substream: its async callbacks and
//! timers reach it through an inbox (`stage::Forward`) that forwards them
//! to the splitting stage.

use std::sync::Arc;

use crate::blueprint::{Flow, Sink};
use crate::error::{ErrorKind, StreamError};
use crate::interpreter::island::Island;
use crate::ops::flatten::sub::{Marker, SubEvent, SubPoll};
use crate::plan::graph::{Graph, Kind, Node};
use crate::stage::core::{AVAILABLE, DEMANDED, DOWN_CLOSED, Host, IN_DONE, PUSHED};
use crate::stage::{
    AsyncCallback, Attributes, Forward, GraphStage, GraphStageLogic, IslandMsg, MatContext,
    OutPort, SourceShape, StageContext, StageResult,
};

/// Events a substream island runs per turn before the stage's other work.
const BUDGET: usize = 1024;

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

pub(crate) struct Runner<T, U> {
    pub(crate) id: u64,
    island: Box<Island>,
    feed: u32,
    /// The marking sink's input and its stage.
    out: Option<(u32, usize)>,
    /// The island's inbox, closed when it is done.
    inbox: Arc<Forward>,
    wake: AsyncCallback<u64>,
    _types: std::marker::PhantomData<fn(T) -> U>,
}

impl<T: Send + 'static, U: Send + 'static> Runner<T, U> {
    /// Materialize `flow` then `tail` as substream `id`.
    pub(crate) fn new(
        id: u64,
        flow: &Flow<T, U, ()>,
        tail: &Tail<U>,
        events: &AsyncCallback<SubEvent<U>>,
        wake: &AsyncCallback<u64>,
        ctx: &mut StageContext<'_>,
    ) -> Result<Self, StreamError> {
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
        let plan = crate::plan::plan(&graph.nodes, &graph.edges, ctx.fusion());
        if !plan.boundaries.is_empty() || plan.islands.len() != 1 || plan.pulled.is_some() {
            return Err(StreamError::from_kind(ErrorKind::AsyncBoundaryInSubstream));
        }
        let forward = events.clone();
        let (address, inbox) = Forward::open(ctx.system(), move |msg: IslandMsg| {
            forward.invoke(SubEvent::Island(id, msg));
        });
        let host = Host {
            island: address,
            system: ctx.system().clone(),
            fusion: ctx.fusion(),
        };
        let mut values: Vec<Option<Box<dyn std::any::Any + Send>>> =
            (0..graph.nodes.len()).map(|_| None).collect();
        let planned = &plan.islands[0];
        let island = crate::interpreter::materialize::build_island(
            planned,
            &mut [],
            &host,
            &mut values,
            &mut Vec::new(),
        );
        let stage_of = |node: usize| {
            planned
                .stages
                .iter()
                .position(|p| p.values.contains(&node))
                .expect("the feed and marker stages are planned as their own stages")
        };
        let feed = island.core.links[island.core.outs(stage_of(0)).start];
        let out = out_node.map(|n| {
            let stage = stage_of(n);
            (island.core.links[island.core.ins(stage).start], stage)
        });
        for value in &mut values {
            value.get_or_insert_with(|| Box::new(()));
        }
        (graph.mat)(&mut values);
        let mut island = Box::new(island);
        island.start();
        let mut runner = Self {
            id,
            island,
            feed,
            out,
            inbox,
            wake: wake.clone(),
            _types: std::marker::PhantomData,
        };
        runner.run();
        Ok(runner)
    }

    fn run(&mut self) {
        if self.island.core.has_events() && self.island.run(BUDGET) {
            self.wake.invoke(self.id);
        }
    }

    /// Whether polling may give something now: output or an end is
    /// waiting, or output was not asked for yet.
    pub(crate) fn may_give(&self) -> bool {
        match self.out {
            None => self.island.is_done(),
            Some((out, _)) => {
                let state = self.island.core.conns[out as usize].state;
                state & (AVAILABLE | IN_DONE) != 0 || state & (DEMANDED | PUSHED) == 0
            }
        }
    }

    /// Whether the substream's output ended with nothing left to give (a
    /// failure still waits to be polled); for a substream ending in a
    /// sink, whether every stage of it has stopped.
    pub(crate) fn output_drained(&self) -> bool {
        match self.out {
            None => self.island.is_done(),
            Some((out, _)) => {
                let conn = &self.island.core.conns[out as usize];
                conn.state & (IN_DONE | AVAILABLE) == IN_DONE && conn.failure.is_none()
            }
        }
    }

    /// Whether every stage of the substream has stopped. A stage may run
    /// on after the output ended (a `prefix_and_tail` whose tail runs
    /// elsewhere).
    pub(crate) fn is_done(&self) -> bool {
        self.island.is_done()
    }

    /// Nobody reads the output any more: cancel it (stages that keep
    /// going run on).
    pub(crate) fn cancel_output(&mut self) {
        if let Some((out, stage)) = self.out
            && self.island.core.conns[out as usize].state & IN_DONE == 0
        {
            self.island.core.cancel(out);
            self.island.finish_if_closed(stage);
            self.run();
        }
    }

    /// Whether the substream asks for an element now.
    pub(crate) fn wants(&self) -> bool {
        let state = self.island.core.conns[self.feed as usize].state;
        state & DEMANDED != 0 && state & DOWN_CLOSED == 0
    }

    /// Whether the substream cancelled its input.
    pub(crate) fn input_cancelled(&self) -> bool {
        self.island.core.conns[self.feed as usize].state & DOWN_CLOSED != 0
    }

    /// Hand `element` in (call when [`wants`](Self::wants)).
    pub(crate) fn offer(&mut self, element: T) -> Result<(), StreamError> {
        self.island.core.push(self.feed, element)?;
        self.run();
        Ok(())
    }

    /// The substream's input completes (or fails).
    pub(crate) fn close_input(&mut self, error: Option<StreamError>) {
        match error {
            None => self.island.core.complete(self.feed),
            Some(error) => self.island.core.fail(self.feed, error),
        }
        self.run();
    }

    /// The next output element, if any now (requesting one otherwise). A
    /// substream ending in a sink gives `Completed` once every stage of it
    /// has finished.
    pub(crate) fn poll(&mut self) -> SubPoll<U> {
        self.run();
        let Some((out, _)) = self.out else {
            return if self.island.is_done() {
                SubPoll::Completed
            } else {
                SubPoll::Pending
            };
        };
        let c = out as usize;
        for _ in 0..2 {
            let state = self.island.core.conns[c].state;
            if state & AVAILABLE != 0 {
                return match self.island.core.grab::<U>(out) {
                    Ok(element) => SubPoll::Ready(element),
                    Err(error) => SubPoll::Failed(error),
                };
            }
            if state & IN_DONE != 0 {
                return match self.island.core.conns[c].failure.clone() {
                    None => SubPoll::Completed,
                    Some(error) => SubPoll::Failed(error),
                };
            }
            if state & (DEMANDED | PUSHED) != 0 {
                break;
            }
            if let Err(error) = self.island.core.pull(out) {
                return SubPoll::Failed(error);
            }
            self.run();
        }
        SubPoll::Pending
    }

    /// Run an async callback or timer of the substream.
    pub(crate) fn on_event(&mut self, msg: IslandMsg) {
        self.island.on_message(msg);
        // What it queued runs now: whether the substream finished is
        // seen without waiting for a poll (nobody may poll it).
        self.run();
    }

    /// Run what waits (after a wake-up).
    pub(crate) fn resume(&mut self) {
        self.run();
    }
}

impl<T, U> Drop for Runner<T, U> {
    fn drop(&mut self) {
        if !self.island.is_done() {
            if let Some((out, _)) = self.out {
                self.island.core.cancel(out);
            }
            self.island.core.complete(self.feed);
            self.island.run(BUDGET);
        }
        if !self.island.is_done() {
            self.island
                .abort(&StreamError::from_kind(ErrorKind::AbruptTermination));
        }
        self.inbox.close();
    }
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
