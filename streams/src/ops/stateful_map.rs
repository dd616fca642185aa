//! `stateful_map` and `map_with_resource`: a state (or a resource) made
//! when the stage starts, each element mapped with it, and an end that
//! runs exactly once however the stage stops.
//!
//! `create` runs in `pre_start` of each run. `on_end(state)` runs once:
//! when upstream completes (its element, if any, is emitted before the
//! completion), and when the stage stops otherwise (upstream failure,
//! downstream cancellation, a panic in `f`): then its element is dropped,
//! as in Pekko's `statefulMap`, whose `onComplete` also runs on cancel.

use crate::stage::{FlowShape, GraphStageLogic, InPort, OutPort, StageContext, StageResult};

pub(super) struct StatefulMap<T, U, S, F, E> {
    pub(super) shape: FlowShape<T, U>,
    pub(super) state: Option<S>,
    pub(super) f: F,
    pub(super) on_end: Option<E>,
}

impl<T, U, S, F, E> StatefulMap<T, U, S, F, E>
where
    E: FnOnce(S) -> Option<U>,
{
    /// Run the end once; its element, if the stage still may emit it.
    fn end(&mut self) -> Option<U> {
        let state = self.state.take()?;
        (self.on_end.take()?)(state)
    }
}

impl<T, U, S, F, E> GraphStageLogic for StatefulMap<T, U, S, F, E>
where
    T: Send + 'static,
    U: Send + 'static,
    S: Send + 'static,
    F: FnMut(&mut S, T) -> U + Send + 'static,
    E: FnOnce(S) -> Option<U> + Send + 'static,
{
    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        let state = self.state.as_mut().expect("the state lives until the end");
        let mapped = (self.f)(state, element);
        ctx.push(self.shape.out, mapped)
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.pull(self.shape.inlet)
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        if let Some(last) = self.end() {
            ctx.emit(self.shape.out, last)?;
        }
        ctx.complete(self.shape.out);
        Ok(())
    }

    fn post_stop(&mut self) {
        // Failure, cancellation or a panic: the end still runs, its element
        // has nowhere to go.
        drop(self.end());
    }
}
