//! The stage that splits a stream into substreams and runs them (see
//! `runner`): routing by a [`Splitter`], back-pressure, and merging the
//! substreams' output back (or ending each in its own sink).

use std::collections::VecDeque;

use super::runner::{Runner, Tail};
use crate::ops::flatten::sub::{SubEvent, SubOwner, SubPoll};
use crate::stage::{AsyncCallback, FlowShape, GraphStageLogic, InPort, OutPort, StageContext, StageResult};
use crate::{Flow, StreamError};

/// Where an element goes.
pub(crate) enum Route {
    /// Into the open substream `id`.
    To(u64),
    /// Into a new substream.
    New,
    /// Nowhere (its substream was cancelled).
    Drop,
}

/// How one splitting operator routes elements.
pub(crate) trait Splitter<T>: Send {
    /// Where `element` goes; `Err` fails the stream.
    fn route(&mut self, element: &T) -> Result<Route, StreamError>;
    /// The element routed `New` went into substream `id`.
    fn opened(&mut self, id: u64);
    /// Substream `id` no longer takes elements (it cancelled its input);
    /// `true` cancels upstream too (the stream ends once the running
    /// substreams have).
    fn cancelled(&mut self, id: u64) -> bool;
    /// Whether the substream an element went to ends after it (`split_after`).
    fn close_after(&mut self, element: &T) -> bool {
        let _ = element;
        false
    }
    /// Substream `id` that must end before an element routed `New` starts
    /// the next one (`split_when`).
    fn close_before(&mut self) -> Option<u64> {
        None
    }
}

struct Sub<T, U> {
    runner: Runner<T, U>,
    input_closed: bool,
}

pub(crate) struct Substreams<T, U> {
    pub(crate) shape: FlowShape<T, U>,
    pub(crate) splitter: Box<dyn Splitter<T>>,
    pub(crate) flow: Flow<T, U, ()>,
    pub(crate) tail: Tail<U>,
    /// How many substreams run at once (more wait, holding back upstream).
    pub(crate) parallelism: usize,
    subs: VecDeque<Sub<T, U>>,
    callbacks: Option<(AsyncCallback<SubEvent<U>>, AsyncCallback<u64>)>,
    /// An element that waits for its substream to take it (or to exist).
    pending: Option<(T, Route)>,
    next_id: u64,
    next_out: usize,
    upstream_done: bool,
}

impl<T: Send + 'static, U: Send + 'static> Substreams<T, U> {
    pub(crate) fn new(splitter: Box<dyn Splitter<T>>, flow: Flow<T, U, ()>, tail: Tail<U>, parallelism: usize) -> Self {
        Self {
            shape: FlowShape::new(),
            splitter,
            flow,
            tail,
            parallelism,
            subs: VecDeque::new(),
            callbacks: None,
            pending: None,
            next_id: 0,
            next_out: 0,
            upstream_done: false,
        }
    }

    fn position(&self, id: u64) -> Option<usize> {
        self.subs.iter().position(|s| s.runner.id == id)
    }

    /// Hand the pending element over if its substream takes it now.
    fn deliver(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let Some((element, route)) = self.pending.take() else {
            return Ok(());
        };
        let at = match route {
            Route::Drop => return Ok(()),
            Route::To(id) => match self.position(id) {
                Some(at) if !self.subs[at].input_closed => at,
                // Its substream is gone or closed: nothing takes it.
                _ => return Ok(()),
            },
            Route::New => {
                if let Some(id) = self.splitter.close_before()
                    && let Some(at) = self.position(id)
                    && !self.subs[at].input_closed
                {
                    self.subs[at].input_closed = true;
                    self.subs[at].runner.close_input(None);
                }
                if self.subs.len() >= self.parallelism {
                    self.pending = Some((element, Route::New));
                    return Ok(());
                }
                let (events, wake) = self.callbacks.as_ref().expect("made in pre_start");
                let id = self.next_id;
                self.next_id += 1;
                let runner = Runner::new(id, &self.flow, &self.tail, events, wake, ctx)?;
                self.splitter.opened(id);
                self.subs.push_back(Sub {
                    runner,
                    input_closed: false,
                });
                self.subs.len() - 1
            }
        };
        let sub = &mut self.subs[at];
        if sub.runner.input_cancelled() {
            sub.input_closed = true;
            let id = sub.runner.id;
            self.sub_cancelled(id, ctx);
            return Ok(());
        }
        if !sub.runner.wants() {
            self.pending = Some((element, Route::To(sub.runner.id)));
            return Ok(());
        }
        let close = self.splitter.close_after(&element);
        sub.runner.offer(element)?;
        if close {
            sub.input_closed = true;
            sub.runner.close_input(None);
        }
        Ok(())
    }

    /// Move elements along until nothing more can move now.
    fn drive(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        loop {
            self.deliver(ctx)?;
            // Substreams that cancelled their input take no more.
            for at in 0..self.subs.len() {
                if !self.subs[at].input_closed && self.subs[at].runner.input_cancelled() {
                    self.subs[at].input_closed = true;
                    let id = self.subs[at].runner.id;
                    self.sub_cancelled(id, ctx);
                }
            }
            if self.upstream_done && self.pending.is_none() {
                self.close_all(None);
            }
            let freed = self.collect(ctx)?;
            // Polling asks substreams for output, which may make the
            // pending element's substream ask for input: go round again.
            if self.pending.is_none() || !(freed || self.pending_ready()) {
                break;
            }
        }
        if self.pending.is_none()
            && !self.upstream_done
            && !ctx.has_been_pulled(self.shape.inlet)
            && !ctx.is_closed(self.shape.inlet)
        {
            ctx.pull(self.shape.inlet)?;
        }
        if self.upstream_done && self.pending.is_none() && self.subs.is_empty() {
            ctx.complete_stage();
        }
        Ok(())
    }

    /// Whether the pending element can move now.
    fn pending_ready(&self) -> bool {
        match &self.pending {
            None => false,
            Some((_, Route::Drop)) => true,
            Some((_, Route::New)) => self.subs.len() < self.parallelism,
            Some((_, Route::To(id))) => match self.position(*id) {
                Some(at) => self.subs[at].input_closed || self.subs[at].runner.wants() || self.subs[at].runner.input_cancelled(),
                None => true,
            },
        }
    }

    /// Emit substream output while downstream wants it, and drop finished
    /// substreams; whether one finished.
    fn collect(&mut self, ctx: &mut StageContext<'_>) -> Result<bool, StreamError> {
        let mut freed = false;
        let to_sink = matches!(self.tail, Tail::To(_));
        let mut tried = 0;
        while tried < self.subs.len() && (to_sink || ctx.is_available(self.shape.out)) {
            let at = self.next_out % self.subs.len();
            match self.subs[at].runner.poll() {
                SubPoll::Ready(element) => {
                    ctx.push(self.shape.out, element)?;
                    self.next_out = at + 1;
                    tried = 0;
                }
                SubPoll::Pending => {
                    tried += 1;
                    self.next_out = at + 1;
                }
                SubPoll::Completed => {
                    let sub = self.subs.remove(at).expect("in range");
                    if !sub.input_closed {
                        self.sub_cancelled(sub.runner.id, ctx);
                    }
                    freed = true;
                }
                SubPoll::Failed(error) => return Err(error),
            }
            if self.parallelism == 1 {
                self.next_out = 0;
            }
        }
        Ok(freed)
    }

    fn sub_cancelled(&mut self, id: u64, ctx: &mut StageContext<'_>) {
        if self.splitter.cancelled(id) {
            self.pending = None;
            self.upstream_done = true;
            ctx.cancel(self.shape.inlet);
        }
    }

    fn close_all(&mut self, error: Option<StreamError>) {
        for sub in &mut self.subs {
            if !sub.input_closed {
                sub.input_closed = true;
                sub.runner.close_input(error.clone());
            }
        }
    }
}

impl<T: Send + 'static, U: Send + 'static> GraphStageLogic for Substreams<T, U> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let events = ctx.async_callback(|this: &mut Self, event, ctx| this.on_sub_event(event, ctx));
        let wake = ctx.async_callback(|this: &mut Self, id, ctx| this.on_sub_event(SubEvent::Wake(id), ctx));
        self.callbacks = Some((events, wake));
        Ok(())
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        let route = self.splitter.route(&element)?;
        self.pending = Some((element, route));
        self.drive(ctx)
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.upstream_done = true;
        self.drive(ctx)
    }

    fn on_upstream_failure(&mut self, _: InPort, error: StreamError, _: &mut StageContext<'_>) -> StageResult {
        self.pending = None;
        self.close_all(Some(error.clone()));
        Err(error)
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.drive(ctx)
    }

    fn on_downstream_finish(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.subs.clear();
        ctx.complete_stage();
        Ok(())
    }

    fn post_stop(&mut self) {
        self.subs.clear();
    }
}

impl<T: Send + 'static, U: Send + 'static> SubOwner<U> for Substreams<T, U> {
    fn on_sub_event(&mut self, event: SubEvent<U>, ctx: &mut StageContext<'_>) -> StageResult {
        let id = event.id();
        let Some(at) = self.position(id) else {
            return Ok(());
        };
        match event {
            SubEvent::Island(_, msg) => self.subs[at].runner.on_event(msg),
            SubEvent::Wake(_) => self.subs[at].runner.resume(),
            SubEvent::Bridge(_) => {}
        }
        self.drive(ctx)
    }
}

