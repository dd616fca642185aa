//! The stage as the planner and the executors hold it: its types erased
//! ([`ErasedStage`]), and what its `create_logic` gets ([`MatContext`]).

use std::any::Any;

use crate::fusion::TaskStage;
use crate::stage::core::{Handler, Host};
use crate::stage::{
    AsyncCallback, Attributes, GraphStage, GraphStageLogic, Shape, SlotKind, StageActor,
    StageActorMessage, StageContext, StageResult, make_callback, make_stage_actor,
};

/// What `create_logic` gets: the stage's attributes, the system, and async
/// callbacks that a materialized value may carry (they work before the
/// island starts: the values wait in order).
pub struct MatContext<'a> {
    pub(crate) attributes: &'a Attributes,
    pub(crate) host: &'a Host,
    pub(crate) stage: u32,
    pub(crate) handlers: &'a mut Vec<Option<Handler>>,
    pub(crate) on_finish: &'a mut Vec<Box<dyn FnOnce() + Send>>,
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
        F: FnMut(&mut L, StageActorMessage<M>, &mut StageContext<'_>) -> StageResult
            + Send
            + 'static,
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
    fn outlet_slot(&self, port: u16) -> SlotKind;
    /// Make the logic; push this stage's materialized value(s) onto `mats`.
    fn create(
        &self,
        cx: &mut MatContext<'_>,
        mats: &mut Vec<Box<dyn Any + Send>>,
    ) -> Box<dyn GraphStageLogic>;
    /// The stage as a pool task, when it can run alone in its graph without
    /// an island (`crate::fusion::TaskStage`).
    fn as_task(&self) -> Option<&dyn TaskStage> {
        None
    }
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
    fn outlet_slot(&self, port: u16) -> SlotKind {
        S::Shape::outlet_slot(port)
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

/// The stage's default name, then its own attributes, then the blueprint's.
pub(crate) fn stage_attributes(stage: &dyn ErasedStage, set: &Attributes) -> Attributes {
    Attributes::named(stage.name())
        .and(&stage.initial_attributes())
        .and(set)
}
