//! `Source::actor_ref`: an `ActorRef` whose messages go straight into a stream.
//!
//! # How an element travels
//!
//! The materialized [`ActorRef`] is a [`FunctionRef`]: a `tell` runs on
//! the sender's thread and appends the element to the stage's inbox (one
//! lock, one queue slot, no wrapper allocation). The first element into
//! an idle inbox marks it scheduled and wakes the stage with one async
//! callback (a message to the island's inbox that carries nothing); the
//! stage takes the whole inbox at once and clears the mark, so a burst
//! costs one wake-up. There is no actor in between.
//!
//! Inside the stage the signals of a burst arrive one at a time, as if
//! each were its own message: an element that arrives while the buffer is
//! empty and downstream has pulled is pushed at once (the direct-push fast
//! path); otherwise it is buffered under the overflow strategy. After a
//! push the next signal waits for downstream's turn: its pull (it wants
//! more: the next element goes straight to it) or the island running out
//! of events without one (the next element finds no demand). So a
//! downstream that pulls at once gets every element even with a buffer
//! of 0, as in Akka, where each element is its own async input.
//!
//! Into a folding sink (`fold`, `collect`, `for_each`, `head`, ...),
//! directly or through simple operators, the source, the operators and the
//! sink run as one stage (`actor_ref_fold.rs`): such a sink
//! pulls again as soon as it has an element, so every element arrives
//! with demand, and the fused stage feeds them to the sink in a loop.
//!
//! # The startup race
//!
//! The inbox and the reference exist when `run` returns; the island may
//! not have started. Elements queue in the inbox in order; the wake-up
//! waits in the island's mailbox, behind the island's own start. Nothing
//! blocks, nothing is lost or reordered. Completion and failure travel
//! through the same inbox, so they keep their place after the elements
//! sent before them.

use std::collections::VecDeque;
use std::sync::Arc;

use weir_actor::{ActorRef, DeadLetterReason, FunctionRef};

use super::buffered::{Arrival, ElementBuffer};
use super::dead_letters::Letters;
use super::inbox::{Inbox, Signal, Wake};
use crate::blueprint::Source;
use crate::error::{ArgumentError, StreamError};
use crate::overflow::OverflowStrategy;
use crate::stage::{
    AsyncCallback, GraphStage, GraphStageLogic, MatContext, OutPort, SourceShape, StageContext,
    StageResult, actor_name_for,
};

impl Wake for AsyncCallback<()> {
    fn wake(&self) {
        self.invoke(());
    }
}

pub(super) type StageInbox<T> = Inbox<T, AsyncCallback<()>>;

/// What `Source::actor_ref` materializes: the [`ActorRef`] to tell
/// elements to, and the controls that end the stream.
///
/// Elements sent after the stream ended, or after downstream cancelled,
/// and elements still buffered when it stopped, become dead letters;
/// nothing panics.
pub struct ActorRefSource<T: Send + 'static> {
    actor: ActorRef<T>,
    inbox: Arc<StageInbox<T>>,
}

impl<T: Send + 'static> Clone for ActorRefSource<T> {
    fn clone(&self) -> Self {
        Self {
            actor: self.actor.clone(),
            inbox: Arc::clone(&self.inbox),
        }
    }
}

impl<T: Send + 'static> ActorRefSource<T> {
    /// The reference elements are told to. It terminates (and is
    /// watchable) when the stream ends.
    pub fn actor_ref(&self) -> &ActorRef<T> {
        &self.actor
    }

    /// Tell one element (the same as `actor_ref().tell(element)`).
    pub fn tell(&self, element: T) {
        self.actor.tell(element);
    }

    /// Complete the stream after the elements sent before this call,
    /// buffered ones included. Elements sent after it are dropped.
    pub fn complete(&self) {
        let _ = self.inbox.offer(Signal::Drain);
    }

    /// Complete the stream at once, discarding what is buffered.
    pub fn complete_now(&self) {
        let _ = self.inbox.offer(Signal::Now);
    }

    /// Fail the stream at once (also while draining).
    pub fn fail(&self, error: StreamError) {
        let _ = self.inbox.offer(Signal::Fail(error));
    }

    /// How many elements the buffer or the completion dropped so far.
    pub fn dropped(&self) -> u64 {
        self.inbox.dropped()
    }
}

impl<T: Send + 'static> std::fmt::Debug for ActorRefSource<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ActorRefSource")
            .field("actor", self.actor.path())
            .field("dropped", &self.dropped())
            .finish()
    }
}

impl<T: Send + 'static> Source<T, ActorRefSource<T>> {
    /// A source fed by an actor reference: what is told to the
    /// materialized [`ActorRefSource::actor_ref`] is emitted, in order.
    ///
    /// With demand and an empty buffer an element is pushed at once; else
    /// up to `buffer_size` wait, and `strategy` decides when the buffer is
    /// full (`DropHead`, `DropTail`, `DropBuffer`, `DropNew`, or `Fail`
    /// with `ErrorKind::BufferOverflow`). With a buffer of 0 an element
    /// that finds no demand is dropped. Every drop is counted
    /// ([`ActorRefSource::dropped`]) and the dropped element itself is
    /// published as a dead letter (`DeadLetterReason::Dropped`, at
    /// `Attributes::drop_log_level`). When the stream stops (downstream
    /// cancelled, or it failed) the elements still buffered or queued are
    /// counted and published the same way, with
    /// `DeadLetterReason::StageStopped`: nothing is lost silently.
    ///
    /// The reference is named after the stage (`.named(..)`; any text,
    /// with characters actor names do not take replaced by `_`, and
    /// `actor_ref` for an empty name).
    ///
    /// Into a folding sink (`Sink::fold`, `collect`, `for_each`, `head`,
    /// ...), directly or through simple operators (`map`, `filter`,
    /// `take`, ...), the whole graph runs as one stage with no port traffic
    /// per element; under a stream of tells it takes them in bursts, a
    /// few microseconds apart, instead of being woken for each.
    ///
    /// # Errors
    ///
    /// `ArgumentError::BackpressureUnsupported` for
    /// `OverflowStrategy::Backpressure`: a `tell` cannot wait.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("actor-ref-source").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let (source, done) = Source::actor_ref(16, OverflowStrategy::DropHead)
    ///     .unwrap()
    ///     .map(|x: u32| x * 10)
    ///     .to_mat(Sink::collect(), Keep::both)
    ///     .run(&materializer);
    /// // The ref works at once, from any thread.
    /// let actor = source.actor_ref().clone();
    /// std::thread::spawn(move || (1..=3u32).for_each(|x| actor.tell(x))).join().unwrap();
    /// source.complete();
    /// assert_eq!(done.wait(), Ok(vec![10, 20, 30]));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn actor_ref(
        buffer_size: usize,
        strategy: OverflowStrategy,
    ) -> Result<Self, ArgumentError> {
        if strategy == OverflowStrategy::Backpressure {
            return Err(ArgumentError::BackpressureUnsupported {
                hint: "a tell cannot wait; use Source::actor_ref_with_backpressure or Source::queue",
            });
        }
        let source = Source::from_graph(ActorRefStage::<T> {
            buffer_size,
            strategy,
            _t: std::marker::PhantomData,
        });
        // Into a folding sink every element finds demand: one fused stage.
        Ok(source.hosting(Arc::new(super::actor_ref_fold::ActorRefHost)))
    }
}

struct ActorRefStage<T> {
    buffer_size: usize,
    strategy: OverflowStrategy,
    _t: std::marker::PhantomData<fn() -> T>,
}

struct ActorRefLogic<T: Send + 'static> {
    shape: SourceShape<T>,
    /// Where what the stage cannot deliver goes.
    letters: Letters,
    inbox: Arc<StageInbox<T>>,
    function: FunctionRef<T>,
    buffer: ElementBuffer<T>,
    /// Signals taken from the inbox and not acted on yet, in order.
    arrived: VecDeque<Signal<T>>,
    /// After a push, the next signal waits until downstream has had its
    /// turn: `on_pull` (it wants more) or `on_idle` (the island ran out of
    /// events without it asking).
    awaiting_turn: bool,
}

impl<T: Send + 'static> GraphStage for ActorRefStage<T> {
    type Shape = SourceShape<T>;
    type Mat = ActorRefSource<T>;

    fn name(&self) -> &'static str {
        "actor_ref"
    }

    fn create_logic(
        &self,
        cx: &mut MatContext<'_>,
    ) -> (Box<dyn GraphStageLogic>, ActorRefSource<T>) {
        let wake = cx.async_callback(|this: &mut ActorRefLogic<T>, (), ctx| this.on_signals(ctx));
        let name = cx.attributes().name().unwrap_or("actor_ref").to_owned();
        let (inbox, function, source, letters) = inbox_ref(cx, wake, &name, "actor_ref");
        let logic = ActorRefLogic {
            shape: SourceShape::new(),
            letters,
            inbox: Arc::clone(&inbox),
            function,
            buffer: ElementBuffer::new(self.buffer_size, self.strategy),
            arrived: VecDeque::new(),
            awaiting_turn: false,
        };
        (Box::new(logic), source)
    }
}

impl<T: Send + 'static> ActorRefLogic<T> {
    /// Take everything the inbox holds; act on it unless a push is still
    /// waiting for downstream's turn (then `on_pull`/`on_idle` go on).
    fn on_signals(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        self.inbox.take(&mut self.arrived);
        if self.awaiting_turn {
            return Ok(());
        }
        let out = self.shape.out;
        let (available, closed) = (ctx.is_available(out), ctx.is_closed(out));
        self.process(ctx, available, closed)
    }

    /// Act on the arrived signals in order, until one is pushed: the next
    /// one arrives after downstream's turn, as it would if each were its
    /// own message, so a downstream that pulls at once gets them all.
    /// `available` and `closed` describe `out` now (a push is the only
    /// thing that changes them here).
    fn process(
        &mut self,
        ctx: &mut StageContext<'_>,
        available: bool,
        closed: bool,
    ) -> StageResult {
        let out = self.shape.out;
        let mut drops = self.letters.drops(DeadLetterReason::Dropped);
        let mut ended = false;
        let result = loop {
            let Some(signal) = self.arrived.pop_front() else {
                break Ok(());
            };
            match signal {
                Signal::Fail(error) => {
                    ctx.fail(out, error);
                    ended = true;
                    break Ok(());
                }
                Signal::Now => {
                    self.buffer
                        .discard()
                        .for_each(|element| drops.element(element));
                    ctx.complete(out);
                    ended = true;
                    break Ok(());
                }
                Signal::Drain => {
                    if self.buffer.on_drain() {
                        ctx.complete(out);
                        ended = true;
                        break Ok(());
                    }
                }
                Signal::Element(element) if closed => drops.element(element),
                Signal::Element(element) => match self
                    .buffer
                    .on_element(element, available, |e| drops.element(e))
                {
                    // The direct-push fast path.
                    Arrival::Push(element) => {
                        ctx.push(out, element)?;
                        if !self.arrived.is_empty() {
                            self.awaiting_turn = true;
                            // The island dedups: one on_idle, however often asked.
                            ctx.request_idle_callback();
                        }
                        break Ok(());
                    }
                    Arrival::Handled => {}
                    Arrival::Failed(error) => {
                        ended = true;
                        break Err(error);
                    }
                },
            }
        };
        if ended {
            // The stage ended part-way: what is left is dropped, observably.
            drops.rest(&mut self.arrived);
        }
        drops.settle(&self.inbox);
        result
    }
}

impl<T: Send + 'static> GraphStageLogic for ActorRefLogic<T> {
    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        // The hot path of a burst: downstream took its turn and wants more,
        // nothing is buffered, and the next signal is an element.
        if self.awaiting_turn
            && self.buffer.is_idle()
            && let Some(Signal::Element(_)) = self.arrived.front()
        {
            let Some(Signal::Element(element)) = self.arrived.pop_front() else {
                unreachable!("just looked");
            };
            ctx.push(self.shape.out, element)?;
            // Still awaiting if more wait; the `on_idle` asked for is still due.
            self.awaiting_turn = !self.arrived.is_empty();
            return Ok(());
        }
        let (next, complete) = self.buffer.on_pull();
        let from_buffer = next.is_some();
        if let Some(element) = next {
            ctx.push(self.shape.out, element)?;
        }
        if complete {
            ctx.complete(self.shape.out);
        } else if !from_buffer && self.awaiting_turn {
            // Downstream took its turn and wants more: the next one arrives.
            self.awaiting_turn = false;
            return self.process(ctx, true, false);
        }
        Ok(())
    }

    fn on_idle(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        if !self.awaiting_turn {
            return Ok(());
        }
        // The island ran out of events and downstream did not ask again.
        self.awaiting_turn = false;
        let out = self.shape.out;
        let (available, closed) = (ctx.is_available(out), ctx.is_closed(out));
        self.process(ctx, available, closed)
    }

    fn post_stop(&mut self) {
        // Refuse what comes next; what the stage still has becomes dead letters.
        self.letters
            .close(&self.inbox, &mut self.arrived, self.buffer.discard());
        self.function.stop();
    }
}

/// The inbox of a stage, the function reference that feeds it (named
/// after `label`, the stage's name, or `fallback` when that is empty: see
/// [`actor_name_for`]), the handle for both, and the stage's dead-letter
/// address. Elements that race past the inbox's closing become dead
/// letters when it is dropped.
pub(super) fn inbox_ref<T: Send + 'static>(
    cx: &MatContext<'_>,
    wake: AsyncCallback<()>,
    label: &str,
    fallback: &'static str,
) -> (
    Arc<StageInbox<T>>,
    FunctionRef<T>,
    ActorRefSource<T>,
    Letters,
) {
    let name = actor_name_for(label, fallback);
    let (system, level) = (cx.system().clone(), cx.attributes().drop_log_level());
    // The reference's own path, known once it exists (the inbox must
    // exist first: the reference delivers into it).
    let lost: Arc<std::sync::OnceLock<Letters>> = Arc::default();
    let inbox = Arc::new(Inbox::new(wake).with_on_lost({
        let (lost, system) = (Arc::clone(&lost), system.clone());
        move |element: T| match lost.get() {
            Some(lost) => lost.publish(element, DeadLetterReason::StageStopped),
            None => system.event_stream().count_dead_letters(1),
        }
    }));
    let target = Arc::clone(&inbox);
    let function = FunctionRef::new(&system, &name, move |element: T| {
        target
            .offer(Signal::Element(element))
            .map_err(|signal| match signal {
                Signal::Element(element) => element,
                _ => unreachable!("offer gives back what it was given"),
            })
    })
    .expect("actor_name_for gives valid actor names");
    let source = ActorRefSource {
        actor: function.actor_ref(),
        inbox: Arc::clone(&inbox),
    };
    let letters = Letters::new(system, function.actor_ref().path().clone(), level);
    let _ = lost.set(letters.clone());
    (inbox, function, source, letters)
}
