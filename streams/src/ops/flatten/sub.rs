//! Inner sources run by the stage that made them, without an actor of
//! their own (Akka's `SubSinkInlet` with the inner graph sub-fused into
//! the running island).
//!
//! Materializing an inner source plans it like any graph, closed by a
//! port-less sink that only marks where its elements arrive, and then
//! takes the cheapest form the plan allows:
//!
//! - **Fused**: the planner's pull rule fused the whole source into one
//!   batch iterator (an iterator or poll-function source and simple
//!   operators). The stage asks it for one element per demand: no ports,
//!   no island.
//! - **Island**: the source is one island. It is built like any island
//!   and driven inside the stage's handlers; the stage reads elements
//!   straight from the connection into the marking sink. Its async
//!   callbacks and timers reach the island through an inbox
//!   (`stage::Forward`) that forwards them to the owning stage as
//!   [`SubEvent::Island`].
//! - **Bridge**: the source has async boundaries of its own, so it needs
//!   actors anyway: it runs as its own stream into a bridge sink that
//!   hands over one element per request (`ops::sub_source`).
//!
//! The inner source's materialized value is dropped.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::task::{Context, Waker};

use super::super::sub_source::{self, FromInner, ToInner};
use crate::blueprint::Source;
use crate::error::{ErrorKind, StreamError};
use crate::fusion::{BoxChunks, Consumer, Drained, Fill, FusedIter, PullSink};
use crate::interpreter::island::Island;
use crate::plan::graph::{Kind, Node};
use crate::stage::core::{AVAILABLE, DEMANDED, Host, IN_DONE, PUSHED};
use crate::stage::{
    AsyncCallback, Attributes, Forward, GraphStage, GraphStageLogic, InPort, IslandMsg, MatContext,
    SinkShape, StageContext, StageResult,
};

/// Events a hosting stage handles on behalf of its inner sources.
pub(crate) enum SubEvent<T> {
    /// A message for the island of inner `id` (its callbacks and timers).
    Island(u64, IslandMsg),
    /// The fused source of inner `id` woke, or its island has events left.
    Wake(u64),
    /// From an inner source running as its own stream.
    Bridge(FromInner<T>),
}

impl<T> SubEvent<T> {
    /// The inner source the event is for.
    pub(crate) fn id(&self) -> u64 {
        match self {
            SubEvent::Island(id, _) | SubEvent::Wake(id) => *id,
            SubEvent::Bridge(FromInner::Element(id, _) | FromInner::Ended(id, _)) => *id,
        }
    }
}

/// A stage that hosts inner sources of `T`.
pub(crate) trait SubOwner<T>: GraphStageLogic {
    /// `event` arrived for one of its inner sources.
    fn on_sub_event(&mut self, event: SubEvent<T>, ctx: &mut StageContext<'_>) -> StageResult;
}

/// The callbacks inner sources report through, made once per stage.
pub(crate) struct SubHost<T> {
    events: AsyncCallback<SubEvent<T>>,
    wake: AsyncCallback<u64>,
    bridge: AsyncCallback<FromInner<T>>,
    next_id: u64,
}

impl<T: Send + 'static> SubHost<T> {
    /// Callbacks into the stage `L` (call from a handler, e.g. `pre_start`).
    pub(crate) fn new<L: SubOwner<T>>(ctx: &mut StageContext<'_>) -> Self {
        Self {
            events: ctx.async_callback(|this: &mut L, event, ctx| this.on_sub_event(event, ctx)),
            wake: ctx
                .async_callback(|this: &mut L, id, ctx| this.on_sub_event(SubEvent::Wake(id), ctx)),
            bridge: ctx.async_callback(|this: &mut L, from, ctx| {
                this.on_sub_event(SubEvent::Bridge(from), ctx)
            }),
            next_id: 0,
        }
    }

    /// Materialize `source` as an inner source of the stage.
    pub(crate) fn materialize<M: 'static>(
        &mut self,
        source: Source<T, M>,
        ctx: &mut StageContext<'_>,
    ) -> SubSource<T> {
        let id = self.next_id;
        self.next_id += 1;
        SubSource::new(source, id, self, ctx)
    }
}

/// What an inner source has now.
pub(crate) enum SubPoll<T> {
    Ready(T),
    /// Nothing yet; the hosting stage hears of progress as a [`SubEvent`].
    Pending,
    Completed,
    Failed(StreamError),
}

/// One inner source (see the module docs).
pub(crate) struct SubSource<T> {
    id: u64,
    form: Form<T>,
}

enum Form<T> {
    Fused {
        chunks: BoxChunks<T>,
        buf: Vec<T>,
        waker: Waker,
        name: Arc<str>,
        end: Option<Option<StreamError>>,
    },
    Island {
        island: Box<Island>,
        /// The connection into the marking sink.
        conn: u32,
        /// The inner island's inbox, closed when it is done.
        inbox: Arc<Forward>,
        wake: AsyncCallback<u64>,
    },
    Bridge {
        control: AsyncCallback<ToInner>,
        ready: Option<T>,
        end: Option<Option<StreamError>>,
        requested: bool,
    },
    Done,
}

/// Run what an inner island has to do, up to [`SUB_BUDGET`] events; if
/// events are left, ask to be woken to go on.
fn run_inner(island: &mut Island, wake: &AsyncCallback<u64>, id: u64) {
    if island.core.has_events() && island.run(SUB_BUDGET) {
        wake.invoke(id);
    }
}

/// Events an inner island runs per turn before it yields to the host's
/// other work (it asks to be woken to go on).
const SUB_BUDGET: usize = 1024;

impl<T: Send + 'static> SubSource<T> {
    fn new<M: 'static>(
        source: Source<T, M>,
        id: u64,
        host: &SubHost<T>,
        ctx: &mut StageContext<'_>,
    ) -> Self {
        let graph = source.graph.clone().then(marker::<T>(), |_: M, ()| ());
        let sink = graph.nodes.len() - 1;
        let plan = crate::plan::plan(&graph.nodes, &graph.edges, true);
        if let Some(pulled) = &plan.pulled {
            let chunks = FusedIter::<T>::of(&*pulled.iter)();
            let form = Form::Fused {
                chunks,
                buf: Vec::with_capacity(1),
                waker: host.wake.waker(id),
                name: Arc::clone(&pulled.name),
                end: None,
            };
            return Self { id, form };
        }
        if plan.boundaries.is_empty() && plan.islands.len() == 1 {
            let events = host.events.clone();
            let (address, inbox) = Forward::open(ctx.system(), move |msg: IslandMsg| {
                events.invoke(SubEvent::Island(id, msg));
            });
            let hosted = Host {
                island: address,
                system: ctx.system().clone(),
                fusion: ctx.fusion(),
            };
            let mut values: Vec<Option<Box<dyn std::any::Any + Send>>> =
                (0..graph.nodes.len()).map(|_| None).collect();
            let planned = &plan.islands[0];
            let mut island = Box::new(crate::interpreter::materialize::build_island(
                planned,
                &mut [],
                &hosted,
                &mut values,
                &mut Vec::new(),
            ));
            let stage = planned
                .stages
                .iter()
                .position(|p| p.values.contains(&sink))
                .expect("the marking sink is planned as its own stage");
            let conn = island.core.links[island.core.ins(stage).start];
            for value in &mut values {
                value.get_or_insert_with(|| Box::new(()));
            }
            // The inner materialized value is dropped (its function still runs).
            (graph.mat)(&mut values);
            island.start();
            let form = Form::Island {
                island,
                conn,
                inbox,
                wake: host.wake.clone(),
            };
            return Self { id, form };
        }
        let control = sub_source::run(
            source.map_materialized_value(|_| ()),
            id,
            host.bridge.clone(),
            ctx,
        );
        Self {
            id,
            form: Form::Bridge {
                control,
                ready: None,
                end: None,
                requested: false,
            },
        }
    }

    /// The next element if there is one now; otherwise it is requested
    /// (at most one element is requested at a time) and the host hears
    /// of progress. After `Completed` or `Failed`, always `Completed`.
    pub(crate) fn poll(&mut self) -> SubPoll<T> {
        let poll = match &mut self.form {
            Form::Done => SubPoll::Completed,
            Form::Fused {
                chunks,
                buf,
                waker,
                name,
                end,
            } => {
                let mut one = None;
                if end.is_none() {
                    let mut cx = Context::from_waker(waker);
                    match catch_unwind(AssertUnwindSafe(|| chunks.next_one(&mut cx, buf))) {
                        Ok((element, fill)) => {
                            one = element;
                            match fill {
                                Fill::More | Fill::Pending => {}
                                Fill::Exhausted => *end = Some(None),
                                Fill::Failed(error) => *end = Some(Some(error)),
                            }
                        }
                        Err(payload) => {
                            *end = Some(Some(StreamError::panicked(&*payload).in_stage(name)))
                        }
                    }
                }
                // A source that fills its spare batch may leave an element
                // there when it panics: it still comes ahead of the failure.
                match one.or_else(|| buf.pop()) {
                    Some(element) => return SubPoll::Ready(element),
                    None => ended(end.take()),
                }
            }
            Form::Island {
                island, conn, wake, ..
            } => {
                let c = *conn as usize;
                let mut poll = SubPoll::Pending;
                for _ in 0..2 {
                    run_inner(island, wake, self.id);
                    let state = island.core.conns[c].state;
                    if state & AVAILABLE != 0 {
                        poll = match island.core.grab::<T>(*conn) {
                            Ok(element) => SubPoll::Ready(element),
                            Err(error) => SubPoll::Failed(error),
                        };
                        break;
                    }
                    if state & IN_DONE != 0 {
                        poll = ended(Some(island.core.conns[c].failure.clone()));
                        break;
                    }
                    if state & (DEMANDED | PUSHED) != 0 {
                        break;
                    }
                    if let Err(error) = island.core.pull(*conn) {
                        poll = SubPoll::Failed(error);
                        break;
                    }
                }
                poll
            }
            Form::Bridge {
                control,
                ready,
                end,
                requested,
            } => {
                if let Some(element) = ready.take() {
                    return SubPoll::Ready(element);
                }
                if end.is_some() {
                    ended(end.take())
                } else {
                    if !*requested {
                        *requested = true;
                        control.invoke(ToInner::Pull);
                    }
                    SubPoll::Pending
                }
            }
        };
        if matches!(poll, SubPoll::Completed | SubPoll::Failed(_)) {
            self.finish();
        }
        poll
    }

    /// Feed a fused inner source straight into `consumer`, in batches,
    /// about `budget` elements (`buf` is scratch space); `None` for an
    /// inner source of another form (poll it instead). After an end, the
    /// inner source is done.
    pub(crate) fn drain_into(
        &mut self,
        consumer: &mut dyn Consumer<T>,
        buf: &mut Vec<T>,
        budget: usize,
    ) -> Option<Drained> {
        let Form::Fused {
            chunks,
            waker,
            name,
            ..
        } = &mut self.form
        else {
            return None;
        };
        let mut cx = Context::from_waker(waker);
        let drained = catch_unwind(AssertUnwindSafe(|| {
            consumer.drain_chunks(&mut cx, &mut **chunks, buf, budget)
        }));
        let drained = drained.unwrap_or_else(|payload| {
            // What the source made before it panicked arrives first.
            let error = StreamError::panicked(&*payload).in_stage(name);
            let n = buf.len();
            let fed = catch_unwind(AssertUnwindSafe(|| consumer.drain_batch(buf, n)));
            buf.clear();
            match fed {
                Ok(std::ops::ControlFlow::Break(())) => Drained::Stopped,
                _ => Drained::Failed(error),
            }
        });
        if !matches!(drained, Drained::Budget | Drained::Pending) {
            self.finish();
        }
        Some(drained)
    }

    /// Whether the inner source has ended with nothing left to give (so
    /// the host can move on without waiting for another demand).
    pub(crate) fn is_drained(&self) -> bool {
        match &self.form {
            Form::Done => true,
            Form::Fused { end, buf, .. } => end.is_some() && buf.is_empty(),
            Form::Island { island, conn, .. } => {
                let state = island.core.conns[*conn as usize].state;
                state & IN_DONE != 0 && state & AVAILABLE == 0
            }
            Form::Bridge { ready, end, .. } => end.is_some() && ready.is_none(),
        }
    }

    /// Take in an event for this inner source (the host then polls). An
    /// island runs the events it leads to at once, without a demand: the
    /// inner source's end must reach the host even when nobody asks (an
    /// island asks for no element itself, so nothing is read ahead).
    pub(crate) fn on_event(&mut self, event: SubEvent<T>) {
        let id = self.id;
        match (&mut self.form, event) {
            (Form::Island { island, wake, .. }, SubEvent::Island(_, msg)) => {
                island.on_message(msg);
                run_inner(island, wake, id);
            }
            (Form::Island { island, wake, .. }, SubEvent::Wake(_)) => {
                run_inner(island, wake, id);
            }
            (
                Form::Bridge {
                    ready,
                    end,
                    requested,
                    ..
                },
                SubEvent::Bridge(from),
            ) => match from {
                FromInner::Element(_, element) => {
                    *requested = false;
                    *ready = Some(element);
                }
                FromInner::Ended(_, error) => *end = Some(error),
            },
            _ => {}
        }
    }

    /// Cancel the inner source (idempotent).
    pub(crate) fn cancel(&mut self) {
        if let Form::Island { island, conn, .. } = &mut self.form {
            island.core.cancel(*conn);
            island.run(SUB_BUDGET);
        }
        if let Form::Bridge {
            control, end: None, ..
        } = &self.form
        {
            control.invoke(ToInner::Cancel);
        }
        self.finish();
    }

    /// Done with it: an island that has not finished is torn down.
    fn finish(&mut self) {
        if let Form::Island { island, inbox, .. } = &mut self.form {
            if !island.is_done() {
                island.abort(&StreamError::from_kind(ErrorKind::AbruptTermination));
            }
            inbox.close();
        }
        self.form = Form::Done;
    }

    pub(crate) fn id(&self) -> u64 {
        self.id
    }
}

impl<T> Drop for SubSource<T> {
    fn drop(&mut self) {
        match &mut self.form {
            Form::Island {
                island,
                conn,
                inbox,
                ..
            } => {
                if !island.is_done() {
                    island.core.cancel(*conn);
                    island.run(SUB_BUDGET);
                }
                if !island.is_done() {
                    island.abort(&StreamError::from_kind(ErrorKind::AbruptTermination));
                }
                inbox.close();
            }
            Form::Bridge {
                control, end: None, ..
            } => control.invoke(ToInner::Cancel),
            _ => {}
        }
    }
}

fn ended<T>(end: Option<Option<StreamError>>) -> SubPoll<T> {
    match end {
        None => SubPoll::Pending,
        Some(None) => SubPoll::Completed,
        Some(Some(error)) => SubPoll::Failed(error),
    }
}

/// The sink that closes an inner source's graph: it leaves each element in
/// its connection for the host to take, and carries the pull marker so the
/// planner fuses an iterator-like source whole.
fn marker<T: Send + 'static>() -> crate::plan::graph::Graph<()> {
    use crate::plan::graph::Graph;
    let mut node = Node::new(
        Kind::Stage(Arc::new(Marker::<T>::named("substream"))),
        Attributes::new(),
    );
    node.pull = Some(Arc::new(PullSink::<T>(Arc::new(|_| Box::new(())))));
    Graph::single(node)
}

/// A sink that leaves each element in its connection for the stage that
/// drives its island to take (inner sources of the flattening operators,
/// merged substreams).
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
