//! The traits a custom stage implements: [`GraphStage`] (the blueprint
//! part) and [`GraphStageLogic`] (the running part).

use std::any::Any;

use super::{Attributes, InPort, OutPort, Shape, StageContext, TimerKey};
use crate::error::StreamError;
use crate::stage::MatContext;

/// What every handler returns: `Err` fails the stage (and with it the
/// stream), attributed to this stage.
pub type StageResult = Result<(), StreamError>;

/// The blueprint of one stage: its shape, and how to make a running
/// [`GraphStageLogic`] and its materialized value. A stage is shared by
/// every materialization of the blueprint that holds it, so `create_logic`
/// takes `&self` and makes fresh state each time.
///
/// Wrap a stage into a blueprint with `Source::from_graph`,
/// `Flow::from_graph` or `Sink::from_graph`.
///
/// # Examples
///
/// A flow that passes on every element and counts them, copied from
/// nothing but this page (see also `examples/custom_stage.rs`):
///
/// ```
/// use weir_streams::prelude::*;
/// use weir_streams::stage::{FlowShape, GraphStage, GraphStageLogic, InPort, MatContext, OutPort, StageContext, StageResult};
///
/// struct Count;
///
/// struct CountLogic {
///     shape: FlowShape<u32, u32>,
///     seen: u64,
/// }
///
/// impl GraphStage for Count {
///     type Shape = FlowShape<u32, u32>;
///     type Mat = ();
///     fn name(&self) -> &'static str {
///         "count"
///     }
///     fn create_logic(&self, _cx: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
///         (Box::new(CountLogic { shape: FlowShape::new(), seen: 0 }), ())
///     }
/// }
///
/// impl GraphStageLogic for CountLogic {
///     fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
///         let element = ctx.grab(self.shape.inlet)?;
///         self.seen += 1;
///         ctx.push(self.shape.out, element)
///     }
///     fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
///         ctx.pull(self.shape.inlet)
///     }
/// }
///
/// let system = weir_actor::ActorSystem::new("count").unwrap();
/// let materializer = Materializer::new(&system);
/// let sum = Source::range(1u32..=3)
///     .via(Flow::from_graph(Count))
///     .run_with(Sink::fold(0, |acc, x| acc + x), &materializer);
/// assert_eq!(sum.wait(), Ok(6));
/// system.terminate().wait().unwrap();
/// ```
pub trait GraphStage: Send + Sync + 'static {
    /// The stage's ports.
    type Shape: Shape;
    /// The value each materialization hands back to the caller of `run`.
    type Mat: Send + 'static;

    /// The stage's default name (used in errors and actor names when the
    /// blueprint sets none).
    fn name(&self) -> &'static str;

    /// Make the running logic and the materialized value. `cx` gives the
    /// stage's attributes and makes async callbacks that the materialized
    /// value may carry.
    fn create_logic(&self, cx: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, Self::Mat);

    /// Attributes the stage starts with (a blueprint's `.named(..)` and
    /// `.with_attributes(..)` override them).
    fn initial_attributes(&self) -> Attributes {
        Attributes::new()
    }

    /// For the junctions of this crate: how the planner may run this
    /// junction when all its inputs are fused iterator sources. Not for
    /// custom stages (the type cannot be made outside the crate).
    #[doc(hidden)]
    fn fused_fan_in(&self) -> Option<crate::fusion::FusedFanIn> {
        None
    }
}

/// The running part of a stage: its state and its handlers. The
/// interpreter calls one handler at a time, on the island's task, and
/// every handler gets a [`StageContext`] to push, pull, grab, complete,
/// fail, cancel, emit, set timers and make async callbacks.
///
/// The defaults follow Akka: an upstream finish completes the stage, an
/// upstream failure fails it with the same error, a downstream finish
/// completes it (cancelling upstream with the same cause). `on_push` and `on_pull` must be
/// written by stages that have an inlet or an outlet.
///
/// A panic in any handler is caught: the stage fails with
/// `ErrorKind::Panicked`, naming the stage, and its
/// [`on_failure`](GraphStageLogic::on_failure) hears of it.
pub trait GraphStageLogic: Any + Send {
    /// Runs once when the island starts, before any other handler.
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let _ = ctx;
        Ok(())
    }

    /// An element arrived on `port`; `grab` it.
    fn on_push(&mut self, port: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let _ = ctx;
        Err(StreamError::protocol(format!(
            "no push handler for inlet {}",
            port.0
        )))
    }

    /// The upstream of `port` completed (after every element it pushed).
    fn on_upstream_finish(&mut self, port: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let _ = port;
        ctx.complete_stage();
        Ok(())
    }

    /// The upstream of `port` failed.
    fn on_upstream_failure(
        &mut self,
        port: InPort,
        error: StreamError,
        ctx: &mut StageContext<'_>,
    ) -> StageResult {
        let _ = (port, ctx);
        Err(error)
    }

    /// Downstream of `port` asks for one element.
    fn on_pull(&mut self, port: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        let _ = ctx;
        Err(StreamError::protocol(format!(
            "no pull handler for outlet {}",
            port.0
        )))
    }

    /// Downstream of `port` cancelled; [`StageContext::cancellation`]
    /// says why. The default stops the stage passing the cause on
    /// upstream ([`StageContext::cancel_stage`]).
    fn on_downstream_finish(&mut self, port: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        let cause = ctx.cancellation(port);
        ctx.cancel_stage(cause);
        Ok(())
    }

    /// A timer set with `schedule_once` / `schedule_periodically` fired.
    fn on_timer(&mut self, key: TimerKey, ctx: &mut StageContext<'_>) -> StageResult {
        let _ = (key, ctx);
        Ok(())
    }

    /// The island ran out of events, after this stage asked with
    /// `StageContext::request_idle_callback` (once per request).
    fn on_idle(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let _ = ctx;
        Ok(())
    }

    /// The stage failed because one of its handlers returned `Err` or
    /// panicked: `error` is what the stream reports (`ErrorKind::Panicked`
    /// for a panic), attributed to this stage. Runs after the stage's ports
    /// are failed and cancelled and before [`post_stop`](Self::post_stop).
    ///
    /// A sink reports the failure in its own materialized value here: it
    /// has no outlet to carry it downstream. Not called for a
    /// [`StageContext::fail_stage`] the stage makes itself (it knows the
    /// error then). A panic in this hook is ignored.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::mpsc::Sender;
    /// use weir_streams::StreamError;
    /// use weir_streams::stage::{GraphStageLogic, InPort, Inlet, StageContext, StageResult};
    ///
    /// struct Parse {
    ///     inlet: Inlet<String>,
    ///     result: Sender<Result<u32, StreamError>>,
    /// }
    ///
    /// impl GraphStageLogic for Parse {
    ///     fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
    ///         let text = ctx.grab(self.inlet)?;
    ///         let n = text.parse::<u32>().map_err(StreamError::custom)?; // fails the stage
    ///         let _ = self.result.send(Ok(n));
    ///         ctx.pull(self.inlet)
    ///     }
    ///     fn on_failure(&mut self, error: &StreamError) {
    ///         // The parse error (or a panic above), named after this stage.
    ///         let _ = self.result.send(Err(error.clone()));
    ///     }
    /// }
    /// ```
    fn on_failure(&mut self, error: &StreamError) {
        let _ = error;
    }

    /// Runs once when the stage has stopped, however it stopped (also when
    /// the island is torn down abruptly). The place to complete promises.
    fn post_stop(&mut self) {}
}
