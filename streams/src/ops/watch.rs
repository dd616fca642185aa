//! Watching a stream at one point: `Flow::watch_termination` (a
//! [`Completion`] of how it ended) and `Flow::monitor` (a [`FlowMonitor`]
//! of its state).

use crate::blueprint::Flow;
use crate::completion::{Completer, Completion};
use crate::error::StreamError;
use crate::stage::{
    FlowShape, GraphStage, GraphStageLogic, InPort, MatContext, OutPort, StageContext, StageResult,
};
use crate::sync::{Arc, Mutex};

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

    fn on_upstream_failure(
        &mut self,
        _: InPort,
        error: StreamError,
        _: &mut StageContext<'_>,
    ) -> StageResult {
        self.completer.complete(Err(error.clone()));
        Err(error)
    }

    fn on_downstream_finish(&mut self, port: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        // A normal cancel ends the stream well; one caused by a failure
        // downstream reports it.
        let cause = ctx.cancellation(port);
        self.completer.complete(cause.clone().into_result());
        ctx.cancel_stage(cause);
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
    /// stream's error: upstream's failure, or the failure downstream
    /// cancelled with (Akka's `watchTermination`).
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

/// What a [`FlowMonitor`] last saw (Akka's `FlowMonitorState`).
#[derive(Debug, Clone, PartialEq)]
pub enum MonitorState<T> {
    /// Nothing has passed yet.
    Initialized,
    /// This element passed last.
    Received(T),
    /// The stream completed (or was cancelled normally) here.
    Finished,
    /// The stream failed with this error: upstream, or downstream (the
    /// failure the stage was cancelled with).
    Failed(StreamError),
}

/// The handle `Flow::monitor` materializes: the stream's state at that
/// point, readable from any thread.
#[derive(Clone)]
pub struct FlowMonitor<T> {
    state: Arc<Mutex<MonitorState<T>>>,
}

impl<T: Clone> FlowMonitor<T> {
    /// The current state.
    pub fn state(&self) -> MonitorState<T> {
        self.state.lock().clone()
    }
}

impl<T> std::fmt::Debug for FlowMonitor<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match &*self.state.lock() {
            MonitorState::Initialized => "initialized",
            MonitorState::Received(_) => "received",
            MonitorState::Finished => "finished",
            MonitorState::Failed(_) => "failed",
        };
        f.debug_struct("FlowMonitor")
            .field("state", &state)
            .finish()
    }
}

struct Monitor<T>(std::marker::PhantomData<fn(T)>);

struct MonitorLogic<T> {
    shape: FlowShape<T, T>,
    state: Arc<Mutex<MonitorState<T>>>,
}

impl<T: Clone + Send + 'static> GraphStage for Monitor<T> {
    type Shape = FlowShape<T, T>;
    type Mat = FlowMonitor<T>;

    fn name(&self) -> &'static str {
        "monitor"
    }

    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, FlowMonitor<T>) {
        let state = Arc::new(Mutex::new(MonitorState::Initialized));
        let logic = MonitorLogic::<T> {
            shape: FlowShape::new(),
            state: Arc::clone(&state),
        };
        (Box::new(logic), FlowMonitor { state })
    }
}

impl<T: Clone + Send + 'static> MonitorLogic<T> {
    fn set(&self, state: MonitorState<T>) {
        *self.state.lock() = state;
    }
}

impl<T: Clone + Send + 'static> GraphStageLogic for MonitorLogic<T> {
    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        self.set(MonitorState::Received(element.clone()));
        ctx.push(self.shape.out, element)
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.pull(self.shape.inlet)
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.set(MonitorState::Finished);
        ctx.complete_stage();
        Ok(())
    }

    fn on_upstream_failure(
        &mut self,
        _: InPort,
        error: StreamError,
        _: &mut StageContext<'_>,
    ) -> StageResult {
        self.set(MonitorState::Failed(error.clone()));
        Err(error)
    }

    fn on_downstream_finish(&mut self, port: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        let cause = ctx.cancellation(port);
        self.set(match cause.failure() {
            Some(error) => MonitorState::Failed(error.clone()),
            None => MonitorState::Finished,
        });
        ctx.cancel_stage(cause);
        Ok(())
    }

    fn on_failure(&mut self, error: &StreamError) {
        self.set(MonitorState::Failed(error.clone()));
    }
}

impl<T: Clone + Send + 'static> Flow<T, T, FlowMonitor<T>> {
    /// Pass elements through; the materialized [`FlowMonitor`] tells the
    /// last element seen, or that the stream finished or failed here (Akka's
    /// `monitor`).
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// use weir_streams::MonitorState;
    ///
    /// let system = weir_actor::ActorSystem::new("monitor").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let (monitor, done) = Source::range(1u32..=3)
    ///     .via_mat(Flow::monitor(), Keep::right)
    ///     .to_mat(Sink::ignore(), Keep::both)
    ///     .run(&materializer);
    /// done.wait().unwrap();
    /// assert_eq!(monitor.state(), MonitorState::Finished);
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn monitor() -> Self {
        Flow::from_graph(Monitor(std::marker::PhantomData))
    }
}
