//! The stage every decoder runs in: it keeps the bytes of an unfinished
//! frame, asks its [`Decoder`] for the next frame on each pull, and hands
//! out frames that lie within one chunk as slices of it (no copy).

use std::ops::ControlFlow;
use std::sync::Arc;

use bytes::{Buf, Bytes, BytesMut};

use super::super::FramingError;
use super::fused::FramingNode;
use crate::blueprint::Flow;
use crate::error::StreamError;
use crate::fusion::FlattenNode;
use crate::plan::graph::Fuses;
use crate::stage::{
    FlowShape, GraphStage, GraphStageLogic, InPort, MatContext, OutPort, StageContext, StageResult,
};

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

    /// A fast path for a chunk with no partial frame before it: the whole
    /// frames at its start, as slices of it, to `each` until it breaks;
    /// the bytes they used (delimiters too) and whether `each` broke.
    /// What it leaves (a partial frame, a frame in error, all of it by
    /// default) goes through [`decode`](Self::decode) as ever.
    fn frames_within(
        &mut self,
        chunk: &Bytes,
        each: &mut impl FnMut(Bytes) -> ControlFlow<()>,
    ) -> (usize, ControlFlow<()>) {
        let _ = (chunk, each);
        (0, ControlFlow::Continue(()))
    }
}

/// A decoder as a flow of bytes. Its node may fuse with a folding sink
/// after it (the planner's flatten rule): the frames then go straight
/// into the sink, with no port and no interpreter event per frame
/// (`super::fused`).
pub(crate) fn framing_flow<D: Decoder>(name: &'static str, decoder: D) -> Flow<Bytes, Bytes> {
    let node: Arc<dyn FlattenNode> = Arc::new(FramingNode {
        name,
        decoder: decoder.clone(),
    });
    let mut flow = Flow::from_graph(FramingStage { name, decoder });
    flow.graph.nodes[0].fuses = Some(Fuses::Flatten(node));
    flow
}

/// The bytes not yet cut into frames and the decoder that cuts them: what
/// a framing stage keeps, whether it pushes its frames or feeds them to a
/// fused sink.
pub(super) struct Frames<D> {
    decoder: D,
    /// Bytes of an unfinished frame copied out of earlier chunks.
    head: BytesMut,
    /// The unconsumed rest of the current chunk.
    tail: Bytes,
    /// Stream offset of the first unconsumed byte.
    base: u64,
}

impl<D: Decoder> Frames<D> {
    pub(super) fn new(decoder: D) -> Self {
        Self {
            decoder,
            head: BytesMut::new(),
            tail: Bytes::new(),
            base: 0,
        }
    }

    /// A new chunk after the unconsumed bytes.
    pub(super) fn push(&mut self, chunk: Bytes) {
        if !self.tail.is_empty() {
            self.head.extend_from_slice(&self.tail);
        }
        self.tail = chunk;
    }

    /// The next whole frame, or `Ok(None)` when more bytes are needed.
    ///
    /// # Errors
    ///
    /// The decoder's [`FramingError`], at its stream offset.
    #[inline]
    pub(super) fn next_frame(&mut self) -> Result<Option<Bytes>, StreamError> {
        let data = Joined::new(&self.head, &self.tail);
        match self.decoder.decode(data) {
            Ok(Some(found)) => Ok(Some(self.take(found))),
            Ok(None) => Ok(None),
            Err(e) => Err(self.error(e)),
        }
    }

    /// Every whole frame, in order, to `each` until it breaks (then
    /// `Ok(Break)`, the frames after it left uncut).
    ///
    /// # Errors
    ///
    /// As [`next_frame`](Self::next_frame), after the frames before the error.
    #[inline]
    pub(super) fn for_each_frame(
        &mut self,
        mut each: impl FnMut(Bytes) -> ControlFlow<()>,
    ) -> Result<ControlFlow<()>, StreamError> {
        loop {
            // The fast path, once no partial frame is held (again: the
            // first frame of a chunk often completes one).
            if self.head.is_empty() {
                let (used, flow) = self.decoder.frames_within(&self.tail, &mut each);
                self.base += used as u64;
                self.tail.advance(used);
                if flow.is_break() {
                    return Ok(flow);
                }
            }
            let Some(frame) = self.next_frame()? else {
                return Ok(ControlFlow::Continue(()));
            };
            if each(frame).is_break() {
                return Ok(ControlFlow::Break(()));
            }
        }
    }

    /// No whole frame is left: keep the partial one (copied, as the next
    /// chunk continues it).
    pub(super) fn keep_partial(&mut self) {
        if !self.tail.is_empty() {
            self.head.extend_from_slice(&self.tail);
            self.tail = Bytes::new();
        }
    }

    /// The stream ended after the whole frames: a last frame made of the
    /// rest, if there is a rest and the decoder makes one of it.
    ///
    /// # Errors
    ///
    /// The decoder's [`FramingError`] (a truncated frame), at its offset.
    pub(super) fn last_frame(&mut self) -> Result<Option<Bytes>, StreamError> {
        let data = Joined::new(&self.head, &self.tail);
        if data.len() == 0 {
            return Ok(None);
        }
        match self.decoder.finish(data) {
            Ok(Some(found)) => {
                let frame = self.take(found);
                self.head.clear();
                self.tail.clear();
                Ok(Some(frame))
            }
            Ok(None) => Ok(None),
            Err(e) => Err(self.error(e)),
        }
    }

    /// Cut `found` out of the unconsumed bytes.
    #[inline]
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

    #[cold]
    fn error(&self, error: FramingError) -> StreamError {
        StreamError::custom(error.shifted(self.base))
    }
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
            frames: Frames::new(self.decoder.clone()),
            finished: false,
            ahead: None,
        };
        (Box::new(logic), ())
    }
}

struct FramingLogic<D> {
    shape: FlowShape<Bytes, Bytes>,
    frames: Frames<D>,
    /// Upstream has finished.
    finished: bool,
    /// Once upstream has finished: the next frame, cut ahead to know
    /// whether the one before it was the last ([`look_ahead`](Self::look_ahead)).
    ahead: Option<Bytes>,
}

impl<D: Decoder> FramingLogic<D> {
    /// Push the next frame if there is one; otherwise pull, or (upstream
    /// has finished) push the last one or complete.
    fn next(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let frame = match self.ahead.take() {
            Some(frame) => Some(frame),
            None => self.frames.next_frame()?,
        };
        let frame = match frame {
            Some(frame) => frame,
            None if !self.finished => {
                // Keep the partial frame; the next chunk continues it.
                self.frames.keep_partial();
                return ctx.pull(self.shape.inlet);
            }
            None => {
                self.look_ahead(ctx)?;
                match self.ahead.take() {
                    Some(last) => last,
                    None => return Ok(()), // completed
                }
            }
        };
        ctx.push(self.shape.out, frame)?;
        if self.finished {
            self.look_ahead(ctx)?;
        }
        Ok(())
    }

    /// Upstream has finished: cut the next frame now (a whole one, else
    /// the last one the rest makes), so that the stream completes with
    /// its last frame rather than on the pull after it; with none left,
    /// complete. A frame cut ahead waits for the next pull.
    fn look_ahead(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        debug_assert!(self.finished && self.ahead.is_none());
        self.ahead = match self.frames.next_frame()? {
            Some(frame) => Some(frame),
            None => self.frames.last_frame()?,
        };
        if self.ahead.is_none() {
            ctx.complete(self.shape.out);
        }
        Ok(())
    }
}

impl<D: Decoder> GraphStageLogic for FramingLogic<D> {
    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let chunk = ctx.grab(self.shape.inlet)?;
        self.frames.push(chunk);
        self.next(ctx)
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.next(ctx)
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.finished = true;
        if ctx.is_available(self.shape.out) {
            self.next(ctx)
        } else {
            self.look_ahead(ctx)
        }
    }
}
