//! [`Driver`]: what runs a plan, decided here once for running and
//! describing a graph alike.

use super::{Made, Plan, PlannedStage, PullPlan};
use crate::fusion::TaskStage;
use crate::stage::ErasedStage;

/// What runs a plan (Pekko names its island kinds as data, tokio its
/// scheduler flavors). Each has one module that runs it.
pub(crate) enum Driver<'p> {
    /// No island and no task: the sink runs the fused source itself,
    /// during materialization (`crate::fusion::pull`).
    Pulled(&'p PullPlan),
    /// One stage that can run alone as one pool task, a fused loop with no
    /// ports (`crate::fusion::task`).
    Task(TaskPlan<'p>),
    /// Islands, each a task of the pool with an inbox, joined by async
    /// boundaries (`crate::interpreter::task`).
    Islands,
}

/// The one stage of a plan run as a pool task.
pub(crate) struct TaskPlan<'p> {
    pub(crate) planned: &'p PlannedStage,
    pub(crate) stage: &'p dyn ErasedStage,
    pub(crate) task: &'p dyn TaskStage,
    /// Its one materialized value's slot.
    pub(crate) slot: usize,
}

impl Plan {
    /// The plan's driver: pulled when the planner made a pull plan; one
    /// task for one island of one stage that can run as a task, with no
    /// boundary, no dispatcher of its own and one materialized value;
    /// islands otherwise.
    pub(crate) fn driver(&self) -> Driver<'_> {
        if let Some(pulled) = &self.pulled {
            return Driver::Pulled(pulled);
        }
        self.as_task().map_or(Driver::Islands, Driver::Task)
    }

    fn as_task(&self) -> Option<TaskPlan<'_>> {
        let [island] = &self.islands[..] else {
            return None;
        };
        let [planned] = &island.stages[..] else {
            return None;
        };
        let Made::Stage(stage) = &planned.made else {
            return None;
        };
        let task = stage.as_task()?;
        if !self.boundaries.is_empty() || planned.attributes.dispatcher().is_some() {
            return None;
        }
        let [slot] = planned.values[..] else {
            return None;
        };
        Some(TaskPlan {
            planned,
            stage: &**stage,
            task,
            slot,
        })
    }
}
