//! The write side of both TCP stages, written once ([`TcpWriter`]): the
//! outgoing connection's and an accepted connection's writing half. Small
//! chunks are gathered and written together when the island runs out of
//! other work, so a stream of small messages does not cost one system
//! call each.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Buf, Bytes, BytesMut};
use tokio::io::AsyncWrite;
use weir_streams::StreamError;
use weir_streams::io::IoError;
use weir_streams::stage::{Inlet, StageContext};

/// The stream failure for an IO error of `operation` on a socket.
pub(crate) fn io_error(operation: &'static str, error: &std::io::Error) -> StreamError {
    StreamError::custom(IoError::new(operation, None, error))
}

/// A TCP stage's write side: what waits to be written, whether upstream
/// has finished, and whether writing is shut down. The stage calls
/// [`push`](Self::push) from `on_push` and [`poll`](Self::poll) whenever
/// it may make progress (idle, woken by the socket, upstream finished).
#[derive(Debug, Default)]
pub(crate) struct TcpWriter {
    outbox: Outbox,
    /// Upstream finished: shut writing down once `outbox` is empty.
    finishing: bool,
    /// Writing is shut down.
    shut_down: bool,
    /// Bytes written so far.
    written: u64,
}

impl TcpWriter {
    /// Take the chunk pushed at `inlet`. While the batch has room, gather
    /// (pull again, write when the island has nothing else to do) and
    /// return `false`; `true` when the batch is full and the stage should
    /// [`poll`](Self::poll) now.
    pub(crate) fn push(
        &mut self,
        inlet: Inlet<Bytes>,
        ctx: &mut StageContext<'_>,
    ) -> Result<bool, StreamError> {
        let chunk = ctx.grab(inlet)?;
        if chunk.is_empty() {
            ctx.pull(inlet)?;
            return Ok(false);
        }
        self.outbox.push(&chunk);
        if self.outbox.has_room() {
            // Gather more; write when the island has nothing else to do.
            ctx.request_idle_callback();
            ctx.pull(inlet)?;
            return Ok(false);
        }
        Ok(true)
    }

    /// Upstream finished (or was never there): shut writing down once
    /// what waits is written.
    pub(crate) fn finish(&mut self) {
        self.finishing = true;
    }

    /// Whether writing is shut down.
    pub(crate) fn is_shut_down(&self) -> bool {
        self.shut_down
    }

    /// Bytes written so far.
    pub(crate) fn written(&self) -> u64 {
        self.written
    }

    /// Write what waits, pull at `inlet` while the batch has room, and
    /// once upstream finished and everything is written, shut writing
    /// down: `Some` with the shutdown's result the one time it ends,
    /// `None` otherwise. A failed write fails with an [`IoError`]
    /// (`"write"`).
    pub(crate) fn poll<W: AsyncWrite + Unpin>(
        &mut self,
        writer: &mut W,
        cx: &mut Context<'_>,
        inlet: Inlet<Bytes>,
        ctx: &mut StageContext<'_>,
    ) -> Result<Option<std::io::Result<()>>, StreamError> {
        if let Poll::Ready(Err(error)) = self.outbox.poll_write_all(writer, cx, &mut self.written) {
            return Err(io_error("write", &error));
        }
        if self.outbox.has_room() && !ctx.is_closed(inlet) && !ctx.has_been_pulled(inlet) {
            ctx.pull(inlet)?;
        }
        if self.finishing
            && self.outbox.is_empty()
            && !self.shut_down
            && let Poll::Ready(result) = Pin::new(&mut *writer).poll_shutdown(cx)
        {
            self.shut_down = true;
            return Ok(Some(result));
        }
        Ok(None)
    }
}

/// How many bytes are gathered before the stage stops pulling and
/// writes (`weir-bench io`'s TCP echo: one write per 1 KiB message made
/// the system calls the bottleneck).
const WRITE_BATCH: usize = 64 * 1024;

/// Bytes waiting to be written.
#[derive(Debug, Default)]
struct Outbox {
    buf: BytesMut,
}

impl Outbox {
    /// Queue `chunk`.
    fn push(&mut self, chunk: &[u8]) {
        self.buf.extend_from_slice(chunk);
    }

    /// Whether there is room for more before writing.
    fn has_room(&self) -> bool {
        self.buf.len() < WRITE_BATCH
    }

    fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Write what waits; `Ready(Ok(n))` once all of it (`n` bytes this
    /// call) is written.
    fn poll_write_all<W: AsyncWrite + Unpin>(
        &mut self,
        writer: &mut W,
        cx: &mut Context<'_>,
        written: &mut u64,
    ) -> Poll<std::io::Result<()>> {
        while !self.buf.is_empty() {
            match Pin::new(&mut *writer).poll_write(cx, &self.buf) {
                Poll::Ready(Ok(0)) => {
                    return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()));
                }
                Poll::Ready(Ok(n)) => {
                    self.buf.advance(n);
                    *written += n as u64;
                }
                Poll::Ready(Err(error)) => return Poll::Ready(Err(error)),
                Poll::Pending => return Poll::Pending,
            }
        }
        Poll::Ready(Ok(()))
    }
}
