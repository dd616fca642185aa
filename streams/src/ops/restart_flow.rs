//! `RestartFlow::with_backoff`: a flow that runs a fresh copy of a wrapped
//! flow each time it completes or fails, after the backoff of
//! [`RestartSettings`] (Akka's `RestartFlow`).
//!
//! The wrapped flow runs as its own stream between the two bridges the
//! restart source and sink use: a feed source, pulled through the outer
//! stage's inlet, and a bridge sink, pulled by the outer stage's demand. A
//! run ends when its output ends; then the feed is completed and, after
//! the backoff, a new copy starts. When upstream has completed, the end of
//! the run completes the outer flow; when `max_restarts` is spent, the
//! outer flow ends as the last run did.

use super::restart::{Backoff, RestartSettings, Restarts};
use super::restart_sink::{Feed, FromFeed, ToFeed};
use super::sub_source::{self, FromInner, ToInner};
use crate::blueprint::{Flow, Keep, Source};
use crate::error::StreamError;
use crate::materializer::Materializer;
use crate::stage::{
    AsyncCallback, FlowShape, GraphStage, GraphStageLogic, InPort, MatContext, OutPort,
    StageContext, StageResult, TimerKey,
};
use crate::sync::Arc;

/// Makes flows that restart what they wrap: each time the wrapped copy
/// ends, a fresh one runs after the backoff of [`RestartSettings`].
#[derive(Debug, Clone, Copy)]
pub struct RestartFlow;

type FlowFactory<I, O> = Arc<dyn Fn() -> Flow<I, O> + Send + Sync>;

impl RestartFlow {
    /// A flow that runs `factory()` and, whenever it completes or fails,
    /// runs a new one after the backoff.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use weir_streams::prelude::*;
    /// use weir_streams::{RestartFlow, RestartSettings};
    ///
    /// let system = weir_actor::ActorSystem::new("restart-flow").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let settings = RestartSettings::new(Duration::from_millis(1), Duration::from_millis(1), 0.0).unwrap();
    /// // Each copy doubles two elements, then completes; the next copy goes on.
    /// let flow = RestartFlow::with_backoff(settings, || Flow::new().take(2).map(|x: u32| x * 2));
    /// let got = Source::range(0u32..5).via(flow).run_with(Sink::collect(), &materializer);
    /// assert_eq!(got.wait().unwrap(), [0, 2, 4, 6, 8]);
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn with_backoff<I, O, M, F>(settings: RestartSettings, factory: F) -> Flow<I, O, Restarts>
    where
        I: Send + 'static,
        O: Send + 'static,
        M: 'static,
        F: Fn() -> Flow<I, O, M> + Send + Sync + 'static,
    {
        Self::make(settings, factory, false)
    }

    /// As [`with_backoff`](Self::with_backoff), but only a failure restarts:
    /// a copy that completes completes the outer flow.
    pub fn on_failures_with_backoff<I, O, M, F>(
        settings: RestartSettings,
        factory: F,
    ) -> Flow<I, O, Restarts>
    where
        I: Send + 'static,
        O: Send + 'static,
        M: 'static,
        F: Fn() -> Flow<I, O, M> + Send + Sync + 'static,
    {
        Self::make(settings, factory, true)
    }

    fn make<I, O, M, F>(
        settings: RestartSettings,
        factory: F,
        only_failures: bool,
    ) -> Flow<I, O, Restarts>
    where
        I: Send + 'static,
        O: Send + 'static,
        M: 'static,
        F: Fn() -> Flow<I, O, M> + Send + Sync + 'static,
    {
        let factory: FlowFactory<I, O> = Arc::new(move || factory().map_materialized_value(|_| ()));
        Flow::from_graph(RestartFlowStage {
            settings,
            factory,
            only_failures,
        })
    }
}

struct RestartFlowStage<I, O> {
    settings: RestartSettings,
    factory: FlowFactory<I, O>,
    only_failures: bool,
}

/// Both bridges' reports.
enum Event<O> {
    Feed(FromFeed),
    Out(FromInner<O>),
}

struct RestartFlowLogic<I, O> {
    shape: FlowShape<I, O>,
    factory: FlowFactory<I, O>,
    only_failures: bool,
    backoff: Backoff,
    feed_events: Option<AsyncCallback<FromFeed>>,
    out_events: Option<AsyncCallback<FromInner<O>>>,
    run: u64,
    feed: Option<AsyncCallback<ToFeed<I>>>,
    out: Option<AsyncCallback<ToInner>>,
    /// The feed asked for an element not yet sent.
    demanded: bool,
    /// An element for the next run (its own run ended).
    held: Option<I>,
}

impl<I: Send + 'static, O: Send + 'static> GraphStage for RestartFlowStage<I, O> {
    type Shape = FlowShape<I, O>;
    type Mat = Restarts;

    fn name(&self) -> &'static str {
        "restart_flow"
    }

    fn create_logic(&self, cx: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, Restarts) {
        let feed_events = cx.async_callback(|this: &mut RestartFlowLogic<I, O>, event, ctx| {
            this.on_event(Event::Feed(event), ctx)
        });
        let out_events = cx.async_callback(|this: &mut RestartFlowLogic<I, O>, event, ctx| {
            this.on_event(Event::Out(event), ctx)
        });
        let restarts = Restarts::default();
        let logic = RestartFlowLogic {
            shape: FlowShape::new(),
            factory: Arc::clone(&self.factory),
            only_failures: self.only_failures,
            backoff: Backoff::new(self.settings, restarts.clone()),
            feed_events: Some(feed_events),
            out_events: Some(out_events),
            run: 0,
            feed: None,
            out: None,
            demanded: false,
            held: None,
        };
        (Box::new(logic), restarts)
    }
}

impl<I: Send + 'static, O: Send + 'static> RestartFlowLogic<I, O> {
    fn start(&mut self, ctx: &mut StageContext<'_>) {
        self.run += 1;
        self.demanded = false;
        self.backoff.started(ctx);
        let (Some(feed_events), Some(out_events)) =
            (self.feed_events.clone(), self.out_events.clone())
        else {
            return;
        };
        let graph = Source::from_graph(Feed::new(self.run, feed_events))
            .via((self.factory)())
            .to_mat(sub_source::sink(self.run, out_events), Keep::both);
        let (feed, out) = graph.run(&Materializer::new(ctx.system()));
        if ctx.is_available(self.shape.out) {
            out.invoke(ToInner::Pull);
        }
        self.feed = Some(feed);
        self.out = Some(out);
    }

    fn send(&mut self, command: ToFeed<I>) {
        self.demanded = false;
        if let Some(feed) = &self.feed {
            feed.invoke(command);
        }
    }

    fn on_event(&mut self, event: Event<O>, ctx: &mut StageContext<'_>) -> StageResult {
        match event {
            Event::Feed(FromFeed::Demand(run)) if run == self.run => {
                let inlet = self.shape.inlet;
                if let Some(element) = self.held.take() {
                    self.send(ToFeed::Element(element));
                } else if ctx.is_closed(inlet) {
                    self.send(ToFeed::Complete);
                } else {
                    self.demanded = true;
                    if !ctx.has_been_pulled(inlet) {
                        ctx.pull(inlet)?;
                    }
                }
                Ok(())
            }
            Event::Feed(FromFeed::Cancelled(run)) if run == self.run => {
                self.feed = None; // the output side decides when the run ends
                Ok(())
            }
            Event::Out(FromInner::Element(run, element)) if run == self.run => {
                ctx.push(self.shape.out, element)
            }
            Event::Out(FromInner::Ended(run, error)) if run == self.run => self.ended(error, ctx),
            _ => Ok(()), // from an earlier run
        }
    }

    /// The run's output ended.
    fn ended(&mut self, error: Option<StreamError>, ctx: &mut StageContext<'_>) -> StageResult {
        self.out = None;
        self.send(ToFeed::Complete);
        self.feed = None;
        let upstream_done = ctx.is_closed(self.shape.inlet) && self.held.is_none();
        if upstream_done || (error.is_none() && self.only_failures) {
            ctx.complete_stage(); // upstream is done, or a completion is final
            return Ok(());
        }
        if self.backoff.schedule(ctx) {
            return Ok(());
        }
        match error {
            Some(error) => Err(error),
            None => {
                ctx.complete_stage();
                Ok(())
            }
        }
    }

    fn stop_inner(&mut self) {
        if let Some(out) = self.out.take() {
            out.invoke(ToInner::Cancel);
        }
        self.send(ToFeed::Complete);
        self.feed = None;
    }
}

impl<I: Send + 'static, O: Send + 'static> GraphStageLogic for RestartFlowLogic<I, O> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        self.start(ctx);
        Ok(())
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        if self.feed.is_some() && self.demanded {
            self.send(ToFeed::Element(element));
        } else {
            self.held = Some(element);
        }
        Ok(())
    }

    fn on_pull(&mut self, _: OutPort, _: &mut StageContext<'_>) -> StageResult {
        if let Some(out) = &self.out {
            out.invoke(ToInner::Pull);
        }
        Ok(())
    }

    fn on_upstream_finish(&mut self, _: InPort, _: &mut StageContext<'_>) -> StageResult {
        // The running copy finishes what it has; its end completes this flow.
        if self.held.is_none() && self.feed.is_some() {
            self.send(ToFeed::Complete);
        }
        Ok(())
    }

    fn on_upstream_failure(
        &mut self,
        _: InPort,
        error: StreamError,
        _: &mut StageContext<'_>,
    ) -> StageResult {
        self.send(ToFeed::Fail(error.clone()));
        Err(error)
    }

    fn on_timer(&mut self, _: TimerKey, ctx: &mut StageContext<'_>) -> StageResult {
        self.start(ctx);
        Ok(())
    }

    fn on_downstream_finish(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.stop_inner();
        ctx.complete_stage();
        Ok(())
    }

    fn post_stop(&mut self) {
        self.stop_inner();
        self.feed_events = None;
        self.out_events = None;
    }
}
