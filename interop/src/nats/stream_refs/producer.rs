//! The producing end of a stream ref: a sink stage that sends what its
//! upstream gives, numbered, as far as the consumer's credit reaches
//! ([`StreamRefs::source_ref`](super::StreamRefs::source_ref) makes it as
//! the origin, [`SinkRef::sink`](super::SinkRef::sink) as the runner).

use std::marker::PhantomData;

use serde::Serialize;
use weir_streams::stage::{
    GraphStage, GraphStageLogic, InPort, MatContext, SinkShape, StageContext, StageResult, TimerKey,
};
use weir_streams::{Cancellation, Completer, Completion, StreamError};

use super::StreamRefError;
use super::link::{Endpoint, Heard, Inbound};
use super::wire::{self, Frame};

/// Makes the producing end's logic: the endpoint and what the stage hands
/// out as its materialized value.
pub(super) struct Producer<T, M> {
    pub(super) make: Box<dyn Fn() -> (Endpoint, M) + Send + Sync>,
    pub(super) _elements: PhantomData<fn(T)>,
}

/// How upstream ended before the ends were paired: said once they are.
enum Ended {
    Completed,
    Failed(StreamError),
}

struct ProducerLogic<T> {
    shape: SinkShape<T>,
    end: Endpoint,
    /// Elements sent (the next one's number).
    sent: u64,
    /// The consumer's credit: elements numbered below it may be sent.
    granted: u64,
    ended: Option<Ended>,
    done: Option<Completer<()>>,
}

impl<T, M> GraphStage for Producer<T, M>
where
    T: Serialize + Send + 'static,
    M: Send + 'static,
{
    type Shape = SinkShape<T>;
    type Mat = (M, Completion<()>);

    fn name(&self) -> &'static str {
        "stream-ref-producer"
    }

    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, Self::Mat) {
        let (end, mat) = (self.make)();
        let (completer, completion) = Completer::new();
        let logic = ProducerLogic::<T> {
            shape: SinkShape::new(),
            end,
            sent: 0,
            granted: 0,
            ended: None,
            done: Some(completer),
        };
        (Box::new(logic), (mat, completion))
    }
}

impl<T: Serialize + Send + 'static> ProducerLogic<T> {
    fn on_inbound(&mut self, inbound: Inbound<()>, ctx: &mut StageContext<'_>) -> StageResult {
        let frame = match inbound {
            Inbound::Frame(frame) => frame,
            Inbound::Failed(error) => return self.fail(error),
        };
        match self.end.receive(frame, ctx) {
            Err(error) => self.fail(error),
            Ok(Heard::Nothing) => Ok(()),
            Ok(Heard::Paired) => match self.ended.take() {
                Some(ended) => {
                    self.end_with(ended);
                    ctx.complete_stage();
                    Ok(())
                }
                None => self.maybe_pull(ctx),
            },
            Ok(Heard::Frame(Frame::Demand { up_to })) => {
                self.granted = self.granted.max(up_to);
                self.maybe_pull(ctx)
            }
            Ok(Heard::Frame(Frame::Cancel { failure })) => {
                self.end.close();
                let cause = match failure {
                    None => {
                        self.complete(Ok(()));
                        Cancellation::NoMoreElementsNeeded
                    }
                    Some(message) => {
                        let error = StreamError::custom(StreamRefError::RemoteCancelled(message));
                        self.complete(Err(error.clone()));
                        Cancellation::Failed(error)
                    }
                };
                ctx.cancel_stage(cause);
                Ok(())
            }
            Ok(Heard::Frame(frame)) => self.fail(StreamRefError::Protocol(format!(
                "the producing end got a {} frame",
                frame.kind()
            ))),
        }
    }

    fn maybe_pull(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let inlet = self.shape.inlet;
        if self.end.is_paired()
            && self.sent < self.granted
            && !ctx.has_been_pulled(inlet)
            && !ctx.is_closed(inlet)
        {
            ctx.pull(inlet)?;
        }
        Ok(())
    }

    /// Tell the other end how upstream ended, and complete.
    fn end_with(&mut self, ended: Ended) {
        match ended {
            Ended::Completed => {
                self.end.finish(&Frame::Complete { count: self.sent });
                self.complete(Ok(()));
            }
            Ended::Failed(error) => {
                self.end.finish(&Frame::Failed {
                    message: error.to_string(),
                });
                self.complete(Err(error));
            }
        }
    }

    /// Fail this end (the other one hears of it, if paired).
    fn fail(&mut self, error: StreamRefError) -> StageResult {
        let error = StreamError::custom(error);
        self.end.finish(&Frame::Failed {
            message: error.to_string(),
        });
        Err(error)
    }

    fn complete(&mut self, outcome: Result<(), StreamError>) {
        if let Some(mut done) = self.done.take() {
            done.complete(outcome);
        }
    }
}

impl<T: Serialize + Send + 'static> GraphStageLogic for ProducerLogic<T> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let inbound =
            ctx.async_callback(|this: &mut Self, inbound, ctx| this.on_inbound(inbound, ctx));
        self.end.start(ctx, inbound);
        Ok(())
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        let bytes = match wire::encode_element(self.sent, &element) {
            Ok(bytes) => bytes,
            Err(error) => return self.fail(error),
        };
        self.end.send_element(bytes);
        self.sent += 1;
        self.maybe_pull(ctx)
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        if self.end.is_paired() {
            self.end_with(Ended::Completed);
            ctx.complete_stage();
        } else {
            // Said once a runner comes (or the subscription time-out fails).
            self.ended = Some(Ended::Completed);
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
        if self.end.is_paired() {
            self.end_with(Ended::Failed(error));
            ctx.complete_stage();
        } else {
            self.ended = Some(Ended::Failed(error));
            ctx.set_keep_going(true);
        }
        Ok(())
    }

    fn on_timer(&mut self, key: TimerKey, ctx: &mut StageContext<'_>) -> StageResult {
        self.end
            .on_timer(key, ctx)
            .or_else(|error| self.fail(error))
    }

    fn on_failure(&mut self, error: &StreamError) {
        self.complete(Err(error.clone()));
    }

    fn post_stop(&mut self) {
        if !self.end.is_finished() {
            self.end.finish(&Frame::Failed {
                message: "the producing stream stopped abruptly".to_owned(),
            });
        }
        self.complete(Err(StreamError::from_kind(
            weir_streams::ErrorKind::AbruptTermination,
        )));
    }
}
