//! `RestartSink::with_backoff`: a sink that runs a fresh copy of a wrapped
//! sink each time it cancels (completes or fails), after the backoff of
//! [`RestartSettings`] (Akka's `RestartSink`).
//!
//! The wrapped sink runs as its own stream, fed by a bridge source: each
//! time the bridge is pulled it asks the outer stage for one element, which
//! pulls its own upstream; elements, completion and failure go back down
//! through the bridge's callback. During a backoff nothing is pulled, so
//! upstream is back-pressured; an element that arrives for a run that has
//! just ended waits for the next run. When `max_restarts` is spent, the
//! outer sink cancels upstream.

use super::restart::{Backoff, RestartSettings, Restarts};
use crate::blueprint::{Keep, Sink, Source};
use crate::error::StreamError;
use crate::materializer::Materializer;
use crate::stage::{
    AsyncCallback, GraphStage, GraphStageLogic, InPort, MatContext, OutPort, SinkShape,
    SourceShape, StageContext, StageResult, TimerKey,
};
use crate::sync::Arc;

/// Makes sinks that restart what they wrap: each time the wrapped copy
/// ends, a fresh one runs after the backoff of [`RestartSettings`].
#[derive(Debug, Clone, Copy)]
pub struct RestartSink;

type SinkFactory<T> = Arc<dyn Fn() -> Sink<T> + Send + Sync>;

impl RestartSink {
    /// A sink that runs `factory()` and, whenever it cancels, runs a new
    /// one after the backoff; once `max_restarts` is spent it cancels.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use weir_streams::prelude::*;
    /// use weir_streams::{RestartSettings, RestartSink};
    ///
    /// let system = weir_actor::ActorSystem::new("restart-sink").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// let settings = RestartSettings::new(Duration::from_millis(1), Duration::from_millis(1), 0.0).unwrap();
    /// // Each copy takes two elements, then cancels; the next copy goes on.
    /// let sink = RestartSink::with_backoff(settings, move || {
    ///     let tx = tx.clone();
    ///     Flow::new().take(2).to(Sink::for_each(move |x: u32| tx.send(x).unwrap()))
    /// });
    /// Source::range(0u32..5).run_with(sink, &materializer);
    /// let got: Vec<u32> = (0..5).map(|_| rx.recv_timeout(Duration::from_secs(5)).unwrap()).collect();
    /// assert_eq!(got, [0, 1, 2, 3, 4]);
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn with_backoff<T, M, F>(settings: RestartSettings, factory: F) -> Sink<T, Restarts>
    where
        T: Send + 'static,
        M: 'static,
        F: Fn() -> Sink<T, M> + Send + Sync + 'static,
    {
        let factory: SinkFactory<T> = Arc::new(move || factory().map_materialized_value(|_| ()));
        Sink::from_graph(RestartSinkStage { settings, factory })
    }
}

struct RestartSinkStage<T> {
    settings: RestartSettings,
    factory: SinkFactory<T>,
}

/// What a feed (the bridge source of run `run`) reports.
pub(crate) enum FromFeed {
    Demand(u64),
    Cancelled(u64),
}

/// What the outer stage sends down a feed.
pub(crate) enum ToFeed<T> {
    Element(T),
    Complete,
    Fail(StreamError),
}

struct RestartSinkLogic<T> {
    shape: SinkShape<T>,
    factory: SinkFactory<T>,
    backoff: Backoff,
    events: Option<AsyncCallback<FromFeed>>,
    run: u64,
    feed: Option<AsyncCallback<ToFeed<T>>>,
    /// The current feed asked for an element not yet sent.
    demanded: bool,
    /// An element that arrived after its run ended.
    held: Option<T>,
}

impl<T: Send + 'static> GraphStage for RestartSinkStage<T> {
    type Shape = SinkShape<T>;
    type Mat = Restarts;

    fn name(&self) -> &'static str {
        "restart_sink"
    }

    fn create_logic(&self, cx: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, Restarts) {
        let events = cx.async_callback(|this: &mut RestartSinkLogic<T>, event: FromFeed, ctx| {
            this.on_feed(event, ctx)
        });
        let restarts = Restarts::default();
        let logic = RestartSinkLogic {
            shape: SinkShape::new(),
            factory: Arc::clone(&self.factory),
            backoff: Backoff::new(self.settings, restarts.clone()),
            events: Some(events),
            run: 0,
            feed: None,
            demanded: false,
            held: None,
        };
        (Box::new(logic), restarts)
    }
}

impl<T: Send + 'static> RestartSinkLogic<T> {
    fn start(&mut self, ctx: &mut StageContext<'_>) {
        self.run += 1;
        self.demanded = false;
        self.backoff.started(ctx);
        let Some(events) = self.events.clone() else {
            return;
        };
        let feed = Source::from_graph(Feed::new(self.run, events));
        let materializer = Materializer::new(ctx.system());
        self.feed = Some(feed.to_mat((self.factory)(), Keep::left).run(&materializer));
    }

    fn on_feed(&mut self, event: FromFeed, ctx: &mut StageContext<'_>) -> StageResult {
        match event {
            FromFeed::Demand(run) if run == self.run => {
                if let Some(element) = self.held.take() {
                    self.send(ToFeed::Element(element));
                    if ctx.is_closed(self.shape.inlet) {
                        self.send(ToFeed::Complete);
                        ctx.complete_stage();
                    }
                    return Ok(());
                }
                self.demanded = true;
                let inlet = self.shape.inlet;
                if ctx.is_closed(inlet) {
                    self.send(ToFeed::Complete);
                } else if !ctx.has_been_pulled(inlet) {
                    ctx.pull(inlet)?;
                }
                Ok(())
            }
            FromFeed::Cancelled(run) if run == self.run => {
                self.feed = None;
                if !self.backoff.schedule(ctx) {
                    ctx.complete_stage(); // budget spent: cancel upstream
                }
                Ok(())
            }
            _ => Ok(()), // from an earlier run
        }
    }

    fn send(&mut self, command: ToFeed<T>) {
        self.demanded = false;
        if let Some(feed) = &self.feed {
            feed.invoke(command);
        }
    }
}

impl<T: Send + 'static> GraphStageLogic for RestartSinkLogic<T> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        self.start(ctx);
        Ok(())
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        if self.feed.is_some() && self.demanded {
            self.send(ToFeed::Element(element));
        } else {
            self.held = Some(element); // its run ended: for the next one
        }
        Ok(())
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        if self.held.is_none() {
            self.send(ToFeed::Complete);
            ctx.complete_stage();
        } else {
            ctx.set_keep_going(true); // deliver the held element first
        }
        Ok(())
    }

    fn on_upstream_failure(
        &mut self,
        _: InPort,
        error: StreamError,
        ctx: &mut StageContext<'_>,
    ) -> StageResult {
        self.send(ToFeed::Fail(error));
        ctx.complete_stage();
        Ok(())
    }

    fn on_timer(&mut self, _: TimerKey, ctx: &mut StageContext<'_>) -> StageResult {
        if ctx.is_closed(self.shape.inlet) && self.held.is_none() {
            ctx.complete_stage();
            return Ok(());
        }
        self.start(ctx);
        Ok(())
    }

    fn post_stop(&mut self) {
        self.events = None;
    }
}

/// The source a wrapped sink (or flow) runs from.
pub(crate) struct Feed<T> {
    run: u64,
    events: AsyncCallback<FromFeed>,
    _elements: std::marker::PhantomData<fn() -> T>,
}

impl<T> Feed<T> {
    pub(crate) fn new(run: u64, events: AsyncCallback<FromFeed>) -> Self {
        Self {
            run,
            events,
            _elements: std::marker::PhantomData,
        }
    }
}

struct RestartFeedLogic<T> {
    shape: SourceShape<T>,
    run: u64,
    events: AsyncCallback<FromFeed>,
    reported: bool,
}

impl<T: Send + 'static> GraphStage for Feed<T> {
    type Shape = SourceShape<T>;
    type Mat = AsyncCallback<ToFeed<T>>;

    fn name(&self) -> &'static str {
        "restart_feed"
    }

    fn create_logic(
        &self,
        cx: &mut MatContext<'_>,
    ) -> (Box<dyn GraphStageLogic>, AsyncCallback<ToFeed<T>>) {
        let control =
            cx.async_callback(|this: &mut RestartFeedLogic<T>, command: ToFeed<T>, ctx| {
                this.reported |= !matches!(command, ToFeed::Element(_)); // ended from upstream
                match command {
                    ToFeed::Element(element) => ctx.push(this.shape.out, element)?,
                    ToFeed::Complete => ctx.complete_stage(),
                    ToFeed::Fail(error) => ctx.fail_stage(error),
                }
                Ok(())
            });
        let logic = RestartFeedLogic::<T> {
            shape: SourceShape::new(),
            run: self.run,
            events: self.events.clone(),
            reported: false,
        };
        (Box::new(logic), control)
    }
}

impl<T: Send + 'static> RestartFeedLogic<T> {
    fn report_cancel(&mut self) {
        if !std::mem::replace(&mut self.reported, true) {
            self.events.invoke(FromFeed::Cancelled(self.run));
        }
    }
}

impl<T: Send + 'static> GraphStageLogic for RestartFeedLogic<T> {
    fn on_pull(&mut self, _: OutPort, _: &mut StageContext<'_>) -> StageResult {
        self.events.invoke(FromFeed::Demand(self.run));
        Ok(())
    }

    fn on_downstream_finish(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.report_cancel();
        ctx.complete_stage();
        Ok(())
    }

    fn on_failure(&mut self, _: &StreamError) {
        self.report_cancel();
    }
}
