//! [`RunnableGraph`]: a closed blueprint, ready to run.

use crate::error::MaterializeError;
use crate::interpreter::materialize;
use crate::materializer::Materializer;
use crate::plan::Plan;
use crate::plan::graph::Graph;
use crate::sync::{Arc, OnceLock};

/// A source connected to a sink: run it to start the stream and get the
/// materialized value. Reusable: each `run` is an independent stream.
///
/// # Examples
///
/// ```
/// use weir_streams::prelude::*;
///
/// let system = weir_actor::ActorSystem::new("runnable").unwrap();
/// let materializer = Materializer::new(&system);
/// let graph = Source::range(1u32..=3).to_mat(Sink::collect(), Keep::right);
/// assert_eq!(graph.run(&materializer).wait(), Ok(vec![1, 2, 3]));
/// assert_eq!(graph.run(&materializer).wait(), Ok(vec![1, 2, 3]));
/// system.terminate().wait().unwrap();
/// ```
#[must_use = "a RunnableGraph does nothing until it is run"]
pub struct RunnableGraph<Mat> {
    pub(crate) graph: Graph<Mat>,
    /// The plan for each fusion setting (`[off, on]`), made by the first
    /// run that needs it. A plan holds factories only (each run makes
    /// fresh logics from it), so every later run of this graph, and of
    /// its clones, skips planning.
    plans: [OnceLock<Arc<Plan>>; 2],
}

impl<Mat> Clone for RunnableGraph<Mat> {
    fn clone(&self) -> Self {
        Self {
            graph: self.graph.clone(),
            plans: self.plans.clone(),
        }
    }
}

impl<Mat: 'static> RunnableGraph<Mat> {
    pub(crate) fn from_graph(graph: Graph<Mat>) -> Self {
        Self {
            graph,
            plans: Default::default(),
        }
    }

    /// Start the stream; returns at once with the materialized value
    /// (handles in it work immediately, before the stream's actors start).
    ///
    /// When the stream cannot start (its actor system has terminated),
    /// nothing panics: every sink's completion reports
    /// [`ErrorKind::AbruptTermination`](crate::ErrorKind::AbruptTermination)
    /// and handles in the materialized value find the stream gone. Use
    /// [`try_run`](Self::try_run) to learn it at once.
    ///
    /// # Panics
    ///
    /// If a stage's `create_logic` panics.
    pub fn run(&self, materializer: &Materializer) -> Mat {
        let (values, _) = self.materialize(materializer);
        self.assemble(values)
    }

    /// Like [`run`](Self::run), but a stream that cannot start is an error
    /// here (its stages were created and torn down: nothing runs).
    ///
    /// # Errors
    ///
    /// [`MaterializeError::SystemTerminated`] once the materializer's actor
    /// system is terminating or has terminated.
    ///
    /// # Panics
    ///
    /// If a stage's `create_logic` panics.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("try-run").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let graph = Source::range(1u32..=3).async_boundary().to_mat(Sink::collect(), Keep::right);
    /// let done = graph.try_run(&materializer).expect("the system runs");
    /// assert_eq!(done.wait(), Ok(vec![1, 2, 3]));
    /// system.terminate().wait().unwrap();
    /// assert!(graph.try_run(&materializer).is_err());
    /// ```
    pub fn try_run(&self, materializer: &Materializer) -> Result<Mat, MaterializeError> {
        match self.materialize(materializer) {
            (values, None) => Ok(self.assemble(values)),
            (_, Some(error)) => Err(error),
        }
    }

    /// How the graph runs with `materializer` (its fusion setting), before
    /// it runs: the driver, the islands with their fused stages and the
    /// async boundaries between them. Prints as text; renders as Mermaid
    /// or Graphviz DOT. The plan is made once and kept for the runs.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// use weir_streams::Driver;
    ///
    /// let system = weir_actor::ActorSystem::new("describe").unwrap();
    /// let mat = Materializer::new(&system);
    /// let graph = Source::range(1u32..=3)
    ///     .map(|x| x * 2)
    ///     .async_boundary()
    ///     .filter(|x| x % 3 != 0)
    ///     .to_mat(Sink::collect(), Keep::right);
    /// let plan = graph.describe(&mat);
    /// assert_eq!(plan.driver, Driver::Islands);
    /// assert_eq!(plan.islands.len(), 2);
    /// assert_eq!(plan.boundaries, vec![(0, 1)]);
    /// println!("{plan}");
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn describe(&self, materializer: &Materializer) -> crate::blueprint::PlanDescription {
        crate::blueprint::PlanDescription::of(self.plan(materializer.fusion()))
    }

    /// The plan for a fusion setting (see `crate::plan`), made once.
    fn plan(&self, fusion: bool) -> &Arc<Plan> {
        self.plans[usize::from(fusion)].get_or_init(|| {
            Arc::new(crate::plan::plan(
                &self.graph.nodes,
                &self.graph.edges,
                fusion,
            ))
        })
    }

    /// Plan the graph (once per fusion setting) and run the plan.
    fn materialize(&self, materializer: &Materializer) -> crate::interpreter::Materialized {
        let plan = self.plan(materializer.fusion());
        materialize(plan, self.graph.nodes.len(), materializer)
    }

    fn assemble(&self, mut values: Vec<Option<Box<dyn std::any::Any + Send>>>) -> Mat {
        debug_assert_eq!(values.len(), self.graph.nodes.len(), "one value per node");
        (self.graph.mat)(&mut values)
    }

    /// Transform the materialized value.
    pub fn map_materialized_value<M2: 'static>(
        self,
        f: impl Fn(Mat) -> M2 + Send + Sync + 'static,
    ) -> RunnableGraph<M2> {
        // Same nodes and edges: the plans made so far still apply.
        RunnableGraph {
            graph: self.graph.map_mat(f),
            plans: self.plans,
        }
    }
}

impl<Mat> std::fmt::Debug for RunnableGraph<Mat> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunnableGraph")
            .field("stages", &self.graph.nodes.len())
            .finish()
    }
}
