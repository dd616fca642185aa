//! `StreamConverters::as_read`: a sink that materializes a blocking
//! [`std::io::Read`].

use std::io::Read;
use std::time::Duration;

use bytes::{Buf, Bytes};
use weir_actor::Promise;

use super::StreamConverters;
use crate::blueprint::Sink;
use crate::error::{ErrorKind, StreamError};
use crate::stage::{
    AsyncCallback, GraphStage, GraphStageLogic, InPort, MatContext, SinkShape, StageContext,
    StageResult,
};
use crate::sync::Arc;

/// How long [`StreamConverters::as_read`]'s reader waits for a chunk
/// before a read fails with `TimedOut` (Akka's default).
pub const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(5);

/// One answer to a read: a chunk, the end of the stream, or its failure.
type Answer = Result<Option<Bytes>, StreamError>;

enum Request {
    /// The reader wants the next chunk.
    Next(Arc<Promise<Answer>>),
    /// The reader was dropped.
    Cancel,
}

impl StreamConverters {
    /// A sink whose materialized value is a blocking [`std::io::Read`] of
    /// the stream's bytes, for code that wants a reader (a parser, a
    /// `std::io::copy`). The stream is back-pressured by the reader: it
    /// pulls one chunk per read that finds nothing left. A read returns
    /// `Ok(0)` at the end of the stream and an error when the stream
    /// failed or no chunk came within [`DEFAULT_READ_TIMEOUT`]. Dropping
    /// the reader cancels the stream.
    ///
    /// Do not read on a thread the stream itself needs (an actor of the
    /// same system's pool).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::io::Read;
    /// use weir_streams::io::{Bytes, StreamConverters};
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("as-read").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let mut reader = Source::from_iter(vec![Bytes::from_static(b"he"), Bytes::from_static(b"llo")])
    ///     .run_with(StreamConverters::as_read(), &materializer);
    /// let mut text = String::new();
    /// reader.read_to_string(&mut text).unwrap();
    /// assert_eq!(text, "hello");
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn as_read() -> Sink<Bytes, StreamReader> {
        Self::as_read_with_timeout(DEFAULT_READ_TIMEOUT)
    }

    /// As [`as_read`](Self::as_read), waiting at most `read_timeout` for a chunk.
    pub fn as_read_with_timeout(read_timeout: Duration) -> Sink<Bytes, StreamReader> {
        Sink::from_graph(AsRead { read_timeout })
    }
}

/// The reader [`StreamConverters::as_read`] materializes.
pub struct StreamReader {
    request: AsyncCallback<Request>,
    read_timeout: Duration,
    leftover: Bytes,
    /// The stream ended (`Ok`) or failed, or a read timed out.
    ended: Option<Result<(), std::io::ErrorKind>>,
    error: Option<StreamError>,
}

impl std::fmt::Debug for StreamReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamReader")
            .field("buffered", &self.leftover.len())
            .field("ended", &self.ended)
            .finish_non_exhaustive()
    }
}

impl StreamReader {
    fn ended_error(&self) -> std::io::Result<usize> {
        match (self.ended, &self.error) {
            (Some(Ok(())), _) | (None, _) => Ok(0),
            (Some(Err(kind)), Some(error)) => Err(std::io::Error::new(kind, error.clone())),
            (Some(Err(kind)), None) => Err(kind.into()),
        }
    }
}

impl Read for StreamReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        while self.leftover.is_empty() {
            if self.ended.is_some() {
                return self.ended_error();
            }
            let promise = Arc::new(Promise::new());
            self.request.invoke(Request::Next(Arc::clone(&promise)));
            if !promise.wait_completed_for(self.read_timeout) {
                self.ended = Some(Err(std::io::ErrorKind::TimedOut));
                self.request.invoke(Request::Cancel);
                return Err(std::io::ErrorKind::TimedOut.into());
            }
            match promise.wait_take() {
                Ok(Some(chunk)) => self.leftover = chunk,
                Ok(None) => self.ended = Some(Ok(())),
                Err(error) => {
                    self.ended = Some(Err(std::io::ErrorKind::Other));
                    self.error = Some(error);
                }
            }
        }
        let n = buf.len().min(self.leftover.len());
        buf[..n].copy_from_slice(&self.leftover[..n]);
        self.leftover.advance(n);
        Ok(n)
    }
}

impl Drop for StreamReader {
    fn drop(&mut self) {
        if self.ended.is_none() {
            self.request.invoke(Request::Cancel);
        }
    }
}

struct AsRead {
    read_timeout: Duration,
}

struct AsReadLogic {
    shape: SinkShape<Bytes>,
    /// The read waiting for a chunk.
    waiting: Option<Arc<Promise<Answer>>>,
    /// How the stream ended, kept until the reader asks.
    end: Option<Answer>,
}

impl GraphStage for AsRead {
    type Shape = SinkShape<Bytes>;
    type Mat = StreamReader;

    fn name(&self) -> &'static str {
        "as-read"
    }

    fn create_logic(&self, cx: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, StreamReader) {
        let request = cx.async_callback(|this: &mut AsReadLogic, request: Request, ctx| {
            this.on_request(request, ctx)
        });
        let reader = StreamReader {
            request,
            read_timeout: self.read_timeout,
            leftover: Bytes::new(),
            ended: None,
            error: None,
        };
        let logic = AsReadLogic {
            shape: SinkShape::new(),
            waiting: None,
            end: None,
        };
        (Box::new(logic), reader)
    }
}

impl AsReadLogic {
    fn on_request(&mut self, request: Request, ctx: &mut StageContext<'_>) -> StageResult {
        match request {
            Request::Next(promise) => {
                if let Some(end) = self.end.take() {
                    let _ = promise.complete(end);
                    ctx.complete_stage();
                    return Ok(());
                }
                self.waiting = Some(promise);
                if !ctx.has_been_pulled(self.shape.inlet) && !ctx.is_closed(self.shape.inlet) {
                    ctx.pull(self.shape.inlet)?;
                }
                Ok(())
            }
            Request::Cancel => {
                ctx.complete_stage();
                Ok(())
            }
        }
    }

    /// Answer the waiting read with how the stream ended, or keep it for
    /// the next read.
    fn end(&mut self, end: Answer, ctx: &mut StageContext<'_>) {
        match self.waiting.take() {
            Some(promise) => {
                let _ = promise.complete(end);
                ctx.complete_stage();
            }
            None => self.end = Some(end),
        }
    }
}

impl GraphStageLogic for AsReadLogic {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        // Stay until the reader has heard how the stream ended.
        ctx.set_keep_going(true);
        Ok(())
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let chunk = ctx.grab(self.shape.inlet)?;
        if chunk.is_empty() {
            return ctx.pull(self.shape.inlet);
        }
        if let Some(promise) = self.waiting.take() {
            let _ = promise.complete(Ok(Some(chunk)));
        }
        Ok(())
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.end(Ok(None), ctx);
        Ok(())
    }

    fn on_upstream_failure(
        &mut self,
        _: InPort,
        error: StreamError,
        ctx: &mut StageContext<'_>,
    ) -> StageResult {
        self.end(Err(error), ctx);
        Ok(())
    }

    fn post_stop(&mut self) {
        if let Some(promise) = self.waiting.take() {
            let _ = promise.complete(Err(StreamError::from_kind(ErrorKind::AbruptTermination)));
        }
    }
}
