//! [`RetryFlow`]: an element sent through a flow again, after a backoff,
//! while a function of (input, output) asks for it.
//!
//! A coordinator stage with a `BidiShape` is joined to the wrapped flow:
//! `in1` takes the outer stream's elements, `out1` feeds the flow, `in2`
//! takes the flow's outputs and `out2` emits the outer results. One
//! element is in the flow at a time (as in Pekko): the next is pulled only
//! once the last one's final output has been emitted, so the flow must
//! emit exactly one output per input.

use std::time::Duration;

use super::context::FlowWithContext;
use super::restart::{RestartSettings, jitter_draw};
use crate::blueprint::{Flow, Keep};
use crate::error::{ArgumentError, StreamError};
use crate::graph::bidi_flow::BidiFlow;
use crate::stage::{
    BidiShape, GraphStage, GraphStageLogic, InPort, MatContext, OutPort, StageContext, StageResult,
    TimerKey,
};

/// Retries single elements through a flow with exponential backoff (Pekko's
/// `RetryFlow`): per element, unlike [`RestartFlow`](crate::RestartFlow),
/// which restarts the whole flow.
#[derive(Debug, Clone, Copy)]
pub struct RetryFlow;

impl RetryFlow {
    /// Send each element through `flow`; for its output, `decide_retry(&input,
    /// &output)` returns `None` to emit the output, or `Some(next_input)`
    /// to send `next_input` through `flow` again after a backoff (the
    /// n-th retry of an element waits `min_backoff * 2^n`, capped at
    /// `max_backoff`, plus up to `random_factor` of it at random). After
    /// `max_retries` retries of one element its last output is emitted.
    ///
    /// One element is in `flow` at a time, so `flow` must emit exactly one
    /// output per input (a `map`, a `map_async(1, ..)`, a request to a
    /// service); one that drops an element would stall the stream, and one
    /// that completes with an element inside fails it. The materialized
    /// value is `flow`'s.
    ///
    /// # Errors
    ///
    /// `ArgumentError::Invalid` for a `max_backoff` below `min_backoff` or
    /// a `random_factor` that is negative, infinite or not a number.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use weir_streams::prelude::*;
    /// use weir_streams::RetryFlow;
    ///
    /// let system = weir_actor::ActorSystem::new("retry").unwrap();
    /// let mat = Materializer::new(&system);
    /// // A flaky service: fails attempts below 3; each retry is one more attempt.
    /// let service = Flow::<(u32, u32)>::new()
    ///     .map(|(x, attempt)| if attempt < 3 { Err((x, attempt)) } else { Ok(x * 10) });
    /// let retried = RetryFlow::with_backoff(
    ///     Duration::from_millis(1),
    ///     Duration::from_millis(10),
    ///     0.0,
    ///     5,
    ///     service,
    ///     |_, out: &Result<u32, (u32, u32)>| match out {
    ///         Err((x, attempt)) => Some((*x, attempt + 1)),
    ///         Ok(_) => None,
    ///     },
    /// )
    /// .unwrap();
    /// let got = Source::from_iter(vec![(1, 0), (2, 2)])
    ///     .via(retried)
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(got.wait(), Ok(vec![Ok(10), Ok(20)]));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn with_backoff<In, Out, M, D>(
        min_backoff: Duration,
        max_backoff: Duration,
        random_factor: f64,
        max_retries: u32,
        flow: Flow<In, Out, M>,
        decide_retry: D,
    ) -> Result<Flow<In, Out, M>, ArgumentError>
    where
        In: Clone + Send + 'static,
        Out: Send + 'static,
        M: 'static,
        D: Fn(&In, &Out) -> Option<In> + Clone + Send + Sync + 'static,
    {
        let backoff = RestartSettings::new(min_backoff, max_backoff, random_factor)?;
        let coordinator = BidiFlow::from_graph(Coordinator {
            backoff,
            max_retries,
            decide_retry,
            _types: std::marker::PhantomData,
        });
        Ok(coordinator.join_mat(flow, Keep::right))
    }

    /// [`with_backoff`](Self::with_backoff) for a [`FlowWithContext`]
    /// (Pekko's `RetryFlow.withBackoffAndContext`): `decide_retry` sees the
    /// input and the output each with its context, and returns the next
    /// attempt's input and context, or `None` to emit the output with its
    /// context. As there, one element is in `flow` at a time and `flow`
    /// must emit exactly one output (with its context) per input.
    ///
    /// # Errors
    ///
    /// As [`with_backoff`](Self::with_backoff).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use weir_streams::prelude::*;
    /// use weir_streams::{ContextOps, FlowWithContext, RetryFlow};
    ///
    /// let system = weir_actor::ActorSystem::new("retry-context").unwrap();
    /// let mat = Materializer::new(&system);
    /// // The context counts attempts; the service fails attempts below 2.
    /// let service = FlowWithContext::<u32, u32>::new().map(|x| x * 10);
    /// let retried = RetryFlow::with_backoff_and_context(
    ///     Duration::from_millis(1),
    ///     Duration::from_millis(10),
    ///     0.0,
    ///     5,
    ///     service,
    ///     |(x, attempt): &(u32, u32), _: &(u32, u32)| (*attempt < 2).then(|| (*x, attempt + 1)),
    /// )
    /// .unwrap();
    /// let got = Source::from_iter(vec![1u32, 2])
    ///     .as_source_with_context(|_| 0u32)
    ///     .via(retried)
    ///     .as_source()
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(got.wait(), Ok(vec![(10, 2), (20, 2)]));
    /// system.terminate().wait().unwrap();
    /// ```
    #[allow(clippy::type_complexity)] // Pekko's signature: both pairs are the point
    pub fn with_backoff_and_context<In, CtxIn, Out, CtxOut, M, D>(
        min_backoff: Duration,
        max_backoff: Duration,
        random_factor: f64,
        max_retries: u32,
        flow: FlowWithContext<In, CtxIn, Out, CtxOut, M>,
        decide_retry: D,
    ) -> Result<FlowWithContext<In, CtxIn, Out, CtxOut, M>, ArgumentError>
    where
        In: Clone + Send + 'static,
        CtxIn: Clone + Send + 'static,
        Out: Send + 'static,
        CtxOut: Send + 'static,
        M: 'static,
        D: Fn(&(In, CtxIn), &(Out, CtxOut)) -> Option<(In, CtxIn)> + Clone + Send + Sync + 'static,
    {
        let retried = Self::with_backoff(
            min_backoff,
            max_backoff,
            random_factor,
            max_retries,
            flow.as_flow(),
            decide_retry,
        )?;
        Ok(FlowWithContext::from_tuples(retried))
    }
}

struct Coordinator<In, Out, D> {
    backoff: RestartSettings,
    max_retries: u32,
    decide_retry: D,
    _types: std::marker::PhantomData<fn(In) -> Out>,
}

impl<In, Out, D> GraphStage for Coordinator<In, Out, D>
where
    In: Clone + Send + 'static,
    Out: Send + 'static,
    D: Fn(&In, &Out) -> Option<In> + Clone + Send + Sync + 'static,
{
    type Shape = BidiShape<In, In, Out, Out>;
    type Mat = ();

    fn name(&self) -> &'static str {
        "retry_flow"
    }

    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        let logic = CoordinatorLogic {
            shape: BidiShape::new(),
            backoff: self.backoff,
            max_retries: self.max_retries,
            decide_retry: self.decide_retry.clone(),
            in_flow: None,
            outbox: None,
            waiting: None,
            retries: 0,
            rng: 0,
            ports: PortState::default(),
            upstream_done: false,
        };
        (Box::new(logic), ())
    }
}

const RETRY: TimerKey = TimerKey(0);

/// What the coordinator knows of its ports' demand, kept by its own
/// handlers rather than asked of the island on every element (the
/// no-retry path is four handler calls per element; the queries were a
/// fifth of its cost). Each flag is set by the handler that learns of the
/// demand and cleared by the push or pull that answers it. A closed port
/// ends the stage (its handlers fail or cancel it), so no flag outlives
/// its port being open.
///
/// `out1` has no flag: the flow's pull is read from the island
/// ([`StageContext::is_available`]), which knows of it as soon as the flow
/// pulls, before `on_pull(out1)` runs; an input pushed then makes that
/// `on_pull` moot, and the island skips it (one handler call less per
/// element).
#[derive(Default)]
struct PortState {
    /// The outer downstream asked (`on_pull(out2)`), not yet answered.
    out2_demanded: bool,
    /// `in1` was pulled and its element has not arrived.
    in1_pulled: bool,
    /// `in2` was pulled and the flow's output has not arrived.
    in2_pulled: bool,
}

struct CoordinatorLogic<In, Out, D> {
    shape: BidiShape<In, In, Out, Out>,
    backoff: RestartSettings,
    max_retries: u32,
    decide_retry: D,
    /// The input whose output the flow owes (kept for `decide_retry`).
    in_flow: Option<In>,
    /// An input for the flow that waits for the flow's pull.
    outbox: Option<In>,
    /// The next attempt, waiting for its backoff.
    waiting: Option<In>,
    /// Retries of the current element so far.
    retries: u32,
    rng: u64,
    ports: PortState,
    upstream_done: bool,
}

impl<In, Out, D> CoordinatorLogic<In, Out, D>
where
    In: Clone + Send + 'static,
    Out: Send + 'static,
    D: Fn(&In, &Out) -> Option<In> + Send + 'static,
{
    /// No element between the outer input and output.
    fn idle(&self) -> bool {
        self.in_flow.is_none() && self.waiting.is_none()
    }

    /// Hand `input` to the flow (now, or when it pulls).
    #[inline(always)]
    fn send(&mut self, input: In, ctx: &mut StageContext<'_>) -> StageResult {
        self.in_flow = Some(input.clone());
        if ctx.is_available(self.shape.out1) {
            ctx.push(self.shape.out1, input)?;
        } else {
            self.outbox = Some(input);
        }
        if !self.ports.in2_pulled {
            self.ports.in2_pulled = true;
            ctx.pull(self.shape.in2)?;
        }
        Ok(())
    }

    /// Pull the next outer element when nothing is in flight and
    /// downstream asks; complete when upstream has and nothing is left.
    #[inline(always)]
    fn next(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        if !self.idle() {
            return Ok(());
        }
        if self.upstream_done {
            ctx.complete_stage();
        } else if self.ports.out2_demanded && !self.ports.in1_pulled {
            self.ports.in1_pulled = true;
            ctx.pull(self.shape.in1)?;
        }
        Ok(())
    }
}

impl<In, Out, D> GraphStageLogic for CoordinatorLogic<In, Out, D>
where
    In: Clone + Send + 'static,
    Out: Send + 'static,
    D: Fn(&In, &Out) -> Option<In> + Send + 'static,
{
    fn on_push(&mut self, port: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        if port == self.shape.in1.port() {
            self.ports.in1_pulled = false;
            let input = ctx.grab(self.shape.in1)?;
            self.retries = 0;
            return self.send(input, ctx);
        }
        self.ports.in2_pulled = false;
        let output = ctx.grab(self.shape.in2)?;
        let input = self
            .in_flow
            .take()
            .ok_or_else(|| StreamError::msg("RetryFlow: the flow emitted an output it owed no input for (it must emit one output per input)"))?;
        match (self.decide_retry)(&input, &output) {
            Some(next) if self.retries < self.max_retries => {
                let r = if self.backoff.random_factor() == 0.0 {
                    0.0
                } else {
                    jitter_draw(&mut self.rng)
                };
                ctx.schedule_once(RETRY, self.backoff.backoff(self.retries, r));
                self.retries += 1;
                self.waiting = Some(next);
                Ok(())
            }
            _ => {
                // `in_flow` is empty: `out2` was pulled, as `in1` was
                // pulled only on its demand and nothing went out since.
                self.ports.out2_demanded = false;
                ctx.push(self.shape.out2, output)?;
                self.next(ctx)
            }
        }
    }

    fn on_pull(&mut self, port: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        if port == self.shape.out1.port() {
            if let Some(input) = self.outbox.take() {
                ctx.push(self.shape.out1, input)?;
            }
            return Ok(());
        }
        self.ports.out2_demanded = true;
        self.next(ctx)
    }

    fn on_downstream_finish(&mut self, port: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        let cause = ctx.cancellation(port);
        if port == self.shape.out1.port() {
            // The flow stopped taking input: because it failed (its
            // failure follows on `in2`, to a finished stage), or while it
            // owes an output.
            if let Some(error) = cause.failure() {
                return Err(error.clone());
            }
            if !self.idle() {
                return Err(owing());
            }
        }
        ctx.cancel_stage(cause);
        Ok(())
    }

    fn on_timer(&mut self, _: TimerKey, ctx: &mut StageContext<'_>) -> StageResult {
        match self.waiting.take() {
            Some(input) => self.send(input, ctx),
            None => Ok(()),
        }
    }

    fn on_upstream_finish(&mut self, port: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        if port == self.shape.in1.port() {
            self.upstream_done = true;
            return self.next(ctx);
        }
        if self.idle() {
            ctx.complete_stage();
            return Ok(());
        }
        Err(owing())
    }
}

/// The wrapped flow ended while it owed an output.
fn owing() -> StreamError {
    StreamError::msg(
        "RetryFlow: the flow completed with an element in it (it must emit one output per input)",
    )
}
