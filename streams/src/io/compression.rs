//! [`Compression`]: gzip and deflate as flows of byte chunks, on flate2.

use std::io::Write;

use bytes::Bytes;
use flate2::write::{DeflateEncoder, GzEncoder, MultiGzDecoder};
use flate2::{Decompress, FlushDecompress, Status};

use super::IoError;
use crate::blueprint::Flow;
use crate::error::{ArgumentError, StreamError};
use crate::stage::{
    FlowShape, GraphStage, GraphStageLogic, InPort, MatContext, OutPort, StageContext, StageResult,
};
use crate::tuning::INFLATE_STEP;

/// The compression level of [`Compression::gzip`] and
/// [`Compression::deflate`] (flate2's default, 6).
pub const DEFAULT_LEVEL: u32 = 6;

/// Gzip and raw deflate (RFC 1951) as flows of byte chunks. Compressed
/// output comes as the encoder produces it (it buffers internally) and
/// the rest when the stream completes; decompressed output comes in
/// chunks of at most `max_bytes_per_chunk`.
///
/// Corrupt input fails the stream with an [`IoError`] whose operation is
/// `"gunzip"` or `"inflate"`; so does input that ends inside the
/// compressed stream, and input that goes on after its end (trailing
/// garbage; a gzip file of several members, RFC 1952's `cat a.gz b.gz`,
/// is decoded member after member).
///
/// # Examples
///
/// ```
/// use weir_streams::io::{Bytes, Compression};
/// use weir_streams::prelude::*;
///
/// let system = weir_actor::ActorSystem::new("gzip").unwrap();
/// let materializer = Materializer::new(&system);
/// let text = Bytes::from_static(b"to be or not to be, to be or not to be");
/// let round_trip = Source::single(text.clone())
///     .via(Compression::gzip())
///     .via(Compression::gunzip(1024)?)
///     .run_with(Sink::collect(), &materializer);
/// assert_eq!(round_trip.wait().unwrap().concat(), text);
/// system.terminate().wait().unwrap();
/// # Ok::<(), weir_streams::ArgumentError>(())
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub struct Compression;

impl Compression {
    /// Gzip at [`DEFAULT_LEVEL`].
    pub fn gzip() -> Flow<Bytes, Bytes> {
        Self::gzip_level(DEFAULT_LEVEL)
    }

    /// Gzip at `level` (0 none to 9 best; above 9 counts as 9).
    pub fn gzip_level(level: u32) -> Flow<Bytes, Bytes> {
        let level = flate2::Compression::new(level.min(9));
        coder_flow("gzip", usize::MAX, move || {
            Coder::Gzip(GzEncoder::new(Vec::new(), level))
        })
    }

    /// Gzip at `level`, flushed after every element (zlib's
    /// `SYNC_FLUSH`, as Akka's `Compression.gzip` does): each chunk out
    /// can be decompressed completely without waiting for more, which
    /// messages or log lines sent one at a time need. Small elements
    /// compress less well this way.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::io::{Bytes, Compression};
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("gzip-flushed").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let chunks = Source::from_iter([Bytes::from_static(b"first\n"), Bytes::from_static(b"second\n")])
    ///     .via(Compression::gzip_flushed(6))
    ///     .run_with(Sink::collect(), &materializer)
    ///     .wait()
    ///     .unwrap();
    /// // One chunk per element, then the trailer.
    /// assert_eq!(chunks.len(), 3);
    /// let text = Source::from_iter(chunks)
    ///     .via(Compression::gunzip(1024)?)
    ///     .run_with(Sink::collect(), &materializer);
    /// assert_eq!(text.wait().unwrap().concat(), b"first\nsecond\n");
    /// system.terminate().wait().unwrap();
    /// # Ok::<(), weir_streams::ArgumentError>(())
    /// ```
    pub fn gzip_flushed(level: u32) -> Flow<Bytes, Bytes> {
        let level = flate2::Compression::new(level.min(9));
        coder_flow("gzip", usize::MAX, move || {
            Coder::Flushed(Box::new(Coder::Gzip(GzEncoder::new(Vec::new(), level))))
        })
    }

    /// Raw deflate at `level`, flushed after every element (see
    /// [`gzip_flushed`](Self::gzip_flushed)).
    pub fn deflate_flushed(level: u32) -> Flow<Bytes, Bytes> {
        let level = flate2::Compression::new(level.min(9));
        coder_flow("deflate", usize::MAX, move || {
            Coder::Flushed(Box::new(Coder::Deflate(DeflateEncoder::new(
                Vec::new(),
                level,
            ))))
        })
    }

    /// Gunzip every member of the input (a gzip file may be several
    /// members one after another), in chunks of at most
    /// `max_bytes_per_chunk`. Bytes after the last member that do not
    /// start another fail the stream.
    ///
    /// # Errors
    ///
    /// [`ArgumentError::Zero`] for a `max_bytes_per_chunk` of 0.
    pub fn gunzip(max_bytes_per_chunk: usize) -> Result<Flow<Bytes, Bytes>, ArgumentError> {
        nonzero(max_bytes_per_chunk)?;
        Ok(coder_flow("gunzip", max_bytes_per_chunk, || {
            Coder::Gunzip(MultiGzDecoder::new(Vec::new()))
        }))
    }

    /// Raw deflate at [`DEFAULT_LEVEL`].
    pub fn deflate() -> Flow<Bytes, Bytes> {
        Self::deflate_level(DEFAULT_LEVEL)
    }

    /// Raw deflate at `level` (0 none to 9 best; above 9 counts as 9).
    pub fn deflate_level(level: u32) -> Flow<Bytes, Bytes> {
        let level = flate2::Compression::new(level.min(9));
        coder_flow("deflate", usize::MAX, move || {
            Coder::Deflate(DeflateEncoder::new(Vec::new(), level))
        })
    }

    /// Inflate raw deflate, in chunks of at most `max_bytes_per_chunk`.
    /// Bytes after the end of the deflate stream fail the stream.
    ///
    /// # Errors
    ///
    /// [`ArgumentError::Zero`] for a `max_bytes_per_chunk` of 0.
    pub fn inflate(max_bytes_per_chunk: usize) -> Result<Flow<Bytes, Bytes>, ArgumentError> {
        nonzero(max_bytes_per_chunk)?;
        Ok(coder_flow("inflate", max_bytes_per_chunk, || {
            Coder::Inflate {
                inflater: Decompress::new(false),
                done: false,
            }
        }))
    }
}

fn nonzero(max_bytes_per_chunk: usize) -> Result<(), ArgumentError> {
    if max_bytes_per_chunk == 0 {
        return Err(ArgumentError::Zero {
            argument: "max_bytes_per_chunk",
        });
    }
    Ok(())
}

/// One run's encoder or decoder, writing into its own `Vec`.
enum Coder {
    Gzip(GzEncoder<Vec<u8>>),
    /// Every member, one after another.
    Gunzip(MultiGzDecoder<Vec<u8>>),
    Deflate(DeflateEncoder<Vec<u8>>),
    /// Raw inflate on flate2's low-level API, which says where the
    /// deflate stream ends (so a truncated one is an error).
    Inflate {
        inflater: Decompress,
        done: bool,
    },
    /// An encoder flushed (`SYNC_FLUSH`) after every input.
    Flushed(Box<Coder>),
}

/// Inflate all of `input`; input after the end of the deflate stream is
/// an error (nothing may follow it).
fn inflate(inflater: &mut Decompress, done: &mut bool, input: &[u8]) -> std::io::Result<Vec<u8>> {
    if *done && !input.is_empty() {
        return Err(trailing());
    }
    let mut out = Vec::new();
    let mut used = 0;
    while !*done {
        out.reserve(INFLATE_STEP.max(input.len() - used));
        let (before_in, before_out) = (inflater.total_in(), out.len());
        let status = inflater
            .decompress_vec(&input[used..], &mut out, FlushDecompress::None)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
        used += usize::try_from(inflater.total_in() - before_in).unwrap_or(usize::MAX);
        *done = status == Status::StreamEnd;
        let progress = inflater.total_in() > before_in || out.len() > before_out;
        // Done with this input once it is used up and the output had room
        // to spare (nothing more is pending inside the inflater).
        if !progress || (used == input.len() && out.len() < out.capacity()) {
            break;
        }
    }
    if *done && used < input.len() {
        return Err(trailing());
    }
    Ok(out)
}

impl Coder {
    /// Feed `input`; what came out.
    fn code(&mut self, input: &[u8]) -> std::io::Result<Vec<u8>> {
        match self {
            Coder::Gzip(c) => c.write_all(input).map(|()| std::mem::take(c.get_mut())),
            Coder::Gunzip(c) => c.write_all(input).map(|()| std::mem::take(c.get_mut())),
            Coder::Deflate(c) => c.write_all(input).map(|()| std::mem::take(c.get_mut())),
            Coder::Inflate { inflater, done } => inflate(inflater, done, input),
            Coder::Flushed(coder) => coder.code_flushed(input),
        }
    }

    /// Feed `input` and flush it all out (encoders only).
    fn code_flushed(&mut self, input: &[u8]) -> std::io::Result<Vec<u8>> {
        let flushed = |c: &mut dyn Write| c.write_all(input).and_then(|()| c.flush());
        match self {
            Coder::Gzip(c) => flushed(c).map(|()| std::mem::take(c.get_mut())),
            Coder::Deflate(c) => flushed(c).map(|()| std::mem::take(c.get_mut())),
            other => other.code(input),
        }
    }

    /// The input ended: the rest of the output.
    fn finish(&mut self) -> std::io::Result<Vec<u8>> {
        match self {
            Coder::Gzip(c) => c.try_finish().map(|()| std::mem::take(c.get_mut())),
            Coder::Deflate(c) => c.try_finish().map(|()| std::mem::take(c.get_mut())),
            // Fails on a missing or wrong trailer (a truncated member).
            Coder::Gunzip(c) => c.try_finish().map(|()| std::mem::take(c.get_mut())),
            Coder::Inflate { done: true, .. } => Ok(Vec::new()),
            Coder::Inflate { done: false, .. } => Err(truncated()),
            Coder::Flushed(coder) => coder.finish(),
        }
    }
}

fn trailing() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        "bytes after the end of the compressed stream",
    )
}

fn truncated() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::UnexpectedEof,
        "the input ended inside the compressed stream",
    )
}

fn coder_flow<F>(name: &'static str, max_chunk: usize, make: F) -> Flow<Bytes, Bytes>
where
    F: Fn() -> Coder + Send + Sync + 'static,
{
    Flow::from_graph(CoderStage {
        name,
        max_chunk,
        make,
    })
}

struct CoderStage<F> {
    name: &'static str,
    max_chunk: usize,
    make: F,
}

struct CoderLogic {
    shape: FlowShape<Bytes, Bytes>,
    name: &'static str,
    max_chunk: usize,
    coder: Coder,
}

impl<F> GraphStage for CoderStage<F>
where
    F: Fn() -> Coder + Send + Sync + 'static,
{
    type Shape = FlowShape<Bytes, Bytes>;
    type Mat = ();

    fn name(&self) -> &'static str {
        self.name
    }

    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        let logic = CoderLogic {
            shape: FlowShape::new(),
            name: self.name,
            max_chunk: self.max_chunk,
            coder: (self.make)(),
        };
        (Box::new(logic), ())
    }
}

impl CoderLogic {
    fn error(&self, error: &std::io::Error) -> StreamError {
        StreamError::custom(IoError::new(self.name, None, error))
    }

    /// Emit `out` in chunks of at most `max_chunk` (slices of one buffer).
    fn emit(&self, out: Vec<u8>, ctx: &mut StageContext<'_>) -> StageResult {
        let out = Bytes::from(out);
        let step = self.max_chunk;
        let chunks = (0..out.len())
            .step_by(step)
            .map(|at| out.slice(at..out.len().min(at.saturating_add(step))));
        ctx.emit_multiple(self.shape.out, chunks)
    }
}

impl GraphStageLogic for CoderLogic {
    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let input = ctx.grab(self.shape.inlet)?;
        let out = self.coder.code(&input).map_err(|e| self.error(&e))?;
        if out.is_empty() {
            return ctx.pull(self.shape.inlet);
        }
        self.emit(out, ctx)
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.pull(self.shape.inlet)
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let out = self.coder.finish().map_err(|e| self.error(&e))?;
        self.emit(out, ctx)?;
        ctx.complete(self.shape.out);
        Ok(())
    }
}
