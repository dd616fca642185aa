//! Crossbeam channels as Weir sources and sinks.
//!
//! The island never blocks on a channel: it uses `try_recv` / `try_send`,
//! and when the channel is not ready it arms its entry with the one
//! waiter thread all bridges share (`channel/waiter.rs`), which waits for
//! readiness (crossbeam's `Select`, which performs no operation) and wakes
//! the island with an async callback. No thread per bridge and no
//! polling; the waiter runs only while some bridge does and is joined when
//! the last one stops.

mod waiter;

use crossbeam_channel::{Receiver, Sender, TryRecvError, TrySendError};
use weir_streams::stage::{
    AsyncCallback, GraphStage, GraphStageLogic, InPort, MatContext, OutPort, SinkShape,
    SourceShape, StageContext, StageResult,
};
use weir_streams::{Completer, Completion, Sink, Source, StreamError};

use waiter::{Watch, Watched};

/// Register a bridge's channel end with the shared waiter, failing the
/// stage (not panicking) when the waiter thread cannot start.
fn watch(
    end: Box<dyn Watch>,
    wake: &AsyncCallback<()>,
    ctx: &StageContext<'_>,
) -> Result<Watched, StreamError> {
    Watched::start(end, wake.clone()).map_err(|error| ctx.attribute(StreamError::custom(error)))
}

/// `Source::from_receiver`: bring it in scope with `use weir_interop::SourceFromReceiver`.
pub trait SourceFromReceiver<T>: Sized {
    /// A source of what arrives on `receiver`, completed when every sender
    /// is gone. The island never blocks on the channel (see the module docs).
    fn from_receiver(receiver: Receiver<T>) -> Self;
}

impl<T: Send + 'static> SourceFromReceiver<T> for Source<T, ()> {
    fn from_receiver(receiver: Receiver<T>) -> Self {
        Source::from_graph(FromReceiver { receiver })
    }
}

struct FromReceiver<T> {
    receiver: Receiver<T>,
}

struct FromReceiverLogic<T> {
    shape: SourceShape<T>,
    receiver: Receiver<T>,
    watched: Option<Watched>,
    wake: AsyncCallback<()>,
}

impl<T: Send + 'static> GraphStage for FromReceiver<T> {
    type Shape = SourceShape<T>;
    type Mat = ();

    fn name(&self) -> &'static str {
        "from_receiver"
    }

    fn create_logic(&self, cx: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        let wake = cx.async_callback(|this: &mut FromReceiverLogic<T>, (), ctx| this.receive(ctx));
        let logic = FromReceiverLogic {
            shape: SourceShape::new(),
            receiver: self.receiver.clone(),
            watched: None,
            wake,
        };
        (Box::new(logic), ())
    }
}

impl<T: Send + 'static> FromReceiverLogic<T> {
    fn receive(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let out = self.shape.out;
        if !ctx.is_available(out) {
            return Ok(());
        }
        match self.receiver.try_recv() {
            Ok(element) => ctx.push(out, element),
            Err(TryRecvError::Empty) => {
                if let Some(watched) = &self.watched {
                    watched.arm();
                }
                Ok(())
            }
            Err(TryRecvError::Disconnected) => {
                ctx.complete(out);
                Ok(())
            }
        }
    }
}

impl<T: Send + 'static> GraphStageLogic for FromReceiverLogic<T> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        self.watched = Some(watch(Box::new(self.receiver.clone()), &self.wake, ctx)?);
        Ok(())
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.receive(ctx)
    }

    fn post_stop(&mut self) {
        self.watched = None;
    }
}

/// `Sink::to_sender`: bring it in scope with `use weir_interop::SinkToSender`.
pub trait SinkToSender<T>: Sized {
    /// A sink that sends every element on `sender`, waiting (without
    /// blocking the island) while a bounded channel is full. When every
    /// receiver is gone the stream fails. Materializes a [`Completion`].
    fn to_sender(sender: Sender<T>) -> Self;
}

impl<T: Send + 'static> SinkToSender<T> for Sink<T, Completion<()>> {
    fn to_sender(sender: Sender<T>) -> Self {
        Sink::from_graph(ToSender { sender })
    }
}

struct ToSender<T> {
    sender: Sender<T>,
}

struct ToSenderLogic<T> {
    shape: SinkShape<T>,
    sender: Sender<T>,
    /// The element the channel had no room for yet.
    pending: Option<T>,
    upstream_done: bool,
    completer: Completer<()>,
    watched: Option<Watched>,
    wake: AsyncCallback<()>,
}

impl<T: Send + 'static> GraphStage for ToSender<T> {
    type Shape = SinkShape<T>;
    type Mat = Completion<()>;

    fn name(&self) -> &'static str {
        "to_sender"
    }

    fn create_logic(&self, cx: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, Completion<()>) {
        let wake = cx.async_callback(|this: &mut ToSenderLogic<T>, (), ctx| this.send(ctx));
        let (completer, completion) = Completer::new();
        let logic = ToSenderLogic {
            shape: SinkShape::new(),
            sender: self.sender.clone(),
            pending: None,
            upstream_done: false,
            completer,
            watched: None,
            wake,
        };
        (Box::new(logic), completion)
    }
}

impl<T: Send + 'static> ToSenderLogic<T> {
    /// Send the pending element if the channel has room; then pull or finish.
    fn send(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        if let Some(element) = self.pending.take() {
            match self.sender.try_send(element) {
                Ok(()) => {}
                Err(TrySendError::Full(element)) => {
                    self.pending = Some(element);
                    if let Some(watched) = &self.watched {
                        watched.arm();
                    }
                    return Ok(());
                }
                Err(TrySendError::Disconnected(_)) => {
                    let error =
                        ctx.attribute(StreamError::msg("every receiver of the channel is gone"));
                    self.completer.complete(Err(error.clone()));
                    return Err(error);
                }
            }
        }
        if self.upstream_done {
            self.completer.complete(Ok(()));
            ctx.complete_stage();
            return Ok(());
        }
        let inlet = self.shape.inlet;
        if !ctx.has_been_pulled(inlet) && !ctx.is_closed(inlet) {
            ctx.pull(inlet)?;
        }
        Ok(())
    }
}

impl<T: Send + 'static> GraphStageLogic for ToSenderLogic<T> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        match watch(Box::new(self.sender.clone()), &self.wake, ctx) {
            Ok(watched) => self.watched = Some(watched),
            Err(error) => {
                self.completer.complete(Err(error.clone()));
                return Err(error);
            }
        }
        ctx.pull(self.shape.inlet)
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.pending = Some(ctx.grab(self.shape.inlet)?);
        self.send(ctx)
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.upstream_done = true;
        if self.pending.is_none() {
            self.completer.complete(Ok(()));
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
        self.completer.complete(Err(error));
        ctx.complete_stage();
        Ok(())
    }

    fn post_stop(&mut self) {
        self.watched = None;
    }
}
