//! The write side both TCP stages share: small chunks are gathered and
//! written together when the island runs out of other work, so a stream
//! of small messages does not cost one system call each.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Buf, BytesMut};
use tokio::io::AsyncWrite;

/// How many bytes are gathered before the stage stops pulling and
/// writes (`weir-bench io`'s TCP echo: one write per 1 KiB message made
/// the system calls the bottleneck).
pub(crate) const WRITE_BATCH: usize = 64 * 1024;

/// Bytes waiting to be written.
#[derive(Debug, Default)]
pub(crate) struct Outbox {
    buf: BytesMut,
}

impl Outbox {
    /// Queue `chunk`.
    pub(crate) fn push(&mut self, chunk: &[u8]) {
        self.buf.extend_from_slice(chunk);
    }

    /// Whether there is room for more before writing.
    pub(crate) fn has_room(&self) -> bool {
        self.buf.len() < WRITE_BATCH
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Write what waits; `Ready(Ok(n))` once all of it (`n` bytes this
    /// call) is written.
    pub(crate) fn poll_write_all<W: AsyncWrite + Unpin>(
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
