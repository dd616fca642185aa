//! `Source::actor_ref`: an `ActorRef` whose messages go straight into a stream.
//!
//! # How an element travels
//!
//! The materialized [`ActorRef`] is a [`FunctionRef`]: a `tell` runs on
//! the sender's thread and appends the element to the stage's inbox (one
//! lock, one queue slot, no wrapper allocation). The first element into
//! an idle inbox marks it scheduled and wakes the stage with one async
//! callback (a message to the island's actor that carries nothing); the
//! stage takes the whole inbox at once and clears the mark, so a burst
//! costs one wake-up. There is no actor in between.
//!
//! Inside the stage, an element that arrives while the buffer is empty
//! and downstream has pulled is pushed at once (the direct-push fast
//! path); otherwise it is buffered under the overflow strategy.
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
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use weir_actor::{ActorRef, DeadLetterReason, FunctionRef};

use crate::overflow::offer;
use crate::stage::{
    AsyncCallback, GraphStage, GraphStageLogic, MatContext, OutPort, SourceShape, StageContext,
    StageResult,
};
use crate::{ArgumentError, OverflowStrategy, Source, StreamError};

enum Signal<T> {
    Element(T),
    /// Complete after the buffered elements.
    Drain,
    /// Complete now, dropping the buffer.
    Now,
    Fail(StreamError),
}

struct InboxState<T> {
    queue: VecDeque<Signal<T>>,
    /// A wake-up is on its way to the stage.
    scheduled: bool,
    /// The stage has stopped: nothing more is taken.
    closed: bool,
}

struct Inbox<T> {
    state: Mutex<InboxState<T>>,
    wake: AsyncCallback<()>,
    dropped: AtomicU64,
}

impl<T: Send + 'static> Inbox<T> {
    /// Queue `signal`; gives it back when the stage has stopped.
    fn offer(&self, signal: Signal<T>) -> Result<(), Signal<T>> {
        let wake = {
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            if state.closed {
                return Err(signal);
            }
            state.queue.push_back(signal);
            !std::mem::replace(&mut state.scheduled, true)
        };
        if wake {
            self.wake.invoke(());
        }
        Ok(())
    }

    /// Take everything queued (into `into`, which must be empty) and clear
    /// the wake-up mark.
    fn take(&self, into: &mut VecDeque<Signal<T>>) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        std::mem::swap(&mut state.queue, into);
        state.scheduled = false;
    }

    /// The stage stopped: refuse new signals; what was queued is returned.
    fn close(&self) -> VecDeque<Signal<T>> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.closed = true;
        std::mem::take(&mut state.queue)
    }
}

/// What `Source::actor_ref` materializes: the [`ActorRef`] to tell
/// elements to, and the controls that end the stream.
///
/// Elements sent after the stream ended, or after downstream cancelled,
/// become dead letters; nothing panics.
pub struct ActorRefSource<T: Send + 'static> {
    actor: ActorRef<T>,
    inbox: Arc<Inbox<T>>,
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
        self.inbox.dropped.load(Ordering::Relaxed)
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
    /// ([`ActorRefSource::dropped`]) and published as a dead letter
    /// (`DeadLetterReason::Dropped`).
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
        Ok(Source::from_graph(ActorRefStage::<T> {
            buffer_size,
            strategy,
            _t: std::marker::PhantomData,
        }))
    }
}

struct ActorRefStage<T> {
    buffer_size: usize,
    strategy: OverflowStrategy,
    _t: std::marker::PhantomData<fn() -> T>,
}

struct ActorRefLogic<T: Send + 'static> {
    shape: SourceShape<T>,
    inbox: Arc<Inbox<T>>,
    function: FunctionRef<T>,
    buffer: VecDeque<T>,
    capacity: usize,
    strategy: OverflowStrategy,
    /// Draining: complete once the buffer is empty.
    completing: bool,
    /// The batch taken from the inbox (kept to reuse its allocation).
    batch: VecDeque<Signal<T>>,
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
        let inbox = Arc::new(Inbox {
            state: Mutex::new(InboxState {
                queue: VecDeque::new(),
                scheduled: false,
                closed: false,
            }),
            wake,
            dropped: AtomicU64::new(0),
        });
        let name: String = cx
            .attributes()
            .name()
            .unwrap_or("actor_ref")
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let target = Arc::clone(&inbox);
        let function = FunctionRef::new(cx.system(), &name, move |element: T| {
            target
                .offer(Signal::Element(element))
                .map_err(|signal| match signal {
                    Signal::Element(element) => element,
                    _ => unreachable!("offer gives back what it was given"),
                })
        })
        .expect("a sanitized, non-empty name is valid");
        let actor = function.actor_ref();
        let logic = ActorRefLogic {
            shape: SourceShape::new(),
            inbox: Arc::clone(&inbox),
            function,
            buffer: VecDeque::with_capacity(self.buffer_size.min(1024)),
            capacity: self.buffer_size,
            strategy: self.strategy,
            completing: false,
            batch: VecDeque::new(),
        };
        (Box::new(logic), ActorRefSource { actor, inbox })
    }
}

impl<T: Send + 'static> ActorRefLogic<T> {
    /// Take everything the inbox holds and act on it, in order.
    fn on_signals(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let mut batch = std::mem::take(&mut self.batch);
        self.inbox.take(&mut batch);
        let result = self.process(&mut batch, ctx);
        // Anything left (the stage ended part-way) is dropped, observably.
        for signal in batch.drain(..) {
            if let Signal::Element(element) = signal {
                self.drop_element(element, ctx);
            }
        }
        self.batch = batch;
        result
    }

    fn process(
        &mut self,
        batch: &mut VecDeque<Signal<T>>,
        ctx: &mut StageContext<'_>,
    ) -> StageResult {
        let out = self.shape.out;
        while let Some(signal) = batch.pop_front() {
            match signal {
                Signal::Fail(error) => {
                    ctx.fail(out, error);
                    return Ok(());
                }
                Signal::Now => {
                    for element in std::mem::take(&mut self.buffer) {
                        self.drop_element(element, ctx);
                    }
                    ctx.complete(out);
                    return Ok(());
                }
                Signal::Drain => {
                    self.completing = true;
                    if self.buffer.is_empty() {
                        ctx.complete(out);
                        return Ok(());
                    }
                }
                Signal::Element(element) => {
                    if self.completing || ctx.is_closed(out) {
                        self.drop_element(element, ctx);
                    } else if self.buffer.is_empty() && ctx.is_available(out) {
                        // The direct-push fast path.
                        ctx.push(out, element)?;
                    } else if self.capacity == 0 {
                        self.drop_element(element, ctx);
                    } else {
                        let dropped =
                            offer(&mut self.buffer, self.capacity, self.strategy, element)?;
                        if dropped > 0 {
                            self.count_drops(ctx, dropped);
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Count and publish one dropped element.
    fn drop_element(&self, element: T, ctx: &mut StageContext<'_>) {
        self.inbox.dropped.fetch_add(1, Ordering::Relaxed);
        ctx.system().event_stream().publish_dead_letter(
            self.function.actor_ref().path(),
            element,
            DeadLetterReason::Dropped,
        );
    }

    /// The overflow strategy dropped `n` elements it no longer has: count
    /// them, publish one marker per element.
    fn count_drops(&self, ctx: &mut StageContext<'_>, n: usize) {
        self.inbox.dropped.fetch_add(n as u64, Ordering::Relaxed);
        for _ in 0..n {
            ctx.system().event_stream().publish_dead_letter(
                self.function.actor_ref().path(),
                "weir::DroppedByOverflowStrategy",
                DeadLetterReason::Dropped,
            );
        }
    }
}

impl<T: Send + 'static> GraphStageLogic for ActorRefLogic<T> {
    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        if let Some(element) = self.buffer.pop_front() {
            ctx.push(self.shape.out, element)?;
        }
        if self.completing && self.buffer.is_empty() {
            ctx.complete(self.shape.out);
        }
        Ok(())
    }

    fn post_stop(&mut self) {
        // Refuse what comes next (dead letters), count what was still queued.
        let late = self.inbox.close();
        let late_elements = late
            .iter()
            .filter(|s| matches!(s, Signal::Element(_)))
            .count() as u64;
        self.inbox
            .dropped
            .fetch_add(late_elements + self.buffer.len() as u64, Ordering::Relaxed);
        self.buffer.clear();
        self.function.stop();
    }
}
