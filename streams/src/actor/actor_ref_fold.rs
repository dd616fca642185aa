//! `Source::actor_ref` straight into a folding sink (`Sink::fold`,
//! `for_each`, `collect`, `ignore`, ...): one port-less stage that feeds
//! what the inbox holds to the sink's consumer in a loop.
//!
//! A folding sink asks for the next element as soon as it has taken the
//! last one, so through two stages every element arrives with demand and
//! is pushed at once, whatever the buffer size and overflow strategy (the
//! buffer stays empty). The fused stage does exactly that, without a push
//! and a pull through the interpreter per element. Completion and failure
//! keep their place among the elements, as in the two-stage form; the
//! reference, its name, its lifecycle and every drop behave the same.

use std::any::Any;
use std::collections::VecDeque;
use std::ops::ControlFlow;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::Instant;

use weir_actor::{DeadLetterReason, FunctionRef};

use super::actor_ref_source::{StageInbox, inbox_ref};
use super::dead_letters::Letters;
use super::inbox::Signal;
use crate::error::StreamError;
use crate::fusion::{Consumer, ConsumerFactory, HostsConsumer};
use crate::stage::{
    AsyncCallback, Attributes, ErasedStage, GraphStageLogic, MatContext, SlotKind, StageContext,
    StageResult,
};
use crate::tuning::{ACTOR_REF_BUSY_TAKE, ACTOR_REF_FOLD_BUDGET, ACTOR_REF_PACE};

/// What `Source::actor_ref` offers a folding sink: itself with the sink's
/// consumer inside.
pub(super) struct ActorRefHost;

impl<T: Send + 'static> HostsConsumer<T> for ActorRefHost {
    fn with_consumer(
        &self,
        source: &Attributes,
        consumer: ConsumerFactory<T>,
    ) -> Arc<dyn ErasedStage> {
        Arc::new(ActorRefFoldStage {
            ref_name: source.name().unwrap_or("actor_ref").to_owned(),
            consumer,
        })
    }
}

struct ActorRefFoldStage<T> {
    /// The reference is named after the source stage, as unfused.
    ref_name: String,
    consumer: ConsumerFactory<T>,
}

impl<T: Send + 'static> ErasedStage for ActorRefFoldStage<T> {
    fn name(&self) -> &'static str {
        "actor_ref"
    }
    fn initial_attributes(&self) -> Attributes {
        Attributes::new()
    }
    fn ports(&self) -> (u16, u16) {
        (0, 0)
    }
    fn outlet_slot(&self, _: u16) -> SlotKind {
        unreachable!("a fused source-to-sink stage has no outlet")
    }
    fn create(
        &self,
        cx: &mut MatContext<'_>,
        mats: &mut Vec<Box<dyn Any + Send>>,
    ) -> Box<dyn GraphStageLogic> {
        let wake = cx.async_callback(|this: &mut ActorRefFoldLogic<T>, (), ctx| this.on_wake(ctx));
        let pace = cx.async_callback(|this: &mut ActorRefFoldLogic<T>, (), ctx| this.on_pace(ctx));
        let (inbox, function, source, letters) = inbox_ref(cx, wake, &self.ref_name, "actor_ref");
        let (consumer, value) = (self.consumer)();
        mats.push(Box::new(source));
        mats.push(value);
        Box::new(ActorRefFoldLogic {
            source_name: Arc::from(self.ref_name.as_str()),
            inbox,
            function,
            consumer,
            arrived: VecDeque::new(),
            pace,
            holding: false,
            last_take: Instant::now(),
            letters,
        })
    }
}

struct ActorRefFoldLogic<T: Send + 'static> {
    /// A failure told through the handle is attributed to the source, as
    /// unfused.
    source_name: Arc<str>,
    inbox: Arc<StageInbox<T>>,
    function: FunctionRef<T>,
    consumer: Box<dyn Consumer<T>>,
    /// Taken from the inbox and not yet fed (more than one turn's budget).
    arrived: VecDeque<Signal<T>>,
    /// The stage's own next turn while it holds the inbox.
    pace: AsyncCallback<()>,
    /// The stage holds the inbox (see `run`).
    holding: bool,
    /// When it last took from the inbox.
    last_take: Instant,
    /// Where what the stage cannot deliver goes.
    letters: Letters,
}

/// How feeding a batch ended.
enum Fed {
    /// Everything was fed; the stream goes on.
    Open,
    /// The budget ran out with signals left.
    Budget,
    /// The stream ended: the consumer has finished (or stopped taking).
    Ended,
}

impl<T: Send + 'static> ActorRefFoldLogic<T> {
    /// A producer woke the stage. While it holds the inbox a `pace` turn
    /// is always on its way and will take (a producer can still wake it
    /// then, when a take ran ahead of a count), so this one has nothing to do.
    fn on_wake(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        if self.holding {
            return Ok(());
        }
        self.run(ctx)
    }

    /// The stage's own turn while holding: take once [`ACTOR_REF_PACE`] has passed
    /// since the last take; until then pass through the island's mailbox
    /// again, so the worker runs other actors and stages meanwhile.
    fn on_pace(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        // A backlog past the budget goes on at once.
        if self.arrived.is_empty() && self.last_take.elapsed() < ACTOR_REF_PACE {
            self.pace.invoke(());
            return Ok(());
        }
        self.run(ctx)
    }

    /// Take and feed what the inbox holds. While bursts keep coming the
    /// stage holds the inbox (producers send no wake-ups) and takes again
    /// [`ACTOR_REF_PACE`] later: a wake-up per burst costs a producer more than the
    /// elements of the burst, and a consumer draining right behind the
    /// producer fights it for the same cache lines. A take of fewer than
    /// [`ACTOR_REF_BUSY_TAKE`] signals lets go at once, so sparse traffic is handled with
    /// no added delay.
    fn run(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        loop {
            if !self.holding {
                self.inbox.hold();
                self.holding = true;
            }
            let taken = self.inbox.take_held(&mut self.arrived);
            self.last_take = Instant::now();
            match self.feed(ctx) {
                Fed::Ended => return Ok(()),
                // The budget ran out: go on in the next turn, still holding.
                Fed::Budget => {
                    self.pace.invoke(());
                    return Ok(());
                }
                Fed::Open if taken >= ACTOR_REF_BUSY_TAKE => {
                    self.pace.invoke(());
                    return Ok(());
                }
                Fed::Open => {}
            }
            self.holding = false;
            if !self.inbox.release() {
                return Ok(());
            }
            // Counted meanwhile, and nobody wakes us for them: go on.
        }
    }

    /// Feed what arrived; end the stage if the stream ended.
    fn feed(&mut self, ctx: &mut StageContext<'_>) -> Fed {
        let (arrived, consumer, name) = (&mut self.arrived, &mut self.consumer, &self.source_name);
        let fed = catch_unwind(AssertUnwindSafe(|| feed(arrived, &mut **consumer, name)));
        match fed {
            Ok(Fed::Ended) => {
                // What came after the end is dropped, observably.
                let mut drops = self.letters.drops(DeadLetterReason::Dropped);
                drops.rest(&mut self.arrived);
                drops.settle(&self.inbox);
                ctx.complete_stage();
                Fed::Ended
            }
            Ok(fed) => fed,
            Err(payload) => {
                let name: Arc<str> = ctx.stage_name().into();
                self.consumer
                    .finish(Err(StreamError::panicked(&*payload).in_stage(&name)));
                ctx.complete_stage();
                Fed::Ended
            }
        }
    }
}

/// Feed up to [`ACTOR_REF_FOLD_BUDGET`] signals to `consumer`, in order.
fn feed<T: Send + 'static>(
    arrived: &mut VecDeque<Signal<T>>,
    consumer: &mut dyn Consumer<T>,
    source: &Arc<str>,
) -> Fed {
    for _ in 0..ACTOR_REF_FOLD_BUDGET {
        let Some(signal) = arrived.pop_front() else {
            return Fed::Open;
        };
        match signal {
            Signal::Element(element) => {
                if let ControlFlow::Break(()) = consumer.on_next(element) {
                    return Fed::Ended;
                }
            }
            // Nothing is ever buffered, so draining and immediate
            // completion are the same here.
            Signal::Drain | Signal::Now => {
                consumer.finish(Ok(()));
                return Fed::Ended;
            }
            Signal::Fail(error) => {
                consumer.finish(Err(error.in_stage(source)));
                return Fed::Ended;
            }
        }
    }
    if arrived.is_empty() {
        Fed::Open
    } else {
        Fed::Budget
    }
}

impl<T: Send + 'static> GraphStageLogic for ActorRefFoldLogic<T> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        if !self.consumer.wants_elements() {
            self.consumer.finish(Ok(()));
            ctx.complete_stage();
            return Ok(());
        }
        // No ports: stay until the inbox says the stream ended.
        ctx.set_keep_going(true);
        Ok(())
    }

    fn post_stop(&mut self) {
        // Refuse what comes next; what the stage still has becomes dead letters.
        self.letters.close(&self.inbox, &mut self.arrived, None);
        self.function.stop();
    }
}
