//! [`SubIsland`]: a graph hosted inside a running stage, the one form
//! shared by the flattening operators' inner sources (`flatten::sub`) and
//! by substreams (`substreams::runner`). Akka's `SubSinkInlet` /
//! `SubSourceOutlet` with the inner graph sub-fused into the hosting
//! island.
//!
//! The host plans the graph, builds and starts its one island, runs its
//! events inside its own handlers, writes into the island's feed
//! connection (a port-less source, substreams) and reads from the
//! connection into a [`Marker`] sink; the island's async callbacks and
//! timers reach it through an inbox (`stage::Forward`) that forwards them
//! to the hosting stage, which hands them back here
//! ([`on_message`](SubIsland::on_message)). Dropping it tears the island
//! down.
//!
//! # Fusion
//!
//! A hosted graph is planned with the hosting materializer's fusion
//! setting ([`SubIsland::plan`]), as Pekko's `SubFusingActorMaterializer`
//! materializes an inner graph with the settings of the materializer that
//! runs the hosting stage: with fusion off (`MaterializerBuilder::fusion`)
//! every operator of a flattened inner source or a substream runs as its
//! own stage, so the differential tests compare the hosted graphs' fused
//! and unfused forms too. (Flattening used to force fusion on, substreams
//! did not.)

use std::any::Any;
use std::sync::Arc;

use super::sub_source::FromInner;
use crate::error::{ErrorKind, StreamError};
use crate::interpreter::island::Island;
use crate::plan::Plan;
use crate::plan::graph::Graph;
use crate::stage::core::{AVAILABLE, DEMANDED, DOWN_CLOSED, Host, IN_DONE, PUSHED};
use crate::stage::{
    AsyncCallback, Forward, GraphStage, GraphStageLogic, InPort, IslandMsg, MatContext, SinkShape,
    StageContext, StageResult,
};

/// Events a hosting stage handles on behalf of what it hosts.
pub(crate) enum SubEvent<T> {
    /// A message for the island hosted as `id` (its callbacks and timers).
    Island(u64, IslandMsg),
    /// The fused source of `id` woke, or its island has events left.
    Wake(u64),
    /// From an inner source running as its own stream.
    Bridge(FromInner<T>),
}

impl<T> SubEvent<T> {
    /// What the event is for.
    pub(crate) fn id(&self) -> u64 {
        match self {
            SubEvent::Island(id, _) | SubEvent::Wake(id) => *id,
            SubEvent::Bridge(FromInner::Element(id, _) | FromInner::Ended(id, _)) => *id,
        }
    }
}

/// A stage that hosts inner graphs emitting `T`.
pub(crate) trait SubOwner<T>: GraphStageLogic {
    /// `event` arrived for one of its inner graphs.
    fn on_sub_event(&mut self, event: SubEvent<T>, ctx: &mut StageContext<'_>) -> StageResult;
}

/// What an inner graph's output has now.
pub(crate) enum SubPoll<T> {
    Ready(T),
    /// Nothing yet; the hosting stage hears of progress as a [`SubEvent`].
    Pending,
    Completed,
    Failed(StreamError),
}

/// Events a hosted island runs per turn before the host's other work
/// (it asks to be woken to go on).
const BUDGET: usize = 1024;

/// One hosted island (see the module docs).
pub(crate) struct SubIsland {
    id: u64,
    island: Box<Island>,
    /// The connection out of the feed source, if it has one.
    feed: Option<u32>,
    /// The connection into the marking sink and the sink's stage, if it
    /// has one (a substream may end in a sink of its own).
    out: Option<(u32, usize)>,
    /// The island's inbox, closed when it is torn down.
    inbox: Arc<Forward>,
    wake: AsyncCallback<u64>,
}

impl SubIsland {
    /// Plan `graph` as the hosting materializer plans any graph (with its
    /// fusion setting: see the module docs).
    pub(crate) fn plan(graph: &Graph<()>, ctx: &StageContext<'_>) -> Plan {
        crate::plan::plan(&graph.nodes, &graph.edges, ctx.fusion())
    }

    /// Whether `plan` is one island with no boundary: what a stage can host.
    pub(crate) fn hostable(plan: &Plan) -> bool {
        plan.boundaries.is_empty() && plan.islands.len() == 1 && plan.pulled.is_none()
    }

    /// Build and start the island of `plan` (see [`hostable`](Self::hostable))
    /// as `id`: `feed` and `out` are the nodes of the port-less source the
    /// host pushes into and of the [`Marker`] it reads from; `forward`
    /// hands the island's messages to the host (as [`SubEvent::Island`]);
    /// `wake` asks the host to go on running it. The graph's materialized
    /// value is dropped (its function still runs).
    pub(crate) fn start(
        graph: &Graph<()>,
        plan: &Plan,
        (feed, out): (Option<usize>, Option<usize>),
        id: u64,
        forward: impl Fn(IslandMsg) + Send + Sync + 'static,
        wake: &AsyncCallback<u64>,
        ctx: &mut StageContext<'_>,
    ) -> Self {
        let (address, inbox) = Forward::open(ctx.system(), forward);
        let host = Host {
            island: address,
            system: ctx.system().clone(),
            fusion: ctx.fusion(),
        };
        let mut values: Vec<Option<Box<dyn Any + Send>>> =
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
                .expect("the feed and the marking sink are planned as stages of their own")
        };
        let feed = feed.map(|n| island.core.links[island.core.outs(stage_of(n)).start]);
        let out = out.map(|n| {
            let stage = stage_of(n);
            (island.core.links[island.core.ins(stage).start], stage)
        });
        for value in &mut values {
            value.get_or_insert_with(|| Box::new(()));
        }
        (graph.mat)(&mut values);
        let mut island = Box::new(island);
        island.start();
        let mut hosted = Self {
            id,
            island,
            feed,
            out,
            inbox,
            wake: wake.clone(),
        };
        hosted.run();
        hosted
    }

    /// Run what the island has to do, up to [`BUDGET`] events; if events
    /// are left, ask to be woken to go on.
    fn run(&mut self) {
        if self.island.core.has_events() && self.island.run(BUDGET) {
            self.wake.invoke(self.id);
        }
    }

    /// Run an async callback or timer of the island, and what it leads
    /// to: its end must reach the host even when nobody polls.
    pub(crate) fn on_message(&mut self, msg: IslandMsg) {
        self.island.on_message(msg);
        self.run();
    }

    /// Run what waits (after a wake-up).
    pub(crate) fn resume(&mut self) {
        self.run();
    }

    /// Whether every stage of the island has stopped.
    pub(crate) fn is_done(&self) -> bool {
        self.island.is_done()
    }

    fn out_state(&self) -> Option<u16> {
        self.out
            .map(|(out, _)| self.island.core.conns[out as usize].state)
    }

    /// Whether polling may give something now: output or an end waits,
    /// or output was not asked for yet. Without an output, whether the
    /// island is done.
    pub(crate) fn may_give(&self) -> bool {
        match self.out_state() {
            None => self.island.is_done(),
            Some(state) => state & (AVAILABLE | IN_DONE) != 0 || state & (DEMANDED | PUSHED) == 0,
        }
    }

    /// Whether the output ended with nothing left to give; `failed` too
    /// when it failed (else a failure still waits to be polled). Without
    /// an output, whether the island is done.
    pub(crate) fn output_ended(&self, failed: bool) -> bool {
        match self.out {
            None => self.island.is_done(),
            Some((out, _)) => {
                let conn = &self.island.core.conns[out as usize];
                conn.state & (IN_DONE | AVAILABLE) == IN_DONE && (failed || conn.failure.is_none())
            }
        }
    }

    /// The failure the output ended with, even with an element still
    /// waiting before it (Pekko's flattening stage fails as soon as an
    /// inner source fails, dropping what it holds of it).
    pub(crate) fn failure(&self) -> Option<StreamError> {
        let (out, _) = self.out?;
        let conn = &self.island.core.conns[out as usize];
        if conn.state & IN_DONE == 0 {
            return None;
        }
        conn.failure.clone()
    }

    /// Ask the output for an element if it was not asked yet and has
    /// none waiting (Pekko's flattening stage keeps one element asked
    /// ahead of demand).
    pub(crate) fn request(&mut self) -> Result<(), StreamError> {
        if let Some(state) = self.out_state()
            && state & (AVAILABLE | IN_DONE | DEMANDED | PUSHED) == 0
        {
            let (out, _) = self.out.expect("it has an output");
            self.island.core.pull(out)?;
            self.run();
        }
        Ok(())
    }

    /// The next output element, if any now (asking for one otherwise);
    /// without an output, `Completed` once every stage has stopped.
    pub(crate) fn poll<T: Send + 'static>(&mut self) -> SubPoll<T> {
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
                return match self.island.core.grab::<T>(out) {
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

    /// Whether the island asks for an element on its feed now.
    pub(crate) fn wants(&self) -> bool {
        self.feed.is_some_and(|feed| {
            let state = self.island.core.conns[feed as usize].state;
            state & DEMANDED != 0 && state & DOWN_CLOSED == 0
        })
    }

    /// Whether the island cancelled its feed.
    pub(crate) fn input_cancelled(&self) -> bool {
        self.feed
            .is_some_and(|feed| self.island.core.conns[feed as usize].state & DOWN_CLOSED != 0)
    }

    /// Hand `element` in on the feed (call when [`wants`](Self::wants)).
    pub(crate) fn offer<T: Send + 'static>(&mut self, element: T) -> Result<(), StreamError> {
        let feed = self.feed.expect("a hosted island with a feed");
        self.island.core.push(feed, element)?;
        self.run();
        Ok(())
    }

    /// The feed completes (or fails).
    pub(crate) fn close_input(&mut self, error: Option<StreamError>) {
        let feed = self.feed.expect("a hosted island with a feed");
        match error {
            None => self.island.core.complete(feed),
            Some(error) => self.island.core.fail(feed, error),
        }
        self.run();
    }

    /// Stop every stage that still runs at once, as when its stream is
    /// aborted (after the output ended: what runs on is not waited for).
    pub(crate) fn abort(&mut self) {
        if !self.island.is_done() {
            self.island
                .abort(&StreamError::from_kind(ErrorKind::AbruptTermination));
        }
    }
}

impl Drop for SubIsland {
    /// Tear down: the output is cancelled and the feed completed, what
    /// that leads to runs, and whatever still runs is aborted; the inbox
    /// closes (what is sent from now on becomes a dead letter).
    fn drop(&mut self) {
        if !self.island.is_done() {
            if let Some((out, _)) = self.out {
                self.island.core.cancel(out);
            }
            if let Some(feed) = self.feed {
                self.island.core.complete(feed);
            }
            self.island.run(BUDGET);
        }
        self.abort();
        self.inbox.close();
    }
}

/// A sink that leaves each element in its connection for the stage that
/// hosts its island to take (see [`SubIsland::poll`]).
pub(crate) struct Marker<T> {
    name: &'static str,
    ty: std::marker::PhantomData<fn(T)>,
}

impl<T> Marker<T> {
    pub(crate) fn named(name: &'static str) -> Self {
        Self {
            name,
            ty: std::marker::PhantomData,
        }
    }
}

struct MarkerLogic;

impl<T: Send + 'static> GraphStage for Marker<T> {
    type Shape = SinkShape<T>;
    type Mat = ();

    fn name(&self) -> &'static str {
        self.name
    }

    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        (Box::new(MarkerLogic), ())
    }
}

impl GraphStageLogic for MarkerLogic {
    fn on_push(&mut self, _: InPort, _: &mut StageContext<'_>) -> StageResult {
        Ok(())
    }

    fn on_upstream_finish(&mut self, _: InPort, _: &mut StageContext<'_>) -> StageResult {
        Ok(())
    }

    fn on_upstream_failure(
        &mut self,
        _: InPort,
        _: StreamError,
        _: &mut StageContext<'_>,
    ) -> StageResult {
        Ok(())
    }
}
