//! The stage every decoder runs in: it keeps the bytes of an unfinished
//! frame, asks its [`Decoder`] for the next frame on each pull, and hands
//! out frames that lie within one chunk as slices of it (no copy).

use bytes::{Buf, Bytes, BytesMut};

use super::super::FramingError;
use crate::stage::{
    FlowShape, GraphStage, GraphStageLogic, InPort, MatContext, OutPort, StageContext, StageResult,
};
use crate::{Flow, StreamError};

/// The unconsumed bytes as one sequence: the copied tail of earlier
/// chunks (`head`), then the current chunk (`tail`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Joined<'a> {
    head: &'a [u8],
    tail: &'a [u8],
}

impl<'a> Joined<'a> {
    pub(crate) fn new(head: &'a [u8], tail: &'a [u8]) -> Self {
        Self { head, tail }
    }

    pub(crate) fn len(&self) -> usize {
        self.head.len() + self.tail.len()
    }

    /// The byte at `i < len()`.
    pub(crate) fn at(&self, i: usize) -> u8 {
        match self.head.get(i) {
            Some(&b) => b,
            None => self.tail[i - self.head.len()],
        }
    }

    /// The first position at or after `from` where `needle` starts.
    pub(crate) fn find(&self, needle: &[u8], from: usize) -> Option<usize> {
        let n = needle.len();
        debug_assert!(n > 0, "delimiters are not empty");
        // Wholly in head.
        if from < self.head.len() {
            if let Some(p) = find_in(&self.head[from..], needle) {
                return Some(from + p);
            }
            // Across the seam.
            let start = self.head.len().saturating_sub(n - 1).max(from);
            for p in start..self.head.len() {
                if p + n <= self.len() && (0..n).all(|k| self.at(p + k) == needle[k]) {
                    return Some(p);
                }
            }
        }
        let skip = from.saturating_sub(self.head.len());
        find_in(self.tail.get(skip..)?, needle).map(|p| self.head.len() + skip + p)
    }
}

/// The first position of `needle` in `hay`. A line search is most of
/// what delimiter framing does, so a one-byte delimiter is one `memchr`
/// (vectorized; `weir-bench io`), and a longer one looks for its first
/// byte that way.
fn find_in(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let (&first, rest) = needle.split_first()?;
    if rest.is_empty() {
        return memchr::memchr(first, hay);
    }
    let mut from = 0;
    while let Some(p) = memchr::memchr(first, hay.get(from..)?) {
        let at = from + p;
        if hay.get(at + 1..at + 1 + rest.len()) == Some(rest) {
            return Some(at);
        }
        if at + needle.len() > hay.len() {
            return None;
        }
        from = at + 1;
    }
    None
}

/// A frame found at the start of the unconsumed bytes: the frame is
/// `frame` (a range of them), and `consumed` bytes are used up by it
/// (with its delimiter, or the separators before it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    pub(crate) frame: std::ops::Range<usize>,
    pub(crate) consumed: usize,
}

/// A framing protocol. Between two frames it sees the same start of the
/// unconsumed bytes, only longer, so it may remember how far it scanned.
/// Offsets in its errors count from that start; the stage shifts them.
pub(crate) trait Decoder: Clone + Send + Sync + 'static {
    /// The next frame, or `Ok(None)` when more bytes are needed.
    fn decode(&mut self, data: Joined<'_>) -> Result<Option<Found>, FramingError>;

    /// The stream ended with `data` (not empty) unconsumed: a last frame,
    /// `Ok(None)` to drop it, or an error.
    fn finish(&mut self, data: Joined<'_>) -> Result<Option<Found>, FramingError>;
}

/// A decoder as a flow of bytes.
pub(crate) fn framing_flow<D: Decoder>(name: &'static str, decoder: D) -> Flow<Bytes, Bytes> {
    Flow::from_graph(FramingStage { name, decoder })
}

struct FramingStage<D> {
    name: &'static str,
    decoder: D,
}

impl<D: Decoder> GraphStage for FramingStage<D> {
    type Shape = FlowShape<Bytes, Bytes>;
    type Mat = ();

    fn name(&self) -> &'static str {
        self.name
    }

    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        let logic = FramingLogic {
            shape: FlowShape::new(),
            decoder: self.decoder.clone(),
            head: BytesMut::new(),
            tail: Bytes::new(),
            base: 0,
            finished: false,
        };
        (Box::new(logic), ())
    }
}

struct FramingLogic<D> {
    shape: FlowShape<Bytes, Bytes>,
    decoder: D,
    /// Bytes of an unfinished frame copied out of earlier chunks.
    head: BytesMut,
    /// The unconsumed rest of the current chunk.
    tail: Bytes,
    /// Stream offset of the first unconsumed byte.
    base: u64,
    /// Upstream has finished.
    finished: bool,
}

impl<D: Decoder> FramingLogic<D> {
    /// Cut `found` out of the unconsumed bytes.
    fn take(&mut self, found: Found) -> Bytes {
        let Found { frame, consumed } = found;
        self.base += consumed as u64;
        if self.head.is_empty() {
            // Within the chunk: a slice of it.
            let out = self.tail.slice(frame);
            self.tail.advance(consumed);
            return out;
        }
        let need = consumed.saturating_sub(self.head.len());
        self.head.extend_from_slice(&self.tail[..need]);
        self.tail.advance(need);
        self.head.split_to(consumed).freeze().slice(frame)
    }

    fn error(&self, error: FramingError) -> StreamError {
        StreamError::custom(error.shifted(self.base))
    }

    /// Push the next frame if there is one; otherwise pull, finish or fail.
    fn next(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let data = Joined::new(&self.head, &self.tail);
        match self.decoder.decode(data) {
            Ok(Some(found)) => {
                let frame = self.take(found);
                return ctx.push(self.shape.out, frame);
            }
            Ok(None) => {}
            Err(e) => return Err(self.error(e)),
        }
        if !self.finished {
            // Keep the partial frame; the next chunk continues it.
            if !self.tail.is_empty() {
                self.head.extend_from_slice(&self.tail);
                self.tail = Bytes::new();
            }
            return ctx.pull(self.shape.inlet);
        }
        if data.len() > 0 {
            match self.decoder.finish(data) {
                Ok(Some(found)) => {
                    let frame = self.take(found);
                    self.head.clear();
                    self.tail.clear();
                    ctx.push(self.shape.out, frame)?;
                }
                Ok(None) => {}
                Err(e) => return Err(self.error(e)),
            }
        }
        ctx.complete(self.shape.out);
        Ok(())
    }
}

impl<D: Decoder> GraphStageLogic for FramingLogic<D> {
    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let chunk = ctx.grab(self.shape.inlet)?;
        if self.tail.is_empty() {
            self.tail = chunk;
        } else {
            self.head.extend_from_slice(&self.tail);
            self.tail = chunk;
        }
        self.next(ctx)
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.next(ctx)
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.finished = true;
        if ctx.is_available(self.shape.out) {
            self.next(ctx)?;
        }
        Ok(())
    }
}
