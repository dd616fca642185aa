//! `Flow::watch_termination`: a pass-through stage whose materialized
//! [`Completion`] reports how the stream ended at that point.

use crate::stage::{FlowShape, GraphStage, GraphStageLogic, InPort, MatContext, OutPort, StageContext, StageResult};
use crate::{Completer, Completion, Flow, StreamError};

struct WatchTermination<T>(std::marker::PhantomData<fn(T)>);

struct WatchLogic<T> {
    shape: FlowShape<T, T>,
    completer: Completer<()>,
}

impl<T: Send + 'static> GraphStage for WatchTermination<T> {
    type Shape = FlowShape<T, T>;
    type Mat = Completion<()>;

    fn name(&self) -> &'static str {
        "watch_termination"
    }

    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, Completion<()>) {
        let (completer, completion) = Completer::new();
        let logic = WatchLogic::<T> {
            shape: FlowShape::new(),
            completer,
        };
        (Box::new(logic), completion)
    }
}

impl<T: Send + 'static> GraphStageLogic for WatchLogic<T> {
    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        ctx.push(self.shape.out, element)
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.pull(self.shape.inlet)
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.completer.complete(Ok(()));
        ctx.complete_stage();
        Ok(())
    }

    fn on_upstream_failure(&mut self, _: InPort, error: StreamError, _: &mut StageContext<'_>) -> StageResult {
        self.completer.complete(Err(error.clone()));
        Err(error)
    }

    fn on_downstream_finish(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.completer.complete(Ok(())); // a cancel ends the stream normally here
        ctx.complete_stage();
        Ok(())
    }

    /// Torn down (the island stopped) or failed in this stage.
    fn on_failure(&mut self, error: &StreamError) {
        self.completer.complete(Err(error.clone()));
    }
}

impl<T: Send + 'static> Flow<T, T, Completion<()>> {
    /// Pass elements through; the materialized [`Completion`] completes
    /// when the stream completes or is cancelled here, and fails with the
    /// stream's error (Akka's `watchTermination`).
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("watch").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let (watched, sum) = Source::range(1u32..=3)
    ///     .via_mat(Flow::watch_termination(), Keep::right)
    ///     .to_mat(Sink::fold(0, |a, x| a + x), Keep::both)
    ///     .run(&materializer);
    /// assert_eq!(sum.wait(), Ok(6));
    /// assert_eq!(watched.wait(), Ok(()));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn watch_termination() -> Self {
        Flow::from_graph(WatchTermination(std::marker::PhantomData))
    }
}
