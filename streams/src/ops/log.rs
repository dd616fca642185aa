//! `log(name)` (feature `tracing`): a pass-through stage that emits a
//! `tracing` event, target `weir.stream`, for every element, for
//! completion and cancellation, and for failure, each at its level of
//! [`LogLevels`] read from the stage's attributes when it starts (Akka's
//! `log` with `Attributes.logLevels`: elements and completion at debug,
//! failure at error, unless set otherwise).

use tracing::Level;
use weir_actor::LogLevel;

use super::util::{logic_flow_with, ports};
use crate::blueprint::Flow;
use crate::error::StreamError;
use crate::stage::{
    Attributes, FlowShape, GraphStageLogic, InPort, LogLevels, OutPort, StageContext, StageResult,
};

/// The `tracing` level of a Weir log level.
fn level(level: Option<LogLevel>) -> Option<Level> {
    level.map(|level| match level {
        LogLevel::Debug => Level::DEBUG,
        LogLevel::Info => Level::INFO,
        LogLevel::Warning => Level::WARN,
        LogLevel::Error => Level::ERROR,
    })
}

/// `tracing::event!` needs its level as a constant: one arm per level.
macro_rules! event_at {
    ($level:expr, $($field:tt)+) => {
        match $level {
            Some(Level::ERROR) => tracing::event!(target: "weir.stream", Level::ERROR, $($field)+),
            Some(Level::WARN) => tracing::event!(target: "weir.stream", Level::WARN, $($field)+),
            Some(Level::INFO) => tracing::event!(target: "weir.stream", Level::INFO, $($field)+),
            Some(Level::DEBUG) => tracing::event!(target: "weir.stream", Level::DEBUG, $($field)+),
            Some(_) => tracing::event!(target: "weir.stream", Level::TRACE, $($field)+),
            None => {}
        }
    };
}

struct Log<T> {
    shape: FlowShape<T, T>,
    name: &'static str,
    element: Option<Level>,
    finish: Option<Level>,
    failure: Option<Level>,
}

impl<T: std::fmt::Debug + Send + 'static> GraphStageLogic for Log<T> {
    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        event_at!(self.element, stream = self.name, element = ?element, "element");
        ctx.push(self.shape.out, element)
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.pull(self.shape.inlet)
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        event_at!(self.finish, stream = self.name, "upstream finished");
        ctx.complete_stage();
        Ok(())
    }

    fn on_upstream_failure(
        &mut self,
        _: InPort,
        error: StreamError,
        _: &mut StageContext<'_>,
    ) -> StageResult {
        event_at!(self.failure, stream = self.name, error = %error, "upstream failed");
        Err(error)
    }

    fn on_downstream_finish(&mut self, port: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        event_at!(self.finish, stream = self.name, "downstream cancelled");
        let cause = ctx.cancellation(port);
        ctx.cancel_stage(cause);
        Ok(())
    }
}

/// The `log` stage; `levels`, when given, are its attributes' default.
pub(crate) fn log<T: std::fmt::Debug + Send + 'static>(
    name: &'static str,
    levels: Option<LogLevels>,
) -> Flow<T, T> {
    let flow = logic_flow_with("log", move |attributes: &Attributes| {
        let levels = attributes.log_levels();
        Log::<T> {
            shape: ports(),
            name,
            element: level(levels.element),
            finish: level(levels.finish),
            failure: level(levels.failure),
        }
    });
    match levels {
        Some(levels) => flow.with_attributes(Attributes::new().with_log_levels(levels)),
        None => flow,
    }
}
