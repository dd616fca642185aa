//! The source stage behind `FileIO::from_path` and
//! `StreamConverters::from_read`: chunks read from a blocking reader.

use std::io::Read;
use std::path::PathBuf;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};

use super::{IoError, IoResult};
use crate::blueprint::Source;
use crate::completion::{Completer, Completion};
use crate::error::StreamError;
use crate::stage::{
    Attributes, GraphStage, GraphStageLogic, MatContext, OutPort, SourceShape, StageContext,
    StageResult,
};
use crate::tuning::{CHUNKS_PER_ALLOCATION, MAX_READ_SIZE};

/// Make `buffer` a fresh region of `region` initialized bytes: the same
/// allocation again if nothing else holds any part of it (no allocation,
/// no zeroing), else a new zeroed one. Whether it was reused.
///
/// `buffer` must be empty of capacity or come from this function (every
/// region it holds was made by `BytesMut::zeroed(region)`).
fn next_region(buffer: &mut BytesMut, region: usize) -> bool {
    buffer.clear();
    if buffer.try_reclaim(region) && buffer.capacity() == region {
        debug_assert!(buffer.is_empty());
        // SAFETY: `try_reclaim` never allocates: on success `buffer` spans
        // `region` bytes inside the allocation it already had, which this
        // function made with `BytesMut::zeroed` (the caller's contract).
        // Every byte of that allocation was initialized then; since, its
        // bytes were only written (reads) or shared read-only (chunks, now
        // all dropped: the reclaim needs the only handle), never
        // de-initialized.
        unsafe { buffer.set_len(region) };
        return true;
    }
    *buffer = BytesMut::zeroed(region);
    false
}

/// What opening gives: the reader and, where it is known (a regular
/// file), how many bytes it has left to read.
pub(crate) struct Opened {
    pub(crate) reader: Box<dyn Read + Send>,
    pub(crate) length: Option<u64>,
}

/// Opens the reader for one run.
pub(crate) type OpenReader = Arc<dyn Fn() -> Result<Opened, IoError> + Send + Sync>;

pub(crate) struct ReadSource {
    pub(crate) name: &'static str,
    pub(crate) open: OpenReader,
    pub(crate) chunk_size: usize,
    pub(crate) path: Option<PathBuf>,
}

/// A source of the chunks `open()` reads, on the blocking dispatcher.
pub(crate) fn read_source(source: ReadSource) -> Source<Bytes, Completion<IoResult>> {
    Source::from_graph(source)
}

struct ReadLogic {
    shape: SourceShape<Bytes>,
    open: OpenReader,
    reader: Option<Box<dyn Read + Send>>,
    /// Bytes per read: the chunk size, at most [`MAX_READ_SIZE`].
    read_size: usize,
    path: Option<PathBuf>,
    /// The bytes left when opened, if known: reaching them, the stage
    /// reads once more at once to see the end with the last chunk.
    length: Option<u64>,
    buffer: BytesMut,
    /// Bytes at the start of `buffer` read ahead (by that look for the
    /// end), to go out on the next pull.
    held: usize,
    /// What the look for the end met: reported on the next pull.
    held_error: Option<std::io::Error>,
    count: u64,
    completer: Completer<IoResult>,
}

impl GraphStage for ReadSource {
    type Shape = SourceShape<Bytes>;
    type Mat = Completion<IoResult>;

    fn name(&self) -> &'static str {
        self.name
    }

    fn initial_attributes(&self) -> Attributes {
        Attributes::blocking()
    }

    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, Self::Mat) {
        let (completer, completion) = Completer::new();
        let logic = ReadLogic {
            shape: SourceShape::new(),
            open: Arc::clone(&self.open),
            reader: None,
            read_size: self.chunk_size.min(MAX_READ_SIZE),
            path: self.path.clone(),
            length: None,
            buffer: BytesMut::new(),
            held: 0,
            held_error: None,
            count: 0,
            completer,
        };
        (Box::new(logic), completion)
    }
}

impl ReadLogic {
    fn fail(&mut self, error: IoError, ctx: &mut StageContext<'_>) {
        let error = ctx.attribute(StreamError::custom(error));
        self.completer.complete(Err(error.clone()));
        ctx.fail_stage(error);
    }

    /// Read once into the start of `buffer` (a fresh region if it has no
    /// room for a whole read), retrying an interrupted read.
    fn read(&mut self) -> std::io::Result<usize> {
        let Some(reader) = self.reader.as_mut() else {
            return Ok(0);
        };
        if self.buffer.len() < self.read_size {
            let region = self.read_size.saturating_mul(CHUNKS_PER_ALLOCATION);
            next_region(&mut self.buffer, region);
        }
        loop {
            match reader.read(&mut self.buffer[..self.read_size]) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                other => return other,
            }
        }
    }

    /// The reader is done: `Ok(())` at its end, else the error.
    fn finish(&mut self, result: std::io::Result<()>, ctx: &mut StageContext<'_>) {
        self.reader = None;
        self.buffer = BytesMut::new();
        match result {
            Ok(()) => {
                self.completer.complete(Ok(IoResult { count: self.count }));
                ctx.complete(self.shape.out);
            }
            Err(e) => self.fail(IoError::new("read", self.path.clone(), &e), ctx),
        }
    }

    /// After a read of `n` bytes: is this where the reader should end? Only
    /// a reader of known length is asked at once (a pipe or a socket
    /// would block): at that length, or on a short read of it.
    fn may_have_ended(&self, n: usize) -> bool {
        self.length
            .is_some_and(|length| self.count >= length || n < self.read_size)
    }
}

impl GraphStageLogic for ReadLogic {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        // Opened on the stage's own (blocking) thread, not in `run`; a
        // failure to open fails the stream now, before any demand.
        match (self.open)() {
            Ok(opened) => {
                self.reader = Some(opened.reader);
                self.length = opened.length;
            }
            Err(error) => self.fail(error, ctx),
        }
        Ok(())
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        if self.reader.is_none() {
            return Ok(());
        }
        if let Some(error) = self.held_error.take() {
            self.finish(Err(error), ctx);
            return Ok(());
        }
        let n = if self.held > 0 {
            std::mem::take(&mut self.held)
        } else {
            match self.read() {
                Ok(0) => {
                    self.finish(Ok(()), ctx);
                    return Ok(());
                }
                Ok(n) => {
                    self.count += n as u64;
                    n
                }
                Err(e) => {
                    self.finish(Err(e), ctx);
                    return Ok(());
                }
            }
        };
        let chunk = self.buffer.split_to(n).freeze();
        if !self.may_have_ended(n) {
            return ctx.push(self.shape.out, chunk);
        }
        // Look for the end now, so that the last chunk completes the
        // stream rather than the pull after it; what the look finds waits
        // for the next pull.
        match self.read() {
            Ok(0) => {
                ctx.push(self.shape.out, chunk)?;
                self.finish(Ok(()), ctx);
                return Ok(());
            }
            Ok(more) => {
                self.count += more as u64;
                self.held = more;
            }
            Err(e) => self.held_error = Some(e),
        }
        ctx.push(self.shape.out, chunk)
    }

    fn on_downstream_finish(&mut self, port: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        // Cancelled: what was read so far is the result, unless the
        // stream failed downstream (then the count reports that failure).
        let cause = ctx.cancellation(port);
        let count = self.count;
        self.completer
            .complete(cause.clone().into_result().map(|()| IoResult { count }));
        ctx.cancel_stage(cause);
        Ok(())
    }

    fn on_failure(&mut self, error: &StreamError) {
        self.completer.complete(Err(error.clone()));
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use bytes::BytesMut;

    use super::next_region;

    // Run under `valgrind --tool=memcheck` too (STYLE 13): a reused region
    // must read as initialized.
    #[test]
    fn a_region_is_reused_only_once_every_chunk_of_it_is_dropped() {
        let mut buffer = BytesMut::new();
        assert!(!next_region(&mut buffer, 64), "the first region is new");
        let start = buffer.as_ptr();
        buffer[..5].copy_from_slice(b"hello");
        let first = buffer.split_to(16).freeze();
        let second = buffer.split_to(48).freeze();
        assert_eq!(&first[..5], b"hello");
        // A chunk still held: a new region.
        drop(first);
        assert!(!next_region(&mut buffer, 64));
        assert_ne!(buffer.as_ptr(), start);
        assert!(buffer.iter().all(|&b| b == 0), "a new region is zeroed");
        drop(second);
        // Every chunk dropped: the same allocation, whole, readable.
        let again = buffer.as_ptr();
        let _ = buffer.split_to(64).freeze();
        assert!(next_region(&mut buffer, 64));
        assert_eq!(buffer.as_ptr(), again);
        assert_eq!(buffer.len(), 64);
        assert_eq!(buffer.iter().map(|&b| u32::from(b)).sum::<u32>(), 0);
        // A region of another size is not reused.
        let _ = buffer.split_to(64);
        assert!(!next_region(&mut buffer, 32));
        assert_eq!(buffer.len(), 32);
    }
}
