//! `Source::actor_ref_with_sender_ack`: the ack protocol of
//! `actor_ref_with_backpressure` with the ack target in each message, so
//! the stream needs no producer before it runs and several producers can
//! feed it.

use std::collections::VecDeque;
use std::sync::Arc;

use weir_actor::{ActorRef, DeadLetterReason, FunctionRef};

use super::ActorRefSource;
use super::actor_ref_source::StageInbox;
use super::dead_letters::Letters;
use super::inbox::Signal;
use crate::blueprint::Source;
use crate::error::StreamError;
use crate::stage::{
    GraphStage, GraphStageLogic, MatContext, OutPort, SourceShape, StageContext, StageResult,
};

/// What a producer tells the source of
/// [`Source::actor_ref_with_sender_ack`]: an element and where to ack it.
pub type WithAck<T, A> = (T, ActorRef<A>);

impl<T: Send + 'static, A: Send + 'static> Source<T, ActorRefSource<WithAck<T, A>>> {
    /// A source fed by actors with back-pressure, each message carrying its
    /// own ack target: tell `(element, ack_to)` (or use
    /// [`ActorRefSource::tell_with_ack`]) and `ack` is told to `ack_to`
    /// once the element has been pushed downstream, that is when there is
    /// demand for it. A producer sends its next element only after the ack
    /// of the previous one.
    ///
    /// Unlike [`Source::actor_ref_with_backpressure`], the stream needs no
    /// producer before it runs: materialize it, hand the reference to any
    /// number of producers, and each gets its own acks. Elements of
    /// different producers wait in arrival order, at most one per
    /// producer; a second element from an `ack_to` whose previous element
    /// is still waiting fails the stream (`ErrorKind::Protocol`).
    /// Completion and failure work as for [`Source::actor_ref`]:
    /// [`complete`](ActorRefSource::complete) ends the stream after the
    /// waiting elements (each acked as it goes),
    /// [`complete_now`](ActorRefSource::complete_now) and
    /// [`fail`](ActorRefSource::fail) drop them unacked (as dead letters).
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_actor::{Actor, ActorRef, ActorSystem, Context, Props};
    /// use weir_streams::prelude::*;
    /// use weir_streams::{ActorRefSource, WithAck};
    ///
    /// #[derive(Clone)]
    /// enum Msg { Ack }
    ///
    /// /// Sends 1..=3 into the stream, each after the previous one's ack.
    /// struct Producer { next: u32, out: ActorRefSource<WithAck<u32, Msg>> }
    /// impl Actor for Producer {
    ///     type Msg = Msg;
    ///     fn pre_start(&mut self, ctx: &mut Context<Self>) {
    ///         self.out.tell_with_ack(self.next, ctx.myself());
    ///     }
    ///     fn receive(&mut self, ctx: &mut Context<Self>, Msg::Ack: Msg) {
    ///         self.next += 1;
    ///         match self.next {
    ///             4 => self.out.complete(),
    ///             n => self.out.tell_with_ack(n, ctx.myself()),
    ///         }
    ///     }
    /// }
    ///
    /// let system = ActorSystem::new("sender-ack").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let (out, done) = Source::actor_ref_with_sender_ack(Msg::Ack)
    ///     .to_mat(Sink::collect(), Keep::both)
    ///     .run(&materializer);
    /// system.spawn(Props::new(move || Producer { next: 1, out: out.clone() }), "producer").unwrap();
    /// assert_eq!(done.wait(), Ok(vec![1, 2, 3]));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn actor_ref_with_sender_ack(ack: A) -> Self
    where
        A: Clone + Sync,
    {
        Source::from_graph(SenderAckStage {
            ack,
            _t: std::marker::PhantomData,
        })
    }
}

impl<T: Send + 'static, A: Send + 'static> ActorRefSource<WithAck<T, A>> {
    /// Tell one element whose ack goes to `ack_to` (the same as
    /// `tell((element, ack_to))`); see
    /// [`Source::actor_ref_with_sender_ack`].
    pub fn tell_with_ack(&self, element: T, ack_to: ActorRef<A>) {
        self.tell((element, ack_to));
    }
}

struct SenderAckStage<T, A> {
    ack: A,
    _t: std::marker::PhantomData<fn() -> T>,
}

struct SenderAckLogic<T: Send + 'static, A: Send + 'static> {
    shape: SourceShape<T>,
    inbox: Arc<StageInbox<WithAck<T, A>>>,
    function: FunctionRef<WithAck<T, A>>,
    ack: A,
    /// Received, waiting for demand, in arrival order: at most one per
    /// `ack_to`.
    waiting: VecDeque<WithAck<T, A>>,
    completing: bool,
    batch: VecDeque<Signal<WithAck<T, A>>>,
    /// Where what the stage cannot deliver goes.
    letters: Letters,
}

impl<T: Send + 'static, A: Clone + Send + Sync + 'static> GraphStage for SenderAckStage<T, A> {
    type Shape = SourceShape<T>;
    type Mat = ActorRefSource<WithAck<T, A>>;

    fn name(&self) -> &'static str {
        "actor_ref_with_sender_ack"
    }

    fn create_logic(&self, cx: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, Self::Mat) {
        let wake =
            cx.async_callback(|this: &mut SenderAckLogic<T, A>, (), ctx| this.on_signals(ctx));
        let name = cx
            .attributes()
            .name()
            .unwrap_or("actor_ref_with_sender_ack")
            .to_owned();
        let (inbox, function, source, letters) =
            super::actor_ref_source::inbox_ref(cx, wake, &name, "actor_ref_with_sender_ack");
        let logic = SenderAckLogic {
            shape: SourceShape::new(),
            inbox,
            function,
            ack: self.ack.clone(),
            waiting: VecDeque::new(),
            completing: false,
            batch: VecDeque::new(),
            letters,
        };
        (Box::new(logic), source)
    }
}

impl<T: Send + 'static, A: Clone + Send + 'static> SenderAckLogic<T, A> {
    /// Push `element` and ack it to its sender.
    fn emit(&self, (element, ack_to): WithAck<T, A>, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.push(self.shape.out, element)?;
        ack_to.tell(self.ack.clone());
        Ok(())
    }

    fn on_signals(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let mut batch = std::mem::take(&mut self.batch);
        self.inbox.take(&mut batch);
        let out = self.shape.out;
        let mut result = Ok(());
        let mut drops = self.letters.drops(DeadLetterReason::Dropped);
        while let Some(signal) = batch.pop_front() {
            match signal {
                Signal::Element(element) => {
                    if self.completing {
                        drops.element(element);
                    } else if self.waiting.iter().any(|(_, to)| *to == element.1) {
                        drops.element(element);
                        result = Err(StreamError::protocol(
                            "received a new element from a sender before its ack was sent",
                        ));
                        break;
                    } else if self.waiting.is_empty() && ctx.is_available(out) {
                        self.emit(element, ctx)?;
                    } else {
                        self.waiting.push_back(element);
                    }
                }
                Signal::Drain => {
                    self.completing = true;
                    if self.waiting.is_empty() {
                        ctx.complete(out);
                    }
                }
                Signal::Now => {
                    self.waiting
                        .drain(..)
                        .for_each(|element| drops.element(element));
                    ctx.complete(out);
                }
                Signal::Fail(error) => {
                    ctx.fail(out, error);
                    break;
                }
            }
        }
        // Signals after the end (a failure, a protocol error): dropped, observably.
        drops.rest(&mut batch);
        drops.settle(&self.inbox);
        self.batch = batch;
        result
    }
}

impl<T: Send + 'static, A: Clone + Send + 'static> GraphStageLogic for SenderAckLogic<T, A> {
    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        if let Some(element) = self.waiting.pop_front() {
            self.emit(element, ctx)?;
            if self.completing && self.waiting.is_empty() {
                ctx.complete(self.shape.out);
            }
        }
        Ok(())
    }

    fn post_stop(&mut self) {
        // Refuse what comes next; what the stage still has becomes dead letters.
        let waiting = std::mem::take(&mut self.waiting);
        self.letters.close(&self.inbox, &mut self.batch, waiting);
        self.function.stop();
    }
}
