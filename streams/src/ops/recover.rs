//! `recover_with_retries`: on an upstream failure, continue with a
//! fallback source, and with another when that one fails, up to a number
//! of attempts (Akka's `recoverWithRetries`). The fallback runs as its own
//! stream (see `sub_source`), one element per demand.

use super::sub_source::{self, FromInner, ToInner};
use super::util::{logic_flow, ports};
use crate::blueprint::{Flow, Source};
use crate::error::StreamError;
use crate::stage::{
    AsyncCallback, FlowShape, GraphStageLogic, InPort, OutPort, StageContext, StageResult,
};

struct RecoverWithRetries<T, F> {
    shape: FlowShape<T, T>,
    f: F,
    attempts_left: u64,
    run: u64,
    events: Option<AsyncCallback<FromInner<T>>>,
    inner: Option<AsyncCallback<ToInner>>,
}

impl<T, F> RecoverWithRetries<T, F>
where
    T: Send + 'static,
    F: FnMut(&StreamError) -> Option<Source<T>> + Send + 'static,
{
    fn recover(&mut self, error: StreamError, ctx: &mut StageContext<'_>) -> StageResult {
        self.inner = None;
        if self.attempts_left == 0 {
            return Err(error);
        }
        let (Some(fallback), Some(events)) = ((self.f)(&error), self.events.clone()) else {
            return Err(error);
        };
        self.attempts_left -= 1;
        self.run += 1;
        let inner = sub_source::run(fallback, self.run, events, ctx);
        if ctx.is_available(self.shape.out) {
            inner.invoke(ToInner::Pull);
        }
        self.inner = Some(inner);
        Ok(())
    }

    fn on_inner(&mut self, event: FromInner<T>, ctx: &mut StageContext<'_>) -> StageResult {
        match event {
            FromInner::Element(run, element) if run == self.run => {
                ctx.push(self.shape.out, element)
            }
            FromInner::Ended(run, None) if run == self.run => {
                self.inner = None;
                ctx.complete_stage();
                Ok(())
            }
            FromInner::Ended(run, Some(error)) if run == self.run => self.recover(error, ctx),
            _ => Ok(()),
        }
    }
}

impl<T, F> GraphStageLogic for RecoverWithRetries<T, F>
where
    T: Send + 'static,
    F: FnMut(&StreamError) -> Option<Source<T>> + Send + 'static,
{
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        self.events =
            Some(ctx.async_callback(|this: &mut Self, event, ctx| this.on_inner(event, ctx)));
        Ok(())
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        ctx.push(self.shape.out, element)
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        match &self.inner {
            Some(inner) => {
                inner.invoke(ToInner::Pull);
                Ok(())
            }
            None => ctx.pull(self.shape.inlet),
        }
    }

    fn on_upstream_failure(
        &mut self,
        _: InPort,
        error: StreamError,
        ctx: &mut StageContext<'_>,
    ) -> StageResult {
        self.recover(error, ctx)
    }

    fn on_downstream_finish(&mut self, port: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        if let Some(inner) = self.inner.take() {
            inner.invoke(ToInner::Cancel);
        }
        let cause = ctx.cancellation(port);
        ctx.cancel_stage(cause);
        Ok(())
    }

    fn post_stop(&mut self) {
        if let Some(inner) = self.inner.take() {
            inner.invoke(ToInner::Cancel);
        }
        self.events = None;
    }
}

pub(crate) fn recover_with_retries<T, F>(attempts: u64, f: F) -> Flow<T, T>
where
    T: Send + 'static,
    F: FnMut(&StreamError) -> Option<Source<T>> + Clone + Send + Sync + 'static,
{
    logic_flow("recover_with_retries", move || RecoverWithRetries {
        shape: ports(),
        f: f.clone(),
        attempts_left: attempts,
        run: 0,
        events: None,
        inner: None,
    })
}
