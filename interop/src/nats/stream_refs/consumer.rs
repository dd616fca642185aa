//! The consuming end of a stream ref: a source stage that grants the
//! producer credit for a window of elements, checks their numbers and
//! pushes them downstream ([`StreamRefs::sink_ref`](super::StreamRefs::sink_ref)
//! makes it as the origin, [`SourceRef::source`](super::SourceRef::source)
//! as the runner).

use std::collections::VecDeque;
use std::marker::PhantomData;

use serde::de::DeserializeOwned;
use weir_streams::StreamError;
use weir_streams::stage::{
    GraphStage, GraphStageLogic, MatContext, OutPort, SourceShape, StageContext, StageResult,
    TimerKey,
};

use super::StreamRefError;
use super::link::{Endpoint, Heard, Inbound};
use super::wire::Frame;

/// Makes the consuming end's logic: the endpoint and what the stage hands
/// out as its materialized value.
pub(super) struct Consumer<T, M> {
    pub(super) make: Box<dyn Fn() -> (Endpoint, M) + Send + Sync>,
    /// Elements the producer may run ahead of downstream.
    pub(super) window: u32,
    pub(super) _elements: PhantomData<fn() -> T>,
}

struct ConsumerLogic<T> {
    shape: SourceShape<T>,
    end: Endpoint,
    window: u64,
    /// Grant more credit once it opens by this many.
    batch: u64,
    /// Elements received (the next one's number).
    received: u64,
    /// Elements pushed downstream.
    pushed: u64,
    /// The credit granted: elements numbered below it may come.
    granted: u64,
    buffer: VecDeque<T>,
    /// The producer completed (`Ok`) or failed: end so once the buffer
    /// is empty, as a subscriber without the ref in between would see it.
    ending: Option<Result<(), StreamError>>,
}

impl<T, M> GraphStage for Consumer<T, M>
where
    T: DeserializeOwned + Send + 'static,
    M: Send + 'static,
{
    type Shape = SourceShape<T>;
    type Mat = M;

    fn name(&self) -> &'static str {
        "stream-ref-consumer"
    }

    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, M) {
        let (end, mat) = (self.make)();
        let window = u64::from(self.window.max(1));
        let logic = ConsumerLogic::<T> {
            shape: SourceShape::new(),
            end,
            window,
            batch: (window / 4).max(1),
            received: 0,
            pushed: 0,
            granted: 0,
            buffer: VecDeque::new(),
            ending: None,
        };
        (Box::new(logic), mat)
    }
}

impl<T: DeserializeOwned + Send + 'static> ConsumerLogic<T> {
    fn on_inbound(&mut self, inbound: Inbound<T>, ctx: &mut StageContext<'_>) -> StageResult {
        let frame = match inbound {
            Inbound::Frame(frame) => frame,
            Inbound::Failed(error) => return self.fail(error),
        };
        match self.end.receive(frame, ctx) {
            Err(error) => self.fail(error),
            Ok(Heard::Nothing) => Ok(()),
            Ok(Heard::Paired) => {
                self.grant(0);
                Ok(())
            }
            Ok(Heard::Frame(Frame::Element { seq, element })) => {
                if seq != self.received {
                    return self.fail(StreamRefError::SequenceGap {
                        expected: self.received,
                        got: seq,
                    });
                }
                if seq >= self.granted {
                    return self.fail(StreamRefError::Protocol(format!(
                        "element {seq} came without credit (granted up to {})",
                        self.granted
                    )));
                }
                self.received += 1;
                let out = self.shape.out;
                if self.buffer.is_empty() && ctx.is_available(out) {
                    self.push(element, ctx)
                } else {
                    self.buffer.push_back(element);
                    Ok(())
                }
            }
            Ok(Heard::Frame(Frame::Sent { count })) => self.check_count(count),
            Ok(Heard::Frame(Frame::Complete { count })) => {
                self.check_count(count)?;
                self.end.close();
                self.ending = Some(Ok(()));
                self.end_when_drained(ctx)
            }
            Ok(Heard::Frame(Frame::Failed { message })) => {
                self.end.close();
                let error = StreamError::custom(StreamRefError::RemoteFailed(message));
                self.ending = Some(Err(error));
                self.end_when_drained(ctx)
            }
            Ok(Heard::Frame(frame)) => self.fail(StreamRefError::Protocol(format!(
                "the consuming end got a {} frame",
                frame.kind()
            ))),
        }
    }

    /// Complete or fail as the producer did, once the buffer is empty.
    fn end_when_drained(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        if !self.buffer.is_empty() {
            return Ok(());
        }
        match self.ending.take() {
            Some(Ok(())) => ctx.complete(self.shape.out),
            Some(Err(error)) => return Err(error),
            None => {}
        }
        Ok(())
    }

    /// The producer says it sent `count` elements: fewer came.
    fn check_count(&mut self, count: u64) -> StageResult {
        if count == self.received {
            return Ok(());
        }
        self.fail(StreamRefError::SequenceGap {
            expected: self.received,
            got: count,
        })
    }

    fn push(&mut self, element: T, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.push(self.shape.out, element)?;
        self.pushed += 1;
        self.grant(self.batch);
        Ok(())
    }

    /// Grant credit up to a window past what went downstream, once it
    /// opens by at least `at_least`.
    fn grant(&mut self, at_least: u64) {
        let up_to = self.pushed + self.window;
        if up_to > self.granted && up_to - self.granted >= at_least && self.ending.is_none() {
            self.granted = up_to;
            self.end.send_demand(up_to);
        }
    }

    /// Fail this end (the other one hears of it as a cancel, if paired).
    fn fail(&mut self, error: StreamRefError) -> StageResult {
        let error = StreamError::custom(error);
        self.end.finish(&Frame::Cancel {
            failure: Some(error.to_string()),
        });
        Err(error)
    }
}

impl<T: DeserializeOwned + Send + 'static> GraphStageLogic for ConsumerLogic<T> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let inbound =
            ctx.async_callback(|this: &mut Self, inbound, ctx| this.on_inbound(inbound, ctx));
        self.end.start(ctx, inbound);
        Ok(())
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        if let Some(element) = self.buffer.pop_front() {
            self.push(element, ctx)?;
        }
        self.end_when_drained(ctx)
    }

    fn on_downstream_finish(&mut self, port: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        let cause = ctx.cancellation(port);
        self.end.finish(&Frame::Cancel {
            failure: cause.failure().map(ToString::to_string),
        });
        ctx.cancel_stage(cause);
        Ok(())
    }

    fn on_timer(&mut self, key: TimerKey, ctx: &mut StageContext<'_>) -> StageResult {
        self.end
            .on_timer(key, ctx)
            .or_else(|error| self.fail(error))
    }

    fn post_stop(&mut self) {
        if !self.end.is_finished() {
            self.end.finish(&Frame::Cancel {
                failure: Some("the consuming stream stopped abruptly".to_owned()),
            });
        }
    }
}
