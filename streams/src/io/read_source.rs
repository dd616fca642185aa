//! The source stage behind `FileIO::from_path` and
//! `StreamConverters::from_read`: chunks read from a blocking reader.

use std::io::Read;
use std::path::PathBuf;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};

use super::{IoError, IoResult};
use crate::stage::{
    Attributes, GraphStage, GraphStageLogic, MatContext, OutPort, SourceShape, StageContext,
    StageResult,
};
use crate::{Completer, Completion, Source, StreamError};

/// How many chunks' worth of buffer one allocation holds: the chunks are
/// split off it, so a 64 KiB chunk size allocates once per 512 KiB read.
/// The region is allocated zeroed, which `Read::read` needs. Only the
/// first regions are fresh zero pages: once the allocator hands out
/// freed memory again, `calloc` zeroes it with a memset (`weir-bench io`
/// under perf: 5% of line framing's cycles, the one cost per byte left
/// besides the read's own copy). So a region whose chunks have all been
/// dropped by the time it runs out is used again ([`next_region`]).
const CHUNKS_PER_ALLOCATION: usize = 8;

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

/// Opens the reader for one run.
pub(crate) type OpenReader = Arc<dyn Fn() -> Result<Box<dyn Read + Send>, IoError> + Send + Sync>;

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
    chunk_size: usize,
    path: Option<PathBuf>,
    buffer: BytesMut,
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
            chunk_size: self.chunk_size,
            path: self.path.clone(),
            buffer: BytesMut::new(),
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
}

impl GraphStageLogic for ReadLogic {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        // Opened on the stage's own (blocking) thread, not in `run`.
        match (self.open)() {
            Ok(reader) => self.reader = Some(reader),
            Err(error) => self.fail(error, ctx),
        }
        Ok(())
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        let Some(reader) = self.reader.as_mut() else {
            return Ok(());
        };
        if self.buffer.len() < self.chunk_size {
            let region = self.chunk_size.saturating_mul(CHUNKS_PER_ALLOCATION);
            next_region(&mut self.buffer, region);
        }
        let read = loop {
            match reader.read(&mut self.buffer[..self.chunk_size]) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                other => break other,
            }
        };
        match read {
            Ok(0) => {
                self.buffer = BytesMut::new();
                self.reader = None;
                self.completer.complete(Ok(IoResult { count: self.count }));
                ctx.complete(self.shape.out);
                Ok(())
            }
            Ok(n) => {
                self.count += n as u64;
                let chunk = self.buffer.split_to(n).freeze();
                ctx.push(self.shape.out, chunk)
            }
            Err(e) => {
                self.reader = None;
                self.fail(IoError::new("read", self.path.clone(), &e), ctx);
                Ok(())
            }
        }
    }

    fn on_downstream_finish(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        // Cancelled: what was read so far is the result.
        self.completer.complete(Ok(IoResult { count: self.count }));
        ctx.complete_stage();
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
