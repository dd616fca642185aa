//! [`StreamConverters`]: blocking `std::io` readers and writers as
//! sources and sinks.

use std::io::{Read, Write};
use std::sync::Arc;

use bytes::Bytes;

use super::IoResult;
use super::read_source::{Opened, ReadSource, read_source};
use super::write_sink::{WriteSink, write_sink};
use crate::blueprint::{Sink, Source};
use crate::completion::Completion;
use crate::error::ArgumentError;

/// Blocking `std::io` readers and writers as byte streams. Each stage
/// makes its reader or writer when the stream starts, on its own thread
/// ([`Attributes::blocking`](crate::Attributes::blocking)), and
/// materializes a [`Completion<IoResult>`](IoResult) with the byte count.
///
/// # Examples
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use weir_streams::io::StreamConverters;
/// use weir_streams::prelude::*;
///
/// let system = weir_actor::ActorSystem::new("converters").unwrap();
/// let materializer = Materializer::new(&system);
/// let out = Arc::new(Mutex::new(Vec::new()));
/// let sink_out = Arc::clone(&out);
/// let copied = StreamConverters::from_read(|| std::io::Cursor::new(b"some bytes".to_vec()), 3)?
///     .run_with(StreamConverters::to_write(move || SharedVec(Arc::clone(&sink_out))), &materializer);
/// assert_eq!(copied.wait().unwrap().count, 10);
/// assert_eq!(*out.lock().unwrap(), b"some bytes");
/// system.terminate().wait().unwrap();
///
/// struct SharedVec(Arc<Mutex<Vec<u8>>>);
/// impl std::io::Write for SharedVec {
///     fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
///         self.0.lock().unwrap().write(buf)
///     }
///     fn flush(&mut self) -> std::io::Result<()> {
///         Ok(())
///     }
/// }
/// # Ok::<(), weir_streams::ArgumentError>(())
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub struct StreamConverters;

impl StreamConverters {
    /// The bytes `make_reader()` reads (a fresh reader per run), in
    /// chunks of at most `chunk_size` (at most 8 MiB a read, however
    /// large `chunk_size` is). A reader tells its end only when a read
    /// returns 0, so the stream completes on the pull after the last chunk.
    ///
    /// # Errors
    ///
    /// [`ArgumentError::Zero`] for a `chunk_size` of 0.
    pub fn from_read<R, F>(
        make_reader: F,
        chunk_size: usize,
    ) -> Result<Source<Bytes, Completion<IoResult>>, ArgumentError>
    where
        R: Read + Send + 'static,
        F: Fn() -> R + Send + Sync + 'static,
    {
        if chunk_size == 0 {
            return Err(ArgumentError::Zero {
                argument: "chunk_size",
            });
        }
        let open = move || {
            Ok(Opened {
                reader: Box::new(make_reader()),
                length: None,
            })
        };
        Ok(read_source(ReadSource {
            name: "read-source",
            open: Arc::new(open),
            chunk_size,
            path: None,
        }))
    }

    /// A sink writing every chunk to `make_writer()` (a fresh writer per
    /// run), flushed when the stream completes.
    pub fn to_write<W, F>(make_writer: F) -> Sink<Bytes, Completion<IoResult>>
    where
        W: Write + Send + 'static,
        F: Fn() -> W + Send + Sync + 'static,
    {
        let open = move || Ok(Box::new(make_writer()) as Box<dyn Write + Send>);
        write_sink(WriteSink {
            name: "write-sink",
            open: Arc::new(open),
            path: None,
        })
    }
}
