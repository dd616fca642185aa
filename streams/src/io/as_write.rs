//! `StreamConverters::as_write`: a source that materializes a blocking
//! [`std::io::Write`].

use std::future::Future;
use std::io::Write;
use std::pin::pin;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::Thread;

use bytes::Bytes;

use super::StreamConverters;
use crate::blueprint::Source;
use crate::error::ArgumentError;
use crate::queue::SourceQueue;
use crate::sync::Arc;

impl StreamConverters {
    /// A source whose materialized value is a blocking [`std::io::Write`]:
    /// each `write` becomes one chunk of the stream (a copy of the bytes),
    /// waiting while `buffer` chunks are queued and not yet taken
    /// (back-pressure). Dropping the writer completes the stream; a write
    /// after the stream ended fails with `BrokenPipe`.
    ///
    /// Do not write on a thread the stream itself needs (an actor of the
    /// same system's pool).
    ///
    /// # Errors
    ///
    /// [`ArgumentError::Zero`] for a `buffer` of 0.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::io::Write;
    /// use weir_streams::io::StreamConverters;
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("as-write").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let (mut writer, bytes) = StreamConverters::as_write(4)?
    ///     .to_mat(Sink::fold(0usize, |n, chunk: bytes::Bytes| n + chunk.len()), Keep::both)
    ///     .run(&materializer);
    /// write!(writer, "{} and {}", 1, 2).unwrap();
    /// drop(writer); // completes the stream
    /// assert_eq!(bytes.wait(), Ok(7));
    /// system.terminate().wait().unwrap();
    /// # Ok::<(), weir_streams::ArgumentError>(())
    /// ```
    pub fn as_write(buffer: usize) -> Result<Source<Bytes, StreamWriter>, ArgumentError> {
        Ok(Source::queue(buffer)?.map_materialized_value(|queue| StreamWriter { queue }))
    }
}

/// The writer [`StreamConverters::as_write`] materializes.
#[derive(Debug)]
pub struct StreamWriter {
    queue: SourceQueue<Bytes>,
}

/// Wakes the thread blocked in a write.
struct Unpark(Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

impl Write for StreamWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
        let mut cx = Context::from_waker(&waker);
        let mut send = pin!(self.queue.send(Bytes::copy_from_slice(buf)));
        loop {
            match send.as_mut().poll(&mut cx) {
                Poll::Ready(Ok(())) => return Ok(buf.len()),
                Poll::Ready(Err(_)) => return Err(std::io::ErrorKind::BrokenPipe.into()),
                Poll::Pending => std::thread::park(),
            }
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for StreamWriter {
    fn drop(&mut self) {
        self.queue.complete();
    }
}
