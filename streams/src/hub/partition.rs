//! `PartitionHub`: one upstream, any number of consumers attached while
//! it runs, a partitioner choosing one consumer per element.

use std::sync::Arc as StdArc;

use super::Out;
use super::consumer::{ConsumerRegistry, HubConsumer, end_out};
use super::consumer_info::{ConsumerInfo, Queues};
use super::registry::Registry;
use crate::blueprint::{Sink, Source};
use crate::error::{ArgumentError, ErrorKind, StreamError};
use crate::stage::{
    GraphStage, GraphStageLogic, InPort, MatContext, SinkShape, StageContext, StageResult,
};
use crate::sync::Arc;

/// One materialization's partitioner.
type Partitioner<T> = Box<dyn FnMut(&ConsumerInfo<'_>, &T) -> Option<usize> + Send>;
/// Makes a fresh partitioner for each materialization.
type PartitionerFactory<T> = StdArc<dyn Fn() -> Partitioner<T> + Send + Sync>;

/// A hub that routes each element of one stream to one of the consumers
/// attached while it runs.
///
/// [`PartitionHub::sink`] materializes a [`Source`]; each run of it
/// attaches a consumer. For each element the partitioner is called with
/// the number of consumers attached and the element (a stateful one,
/// [`PartitionHub::stateful_sink`], with each consumer's queue), and returns the
/// index of the consumer (in order of attaching, among those still
/// attached) or `None` to drop the element. An index out of range fails
/// the stream with [`ErrorKind::PartitionOutOfRange`].
///
/// Nothing is pulled until `start_after_nr_of_consumers` consumers have
/// attached. Each consumer has room for `buffer` elements; an element for a
/// consumer without room waits (and the hub back-pressures) until it has.
/// Completion reaches every consumer after the elements routed to it; a
/// failure reaches it at once, over the elements it holds and has not
/// passed on (as in Pekko); a consumer attaching after the end gets it at
/// once.
///
/// # Examples
///
/// ```
/// use weir_streams::prelude::*;
/// use weir_streams::PartitionHub;
///
/// let system = weir_actor::ActorSystem::new("partition").unwrap();
/// let materializer = Materializer::new(&system);
/// // Even numbers to the first consumer, odd ones to the second.
/// let hub = Source::from_iter(0..10u32)
///     .run_with(
///         PartitionHub::sink(|n, x: &u32| Some(*x as usize % n), 2, 8).unwrap(),
///         &materializer,
///     );
/// let even = hub.clone().run_with(Sink::collect(), &materializer);
/// let odd = hub.run_with(Sink::collect(), &materializer);
/// assert_eq!(even.wait(), Ok(vec![0, 2, 4, 6, 8]));
/// assert_eq!(odd.wait(), Ok(vec![1, 3, 5, 7, 9]));
/// system.terminate().wait().unwrap();
/// ```
#[derive(Debug, Clone, Copy)]
pub struct PartitionHub;

impl PartitionHub {
    /// A sink that materializes a [`Source`] of the elements routed to
    /// each consumer that runs it. See [`PartitionHub`].
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` for a buffer of 0.
    pub fn sink<T, F>(
        partitioner: F,
        start_after_nr_of_consumers: usize,
        buffer: usize,
    ) -> Result<Sink<T, Source<T, ()>>, ArgumentError>
    where
        T: Send + 'static,
        F: Fn(usize, &T) -> Option<usize> + Send + Sync + 'static,
    {
        let partitioner = StdArc::new(partitioner);
        Self::stateful_sink(
            move || {
                let partitioner = StdArc::clone(&partitioner);
                move |info: &ConsumerInfo<'_>, element: &T| partitioner(info.size(), element)
            },
            start_after_nr_of_consumers,
            buffer,
        )
    }

    /// [`sink`](Self::sink) with a stateful partitioner (Pekko's
    /// `PartitionHub.statefulSink`): `make_partitioner` is called once per
    /// materialization, and the partitioner it returns sees, for each
    /// element, the consumers attached and each one's queue
    /// ([`ConsumerInfo::queue_size`]), and returns the index of the
    /// consumer or `None` to drop the element. An index out of range fails
    /// the stream with [`ErrorKind::PartitionOutOfRange`].
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` for a buffer of 0.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// use weir_streams::{ConsumerInfo, PartitionHub};
    ///
    /// let system = weir_actor::ActorSystem::new("partition-stateful").unwrap();
    /// let materializer = Materializer::new(&system);
    /// // Each element to the consumer with the fewest elements queued.
    /// let fastest = || |info: &ConsumerInfo<'_>, _: &u32| {
    ///     (0..info.size()).min_by_key(|&i| info.queue_size(i))
    /// };
    /// let hub = Source::from_iter(0..100u32)
    ///     .run_with(PartitionHub::stateful_sink(fastest, 2, 8).unwrap(), &materializer);
    /// let a = hub.clone().run_with(Sink::count(), &materializer);
    /// let b = hub.run_with(Sink::count(), &materializer);
    /// assert_eq!(a.wait().unwrap() + b.wait().unwrap(), 100);
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn stateful_sink<T, F, P>(
        make_partitioner: F,
        start_after_nr_of_consumers: usize,
        buffer: usize,
    ) -> Result<Sink<T, Source<T, ()>>, ArgumentError>
    where
        T: Send + 'static,
        F: Fn() -> P + Send + Sync + 'static,
        P: FnMut(&ConsumerInfo<'_>, &T) -> Option<usize> + Send + 'static,
    {
        if buffer == 0 {
            return Err(ArgumentError::Zero { argument: "buffer" });
        }
        let make: PartitionerFactory<T> =
            StdArc::new(move || -> Partitioner<T> { Box::new(make_partitioner()) });
        Ok(Sink::from_graph(HubStage {
            make_partitioner: make,
            start_after: start_after_nr_of_consumers,
            buffer,
        }))
    }
}

struct HubStage<T> {
    make_partitioner: PartitionerFactory<T>,
    start_after: usize,
    buffer: usize,
}

impl<T: Send + 'static> GraphStage for HubStage<T> {
    type Shape = SinkShape<T>;
    type Mat = Source<T, ()>;

    fn name(&self) -> &'static str {
        "partition_hub"
    }

    fn create_logic(&self, cx: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, Source<T, ()>) {
        let wake = cx.async_callback(|this: &mut HubLogic<T>, (), ctx| this.wake(ctx));
        let registry = Arc::new(Registry::new(wake.clone()));
        let logic = HubLogic {
            shape: SinkShape::new(),
            registry: Arc::clone(&registry),
            outs: Vec::new(),
            partitioner: (self.make_partitioner)(),
            buffer: self.buffer,
            start_after: self.start_after,
            started: false,
            waiting: None,
            idle_requested: false,
            upstream_done: false,
        };
        let source = Source::from_graph(HubConsumer {
            registry,
            wake,
            buffer: self.buffer,
            name: "partition_hub_consumer",
            give_back: false,
        });
        (Box::new(logic), source)
    }
}

struct HubLogic<T: Send + 'static> {
    shape: SinkShape<T>,
    registry: Arc<ConsumerRegistry<T>>,
    outs: Vec<Out<T>>,
    partitioner: Partitioner<T>,
    /// Each consumer's room (for [`ConsumerInfo::queue_size`]).
    buffer: usize,
    start_after: usize,
    started: bool,
    /// An element routed to a consumer that had no room: (consumer,
    /// element); `usize::MAX` when its consumer left (it is partitioned
    /// again once there are consumers).
    waiting: Option<(usize, T)>,
    idle_requested: bool,
    /// Upstream completed while an element waited: complete after it.
    upstream_done: bool,
}

impl<T: Send + 'static> HubLogic<T> {
    fn wake(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        self.registry.take(&mut self.outs);
        self.started |= self.outs.len() >= self.start_after;
        self.hand_over_all();
        if let Some((index, element)) = self.waiting.take() {
            self.route(index, element);
            // A part batch goes over when the island runs dry (else it
            // would wait for the next element from upstream).
            self.hand_over_when_idle(ctx);
        }
        self.pull_if_ready(ctx)?;
        if self.upstream_done && self.waiting.is_none() {
            self.finish(Ok(()), ctx);
        }
        Ok(())
    }

    /// Hand batches over and take credit; consumers that cancelled leave
    /// (a waiting element for one of them goes back to the partitioner).
    fn hand_over_all(&mut self) {
        let mut at = 0;
        while at < self.outs.len() {
            if self.outs[at].hand_over() {
                self.outs.remove(at);
                match &mut self.waiting {
                    Some((index, _)) if *index == at => {
                        let (_, element) = self.waiting.take().expect("matched");
                        self.waiting = Some((usize::MAX, element));
                    }
                    Some((index, _)) if *index > at => *index -= 1,
                    _ => {}
                }
            } else {
                at += 1;
            }
        }
    }

    /// Put `element` into consumer `index`'s batch, or keep it waiting.
    fn route(&mut self, index: usize, element: T) {
        let Some(out) = self.outs.get_mut(index) else {
            self.waiting = Some((usize::MAX, element));
            return;
        };
        if out.credit() == 0 {
            self.waiting = Some((index, element));
        } else if out.push(element) {
            out.hand_over();
        }
    }

    fn pull_if_ready(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        // An element whose consumer left is partitioned again.
        if let Some((usize::MAX, _)) = &self.waiting
            && !self.outs.is_empty()
        {
            let (_, element) = self.waiting.take().expect("matched");
            self.partition(element, ctx)?;
        }
        let inlet = self.shape.inlet;
        if self.started
            && !self.outs.is_empty()
            && self.waiting.is_none()
            && !ctx.has_been_pulled(inlet)
            && !ctx.is_closed(inlet)
        {
            ctx.pull(inlet)?;
        }
        Ok(())
    }

    fn partition(&mut self, element: T, ctx: &mut StageContext<'_>) -> StageResult {
        let consumers = self.outs.len();
        let queues = Queues {
            outs: &self.outs,
            buffer: self.buffer,
        };
        let Some(index) = (self.partitioner)(&ConsumerInfo::new(&queues), &element) else {
            return Ok(()); // dropped
        };
        if index >= consumers {
            let error = ctx.attribute(StreamError::from_kind(ErrorKind::PartitionOutOfRange {
                index,
                consumers,
            }));
            self.end_all(Err(error.clone()));
            return Err(error);
        }
        self.route(index, element);
        self.hand_over_when_idle(ctx);
        Ok(())
    }

    /// Hand part batches over when the island runs dry.
    fn hand_over_when_idle(&mut self, ctx: &mut StageContext<'_>) {
        if !self.idle_requested {
            self.idle_requested = true;
            ctx.request_idle_callback();
        }
    }

    fn finish(&mut self, outcome: Result<(), StreamError>, ctx: &mut StageContext<'_>) {
        self.end_all(outcome);
        ctx.complete_stage();
    }

    /// End every consumer (and those attaching later) with `outcome`.
    fn end_all(&mut self, outcome: Result<(), StreamError>) {
        for mut out in self.registry.close(outcome.clone()) {
            end_out(&mut out, &outcome);
        }
        for out in &mut self.outs {
            end_out(out, &outcome);
        }
    }
}

impl<T: Send + 'static> GraphStageLogic for HubLogic<T> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        self.wake(ctx)
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        if self.outs.is_empty() {
            self.waiting = Some((usize::MAX, element));
            return Ok(());
        }
        self.partition(element, ctx)?;
        self.pull_if_ready(ctx)
    }

    fn on_idle(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        self.idle_requested = false;
        self.hand_over_all();
        self.pull_if_ready(ctx)
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        if self.waiting.is_some() {
            // Deliver the element that waits for room first.
            ctx.set_keep_going(true);
            self.upstream_done = true;
            return Ok(());
        }
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
        let outcome = Err(StreamError::from_kind(ErrorKind::AbruptTermination));
        for mut out in self.registry.close(outcome.clone()) {
            end_out(&mut out, &outcome);
        }
    }
}
