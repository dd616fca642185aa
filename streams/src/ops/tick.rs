//! `Source::tick`: a value at a fixed interval, dropped when nobody asks.

use std::time::Duration;

use crate::blueprint::Source;
use crate::error::ArgumentError;
use crate::stage::{
    AsyncCallback, GraphStage, GraphStageLogic, MatContext, OutPort, SourceShape, StageContext,
    StageResult, TimerKey,
};

/// Stops a [`Source::tick`]: the source completes.
#[derive(Clone, Debug)]
pub struct TickHandle {
    cancel: AsyncCallback<()>,
}

impl TickHandle {
    /// Complete the tick source.
    pub fn cancel(&self) {
        self.cancel.invoke(());
    }
}

struct Tick<T> {
    initial: Duration,
    interval: Duration,
    value: T,
}

struct TickLogic<T> {
    shape: SourceShape<T>,
    initial: Duration,
    interval: Duration,
    value: T,
}

const TICK: TimerKey = TimerKey(0);

impl<T: Clone + Send + Sync + 'static> GraphStage for Tick<T> {
    type Shape = SourceShape<T>;
    type Mat = TickHandle;

    fn name(&self) -> &'static str {
        "tick"
    }

    fn create_logic(&self, cx: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, TickHandle) {
        let cancel = cx.async_callback(|_: &mut TickLogic<T>, (), ctx| {
            ctx.complete_stage();
            Ok(())
        });
        let logic = TickLogic {
            shape: SourceShape::new(),
            initial: self.initial,
            interval: self.interval,
            value: self.value.clone(),
        };
        (Box::new(logic), TickHandle { cancel })
    }
}

impl<T: Clone + Send + 'static> GraphStageLogic for TickLogic<T> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.schedule_periodically(TICK, self.initial, self.interval);
        Ok(())
    }

    fn on_pull(&mut self, _: OutPort, _: &mut StageContext<'_>) -> StageResult {
        Ok(())
    }

    fn on_timer(&mut self, _: TimerKey, ctx: &mut StageContext<'_>) -> StageResult {
        if ctx.is_available(self.shape.out) {
            ctx.push(self.shape.out, self.value.clone())?;
        }
        Ok(())
    }
}

impl<T: Clone + Send + Sync + 'static> Source<T, TickHandle> {
    /// `value` after `initial`, then every `interval`; a tick with no
    /// demand is dropped (as in Akka). Materializes a [`TickHandle`].
    ///
    /// A zero `initial` ticks at once; an `interval` too long for the clock
    /// (`Duration::MAX`) saturates: the next tick never comes.
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` for a zero `interval` (a timer cannot repeat
    /// every zero seconds; it would tick once and never again).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("tick").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let ms = Duration::from_millis(1);
    /// let ticks = Source::tick(ms, ms, "tick")
    ///     .unwrap()
    ///     .take(3)
    ///     .run_with(Sink::collect(), &materializer);
    /// assert_eq!(ticks.wait(), Ok(vec!["tick"; 3]));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn tick(initial: Duration, interval: Duration, value: T) -> Result<Self, ArgumentError> {
        if interval.is_zero() {
            return Err(ArgumentError::Zero {
                argument: "interval",
            });
        }
        Ok(Source::from_graph(Tick {
            initial,
            interval,
            value,
        }))
    }
}
