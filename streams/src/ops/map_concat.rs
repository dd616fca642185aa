//! `map_concat`: each element becomes zero or more, emitted lazily on demand.
//!
//! Under a supervision strategy, a panic in `f` or in the iterator it
//! gave drops the rest of that element's outputs; `Restart` also takes a
//! fresh clone of `f`.

use super::util::{logic_flow_with, ports};
use crate::blueprint::Flow;
use crate::stage::{
    Attributes, Directive, FlowShape, GraphStageLogic, InPort, OutPort, StageContext, StageResult,
    SupervisionStrategy, supervised,
};

struct MapConcat<T, I: IntoIterator, F> {
    shape: FlowShape<T, I::Item>,
    f: F,
    current: Option<std::iter::Peekable<I::IntoIter>>,
    upstream_done: bool,
    /// The strategy, and `f` as the blueprint holds it (for a restart).
    restart: Option<(SupervisionStrategy, F)>,
}

pub(crate) fn map_concat<T, I, F>(f: F) -> Flow<T, I::Item>
where
    T: Send + 'static,
    I: IntoIterator + 'static,
    I::Item: Send + 'static,
    I::IntoIter: Send,
    F: FnMut(T) -> I + Clone + Send + Sync + 'static,
{
    logic_flow_with("map_concat", move |attributes: &Attributes| MapConcat::<
        T,
        I,
        F,
    > {
        shape: ports(),
        f: f.clone(),
        current: None,
        upstream_done: false,
        restart: attributes
            .supervision_strategy()
            .map(|s| (s.clone(), f.clone())),
    })
}

impl<T, I, F> MapConcat<T, I, F>
where
    T: Send + 'static,
    I: IntoIterator + 'static,
    I::Item: Send + 'static,
    I::IntoIter: Send,
    F: FnMut(T) -> I + Clone + Send + 'static,
{
    /// What a failure the strategy did not stop leaves: the current
    /// iterator is dropped; a restart takes a fresh `f`.
    fn dropped(&mut self, directive: Directive) {
        self.current = None;
        if let (Directive::Restart, Some((_, f))) = (directive, &self.restart) {
            self.f = f.clone();
        }
    }

    /// Push the next element of the current iterator, or ask upstream for more.
    fn advance(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let current = &mut self.current;
        match supervised(self.restart.as_ref().map(|r| &r.0), || {
            current.as_mut().and_then(Iterator::next)
        }) {
            Ok(Some(next)) => {
                ctx.push(self.shape.out, next)?;
                // Know at once when the iterator is spent, so an upstream
                // completion is passed on without waiting for another pull.
                let current = &mut self.current;
                let more = supervised(self.restart.as_ref().map(|r| &r.0), || {
                    current.as_mut().is_some_and(|it| it.peek().is_some())
                });
                match more {
                    Ok(true) => return Ok(()),
                    Ok(false) => self.current = None,
                    Err(directive) => self.dropped(directive),
                }
                if self.upstream_done {
                    ctx.complete_stage();
                }
                return Ok(());
            }
            Ok(None) => {}
            Err(directive) => self.dropped(directive),
        }
        self.current = None;
        if self.upstream_done {
            ctx.complete_stage();
            Ok(())
        } else {
            ctx.pull(self.shape.inlet)
        }
    }
}

impl<T, I, F> GraphStageLogic for MapConcat<T, I, F>
where
    T: Send + 'static,
    I: IntoIterator + 'static,
    I::Item: Send + 'static,
    I::IntoIter: Send,
    F: FnMut(T) -> I + Clone + Send + 'static,
{
    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.advance(ctx)
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        let f = &mut self.f;
        match supervised(self.restart.as_ref().map(|r| &r.0), || {
            f(element).into_iter().peekable()
        }) {
            Ok(outputs) => self.current = Some(outputs),
            Err(directive) => self.dropped(directive),
        }
        self.advance(ctx)
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.upstream_done = true;
        if self.current.is_none() {
            ctx.complete_stage();
        }
        Ok(())
    }
}
