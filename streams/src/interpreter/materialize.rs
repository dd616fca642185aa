//! From a linear list of blueprint nodes to running islands.

use std::any::Any;
use crate::sync::Arc;

use weir_actor::{ActorRef, ActorSystem, FunctionRef, Props};

use super::actor::{IslandActor, IslandMsg};
use super::core::{Conn, Core, Handler, Host, StageMeta};
use super::island::Island;
use crate::{ErrorKind, MaterializeError, Materializer, StreamError};
use crate::stage::{StageActor, StageActorMessage, make_stage_actor};
use crate::stage::{
    AsyncCallback, Attributes, GraphStage, GraphStageLogic, Shape, SlotKind, StageContext,
    StageResult, make_callback,
};

/// What `create_logic` gets: the stage's attributes, the system, and async
/// callbacks that a materialized value may carry (they work before the
/// island starts: the values wait in order).
pub struct MatContext<'a> {
    attributes: &'a Attributes,
    host: &'a Host,
    stage: u32,
    handlers: &'a mut Vec<Option<Handler>>,
    on_finish: &'a mut Vec<Box<dyn FnOnce() + Send>>,
}

impl MatContext<'_> {
    /// The stage's attributes (its own, overridden by the blueprint's).
    pub fn attributes(&self) -> &Attributes {
        self.attributes
    }

    /// The actor system the stream will run in.
    pub fn system(&self) -> &weir_actor::ActorSystem {
        &self.host.system
    }

    /// A callback that runs `handler` inside the stage being created (see
    /// [`AsyncCallback`]). `L` is the logic type `create_logic` returns.
    pub fn async_callback<L, T, F>(&mut self, handler: F) -> AsyncCallback<T>
    where
        L: GraphStageLogic,
        T: Send + 'static,
        F: FnMut(&mut L, T, &mut StageContext<'_>) -> StageResult + Send + 'static,
    {
        make_callback(self.host, self.stage, self.handlers, handler)
    }

    /// A stage actor for the stage being created, usable at once (see
    /// [`StageContext::stage_actor`]).
    ///
    /// # Panics
    ///
    /// Never for a stage name: it is reduced to valid actor-name characters.
    pub fn stage_actor<L, M, F>(&mut self, handler: F) -> StageActor<M>
    where
        L: GraphStageLogic,
        M: Send + 'static,
        F: FnMut(&mut L, StageActorMessage<M>, &mut StageContext<'_>) -> StageResult + Send + 'static,
    {
        let callback = make_callback(self.host, self.stage, self.handlers, handler);
        let name = self.attributes.name().unwrap_or("stage");
        make_stage_actor(&self.host.system, name, callback, self.on_finish)
    }
}

impl std::fmt::Debug for MatContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MatContext")
            .field("attributes", self.attributes)
            .finish()
    }
}

/// A stage with its types erased, as blueprints hold it.
pub(crate) trait ErasedStage: Send + Sync {
    fn name(&self) -> &'static str;
    fn initial_attributes(&self) -> Attributes;
    fn ports(&self) -> (u16, u16);
    fn outlet_slot(&self) -> SlotKind;
    /// Make the logic; push this stage's materialized value(s) onto `mats`.
    fn create(
        &self,
        cx: &mut MatContext<'_>,
        mats: &mut Vec<Box<dyn Any + Send>>,
    ) -> Box<dyn GraphStageLogic>;
}

impl<S: GraphStage> ErasedStage for S {
    fn name(&self) -> &'static str {
        GraphStage::name(self)
    }
    fn initial_attributes(&self) -> Attributes {
        GraphStage::initial_attributes(self)
    }
    fn ports(&self) -> (u16, u16) {
        (S::Shape::INLETS, S::Shape::OUTLETS)
    }
    fn outlet_slot(&self) -> SlotKind {
        S::Shape::outlet_slot(0)
    }
    fn create(
        &self,
        cx: &mut MatContext<'_>,
        mats: &mut Vec<Box<dyn Any + Send>>,
    ) -> Box<dyn GraphStageLogic> {
        let (logic, mat) = self.create_logic(cx);
        mats.push(Box::new(mat));
        logic
    }
}

/// One half of an async boundary, ready to be placed in its island.
pub(crate) struct Half {
    pub(crate) logic: Box<dyn GraphStageLogic>,
    pub(crate) name: Arc<str>,
    pub(crate) ports: (u16, u16),
    pub(crate) slot: Option<SlotKind>,
    /// The materialized values of the stages fused into this half.
    pub(crate) mats: Vec<Box<dyn Any + Send>>,
}

/// Makes the two halves of an async boundary for one element type.
pub(crate) trait BoundaryFactory: Send + Sync {
    /// The upstream half (the end of the upstream island) and the
    /// downstream half (the start of the downstream island).
    fn create(&self, buffer: usize) -> (Half, Half);

    /// For fusing a sink into the downstream half (see `Source::to_mat`).
    fn as_any(&self) -> &dyn Any;

    /// The buffer size of a stage fused into the downstream half.
    fn buffer(&self) -> Option<usize>;
}

#[derive(Clone)]
pub(crate) enum Node {
    Stage {
        stage: Arc<dyn ErasedStage>,
        attributes: Attributes,
    },
    Boundary(Arc<dyn BoundaryFactory>),
}

impl Node {
    pub(crate) fn stage(stage: impl ErasedStage + 'static) -> Self {
        Node::Stage {
            stage: Arc::new(stage),
            attributes: Attributes::new(),
        }
    }
}

/// One stage of an island before it is created.
enum Planned<'a> {
    User {
        stage: &'a dyn ErasedStage,
        attributes: Attributes,
    },
    Ready(Half),
}

/// Each user stage's materialized value, in node order, and why the
/// stream could not start, if it could not.
pub(crate) type Materialized = (Vec<Box<dyn Any + Send>>, Option<MaterializeError>);

/// Materialize a runnable linear graph: spawn one actor per island, build
/// the islands, start them. Returns each user stage's materialized
/// value, in node order.
///
/// When an island's actor cannot be spawned (the system has terminated),
/// the stream does not run: the islands are still built (so every
/// materialized value exists) and torn down at once, which fails every
/// sink with `AbruptTermination`; the actors already spawned stop.
pub(crate) fn materialize(nodes: &[Node], materializer: &Materializer) -> Materialized {
    if nodes.is_empty() {
        // Nothing to interpret (a fused source handed to a pulling sink).
        return (Vec::new(), None);
    }
    // Cut the node list into islands at the boundaries.
    let mut islands: Vec<Vec<Planned<'_>>> = vec![Vec::new()];
    for (index, node) in nodes.iter().enumerate() {
        match node {
            Node::Stage { stage, attributes } => {
                let attributes = stage_attributes(&**stage, attributes);
                islands
                    .last_mut()
                    .expect("at least one island")
                    .push(Planned::User {
                        stage: &**stage,
                        attributes,
                    });
            }
            Node::Boundary(factory) => {
                // The buffer belongs to the stage that receives from it.
                let buffer = factory.buffer().unwrap_or_else(|| {
                    nodes[index + 1..]
                        .iter()
                        .find_map(|n| match n {
                            Node::Stage { stage, attributes } => {
                                Some(stage_attributes(&**stage, attributes).input_buffer())
                            }
                            Node::Boundary(_) => None,
                        })
                        .unwrap_or(crate::stage::DEFAULT_INPUT_BUFFER)
                });
                let (up, down) = factory.create(buffer);
                islands
                    .last_mut()
                    .expect("at least one island")
                    .push(Planned::Ready(up));
                islands.push(vec![Planned::Ready(down)]);
            }
        }
    }

    let stream = materializer.next_stream_id();
    let system = materializer.system();
    let mut failure: Option<MaterializeError> = None;
    let hosts: Vec<Host> = (0..islands.len())
        .map(|i| {
            let first = islands[i].iter().find_map(|p| match p {
                Planned::User { stage, attributes } => {
                    Some(attributes.name().unwrap_or(stage.name()).to_owned())
                }
                Planned::Ready(_) => None,
            });
            let name = actor_name(stream, i, first.as_deref());
            let island = match system.spawn_system_actor(Props::new(IslandActor::default).with_dispatcher(island_dispatcher(&islands[i])), &name)
            {
                Ok(island) => island,
                Err(error) => {
                    failure.get_or_insert(error.into());
                    stopped_ref(system, &name)
                }
            };
            Host {
                island,
                system: system.clone(),
            }
        })
        .collect();

    let mut mats = Vec::with_capacity(nodes.len());
    let mut built = Vec::with_capacity(islands.len());
    for (planned, host) in islands.into_iter().zip(&hosts) {
        built.push(build_island(planned, host, &mut mats));
    }
    if failure.is_some() {
        let error = StreamError::from_kind(ErrorKind::AbruptTermination);
        for (mut island, host) in built.into_iter().zip(&hosts) {
            host.island.stop();
            island.abort(&error);
        }
    } else {
        for (island, host) in built.into_iter().zip(&hosts) {
            host.island.tell(IslandMsg::Start(Box::new(island)));
        }
    }
    (mats, failure)
}

/// A reference for an island whose actor could not be spawned: already
/// stopped, so what its callbacks and timers send becomes a dead letter.
pub(crate) fn stopped_ref(system: &ActorSystem, name: &str) -> ActorRef<IslandMsg> {
    // `name` comes from `actor_name`, which only makes valid names.
    let function = FunctionRef::new(system, name, Err)
        .or_else(|_| FunctionRef::new(system, "stream", Err))
        .expect("`stream` is a valid actor name");
    function.stop();
    function.actor_ref()
}

fn build_island(
    planned: Vec<Planned<'_>>,
    host: &Host,
    mats: &mut Vec<Box<dyn Any + Send>>,
) -> Island {
    let count = planned.len();
    let mut logics = Vec::with_capacity(count);
    let mut stages = Vec::with_capacity(count);
    let mut conns = Vec::with_capacity(count.saturating_sub(1));
    let mut previous_slot: Option<SlotKind> = None;
    for (index, plan) in planned.into_iter().enumerate() {
        let index32 = u32::try_from(index).expect("fewer than 2^32 stages");
        let mut handlers = Vec::new();
        let mut on_finish = Vec::new();
        let (logic, name, attributes, (ins, outs), slot) = match plan {
            Planned::User { stage, attributes } => {
                let mut cx = MatContext {
                    attributes: &attributes,
                    host,
                    stage: index32,
                    handlers: &mut handlers,
                    on_finish: &mut on_finish,
                };
                let logic = stage.create(&mut cx, mats);
                let name: Arc<str> = attributes.name().unwrap_or(stage.name()).into();
                let ports = stage.ports();
                let slot = (ports.1 > 0).then(|| stage.outlet_slot());
                (logic, name, attributes, ports, slot)
            }
            Planned::Ready(half) => {
                mats.extend(half.mats);
                (
                    half.logic,
                    half.name,
                    Attributes::new(),
                    half.ports,
                    half.slot,
                )
            }
        };
        // Linear wiring: this stage's inlet 0 takes the previous stage's outlet 0.
        let in_conns: Box<[u32]> = if ins > 0 {
            let c = u32::try_from(conns.len()).expect("fewer than 2^32 connections");
            let kind = previous_slot
                .take()
                .expect("a stage with an inlet follows one with an outlet");
            conns.push(Conn::new(index32 - 1, 0, index32, 0, kind));
            Box::new([c])
        } else {
            Box::new([])
        };
        let out_conns: Box<[u32]> = if outs > 0 {
            previous_slot = slot;
            Box::new([u32::try_from(conns.len()).expect("fewer than 2^32 connections")])
        } else {
            Box::new([])
        };
        stages.push(StageMeta {
            name,
            attributes,
            open_ports: ins + outs,
            ins: in_conns,
            outs: out_conns,
            keep_going: false,
            finished: false,
            handlers,
            timers: Vec::new(),
            on_finish,
            idle_requested: false,
        });
        logics.push(logic);
    }
    debug_assert!(
        previous_slot.is_none(),
        "the last stage of an island has no outlet"
    );
    Island {
        logics,
        active: 0,
        starting: 0,
        core: Core {
            events: std::collections::VecDeque::with_capacity(conns.len() * 2 + 4),
            chased: None,
            conns,
            live_stages: stages.len(),
            stages,
            host: host.clone(),
            timer_generation: 0,
            idle: Vec::new(),
        },
    }
}

/// The first dispatcher a stage of the island asks for (the shared pool if none does).
fn island_dispatcher(island: &[Planned<'_>]) -> weir_actor::DispatcherKind {
    let set = |p: &Planned<'_>| match p {
        Planned::User { attributes, .. } => attributes.dispatcher(),
        Planned::Ready(_) => None,
    };
    island.iter().find_map(set).unwrap_or_default()
}

/// The stage's default name, then its own attributes, then the blueprint's.
pub(crate) fn stage_attributes(stage: &dyn ErasedStage, set: &Attributes) -> Attributes {
    Attributes::named(stage.name())
        .and(&stage.initial_attributes())
        .and(set)
}

/// `stream-<n>-<island>-<first stage>`, with the stage name reduced to
/// characters actor names accept.
fn actor_name(stream: u64, island: usize, first: Option<&str>) -> String {
    let mut name = format!("stream-{stream}-{island}");
    if let Some(first) = first {
        name.push('-');
        name.extend(crate::stage::name_chars(first).take(40));
    }
    name
}
