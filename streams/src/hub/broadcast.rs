//! `BroadcastHub`: one upstream, any number of consumers attached while
//! it runs, each sent every element from the moment it attached.

use std::marker::PhantomData;

use super::Out;
use super::consumer::{ConsumerRegistry, HubConsumer, end_out};
use super::registry::Registry;
use crate::blueprint::{Sink, Source};
use crate::error::{ArgumentError, ErrorKind, StreamError};
use crate::stage::{
    GraphStage, GraphStageLogic, InPort, MatContext, SinkShape, StageContext, StageResult,
};
use crate::sync::Arc;

/// A hub that broadcasts one stream to any number of consumers attached
/// while it runs.
///
/// [`BroadcastHub::sink`] materializes a [`Source`]: each run of that
/// source attaches a consumer, which receives every element that arrives
/// after it attached (elements that arrived while no consumer was attached,
/// up to the buffer, go to the first consumers). The hub goes at the pace
/// of its slowest consumer: each consumer has `buffer` elements of room,
/// and the hub pulls only when every consumer has room. With no consumer
/// it holds up to `buffer` elements and then back-pressures.
///
/// [`BroadcastHub::sink_starting_after`] pulls nothing until a number of
/// consumers are attached. Completion reaches every consumer after the
/// elements before it; a
/// failure reaches every consumer at once, over the elements it holds and
/// has not passed on (as in Pekko); a consumer attaching after the hub
/// ended gets the end at once. A consumer that cancels leaves; when it was
/// the last, what it was handed and did not pass on goes to the next
/// consumer (Pekko rolls its buffer forward to where the last consumer
/// stopped). Unlike Pekko, a consumer attaching while others run starts
/// with the elements that arrive after it attached, not with those the
/// slowest consumer has not taken yet. Elements are cloned per consumer.
///
/// # Examples
///
/// ```
/// use weir_streams::prelude::*;
/// use weir_streams::BroadcastHub;
///
/// let system = weir_actor::ActorSystem::new("broadcast").unwrap();
/// let materializer = Materializer::new(&system);
/// let (queue, hub) = Source::queue(16)
///     .unwrap()
///     .to_mat(BroadcastHub::sink(16).unwrap(), Keep::both)
///     .run(&materializer);
/// let a = hub.clone().run_with(Sink::collect(), &materializer);
/// let b = hub.run_with(Sink::fold(0, |sum, x| sum + x), &materializer);
/// for i in 1..=3 {
///     futures_executor::block_on(queue.send(i)).unwrap();
/// }
/// queue.complete();
/// assert_eq!(a.wait(), Ok(vec![1, 2, 3]));
/// assert_eq!(b.wait(), Ok(6));
/// system.terminate().wait().unwrap();
/// ```
#[derive(Debug, Clone, Copy)]
pub struct BroadcastHub;

impl BroadcastHub {
    /// A sink that materializes a [`Source`] of what it takes in; each
    /// consumer has room for `buffer` elements. See [`BroadcastHub`].
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` for a buffer of 0.
    pub fn sink<T: Clone + Send + 'static>(
        buffer: usize,
    ) -> Result<Sink<T, Source<T, ()>>, ArgumentError> {
        Self::sink_starting_after(0, buffer)
    }

    /// [`sink`](Self::sink) that pulls nothing from upstream until
    /// `start_after_nr_of_consumers` consumers are attached at once
    /// (Pekko's `BroadcastHub.sink(startAfterNrOfConsumers, bufferSize)`),
    /// so the first consumers all see the stream from its first element.
    /// Once started it goes on whoever leaves or attaches. With 0 it is
    /// [`sink`](Self::sink).
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` for a buffer of 0.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// use weir_streams::BroadcastHub;
    ///
    /// let system = weir_actor::ActorSystem::new("broadcast-start-after").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let hub = Source::range(1u32..=3)
    ///     .run_with(BroadcastHub::sink_starting_after(2, 16).unwrap(), &materializer);
    /// let a = hub.clone().run_with(Sink::collect(), &materializer);
    /// let b = hub.run_with(Sink::collect(), &materializer);
    /// // Nothing went out before both were attached: both see every element.
    /// assert_eq!(a.wait(), Ok(vec![1, 2, 3]));
    /// assert_eq!(b.wait(), Ok(vec![1, 2, 3]));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn sink_starting_after<T: Clone + Send + 'static>(
        start_after_nr_of_consumers: usize,
        buffer: usize,
    ) -> Result<Sink<T, Source<T, ()>>, ArgumentError> {
        if buffer == 0 {
            return Err(ArgumentError::Zero { argument: "buffer" });
        }
        Ok(Sink::from_graph(HubStage {
            buffer,
            start_after: start_after_nr_of_consumers,
            _t: PhantomData,
        }))
    }
}

struct HubStage<T> {
    buffer: usize,
    start_after: usize,
    _t: PhantomData<fn(T)>,
}

impl<T: Clone + Send + 'static> GraphStage for HubStage<T> {
    type Shape = SinkShape<T>;
    type Mat = Source<T, ()>;

    fn name(&self) -> &'static str {
        "broadcast_hub"
    }

    fn create_logic(&self, cx: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, Source<T, ()>) {
        let wake = cx.async_callback(|this: &mut HubLogic<T>, (), ctx| this.wake(ctx));
        let registry = Arc::new(Registry::new(wake.clone()));
        let logic = HubLogic {
            shape: SinkShape::new(),
            registry: Arc::clone(&registry),
            outs: Vec::new(),
            held: Vec::new(),
            buffer: self.buffer,
            ended: None,
            idle_requested: false,
            start_after: self.start_after,
            started: self.start_after == 0,
        };
        let source = Source::from_graph(HubConsumer {
            registry,
            wake,
            buffer: self.buffer,
            name: "broadcast_hub_consumer",
            give_back: true,
        });
        (Box::new(logic), source)
    }
}

struct HubLogic<T: Send + 'static> {
    shape: SinkShape<T>,
    registry: Arc<ConsumerRegistry<T>>,
    /// The attached consumers' hand-overs.
    outs: Vec<Out<T>>,
    /// Taken in while no consumer was attached (at most `buffer`).
    held: Vec<T>,
    buffer: usize,
    /// Upstream completed while elements were held for a first consumer.
    ended: Option<Result<(), StreamError>>,
    idle_requested: bool,
    /// Consumers attached at once before the first pull.
    start_after: usize,
    started: bool,
}

impl<T: Clone + Send + 'static> HubLogic<T> {
    /// Drop cancelled consumers (before attaching new ones, so a consumer
    /// that attaches after the last one left gets what it left), attach
    /// new consumers, take credit, pull.
    fn wake(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        if self.ended.is_none() {
            self.hand_over_all();
        }
        self.attach(ctx);
        if self.ended.is_some() {
            return Ok(());
        }
        self.hand_over_all();
        self.pull_if_ready(ctx)
    }

    fn attach(&mut self, ctx: &mut StageContext<'_>) {
        let first = self.outs.len();
        self.registry.take(&mut self.outs);
        self.started |= self.outs.len() >= self.start_after;
        if self.outs.len() == first || first > 0 {
            return;
        }
        // The first consumers get what was held (the credit suffices:
        // at most `buffer` elements are held).
        let held = std::mem::take(&mut self.held);
        let last = self.outs.len() - 1;
        for element in held {
            for out in &mut self.outs[..last] {
                out.push(element.clone());
            }
            self.outs[last].push(element);
        }
        if let Some(outcome) = self.ended.take() {
            for mut out in self.registry.close(outcome.clone()) {
                end_out(&mut out, &outcome);
            }
            for out in &mut self.outs {
                end_out(out, &outcome);
            }
            ctx.complete_stage();
        }
    }

    /// Hand every batch over and drop the consumers that cancelled. When
    /// the last one leaves, what it was handed and did not pass on is
    /// held for the next consumer (Pekko rolls its buffer forward to
    /// where the last consumer stopped).
    fn hand_over_all(&mut self) {
        let mut left: Vec<T> = Vec::new();
        self.outs.retain_mut(|out| {
            if !out.hand_over() {
                return true;
            }
            let back = out.take_back();
            // Of several leaving at once, the one furthest behind.
            if back.len() > left.len() {
                left = back;
            }
            false
        });
        if self.outs.is_empty() && self.held.is_empty() {
            self.held = left;
        }
    }

    fn pull_if_ready(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let inlet = self.shape.inlet;
        if !self.started {
            return Ok(());
        }
        let room = if self.outs.is_empty() {
            self.held.len() < self.buffer
        } else {
            self.outs.iter().all(|out| out.credit() > 0)
        };
        if room && !ctx.has_been_pulled(inlet) && !ctx.is_closed(inlet) {
            ctx.pull(inlet)?;
        }
        Ok(())
    }

    /// End every consumer (and those attaching later) with `outcome`.
    fn finish(&mut self, outcome: Result<(), StreamError>, ctx: &mut StageContext<'_>) {
        if outcome.is_ok() && self.outs.is_empty() && !self.held.is_empty() {
            // Keep what is held for the first consumer, then end.
            self.ended = Some(outcome);
            ctx.set_keep_going(true);
            return;
        }
        for mut out in self.registry.close(outcome.clone()) {
            end_out(&mut out, &outcome);
        }
        for out in &mut self.outs {
            end_out(out, &outcome);
        }
        ctx.complete_stage();
    }
}

impl<T: Clone + Send + 'static> GraphStageLogic for HubLogic<T> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        self.wake(ctx)
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        let Some((last, rest)) = self.outs.split_last_mut() else {
            self.held.push(element);
            return self.pull_if_ready(ctx);
        };
        let mut hand_over = false;
        for out in rest {
            hand_over |= out.push(element.clone());
        }
        hand_over |= last.push(element);
        if hand_over {
            self.hand_over_all();
        } else if !self.idle_requested {
            // Hand partial batches over when the island runs dry.
            self.idle_requested = true;
            ctx.request_idle_callback();
        }
        self.pull_if_ready(ctx)
    }

    fn on_idle(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        self.idle_requested = false;
        self.hand_over_all();
        self.pull_if_ready(ctx)
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.finish(Ok(()), ctx);
        Ok(())
    }

    fn on_upstream_failure(
        &mut self,
        _: InPort,
        error: StreamError,
        ctx: &mut StageContext<'_>,
    ) -> StageResult {
        self.finish(Err(error), ctx);
        Ok(())
    }

    fn post_stop(&mut self) {
        // Stopped without an end from upstream (torn down): consumers and
        // late attachers must not wait for ever (a no-op after `finish`;
        // dropping `outs` ends their hand-overs the same way).
        let outcome = Err(StreamError::from_kind(ErrorKind::AbruptTermination));
        for mut out in self.registry.close(outcome.clone()) {
            end_out(&mut out, &outcome);
        }
    }
}
