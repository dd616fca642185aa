//! `prefix_and_tail`: the first `n` elements, and the rest as a source.
//!
//! The tail source talks to the stage that made it through async
//! callbacks (Akka's `SubSourceOutlet`): it may run anywhere, on any
//! island, once. A tail not run within the subscription timeout
//! ([`Attributes::subscription_timeout`](crate::Attributes::subscription_timeout))
//! no longer holds the stage and its upstream (mode `Cancel`: the stage
//! stops and a late run fails with `ErrorKind::SubscriptionTimeout`), or
//! is warned about (`Warn`).

use std::time::Duration;

use crate::blueprint::Source;
use crate::error::{ErrorKind, StreamError};
use crate::stage::{
    AsyncCallback, FlowShape, GraphStage, GraphStageLogic, InPort, MatContext, OutPort,
    SourceShape, StageContext, StageResult, SubscriptionTimeoutMode, TimerKey,
};
use crate::sync::{Arc, AtomicUsize, Ordering};

/// The tail's state, shared by the stage and the tail source: not run
/// yet, run (once), or timed out (it can no longer be run).
const FRESH: usize = 0;
const TAKEN: usize = 1;
const TIMED_OUT: usize = 2;

/// The subscription timeout's timer.
const SUBSCRIPTION: u64 = 0;

/// From the tail source to the stage.
enum TailCmd<T> {
    Attach(AsyncCallback<TailMsg<T>>),
    Pull,
    Cancel,
}

/// From the stage to the tail source.
enum TailMsg<T> {
    Element(T),
    End(Option<StreamError>),
}

pub(crate) struct PrefixAndTail<T> {
    shape: FlowShape<T, (Vec<T>, Source<T>)>,
    n: usize,
    prefix: Vec<T>,
    /// Set once the pair is out: the tail's callback, once it attached.
    emitted: bool,
    tail: Option<AsyncCallback<TailMsg<T>>>,
    /// How upstream ended, kept until the tail attaches.
    end: Option<Option<StreamError>>,
    /// The tail's state (`FRESH`, `TAKEN`, `TIMED_OUT`), once handed out.
    tail_state: Option<Arc<AtomicUsize>>,
}

impl<T: Send + 'static> PrefixAndTail<T> {
    pub(crate) fn new(n: usize) -> Self {
        Self {
            shape: FlowShape::new(),
            n,
            prefix: Vec::new(),
            emitted: false,
            tail: None,
            end: None,
            tail_state: None,
        }
    }

    fn emit(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        self.emitted = true;
        let prefix = std::mem::take(&mut self.prefix);
        // Upstream completed before the prefix filled: the tail is empty.
        let done = self.end.is_some();
        let tail = if done {
            Source::empty()
        } else {
            let commands = ctx
                .async_callback(|this: &mut Self, cmd: TailCmd<T>, ctx| this.on_command(cmd, ctx));
            ctx.set_keep_going(true);
            let (after, _) = ctx.attributes().subscription_timeout();
            ctx.schedule_once(SUBSCRIPTION, after);
            let state = Arc::new(AtomicUsize::new(FRESH));
            self.tail_state = Some(Arc::clone(&state));
            Source::from_graph(Tail {
                commands,
                state,
                after,
            })
        };
        ctx.push(self.shape.out, (prefix, tail))?;
        ctx.complete(self.shape.out);
        if done {
            ctx.complete_stage();
        }
        Ok(())
    }

    fn on_command(&mut self, cmd: TailCmd<T>, ctx: &mut StageContext<'_>) -> StageResult {
        match cmd {
            TailCmd::Attach(tail) => {
                if let Some(end) = self.end.take() {
                    tail.invoke(TailMsg::End(end));
                    ctx.complete_stage();
                    return Ok(());
                }
                self.tail = Some(tail);
            }
            TailCmd::Pull => {
                if !ctx.is_closed(self.shape.inlet) && !ctx.has_been_pulled(self.shape.inlet) {
                    ctx.pull(self.shape.inlet)?;
                }
            }
            TailCmd::Cancel => ctx.complete_stage(),
        }
        Ok(())
    }

    fn ended(&mut self, error: Option<StreamError>, ctx: &mut StageContext<'_>) -> StageResult {
        if !self.emitted {
            if let Some(error) = error {
                return Err(error);
            }
            self.end = Some(None);
            if ctx.is_available(self.shape.out) {
                return self.emit(ctx);
            }
            return Ok(());
        }
        match &self.tail {
            Some(tail) => {
                tail.invoke(TailMsg::End(error));
                ctx.complete_stage();
            }
            None => self.end = Some(error),
        }
        Ok(())
    }
}

impl<T: Send + 'static> GraphStageLogic for PrefixAndTail<T> {
    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        if self.n == 0 || self.end.is_some() {
            return self.emit(ctx);
        }
        ctx.pull(self.shape.inlet)
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        if self.emitted {
            if let Some(tail) = &self.tail {
                tail.invoke(TailMsg::Element(element));
            }
            return Ok(());
        }
        self.prefix.push(element);
        if self.prefix.len() >= self.n {
            self.emit(ctx)
        } else {
            ctx.pull(self.shape.inlet)
        }
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.ended(None, ctx)
    }

    fn on_upstream_failure(
        &mut self,
        _: InPort,
        error: StreamError,
        ctx: &mut StageContext<'_>,
    ) -> StageResult {
        self.ended(Some(error), ctx)
    }

    fn on_downstream_finish(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        if !self.emitted {
            ctx.complete_stage();
        }
        Ok(())
    }

    fn on_timer(&mut self, _: TimerKey, ctx: &mut StageContext<'_>) -> StageResult {
        let Some(state) = &self.tail_state else {
            return Ok(());
        };
        let (after, mode) = ctx.attributes().subscription_timeout();
        match mode {
            SubscriptionTimeoutMode::Warn => {
                #[cfg(feature = "tracing")]
                if state.load(Ordering::Acquire) == FRESH {
                    tracing::warn!(
                        target: "weir.stream",
                        ?after,
                        "prefix_and_tail: the tail source was not run in time"
                    );
                }
                let _ = (state, after);
            }
            // A tail run meanwhile has marked itself taken: it attaches.
            _ => {
                if state
                    .compare_exchange(FRESH, TIMED_OUT, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
                {
                    ctx.complete_stage();
                }
            }
        }
        Ok(())
    }
}

/// The tail: materializable once, before its subscription timeout.
struct Tail<T> {
    commands: AsyncCallback<TailCmd<T>>,
    state: Arc<AtomicUsize>,
    after: Duration,
}

struct TailLogic<T> {
    shape: SourceShape<T>,
    commands: AsyncCallback<TailCmd<T>>,
    /// Why this run cannot take the tail (run before, or too late).
    refused: Option<StreamError>,
}

impl<T: Send + 'static> GraphStage for Tail<T> {
    type Shape = SourceShape<T>;
    type Mat = ();

    fn name(&self) -> &'static str {
        "prefix_and_tail_tail"
    }

    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        let taken = self
            .state
            .compare_exchange(FRESH, TAKEN, Ordering::AcqRel, Ordering::Acquire);
        let refused = match taken {
            Ok(_) => None,
            Err(TAKEN) => Some(StreamError::msg(
                "a prefix_and_tail tail source can be materialized only once",
            )),
            Err(_) => Some(StreamError::from_kind(ErrorKind::SubscriptionTimeout(
                self.after,
            ))),
        };
        let logic = TailLogic {
            shape: SourceShape::new(),
            commands: self.commands.clone(),
            refused,
        };
        (Box::new(logic), ())
    }
}

impl<T: Send + 'static> GraphStageLogic for TailLogic<T> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        if let Some(error) = self.refused.take() {
            return Err(error);
        }
        let tail = ctx.async_callback(|this: &mut Self, msg: TailMsg<T>, ctx| match msg {
            TailMsg::Element(element) => ctx.push(this.shape.out, element),
            TailMsg::End(None) => {
                ctx.complete_stage();
                Ok(())
            }
            TailMsg::End(Some(error)) => Err(error),
        });
        self.commands.invoke(TailCmd::Attach(tail));
        Ok(())
    }

    fn on_pull(&mut self, _: OutPort, _: &mut StageContext<'_>) -> StageResult {
        self.commands.invoke(TailCmd::Pull);
        Ok(())
    }

    fn on_downstream_finish(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.commands.invoke(TailCmd::Cancel);
        ctx.complete_stage();
        Ok(())
    }
}
