//! `MergeHub`: one downstream, any number of producers attached while it
//! runs, each with its own buffer.

use std::marker::PhantomData;

use super::In;
use super::merge_gate::{Gate, Slot, Waiter};
use super::registry::Registry;
use crate::blueprint::{Sink, Source};
use crate::error::ArgumentError;
use crate::error::StreamError;
use crate::handover::{self, FeedLogic, Order, Refill, Wait};
use crate::stage::{
    AsyncCallback, GraphStage, GraphStageLogic, InPort, MatContext, OutPort, SinkShape,
    SourceShape, StageContext, StageResult,
};
use crate::sync::{Arc, AtomicBool, Ordering};

/// A hub that merges any number of producers, attached while it runs,
/// into one stream.
///
/// [`MergeHub::source`] materializes a [`Sink`]: each run of that sink
/// attaches a producer with room for `per_producer_buffer` elements in the
/// hub; a producer whose room is used up is back-pressured on its own
/// (the others go on). Elements of one producer stay in order; producers
/// take turns a batch at a time.
///
/// A producer that completes or fails just leaves: the hub goes on (a
/// producer's failure does not fail the hub, as in Akka). The hub's source
/// runs until it is cancelled, which cancels every producer (and producers
/// attaching later at once); [`MergeHub::source_with_draining`] can also
/// stop taking new producers and complete once the attached ones have.
/// [`MergeHub::source_with_max_total`] bounds what all producers together
/// hold in the hub; [`MergeHub::source_with_draining_and_max_total`] does
/// both.
///
/// # Examples
///
/// ```
/// use weir_streams::prelude::*;
/// use weir_streams::MergeHub;
///
/// let system = weir_actor::ActorSystem::new("merge").unwrap();
/// let materializer = Materializer::new(&system);
/// let (sink, sum) = MergeHub::source(16)
///     .unwrap()
///     .take(6)
///     .to_mat(Sink::fold(0, |sum, x| sum + x), Keep::both)
///     .run(&materializer);
/// Source::from_iter(vec![1, 2, 3]).run_with(sink.clone(), &materializer);
/// Source::from_iter(vec![10, 20, 30]).run_with(sink, &materializer);
/// assert_eq!(sum.wait(), Ok(66));
/// system.terminate().wait().unwrap();
/// ```
#[derive(Debug, Clone, Copy)]
pub struct MergeHub;

impl MergeHub {
    /// A source of what every producer sends; it materializes the [`Sink`]
    /// producers run. See [`MergeHub`].
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` for a buffer of 0.
    pub fn source<T: Send + 'static>(
        per_producer_buffer: usize,
    ) -> Result<Source<T, Sink<T, ()>>, ArgumentError> {
        Ok(Self::source_with_draining(per_producer_buffer)?
            .map_materialized_value(|(sink, _)| sink))
    }

    /// [`MergeHub::source`], also materializing a [`DrainingControl`]
    /// that makes the hub refuse new producers and complete once the
    /// attached ones have completed.
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` for a buffer of 0.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// use weir_streams::MergeHub;
    ///
    /// let system = weir_actor::ActorSystem::new("draining").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let ((sink, draining), all) = MergeHub::source_with_draining(4)
    ///     .unwrap()
    ///     .to_mat(Sink::collect(), Keep::both)
    ///     .run(&materializer);
    /// Source::from_iter(vec![1, 2]).run_with(sink, &materializer);
    /// draining.drain_and_complete();
    /// // Whatever was attached before the drain is delivered, then the hub completes.
    /// let all = all.wait().unwrap();
    /// assert!(all == vec![1, 2] || all.is_empty());
    /// system.terminate().wait().unwrap();
    /// ```
    // The materialized pair is what a user destructures; an alias would hide it.
    #[allow(clippy::type_complexity)]
    pub fn source_with_draining<T: Send + 'static>(
        per_producer_buffer: usize,
    ) -> Result<Source<T, (Sink<T, ()>, DrainingControl)>, ArgumentError> {
        Self::hub(per_producer_buffer, None)
    }

    /// [`MergeHub::source`] holding at most `max_total_buffer_size`
    /// elements of all producers together: at most
    /// `max_total_buffer_size / per_producer_buffer` producers have room
    /// in the hub at once. A producer run while the room is taken waits,
    /// pulling nothing from its upstream, until a producer that had room
    /// has ended and the hub has taken everything it handed over; waiting
    /// producers get room in the order they were run. A producer whose
    /// upstream ends while it waits just ends.
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` for a `per_producer_buffer` of 0;
    /// `ArgumentError::Invalid` for a `max_total_buffer_size` below it.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// use weir_streams::MergeHub;
    ///
    /// let system = weir_actor::ActorSystem::new("merge-bounded").unwrap();
    /// let materializer = Materializer::new(&system);
    /// // Room for two producers of 8 at once; the third waits its turn.
    /// let (sink, sum) = MergeHub::source_with_max_total(8, 16)
    ///     .unwrap()
    ///     .take(30)
    ///     .to_mat(Sink::fold(0, |sum, x| sum + x), Keep::both)
    ///     .run(&materializer);
    /// for _ in 0..3 {
    ///     Source::repeat(1).take(10).run_with(sink.clone(), &materializer);
    /// }
    /// assert_eq!(sum.wait(), Ok(30));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn source_with_max_total<T: Send + 'static>(
        per_producer_buffer: usize,
        max_total_buffer_size: usize,
    ) -> Result<Source<T, Sink<T, ()>>, ArgumentError> {
        Ok(
            Self::source_with_draining_and_max_total(per_producer_buffer, max_total_buffer_size)?
                .map_materialized_value(|(sink, _)| sink),
        )
    }

    /// [`MergeHub::source_with_max_total`] with the [`DrainingControl`] of
    /// [`MergeHub::source_with_draining`]. A producer run before the drain
    /// is drained, also one still waiting for room then: the hub completes
    /// once it has had its turn and ended. One run after the drain is
    /// cancelled.
    ///
    /// # Errors
    ///
    /// As [`MergeHub::source_with_max_total`].
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// use weir_streams::MergeHub;
    ///
    /// let system = weir_actor::ActorSystem::new("merge-bounded-draining").unwrap();
    /// let materializer = Materializer::new(&system);
    /// // Room for one producer at a time.
    /// let ((sink, draining), all) = MergeHub::source_with_draining_and_max_total(4, 4)
    ///     .unwrap()
    ///     .to_mat(Sink::collect(), Keep::both)
    ///     .run(&materializer);
    /// Source::from_iter(vec![1, 2]).run_with(sink.clone(), &materializer);
    /// Source::from_iter(vec![3, 4]).run_with(sink, &materializer);
    /// draining.drain_and_complete();
    /// // Both were run before the drain: both are delivered, then the hub completes.
    /// let mut got = all.wait().unwrap();
    /// got.sort();
    /// assert_eq!(got, vec![1, 2, 3, 4]);
    /// system.terminate().wait().unwrap();
    /// ```
    // The materialized pair is what a user destructures; an alias would hide it.
    #[allow(clippy::type_complexity)]
    pub fn source_with_draining_and_max_total<T: Send + 'static>(
        per_producer_buffer: usize,
        max_total_buffer_size: usize,
    ) -> Result<Source<T, (Sink<T, ()>, DrainingControl)>, ArgumentError> {
        if max_total_buffer_size < per_producer_buffer {
            return Err(ArgumentError::Invalid {
                argument: "max_total_buffer_size",
                reason: "must be at least per_producer_buffer",
            });
        }
        let slots = max_total_buffer_size / per_producer_buffer.max(1);
        Self::hub(per_producer_buffer, Some(slots))
    }

    // The materialized pair is what a user destructures; an alias would hide it.
    #[allow(clippy::type_complexity)]
    fn hub<T: Send + 'static>(
        per_producer_buffer: usize,
        slots: Option<usize>,
    ) -> Result<Source<T, (Sink<T, ()>, DrainingControl)>, ArgumentError> {
        if per_producer_buffer == 0 {
            return Err(ArgumentError::Zero {
                argument: "per_producer_buffer",
            });
        }
        Ok(Source::from_graph(HubStage {
            buffer: per_producer_buffer,
            slots,
            _t: PhantomData,
        }))
    }
}

/// A producer's hand-over in the hub, with its room when the total is
/// bounded (given back once the hub has dropped the entry and the
/// producer has stopped). A producer waiting for room is in the hub
/// already, with nothing handed over, so a drain waits for it.
struct Entry<T: Send + 'static> {
    input: In<T>,
    _room: Option<Room>,
}

/// What an entry holds of its producer's room.
enum Room {
    /// Held since the producer was run.
    Held { _slot: Slot },
    /// Parked in the waiter once the gate lets the producer in.
    Awaited { _waiter: Arc<Waiter> },
}

struct MergeHubCore<T: Send + 'static> {
    registry: Registry<Entry<T>, AsyncCallback<()>>,
    /// The hub's wake-up, for producers' hand-overs.
    wake: AsyncCallback<()>,
    draining: AtomicBool,
}

/// Makes a [`MergeHub`] drain: [`MergeHub::source_with_draining`],
/// [`MergeHub::source_with_draining_and_max_total`].
/// `Send + Sync + Clone`.
///
/// # Examples
///
/// ```
/// use weir_streams::prelude::*;
/// use weir_streams::MergeHub;
///
/// let system = weir_actor::ActorSystem::new("drain-control").unwrap();
/// let materializer = Materializer::new(&system);
/// let ((_sink, draining), done) = MergeHub::source_with_draining::<u32>(4)
///     .unwrap()
///     .to_mat(Sink::ignore(), Keep::both)
///     .run(&materializer);
/// draining.clone().drain_and_complete(); // no producer attached: completes
/// assert_eq!(done.wait(), Ok(()));
/// system.terminate().wait().unwrap();
/// ```
#[derive(Clone)]
pub struct DrainingControl {
    drain: Arc<dyn Fn() + Send + Sync>,
}

impl DrainingControl {
    /// Refuse producers attaching from now on (they are cancelled), and
    /// complete the hub's source once every attached producer has
    /// completed and its elements are delivered.
    pub fn drain_and_complete(&self) {
        (self.drain)();
    }
}

impl std::fmt::Debug for DrainingControl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DrainingControl")
    }
}

struct HubStage<T> {
    buffer: usize,
    /// Producers with room at once, when the total is bounded.
    slots: Option<usize>,
    _t: PhantomData<fn() -> T>,
}

impl<T: Send + 'static> GraphStage for HubStage<T> {
    type Shape = SourceShape<T>;
    type Mat = (Sink<T, ()>, DrainingControl);

    fn name(&self) -> &'static str {
        "merge_hub"
    }

    fn create_logic(&self, cx: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, Self::Mat) {
        let wake = cx.async_callback(|this: &mut HubLogic<T>, (), ctx| this.wake(ctx));
        let shared = Arc::new(MergeHubCore {
            registry: Registry::new(wake.clone()),
            wake,
            draining: AtomicBool::new(false),
        });
        let logic = HubLogic {
            shape: SourceShape::new(),
            shared: Arc::clone(&shared),
            ins: Vec::new(),
            current: 0,
            draining: false,
        };
        let control = {
            let shared = Arc::clone(&shared);
            DrainingControl {
                drain: Arc::new(move || {
                    // Refused at once: a producer run after this call is
                    // cancelled, one attached before is drained.
                    shared.registry.refuse(Ok(()));
                    shared.draining.store(true, Ordering::Release);
                    shared.registry.notify();
                }),
            }
        };
        let sink = Sink::from_graph(ProducerStage {
            shared,
            buffer: self.buffer,
            gate: self.slots.map(Gate::new),
        });
        (Box::new(logic), (sink, control))
    }
}

struct HubLogic<T: Send + 'static> {
    shape: SourceShape<T>,
    shared: Arc<MergeHubCore<T>>,
    /// The attached producers' hand-overs.
    ins: Vec<Entry<T>>,
    /// The producer whose batch is being emitted.
    current: usize,
    draining: bool,
}

impl<T: Send + 'static> HubLogic<T> {
    fn wake(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        self.shared.registry.take(&mut self.ins);
        if !self.draining && self.shared.draining.load(Ordering::Acquire) {
            self.draining = true;
            // Attached before the drain (the registry refuses later ones).
            self.shared.registry.take(&mut self.ins);
        }
        self.deliver(ctx)
    }

    /// Emit the next element if downstream wants one: from the current
    /// producer's batch, else refill the producers in turn (each one that
    /// has nothing marks itself waiting, so a hand-over wakes the hub).
    fn deliver(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let out = self.shape.out;
        if !ctx.is_available(out) {
            return Ok(());
        }
        if let Some(entry) = self.ins.get_mut(self.current)
            && let Some(element) = entry.input.pop()
        {
            return ctx.push(out, element);
        }
        let mut tried = 0;
        while tried < self.ins.len() {
            self.current = (self.current + 1) % self.ins.len();
            let input = &mut self.ins[self.current].input;
            match input.refill(Wait::Yes) {
                Refill::Ready => {
                    if let Some(element) = input.pop() {
                        return ctx.push(out, element);
                    }
                    tried += 1;
                }
                Refill::Empty => tried += 1,
                // A producer that ended (failed or not) just leaves.
                Refill::End(_) | Refill::Done => {
                    // The last one moves here: look at this place again.
                    let at = self.current;
                    self.ins.swap_remove(at);
                    self.current = if at == 0 {
                        self.ins.len().saturating_sub(1)
                    } else {
                        at - 1
                    };
                }
            }
        }
        if self.draining && self.ins.is_empty() {
            ctx.complete(out);
        }
        Ok(())
    }
}

impl<T: Send + 'static> GraphStageLogic for HubLogic<T> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        self.wake(ctx)
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.deliver(ctx)
    }

    fn post_stop(&mut self) {
        // Cancelled or torn down: refuse later producers, cancel the
        // attached ones (dropping a hand-over end cancels it).
        drop(self.shared.registry.close(Ok(())));
        self.ins.clear();
    }
}

/// One producer: each run of the hub's sink.
struct ProducerStage<T: Send + 'static> {
    shared: Arc<MergeHubCore<T>>,
    buffer: usize,
    /// Room for producers, when the total is bounded.
    gate: Option<Arc<Gate>>,
}

impl<T: Send + 'static> GraphStage for ProducerStage<T> {
    type Shape = SinkShape<T>;
    type Mat = ();

    fn name(&self) -> &'static str {
        "merge_hub_producer"
    }

    fn create_logic(&self, cx: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        let (producer, consumer) = handover::channel(self.buffer, Order::Pop);
        consumer.set_notify(self.shared.wake.clone());
        let Some(gate) = &self.gate else {
            attach(&self.shared, consumer, None);
            return (Box::new(FeedLogic::new(producer, cx)), ());
        };
        let admit = cx.async_callback(|this: &mut Admitted<T>, (), ctx| this.admitted(ctx));
        producer
            .set_notify(cx.async_callback(|this: &mut Admitted<T>, (), ctx| this.feed.woken(ctx)));
        let feed = FeedLogic::wrapped(producer);
        let (room, state) = match Gate::enter(gate, admit) {
            Ok(slot) => (
                Room::Held {
                    _slot: slot.clone(),
                },
                Admission::In { _room: slot },
            ),
            Err(waiter) => (
                Room::Awaited {
                    _waiter: Arc::clone(&waiter),
                },
                Admission::Waiting(waiter),
            ),
        };
        // Refused (the hub is gone or draining): the feed starts at once
        // and finds its hand-over dropped, which cancels it.
        let state = if attach(&self.shared, consumer, Some(room)) {
            state
        } else {
            Admission::Refused
        };
        let logic = Admitted {
            feed,
            state,
            started: false,
        };
        (Box::new(logic), ())
    }
}

/// Leave a producer's hand-over for the hub; whether the hub took it.
/// Refused (the hub is gone or draining): dropping the consumer cancels,
/// which stops the producer when it starts.
fn attach<T: Send + 'static>(shared: &MergeHubCore<T>, input: In<T>, room: Option<Room>) -> bool {
    shared
        .registry
        .register(Entry { input, _room: room })
        .is_ok()
}

/// Where a producer of a bounded hub is.
enum Admission {
    /// Waiting for room (its hand-over is in the hub, empty).
    Waiting(Arc<Waiter>),
    /// Holding room (its hand-over is in the hub, or was refused).
    In { _room: Slot },
    /// Its hand-over was refused: the feed starts to be cancelled.
    Refused,
    /// Ended before it had room.
    Gone,
}

/// A producer of a hub with a bounded total: feeds only once it has room.
struct Admitted<T: Send + 'static> {
    feed: FeedLogic<T, AsyncCallback<()>>,
    state: Admission,
    /// The feed has started (pulling).
    started: bool,
}

impl<T: Send + 'static> Admitted<T> {
    /// Woken by the gate: take the room, start feeding.
    fn admitted(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let Admission::Waiting(waiter) = &self.state else {
            return Ok(());
        };
        let Some(slot) = waiter.slot() else {
            return Ok(());
        };
        self.state = Admission::In { _room: slot };
        self.start(ctx)
    }

    fn start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        if self.started {
            return Ok(());
        }
        self.started = true;
        self.feed.pre_start(ctx)
    }
}

impl<T: Send + 'static> GraphStageLogic for Admitted<T> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        match self.state {
            Admission::In { .. } | Admission::Refused => self.start(ctx),
            // The gate's wake-up may have come before the island started.
            _ => self.admitted(ctx),
        }
    }

    fn on_push(&mut self, port: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.feed.on_push(port, ctx)
    }

    fn on_idle(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        self.feed.on_idle(ctx)
    }

    fn on_upstream_finish(&mut self, port: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        // Ended while waiting: nothing was handed over; the room, if the
        // gate gives it, goes on when this stage is dropped.
        if let Admission::Waiting(..) = self.state {
            self.state = Admission::Gone;
        }
        self.feed.on_upstream_finish(port, ctx)
    }

    fn on_upstream_failure(
        &mut self,
        port: InPort,
        error: StreamError,
        ctx: &mut StageContext<'_>,
    ) -> StageResult {
        if let Admission::Waiting(..) = self.state {
            self.state = Admission::Gone;
        }
        self.feed.on_upstream_failure(port, error, ctx)
    }

    fn post_stop(&mut self) {
        self.feed.post_stop();
    }
}
