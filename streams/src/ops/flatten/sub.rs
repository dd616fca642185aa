//! Inner sources run by the stage that made them, without an actor of
//! their own (Akka's `SubSinkInlet` with the inner graph sub-fused into
//! the running island).
//!
//! Materializing an inner source plans it like any graph (with the
//! hosting materializer's fusion setting, see `ops::sub_island`), closed
//! by a port-less sink that only marks where its elements arrive, and
//! then takes the cheapest form the plan allows:
//!
//! - **Fused**: the planner's pull rule fused the whole source into one
//!   batch iterator (an iterator or poll-function source and simple
//!   operators). The stage asks it for one element per demand: no ports,
//!   no island.
//! - **Island**: the source is one island, hosted by the stage as a
//!   [`SubIsland`] (the form substreams run in too); the stage reads
//!   elements straight from the connection into the marking sink, and
//!   keeps one element asked ahead of demand, as Pekko's `FlattenMerge`
//!   does ([`SubSource::request`]).
//! - **Bridge**: the source has async boundaries of its own, so it needs
//!   actors anyway: it runs as its own stream into a bridge sink that
//!   hands over one element per request (`ops::sub_source`).
//!
//! The inner source's materialized value is dropped.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::task::{Context, Waker};

use super::super::sub_island::{Marker, SubEvent, SubIsland, SubOwner, SubPoll};
use super::super::sub_source::{self, FromInner, ToInner};
use crate::blueprint::Source;
use crate::error::StreamError;
use crate::fusion::{BoxChunks, Consumer, Drained, Fill, FusedIter, PullSink};
use crate::plan::graph::{Kind, Node};
use crate::stage::{AsyncCallback, Attributes, IslandMsg, StageContext};

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
    Island(SubIsland),
    Bridge {
        control: AsyncCallback<ToInner>,
        ready: Option<T>,
        end: Option<Option<StreamError>>,
        requested: bool,
    },
    Done,
}

impl<T: Send + 'static> SubSource<T> {
    fn new<M: 'static>(
        source: Source<T, M>,
        id: u64,
        host: &SubHost<T>,
        ctx: &mut StageContext<'_>,
    ) -> Self {
        let graph = source.graph.clone().then(marker::<T>(), |_: M, ()| ());
        let sink = graph.nodes.len() - 1;
        let plan = SubIsland::plan(&graph, ctx);
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
        if SubIsland::hostable(&plan) {
            let events = host.events.clone();
            let forward = move |msg: IslandMsg| events.invoke(SubEvent::Island(id, msg));
            let island = SubIsland::start(
                &graph,
                &plan,
                (None, Some(sink)),
                id,
                forward,
                &host.wake,
                ctx,
            );
            return Self {
                id,
                form: Form::Island(island),
            };
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
            Form::Island(island) => island.poll::<T>(),
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

    /// Ask an inner source hosted as an island for one element ahead of
    /// demand, as Pekko's `FlattenMerge` (behind `flatMapConcat` and
    /// `flatMapMerge`) pulls each materialized inner source when it takes
    /// it in and after each element. A fused inner source (an iterator and
    /// simple operators) is asked on demand, as Pekko asks the iterator
    /// sources it does not materialize; one running as its own stream
    /// asks through its boundary anyway.
    pub(crate) fn request(&mut self) -> Result<(), StreamError> {
        match &mut self.form {
            Form::Island(island) => island.request(),
            _ => Ok(()),
        }
    }

    /// The failure of an inner source hosted as an island or running as
    /// its own stream, as soon as it fails, even with an element still
    /// waiting (Pekko's `FlattenMerge` fails at once when an inner source
    /// fails); a fused inner source's failure comes after the elements
    /// it made before it, on demand.
    pub(crate) fn failure(&self) -> Option<StreamError> {
        match &self.form {
            Form::Island(island) => island.failure(),
            Form::Bridge {
                end: Some(Some(error)),
                ..
            } => Some(error.clone()),
            _ => None,
        }
    }

    /// Whether the inner source has ended with nothing left to give (so
    /// the host can move on without waiting for another demand).
    pub(crate) fn is_drained(&self) -> bool {
        match &self.form {
            Form::Done => true,
            Form::Fused { end, buf, .. } => end.is_some() && buf.is_empty(),
            Form::Island(island) => island.output_ended(true),
            Form::Bridge { ready, end, .. } => end.is_some() && ready.is_none(),
        }
    }

    /// Take in an event for this inner source (the host then polls). An
    /// island runs the events it leads to at once, without a demand: the
    /// inner source's end must reach the host even when nobody asks (an
    /// island asks for no element itself, so nothing is read ahead).
    pub(crate) fn on_event(&mut self, event: SubEvent<T>) {
        match (&mut self.form, event) {
            (Form::Island(island), SubEvent::Island(_, msg)) => island.on_message(msg),
            (Form::Island(island), SubEvent::Wake(_)) => island.resume(),
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
        if let Form::Island(island) = &mut self.form {
            island.cancel_output();
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
        if let Form::Island(island) = &mut self.form {
            island.abort();
        }
        self.form = Form::Done;
    }

    pub(crate) fn id(&self) -> u64 {
        self.id
    }
}

impl<T> Drop for SubSource<T> {
    fn drop(&mut self) {
        // A hosted island tears itself down.
        if let Form::Bridge {
            control, end: None, ..
        } = &self.form
        {
            control.invoke(ToInner::Cancel);
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
