//! The stage that splits a stream into substreams and runs them (see
//! `runner`): routing by a [`Splitter`], back-pressure, and merging the
//! substreams' output back (or ending each in its own sink).

use std::sync::Arc;

use super::direct::{Body, Direct, DirectPlan};
use super::pump::Pump;
use super::runner::{self, Tail};
use super::splitters::{Route, Splitter};
use super::table::Table;
use crate::blueprint::Flow;
use crate::error::StreamError;
use crate::ops::sub_island::{SubEvent, SubOwner, SubPoll};
use crate::stage::{
    AsyncCallback, FlowShape, GraphStageLogic, InPort, OutPort, StageContext, StageResult,
    SupervisionStrategy, supervised,
};

/// The most slots any splitting stage visited closing substream inputs
/// beyond one per substream it opened: 0 while closing is linear (the
/// linearity test reads it).
#[cfg(all(test, not(loom)))]
pub(super) static EXTRA_CLOSE_WORK: crate::sync::StaticAtomicU64 =
    crate::sync::StaticAtomicU64::new(0);

pub(crate) struct Substreams<T, U> {
    pub(crate) shape: FlowShape<T, U>,
    pub(crate) splitter: Box<dyn Splitter<T>>,
    pub(crate) flow: Flow<T, U, ()>,
    pub(crate) tail: Tail<U>,
    /// Set when every substream runs directly (and fusion is on).
    direct: Option<Arc<DirectPlan<T, U>>>,
    /// How many substreams run at once (more wait, holding back upstream).
    pub(crate) parallelism: usize,
    /// The splitter may end a substream after an element (`split_after`).
    closes_after: bool,
    /// The running substreams.
    subs: Table<T, U>,
    /// Every substream's input was closed after upstream ended (once).
    inputs_closed: bool,
    /// `group_by` owes upstream a pull (Pekko's `GroupBy` pulls when the
    /// flattening stage asks for a new substream, a substream cancels or
    /// an element is dropped), besides pulling for a substream that asks.
    pull_owed: bool,
    /// Downstream cancelled: new substreams are not opened, running ones
    /// run on until every stage in them has stopped.
    master_closed: bool,
    /// Slots visited closing inputs (the linearity test).
    #[cfg(all(test, not(loom)))]
    close_work: u64,
    callbacks: Option<(AsyncCallback<SubEvent<U>>, AsyncCallback<u64>)>,
    /// An element that waits for its substream to take it (or to exist).
    pub(super) pending: Option<(T, Route)>,
    pub(super) upstream_done: bool,
    /// Set when the stage pulls a fused source itself (no inlet).
    pub(super) input: Option<Box<Pump<T>>>,
    /// Asked when the key function or predicate panics: resume and
    /// restart drop the element.
    strategy: Option<SupervisionStrategy>,
}

impl<T: Send + 'static, U: Send + 'static> Substreams<T, U> {
    pub(crate) fn new(
        splitter: Box<dyn Splitter<T>>,
        flow: Flow<T, U, ()>,
        tail: Tail<U>,
        direct: Option<Arc<DirectPlan<T, U>>>,
        parallelism: usize,
    ) -> Self {
        let closes_after = splitter.may_close_after();
        Self {
            shape: FlowShape::new(),
            splitter,
            flow,
            tail,
            direct,
            parallelism,
            closes_after,
            subs: Table::new(),
            inputs_closed: false,
            pull_owed: true,
            master_closed: false,
            #[cfg(all(test, not(loom)))]
            close_work: 0,
            callbacks: None,
            pending: None,
            upstream_done: false,
            input: None,
            strategy: None,
        }
    }

    /// Honour `strategy` for the user's key function or predicate.
    pub(crate) fn supervised_by(mut self, strategy: Option<SupervisionStrategy>) -> Self {
        self.strategy = strategy;
        self
    }

    /// Where `element` goes; a panic in the user's function that the
    /// strategy resumes (or restarts: the function is stateless to the
    /// stage) drops the element.
    pub(super) fn route(&mut self, element: &T) -> Result<Route, StreamError> {
        let splitter = &mut self.splitter;
        supervised(self.strategy.as_ref(), || splitter.route(element)).unwrap_or(Ok(Route::Drop))
    }

    /// Account for what substream `id` did: its output ended (it frees
    /// its place for `parallelism`; returns whether it did now), or
    /// every stage in it stopped (it leaves).
    fn reap(&mut self, id: u64, ctx: &mut StageContext<'_>) -> bool {
        let Some(sub) = self.subs.get(id) else {
            return false;
        };
        let ended = !sub.output_done && sub.runner.output_drained();
        if ended {
            sub.output_done = true;
        }
        let (gone, input_closed) = (sub.output_done && sub.runner.is_done(), sub.input_closed);
        if ended {
            self.subs.live -= 1;
            // A place freed: the flattening stage asks for a new substream.
            self.pull_owed = true;
        }
        if gone {
            self.subs.remove(id);
            if !input_closed {
                self.sub_cancelled(id, ctx);
            }
        }
        ended
    }

    fn open(&mut self, ctx: &mut StageContext<'_>) -> Result<u64, StreamError> {
        let id = self.subs.reserve();
        let runner = match &self.direct {
            Some(plan) => Body::Direct(Direct::new(plan)),
            None => {
                let (events, wake) = self.callbacks.as_ref().expect("made in pre_start");
                match runner::start(id, &self.flow, &self.tail, events, wake, ctx) {
                    Ok(runner) => Body::Island(runner),
                    Err(error) => {
                        self.subs.release(id);
                        return Err(error);
                    }
                }
            }
        };
        self.subs.insert(id, runner);
        // With room for more, the flattening stage asks for another.
        self.pull_owed = self.subs.live < self.parallelism;
        // Asked for one element at once, ahead of demand (Pekko's
        // `FlattenMerge` pulls each source it takes in).
        if let Some(sub) = self.subs.get(id) {
            sub.runner.request()?;
        }
        self.subs.mark(id);
        Ok(id)
    }

    /// Hand the pending element over if its substream takes it now.
    fn deliver(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let Some((element, route)) = self.pending.take() else {
            return Ok(());
        };
        let id = match route {
            Route::Drop => {
                self.pull_owed = true;
                return Ok(());
            }
            Route::To(id) => id,
            Route::New => {
                if let Some(id) = self.splitter.close_before()
                    && let Some(sub) = self.subs.get(id)
                    && !sub.input_closed
                {
                    sub.input_closed = true;
                    sub.runner.close_input(None);
                    self.subs.mark(id);
                    self.reap(id, ctx);
                }
                if self.master_closed {
                    return Ok(()); // nobody would read a new substream
                }
                if self.subs.live >= self.parallelism {
                    self.pending = Some((element, Route::New));
                    return Ok(());
                }
                let id = self.open(ctx)?;
                self.splitter.opened(id);
                id
            }
        };
        let Some(sub) = self.subs.get(id) else {
            return Ok(()); // its substream is gone: nothing takes it
        };
        if sub.input_closed {
            return Ok(());
        }
        if sub.runner.input_cancelled() {
            sub.input_closed = true;
            self.sub_cancelled(id, ctx);
            return Ok(());
        }
        if !sub.runner.wants() {
            self.pending = Some((element, Route::To(id)));
            return Ok(());
        }
        let splitter = &mut self.splitter;
        let Ok(close) = supervised(self.strategy.as_ref(), || splitter.close_after(&element))
        else {
            return Ok(()); // the predicate panicked, resumed: the element is dropped
        };
        let sub = self.subs.get(id).expect("looked up above");
        sub.runner.offer(element)?;
        // The element ended it (a `take`): its key closes now, before the
        // next element is routed, whenever its output is taken.
        let cancelled = !close && sub.runner.input_cancelled();
        if close {
            sub.input_closed = true;
            sub.runner.close_input(None);
        } else if cancelled {
            sub.input_closed = true;
        }
        // A substream that only took its element (a fold, say) has
        // nothing to poll for.
        if close || cancelled || sub.runner.may_give() {
            self.subs.mark(id);
        }
        if cancelled {
            self.sub_cancelled(id, ctx);
        }
        if close {
            self.reap(id, ctx);
        }
        Ok(())
    }

    /// An element for open substream `id`: straight into it when it runs
    /// directly and nothing else waits (the common case, one call per
    /// element), else through [`drive`](Self::drive).
    pub(super) fn push_to(
        &mut self,
        id: u64,
        element: T,
        ctx: &mut StageContext<'_>,
    ) -> StageResult {
        // Output waits only when downstream can take it.
        let quiet = self.subs.quiet() || !ctx.is_available(self.shape.out);
        if !self.closes_after
            && quiet
            && let Some(sub) = self.subs.get(id)
            && !sub.input_closed
            && let Body::Direct(direct) = &mut sub.runner
            && direct.wants()
        {
            direct.offer(element)?;
            if !direct.wants() {
                // An operator completed: the substream cancelled its
                // input (its key closes now) and has its result.
                sub.input_closed = true;
                self.subs.mark(id);
                self.sub_cancelled(id, ctx);
                return self.drive(ctx);
            }
            // Pushed to us, so not pulled again; a completion that
            // arrived with the element pulls nothing. A fused source's
            // loop goes on by itself.
            if self.input.is_none() && !ctx.is_closed(self.shape.inlet) {
                ctx.pull(self.shape.inlet)?;
            }
            return Ok(());
        }
        self.pending = Some((element, Route::To(id)));
        self.drive(ctx)
    }

    /// Move elements along until nothing more can move now.
    pub(super) fn drive(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        loop {
            self.deliver(ctx)?;
            if self.upstream_done && self.pending.is_none() && !self.inputs_closed {
                // Once: no substream opens after this.
                self.inputs_closed = true;
                self.close_all(None, ctx);
            }
            let freed = self.collect(ctx)?;
            // Polling asks substreams for output, which may make the
            // pending element's substream ask for input: go round again.
            if self.pending.is_none() || !(freed || self.pending_ready()) {
                break;
            }
        }
        if self.subs.hosted == 0
            && (self.master_closed || self.upstream_done && self.pending.is_none())
        {
            ctx.complete_stage();
            return Ok(());
        }
        if self.upstream_done && self.pending.is_none() && self.subs.live == 0 {
            // Substreams whose output ended still run (keep going).
            ctx.complete(self.shape.out);
            return Ok(());
        }
        if self.pending.is_none() && !self.upstream_done {
            if self.input.is_some() {
                return self.pump(ctx);
            }
            if !ctx.has_been_pulled(self.shape.inlet)
                && !ctx.is_closed(self.shape.inlet)
                && self.upstream_wanted()
            {
                self.pull_owed = false;
                ctx.pull(self.shape.inlet)?;
            }
        }
        Ok(())
    }

    /// Upstream completed.
    pub(super) fn upstream_finished(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        self.upstream_done = true;
        self.drive(ctx)
    }

    /// Upstream failed: every substream sees it, then the stage fails.
    pub(super) fn upstream_failed(
        &mut self,
        error: StreamError,
        ctx: &mut StageContext<'_>,
    ) -> StageResult {
        self.pending = None;
        self.close_all(Some(error.clone()), ctx);
        Err(error)
    }

    /// Whether upstream is asked for an element now (with none pending),
    /// as by Pekko's splitting stages: `split_*` when the substream the
    /// next element goes to asks for one (with none open, the element
    /// opens one or is drained); `group_by` when a substream asks or a
    /// pull is owed (see `pull_owed`).
    fn upstream_wanted(&mut self) -> bool {
        match self.splitter.current() {
            None => {
                self.pull_owed
                    || self
                        .subs
                        .iter_mut()
                        .any(|sub| !sub.input_closed && sub.runner.wants())
            }
            Some(None) => true,
            Some(Some(id)) => self.subs.get(id).is_none_or(|sub| {
                sub.input_closed || sub.runner.wants() || sub.runner.input_cancelled()
            }),
        }
    }

    /// Whether the pending element can move now.
    fn pending_ready(&mut self) -> bool {
        let (live, parallelism) = (self.subs.live, self.parallelism);
        match &self.pending {
            None => false,
            Some((_, Route::Drop)) => true,
            Some((_, Route::New)) => live < parallelism,
            Some((_, Route::To(id))) => {
                let id = *id;
                match self.subs.get(id) {
                    Some(sub) => {
                        sub.input_closed || sub.runner.wants() || sub.runner.input_cancelled()
                    }
                    None => true,
                }
            }
        }
    }

    /// Emit substream output while downstream wants it, and drop finished
    /// substreams; whether one finished. Only substreams marked dirty are
    /// polled.
    fn collect(&mut self, ctx: &mut StageContext<'_>) -> Result<bool, StreamError> {
        let mut freed = false;
        let to_sink = matches!(self.tail, Tail::To(_));
        while to_sink || ctx.is_available(self.shape.out) {
            let Some(next) = self.subs.next_dirty() else {
                break;
            };
            let Some(sub) = next else {
                continue;
            };
            let id = sub.id;
            let poll = sub.runner.poll();
            if !sub.input_closed && sub.runner.input_cancelled() {
                sub.input_closed = true;
                self.sub_cancelled(id, ctx);
            }
            match poll {
                SubPoll::Ready(element) => {
                    ctx.push(self.shape.out, element)?;
                    // Asked again at once, one element ahead of demand;
                    // it may have more: after the others (fairness); or it
                    // ended with this one (no demand needed to see that).
                    if let Some(sub) = self.subs.get(id) {
                        sub.runner.request()?;
                    }
                    if !self.reap(id, ctx) {
                        self.subs.mark(id);
                    }
                }
                SubPoll::Pending => {}
                SubPoll::Completed => freed |= self.reap(id, ctx),
                SubPoll::Failed(error) => return Err(error),
            }
        }
        Ok(freed)
    }

    fn sub_cancelled(&mut self, id: u64, ctx: &mut StageContext<'_>) {
        self.pull_owed = true;
        if self.splitter.cancelled(id) {
            self.pending = None;
            self.upstream_done = true;
            match self.input.as_deref_mut() {
                Some(pump) => pump.done = true,
                None => ctx.cancel(self.shape.inlet),
            }
        }
    }

    fn close_all(&mut self, error: Option<StreamError>, ctx: &mut StageContext<'_>) {
        let mut closed = Vec::new();
        #[cfg(all(test, not(loom)))]
        {
            self.close_work += self.subs.slots() as u64;
        }
        for sub in self.subs.iter_mut() {
            if !sub.input_closed {
                sub.input_closed = true;
                sub.runner.close_input(error.clone());
                closed.push(sub.id);
            }
        }
        for id in closed {
            self.subs.mark(id);
            self.reap(id, ctx);
        }
    }

    /// Downstream cancelled: cancel every substream's output; those with
    /// a stage that runs on (a tail being read elsewhere) stay, fed by
    /// upstream, until they stop.
    fn close_master(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        self.master_closed = true;
        self.subs.live = 0;
        let mut gone = Vec::new();
        for sub in self.subs.iter_mut() {
            sub.output_done = true;
            sub.runner.cancel_output();
            if sub.runner.is_done() {
                gone.push(sub.id);
            }
        }
        for id in gone {
            if let Some(sub) = self.subs.remove(id)
                && !sub.input_closed
            {
                self.sub_cancelled(id, ctx);
            }
        }
        self.drive(ctx)
    }

    fn clear(&mut self) {
        self.subs.clear();
    }
}

impl<T: Send + 'static, U: Send + 'static> GraphStageLogic for Substreams<T, U> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        if !ctx.fusion() {
            self.direct = None;
        }
        let events =
            ctx.async_callback(|this: &mut Self, event, ctx| this.on_sub_event(event, ctx));
        let wake = ctx
            .async_callback(|this: &mut Self, id, ctx| this.on_sub_event(SubEvent::Wake(id), ctx));
        self.callbacks = Some((events, wake));
        // The stage ends itself: a substream may run on after the output
        // or the input closed.
        ctx.set_keep_going(true);
        self.start_pump(ctx)
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        let route = self.route(&element)?;
        if let Route::To(id) = route {
            return self.push_to(id, element, ctx);
        }
        self.pending = Some((element, route));
        self.drive(ctx)
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.upstream_finished(ctx)
    }

    fn on_upstream_failure(
        &mut self,
        _: InPort,
        error: StreamError,
        ctx: &mut StageContext<'_>,
    ) -> StageResult {
        self.upstream_failed(error, ctx)
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.drive(ctx)
    }

    fn on_downstream_finish(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.close_master(ctx)
    }

    fn post_stop(&mut self) {
        #[cfg(all(test, not(loom)))]
        EXTRA_CLOSE_WORK.fetch_max(
            self.close_work.saturating_sub(self.subs.opened()),
            crate::sync::Ordering::Relaxed,
        );
        self.clear();
    }
}

impl<T: Send + 'static, U: Send + 'static> SubOwner<U> for Substreams<T, U> {
    fn on_sub_event(&mut self, event: SubEvent<U>, ctx: &mut StageContext<'_>) -> StageResult {
        let id = event.id();
        let Some(sub) = self.subs.get(id) else {
            return Ok(());
        };
        match event {
            SubEvent::Island(_, msg) => sub.runner.on_event(msg),
            SubEvent::Wake(_) => sub.runner.resume(),
            SubEvent::Bridge(_) => {}
        }
        self.subs.mark(id);
        self.reap(id, ctx);
        self.drive(ctx)
    }
}
