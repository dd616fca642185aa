//! `BidiFlow::bidirectional_idle_timeout`: fail when no element has
//! passed in either direction for a while (Pekko's
//! `BidiFlow.bidirectionalIdleTimeout`).

use std::marker::PhantomData;
use std::time::{Duration, Instant};

use super::bidi_flow::BidiFlow;
use crate::error::{ErrorKind, StreamError, TimeoutKind};
use crate::stage::{
    BidiShape, GraphStage, GraphStageLogic, InPort, MatContext, OutPort, StageContext, StageResult,
    TimerKey,
};

const CHECK: TimerKey = TimerKey(0);

impl<I: Send + 'static, O: Send + 'static> BidiFlow<I, I, O, O, ()> {
    /// Pass elements both ways unchanged, failing both directions with
    /// [`TimeoutKind::Idle`] (in an [`ErrorKind::Timeout`]) when no element
    /// has passed in either direction for `timeout` (Pekko's
    /// `BidiFlow.bidirectionalIdleTimeout`): a connection that went quiet
    /// both ways is given up, one that talks in only one direction is not.
    /// Each direction completes and cancels on its own. Time comes from the
    /// system's clock (a test clock in tests).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use weir_streams::prelude::*;
    /// use weir_streams::BidiFlow;
    ///
    /// let system = weir_actor::ActorSystem::new("bidi-idle").unwrap();
    /// let mat = Materializer::new(&system);
    /// let idle = BidiFlow::<u32, u32, u32, u32>::bidirectional_idle_timeout(Duration::from_secs(60));
    /// // Joined with an echo: what goes out comes back.
    /// let echoed = idle.join(Flow::new().map(|x: u32| x + 1));
    /// let got = Source::range(1u32..=3).via(echoed).run_with(Sink::collect(), &mat);
    /// assert_eq!(got.wait(), Ok(vec![2, 3, 4]));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn bidirectional_idle_timeout(timeout: Duration) -> Self {
        BidiFlow::from_graph(IdleTimeoutBidi {
            timeout,
            _types: PhantomData,
        })
    }
}

struct IdleTimeoutBidi<I, O> {
    timeout: Duration,
    _types: PhantomData<fn(I, O)>,
}

impl<I: Send + 'static, O: Send + 'static> GraphStage for IdleTimeoutBidi<I, O> {
    type Shape = BidiShape<I, I, O, O>;
    type Mat = ();

    fn name(&self) -> &'static str {
        "bidirectional_idle_timeout"
    }

    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        let logic = IdleLogic::<I, O> {
            shape: BidiShape::new(),
            timeout: self.timeout,
            last: None,
        };
        (Box::new(logic), ())
    }
}

struct IdleLogic<I, O> {
    shape: BidiShape<I, I, O, O>,
    timeout: Duration,
    /// When the last element passed either way (the start, at first).
    last: Option<Instant>,
}

impl<I: Send + 'static, O: Send + 'static> IdleLogic<I, O> {
    /// Fail if the timeout has passed since the last element; else check
    /// again at the moment it would. The check is armed for that moment,
    /// not for a delay counted from `now`: the clock may move between this
    /// reading and the arming (a test clock's `advance` runs the timer at
    /// its deadline and moves on while the island handles it), and a
    /// delay would then land past the deadline.
    fn check(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let now = ctx.now();
        let last = *self.last.get_or_insert(now);
        let Some(deadline) = last.checked_add(self.timeout) else {
            return Ok(()); // a timeout past the clock's range never passes
        };
        if now >= deadline {
            return Err(StreamError::from_kind(ErrorKind::Timeout(
                TimeoutKind::Idle,
                self.timeout,
            )));
        }
        ctx.schedule_once_at(CHECK, deadline);
        Ok(())
    }
}

impl<I: Send + 'static, O: Send + 'static> GraphStageLogic for IdleLogic<I, O> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        self.check(ctx)
    }

    fn on_push(&mut self, port: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.last = Some(ctx.now());
        if port == self.shape.in1.port() {
            let element = ctx.grab(self.shape.in1)?;
            ctx.push(self.shape.out1, element)
        } else {
            let element = ctx.grab(self.shape.in2)?;
            ctx.push(self.shape.out2, element)
        }
    }

    fn on_pull(&mut self, port: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        if port == self.shape.out1.port() {
            ctx.pull(self.shape.in1)
        } else {
            ctx.pull(self.shape.in2)
        }
    }

    fn on_upstream_finish(&mut self, port: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        if port == self.shape.in1.port() {
            ctx.complete(self.shape.out1);
        } else {
            ctx.complete(self.shape.out2);
        }
        Ok(())
    }

    fn on_downstream_finish(&mut self, port: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        if port == self.shape.out1.port() {
            ctx.cancel(self.shape.in1);
        } else {
            ctx.cancel(self.shape.in2);
        }
        Ok(())
    }

    fn on_timer(&mut self, _: TimerKey, ctx: &mut StageContext<'_>) -> StageResult {
        self.check(ctx)
    }
}
