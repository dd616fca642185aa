//! The sink stage behind `FileIO::to_path` and `StreamConverters::to_write`:
//! chunks written to a blocking writer.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use bytes::Bytes;

use super::{IoError, IoResult};
use crate::blueprint::Sink;
use crate::completion::{Completer, Completion};
use crate::error::StreamError;
use crate::stage::{
    Attributes, GraphStage, GraphStageLogic, InPort, MatContext, SinkShape, StageContext,
    StageResult,
};

/// Opens the writer for one run.
pub(crate) type OpenWriter = Arc<dyn Fn() -> Result<Box<dyn Write + Send>, IoError> + Send + Sync>;

pub(crate) struct WriteSink {
    pub(crate) name: &'static str,
    pub(crate) open: OpenWriter,
    pub(crate) path: Option<PathBuf>,
}

/// A sink writing every chunk to `open()`, on the blocking dispatcher.
pub(crate) fn write_sink(sink: WriteSink) -> Sink<Bytes, Completion<IoResult>> {
    Sink::from_graph(sink)
}

struct WriteLogic {
    shape: SinkShape<Bytes>,
    open: OpenWriter,
    writer: Option<Box<dyn Write + Send>>,
    path: Option<PathBuf>,
    count: u64,
    completer: Completer<IoResult>,
}

impl GraphStage for WriteSink {
    type Shape = SinkShape<Bytes>;
    type Mat = Completion<IoResult>;

    fn name(&self) -> &'static str {
        self.name
    }

    fn initial_attributes(&self) -> Attributes {
        Attributes::blocking()
    }

    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, Self::Mat) {
        let (completer, completion) = Completer::new();
        let logic = WriteLogic {
            shape: SinkShape::new(),
            open: Arc::clone(&self.open),
            writer: None,
            path: self.path.clone(),
            count: 0,
            completer,
        };
        (Box::new(logic), completion)
    }
}

impl WriteLogic {
    fn fail(
        &mut self,
        operation: &'static str,
        error: &std::io::Error,
        ctx: &mut StageContext<'_>,
    ) {
        self.writer = None;
        let error = IoError::new(operation, self.path.clone(), error);
        let error = ctx.attribute(StreamError::custom(error));
        self.completer.complete(Err(error.clone()));
        ctx.fail_stage(error);
    }
}

impl GraphStageLogic for WriteLogic {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        match (self.open)() {
            Ok(writer) => {
                self.writer = Some(writer);
                ctx.pull(self.shape.inlet)
            }
            Err(error) => {
                let error = ctx.attribute(StreamError::custom(error));
                self.completer.complete(Err(error.clone()));
                ctx.fail_stage(error);
                Ok(())
            }
        }
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let chunk = ctx.grab(self.shape.inlet)?;
        let Some(writer) = self.writer.as_mut() else {
            return Ok(());
        };
        match writer.write_all(&chunk) {
            Ok(()) => {
                self.count += chunk.len() as u64;
                ctx.pull(self.shape.inlet)
            }
            Err(e) => {
                self.fail("write", &e, ctx);
                Ok(())
            }
        }
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        if let Some(mut writer) = self.writer.take()
            && let Err(e) = writer.flush()
        {
            self.writer = Some(writer);
            self.fail("flush", &e, ctx);
            return Ok(());
        }
        self.completer.complete(Ok(IoResult { count: self.count }));
        ctx.complete_stage();
        Ok(())
    }

    fn on_upstream_failure(
        &mut self,
        _: InPort,
        error: StreamError,
        _: &mut StageContext<'_>,
    ) -> StageResult {
        // What was written stays written (flushed when the writer drops).
        self.completer.complete(Err(error.clone()));
        Err(error)
    }

    fn on_failure(&mut self, error: &StreamError) {
        self.completer.complete(Err(error.clone()));
    }
}
