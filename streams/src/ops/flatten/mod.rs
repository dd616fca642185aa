//! Flattening: each element becomes a source whose elements are emitted
//! (`flat_map_concat`, `flat_map_merge`, `switch_map`, `flatten`). The
//! inner sources run inside the flattening stage (see [`sub`]).

mod fused;
pub(crate) mod sub;

pub(crate) use fused::concat_flow;

use std::collections::VecDeque;

use super::sub_island::{SubEvent, SubOwner, SubPoll};
use sub::{SubHost, SubSource};

use crate::blueprint::Source;
use crate::error::StreamError;
use crate::stage::{FlowShape, GraphStageLogic, InPort, OutPort, StageContext, StageResult};

/// How a flattening stage treats a new inner source.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Up to `breadth` inner sources run at once (1: one after another, in order).
    Merge(usize),
    /// A new element cancels the running inner source.
    Switch,
}

pub(crate) struct Flatten<In, T, M, F> {
    pub(crate) shape: FlowShape<In, T>,
    pub(crate) f: F,
    pub(crate) mode: Mode,
    pub(crate) host: Option<SubHost<T>>,
    /// The running inner sources, oldest first (with breadth 1, the one).
    pub(crate) subs: VecDeque<SubSource<T>>,
    /// Where the next round of polling starts (merge fairness).
    pub(crate) next: usize,
    pub(crate) upstream_done: bool,
    pub(crate) _mat: std::marker::PhantomData<fn() -> M>,
}

impl<In, T, M, F> Flatten<In, T, M, F> {
    pub(crate) fn new(f: F, mode: Mode) -> Self {
        Self {
            shape: FlowShape::new(),
            f,
            mode,
            host: None,
            subs: VecDeque::new(),
            next: 0,
            upstream_done: false,
            _mat: std::marker::PhantomData,
        }
    }
}

impl<In, T, M, F> Flatten<In, T, M, F>
where
    In: Send + 'static,
    T: Send + 'static,
    M: 'static,
    F: FnMut(In) -> Source<T, M> + Send + 'static,
{
    /// Emit what an inner source has, if downstream wants it; then pull
    /// upstream or complete as the running inner sources allow.
    fn drive(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let mut tried = 0;
        while tried < self.subs.len() && ctx.is_available(self.shape.out) {
            if self.next >= self.subs.len() {
                self.next = 0;
            }
            let at = self.next;
            match self.subs[at].poll() {
                SubPoll::Ready(element) => {
                    ctx.push(self.shape.out, element)?;
                    if self.subs[at].is_drained() {
                        self.subs.remove(at);
                    } else {
                        // Asked again at once (one element ahead).
                        self.subs[at].request()?;
                        // The next push comes from the next inner source.
                        self.next = at + 1;
                    }
                }
                SubPoll::Pending => {
                    tried += 1;
                    self.next = at + 1;
                }
                SubPoll::Completed => {
                    self.subs.remove(at);
                }
                SubPoll::Failed(error) => {
                    self.cancel_all();
                    return Err(error);
                }
            }
            if self.mode == Mode::Merge(1) {
                self.next = 0;
            }
        }
        self.settle(ctx)
    }

    fn settle(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let room = match self.mode {
            Mode::Merge(breadth) => self.subs.len() < breadth,
            Mode::Switch => true,
        };
        if self.upstream_done {
            if self.subs.is_empty() {
                ctx.complete_stage();
            }
        } else if room && !ctx.has_been_pulled(self.shape.inlet) && !ctx.is_closed(self.shape.inlet)
        {
            ctx.pull(self.shape.inlet)?;
        }
        Ok(())
    }

    fn cancel_all(&mut self) {
        for mut sub in self.subs.drain(..) {
            sub.cancel();
        }
    }
}

impl<In, T, M, F> GraphStageLogic for Flatten<In, T, M, F>
where
    In: Send + 'static,
    T: Send + 'static,
    M: 'static,
    F: FnMut(In) -> Source<T, M> + Send + 'static,
{
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        self.host = Some(SubHost::new::<Self>(ctx));
        Ok(())
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        let source = (self.f)(element);
        if self.mode == Mode::Switch {
            self.cancel_all();
        }
        let host = self.host.as_mut().expect("made in pre_start");
        let mut sub = host.materialize(source, ctx);
        // Asked for one element at once, ahead of demand.
        sub.request()?;
        self.subs.push_back(sub);
        self.drive(ctx)
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.upstream_done = true;
        self.settle(ctx)
    }

    fn on_upstream_failure(
        &mut self,
        _: InPort,
        error: StreamError,
        _: &mut StageContext<'_>,
    ) -> StageResult {
        self.cancel_all();
        Err(error)
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        // One inner source at a time: ask it straight away.
        if self.mode == Mode::Merge(1)
            && let Some(sub) = self.subs.front_mut()
        {
            match sub.poll() {
                SubPoll::Ready(element) => {
                    let drained = sub.is_drained();
                    ctx.push(self.shape.out, element)?;
                    if drained {
                        self.subs.pop_front();
                        return self.settle(ctx);
                    }
                    // Asked again at once (one element ahead).
                    sub.request()?;
                    return Ok(());
                }
                SubPoll::Pending => return Ok(()),
                SubPoll::Completed => {
                    self.subs.pop_front();
                }
                SubPoll::Failed(error) => {
                    self.cancel_all();
                    return Err(error);
                }
            }
        }
        self.drive(ctx)
    }

    fn on_downstream_finish(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.cancel_all();
        ctx.complete_stage();
        Ok(())
    }

    fn post_stop(&mut self) {
        self.cancel_all();
    }
}

impl<In, T, M, F> SubOwner<T> for Flatten<In, T, M, F>
where
    In: Send + 'static,
    T: Send + 'static,
    M: 'static,
    F: FnMut(In) -> Source<T, M> + Send + 'static,
{
    fn on_sub_event(&mut self, event: SubEvent<T>, ctx: &mut StageContext<'_>) -> StageResult {
        let id = event.id();
        // Events of inner sources already gone (cancelled) are dropped.
        let Some(at) = self.subs.iter().position(|s| s.id() == id) else {
            return Ok(());
        };
        self.subs[at].on_event(event);
        // A failed inner source fails the stage at once, dropping an
        // element of it still waiting for demand (as Pekko's flatten does).
        if let Some(error) = self.subs[at].failure() {
            self.cancel_all();
            return Err(error);
        }
        // An inner source that ended with nothing left goes now, demand or
        // not: the stage may be done with it (Pekko's flatten completes
        // when its last inner source does, without a pull).
        if self.subs[at].is_drained() {
            if let SubPoll::Failed(error) = self.subs[at].poll() {
                self.cancel_all();
                return Err(error);
            }
            self.subs.remove(at);
        }
        self.drive(ctx)
    }
}
