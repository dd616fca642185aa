//! `Source::actor_ref_with_backpressure` and `Sink::actor_ref_with_backpressure`:
//! the ack protocols, so a producer actor and the stream go at the pace of
//! the slower one.

use std::collections::VecDeque;
use std::sync::Arc;

use weir_actor::{ActorRef, DeadLetterReason, FunctionRef};

use super::ActorRefSource;
use super::dead_letters::Letters;
use super::inbox::{Inbox, Signal};
use crate::blueprint::{Sink, Source};
use crate::error::StreamError;
use crate::stage::{
    GraphStage, GraphStageLogic, InPort, MatContext, OutPort, SinkShape, SourceShape, StageActor,
    StageActorMessage, StageContext, StageResult,
};

impl<T: Send + 'static> Source<T, ActorRefSource<T>> {
    /// A source fed by an actor reference, one element at a time: after
    /// each element has been pushed downstream, `ack` is told to
    /// `ack_to`; the producer sends the next element only then. An
    /// element that arrives before its predecessor was acknowledged fails
    /// the stream (`ErrorKind::Protocol`). Completion and failure work as
    /// for [`Source::actor_ref`].
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_actor::{Actor, ActorSystem, Context, Props};
    /// use weir_streams::prelude::*;
    ///
    /// /// Sends 1..=3, each after the previous one was acknowledged.
    /// struct Producer { next: u32, out: Option<weir_streams::ActorRefSource<u32>> }
    /// impl Actor for Producer {
    ///     type Msg = ();
    ///     fn receive(&mut self, _: &mut Context<Self>, (): ()) {
    ///         let out = self.out.as_ref().unwrap();
    ///         if self.next > 3 { return out.complete(); }
    ///         out.tell(self.next);
    ///         self.next += 1;
    ///     }
    /// }
    ///
    /// let system = ActorSystem::new("backpressured").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let (slot_tx, slot_rx) = std::sync::mpsc::channel::<weir_streams::ActorRefSource<u32>>();
    /// let slot = std::sync::Mutex::new(Some(slot_rx));
    /// let producer = system
    ///     .spawn(Props::new(move || Producer { next: 1, out: slot.lock().unwrap().take().map(|rx| rx.recv().unwrap()) }), "producer")
    ///     .unwrap();
    /// let (source, done) = Source::actor_ref_with_backpressure(producer.clone(), ())
    ///     .to_mat(Sink::collect(), Keep::both)
    ///     .run(&materializer);
    /// slot_tx.send(source).unwrap();
    /// producer.tell(()); // the first element; later ones follow the acks
    /// assert_eq!(done.wait(), Ok(vec![1, 2, 3]));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn actor_ref_with_backpressure<A>(ack_to: ActorRef<A>, ack: A) -> Self
    where
        A: Clone + Send + Sync + 'static,
    {
        Source::from_graph(AckSourceStage {
            ack_to,
            ack,
            _t: std::marker::PhantomData,
        })
    }
}

struct AckSourceStage<T, A: Send + 'static> {
    ack_to: ActorRef<A>,
    ack: A,
    _t: std::marker::PhantomData<fn() -> T>,
}

struct AckSourceLogic<T: Send + 'static, A: Send + 'static> {
    shape: SourceShape<T>,
    inbox: Arc<Inbox<T, crate::stage::AsyncCallback<()>>>,
    function: FunctionRef<T>,
    ack_to: ActorRef<A>,
    ack: A,
    /// The element received and not yet pushed (and so not acknowledged).
    pending: Option<T>,
    completing: bool,
    batch: VecDeque<Signal<T>>,
    /// Where what the stage cannot deliver goes.
    letters: Letters,
}

impl<T: Send + 'static, A: Clone + Send + Sync + 'static> GraphStage for AckSourceStage<T, A> {
    type Shape = SourceShape<T>;
    type Mat = ActorRefSource<T>;

    fn name(&self) -> &'static str {
        "actor_ref_with_backpressure"
    }

    fn create_logic(
        &self,
        cx: &mut MatContext<'_>,
    ) -> (Box<dyn GraphStageLogic>, ActorRefSource<T>) {
        let wake =
            cx.async_callback(|this: &mut AckSourceLogic<T, A>, (), ctx| this.on_signals(ctx));
        let name = cx
            .attributes()
            .name()
            .unwrap_or("actor_ref_with_backpressure")
            .to_owned();
        let (inbox, function, source, letters) =
            super::actor_ref_source::inbox_ref(cx, wake, &name, "actor_ref_with_backpressure");
        let logic = AckSourceLogic {
            shape: SourceShape::new(),
            inbox,
            function,
            ack_to: self.ack_to.clone(),
            ack: self.ack.clone(),
            pending: None,
            completing: false,
            batch: VecDeque::new(),
            letters,
        };
        (Box::new(logic), source)
    }
}

impl<T: Send + 'static, A: Clone + Send + 'static> AckSourceLogic<T, A> {
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
                    } else if self.pending.is_some() {
                        drops.element(element);
                        result = Err(StreamError::protocol(
                            "received a new element before the ack was sent",
                        ));
                        break;
                    } else if ctx.is_available(out) {
                        ctx.push(out, element)?;
                        self.ack_to.tell(self.ack.clone());
                    } else {
                        self.pending = Some(element);
                    }
                }
                Signal::Drain => {
                    self.completing = true;
                    if self.pending.is_none() {
                        ctx.complete(out);
                    }
                }
                Signal::Now => {
                    self.pending
                        .take()
                        .into_iter()
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

impl<T: Send + 'static, A: Clone + Send + 'static> GraphStageLogic for AckSourceLogic<T, A> {
    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        if let Some(element) = self.pending.take() {
            ctx.push(self.shape.out, element)?;
            self.ack_to.tell(self.ack.clone());
            if self.completing {
                ctx.complete(self.shape.out);
            }
        }
        Ok(())
    }

    fn post_stop(&mut self) {
        // Refuse what comes next; what the stage still has becomes dead letters.
        self.letters
            .close(&self.inbox, &mut self.batch, self.pending.take());
        self.function.stop();
    }
}

impl<T: Send + 'static> Sink<T, ()> {
    /// A sink that tells elements to `target` one at a time, waiting for
    /// an acknowledgement before the next: first `init(ack_to)`, then
    /// `message(element, ack_to)` for each element, each sent only after
    /// `target` told something (any `Ack`) to `ack_to`; when the stream
    /// completes, `on_complete` (after the last ack); when it fails,
    /// `on_failure(error)`. If `target` terminates, the sink cancels
    /// upstream.
    pub fn actor_ref_with_backpressure<M, Ack, I, F, E>(
        target: ActorRef<M>,
        init: I,
        message: F,
        on_complete: M,
        on_failure: E,
    ) -> Self
    where
        M: Clone + Send + Sync + 'static,
        Ack: Send + 'static,
        I: Fn(ActorRef<Ack>) -> M + Send + Sync + 'static,
        F: Fn(T, ActorRef<Ack>) -> M + Send + Sync + 'static,
        E: Fn(StreamError) -> M + Send + Sync + 'static,
    {
        Sink::from_graph(AckSinkStage {
            target,
            init: Arc::new(init),
            message: Arc::new(message),
            on_complete,
            on_failure: Arc::new(on_failure),
            _t: std::marker::PhantomData,
        })
    }
}

type Shared<F> = Arc<F>;

struct AckSinkStage<T, M: Send + 'static, Ack, I, F, E> {
    target: ActorRef<M>,
    init: Shared<I>,
    message: Shared<F>,
    on_complete: M,
    on_failure: Shared<E>,
    _t: std::marker::PhantomData<fn(T, Ack)>,
}

struct AckSinkLogic<T, M: Send + 'static, Ack: Send + 'static, F, E> {
    shape: SinkShape<T>,
    target: ActorRef<M>,
    message: Shared<F>,
    on_complete: Option<M>,
    on_failure: Shared<E>,
    actor: StageActor<Ack>,
    awaiting_ack: bool,
    pending: Option<T>,
    upstream_done: bool,
}

impl<T, M, Ack, I, F, E> GraphStage for AckSinkStage<T, M, Ack, I, F, E>
where
    T: Send + 'static,
    M: Clone + Send + Sync + 'static,
    Ack: Send + 'static,
    I: Fn(ActorRef<Ack>) -> M + Send + Sync + 'static,
    F: Fn(T, ActorRef<Ack>) -> M + Send + Sync + 'static,
    E: Fn(StreamError) -> M + Send + Sync + 'static,
{
    type Shape = SinkShape<T>;
    type Mat = ();

    fn name(&self) -> &'static str {
        "actor_ref_with_backpressure_sink"
    }

    fn create_logic(&self, cx: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        let actor =
            cx.stage_actor(
                |this: &mut AckSinkLogic<T, M, Ack, F, E>, message, ctx| match message {
                    StageActorMessage::Message(_ack) => this.on_ack(ctx),
                    StageActorMessage::Terminated(_) => {
                        // The target is gone: nobody to send to.
                        ctx.complete_stage();
                        Ok(())
                    }
                },
            );
        actor.watch(self.target.handle());
        self.target.tell((self.init)(actor.actor_ref()));
        let logic = AckSinkLogic {
            shape: SinkShape::new(),
            target: self.target.clone(),
            message: Arc::clone(&self.message),
            on_complete: Some(self.on_complete.clone()),
            on_failure: Arc::clone(&self.on_failure),
            actor,
            awaiting_ack: true,
            pending: None,
            upstream_done: false,
        };
        (Box::new(logic), ())
    }
}

impl<T, M, Ack, F, E> AckSinkLogic<T, M, Ack, F, E>
where
    T: Send + 'static,
    M: Send + 'static,
    Ack: Send + 'static,
    F: Fn(T, ActorRef<Ack>) -> M + Send + Sync + 'static,
    E: Fn(StreamError) -> M + Send + Sync + 'static,
{
    fn send(&mut self, element: T) {
        self.awaiting_ack = true;
        self.target
            .tell((self.message)(element, self.actor.actor_ref()));
    }

    fn on_ack(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        self.awaiting_ack = false;
        if let Some(element) = self.pending.take() {
            self.send(element);
            return Ok(());
        }
        if self.upstream_done {
            if let Some(done) = self.on_complete.take() {
                self.target.tell(done);
            }
            ctx.complete_stage();
            return Ok(());
        }
        if !ctx.has_been_pulled(self.shape.inlet) {
            ctx.pull(self.shape.inlet)?;
        }
        Ok(())
    }
}

impl<T, M, Ack, F, E> GraphStageLogic for AckSinkLogic<T, M, Ack, F, E>
where
    T: Send + 'static,
    M: Send + 'static,
    Ack: Send + 'static,
    F: Fn(T, ActorRef<Ack>) -> M + Send + Sync + 'static,
    E: Fn(StreamError) -> M + Send + Sync + 'static,
{
    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        if self.awaiting_ack {
            self.pending = Some(element);
        } else {
            self.send(element);
        }
        Ok(())
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.upstream_done = true;
        if !self.awaiting_ack && self.pending.is_none() {
            if let Some(done) = self.on_complete.take() {
                self.target.tell(done);
            }
            ctx.complete_stage();
        } else {
            ctx.set_keep_going(true);
        }
        Ok(())
    }

    fn on_upstream_failure(
        &mut self,
        _: InPort,
        error: StreamError,
        ctx: &mut StageContext<'_>,
    ) -> StageResult {
        self.target.tell((self.on_failure)(error));
        ctx.complete_stage();
        Ok(())
    }
}
