//! `log(name)` (feature `tracing`): a pass-through stage that emits a
//! `tracing` event, target `weir.stream`, for every element, for
//! completion and cancellation, and for failure, each at its level of
//! [`LogLevels`] (Akka's `log`: elements and completion at debug, failure
//! at error, unless set otherwise).

use tracing::Level;

use super::util::{logic_flow, ports};
use crate::stage::{FlowShape, GraphStageLogic, InPort, OutPort, StageContext, StageResult};
use crate::{Flow, StreamError};

/// The levels `log` emits at; `None` silences that kind of event.
///
/// # Examples
///
/// ```
/// use weir_streams::LogLevels;
///
/// let quiet_elements = LogLevels { element: None, ..LogLevels::default() };
/// assert_eq!(quiet_elements.failure, Some(tracing::Level::ERROR));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogLevels {
    /// Each element (default debug).
    pub element: Option<Level>,
    /// Completion or cancellation (default debug).
    pub finish: Option<Level>,
    /// Failure (default error).
    pub failure: Option<Level>,
}

impl Default for LogLevels {
    fn default() -> Self {
        Self {
            element: Some(Level::DEBUG),
            finish: Some(Level::DEBUG),
            failure: Some(Level::ERROR),
        }
    }
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
    levels: LogLevels,
}

impl<T: std::fmt::Debug + Send + 'static> GraphStageLogic for Log<T> {
    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        event_at!(self.levels.element, stream = self.name, element = ?element, "element");
        ctx.push(self.shape.out, element)
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.pull(self.shape.inlet)
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        event_at!(self.levels.finish, stream = self.name, "upstream finished");
        ctx.complete_stage();
        Ok(())
    }

    fn on_upstream_failure(&mut self, _: InPort, error: StreamError, _: &mut StageContext<'_>) -> StageResult {
        event_at!(self.levels.failure, stream = self.name, error = %error, "upstream failed");
        Err(error)
    }

    fn on_downstream_finish(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        event_at!(self.levels.finish, stream = self.name, "downstream cancelled");
        ctx.complete_stage();
        Ok(())
    }
}

pub(crate) fn log<T: std::fmt::Debug + Send + 'static>(name: &'static str, levels: LogLevels) -> Flow<T, T> {
    logic_flow("log", move || Log::<T> {
        shape: ports(),
        name,
        levels,
    })
}
