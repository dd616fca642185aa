//! [`FileIO`]: files as sources and sinks of byte chunks.

use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;

use super::read_source::{Opened, ReadSource, read_source};
use super::write_sink::{WriteSink, write_sink};
use super::{IoError, IoResult};
use crate::blueprint::{Sink, Source};
use crate::completion::Completion;
use crate::error::ArgumentError;

/// Files as byte streams. Each stage opens its file when the stream
/// starts, on its own thread ([`Attributes::blocking`](crate::Attributes::blocking)),
/// and materializes a [`Completion<IoResult>`](IoResult) with the byte
/// count; a failed open, read or write fails the stream and the
/// completion with an [`IoError`] naming the operation, the path and the
/// `std::io::ErrorKind`.
///
/// # Examples
///
/// ```
/// use weir_streams::io::{Bytes, FileIO};
/// use weir_streams::prelude::*;
///
/// let system = weir_actor::ActorSystem::new("files").unwrap();
/// let materializer = Materializer::new(&system);
/// let path = std::env::temp_dir().join(format!("weir-fileio-doc-{}", std::process::id()));
///
/// let written = Source::from_iter(vec![Bytes::from_static(b"hello "), Bytes::from_static(b"file")])
///     .run_with(FileIO::to_path(&path, FileIO::write_options()), &materializer);
/// assert_eq!(written.wait().unwrap().count, 10);
///
/// let (read, chunks) = FileIO::from_path(&path, 4)?
///     .to_mat(Sink::collect(), Keep::both)
///     .run(&materializer);
/// assert_eq!(chunks.wait().unwrap().concat(), b"hello file");
/// assert_eq!(read.wait().unwrap().count, 10);
/// # std::fs::remove_file(&path).unwrap();
/// system.terminate().wait().unwrap();
/// # Ok::<(), weir_streams::ArgumentError>(())
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub struct FileIO;

impl FileIO {
    /// The file at `path`, in chunks of at most `chunk_size` bytes (a
    /// limit, not an allocation: one read takes at most 8 MiB, so a huge
    /// `chunk_size` reads in 8 MiB chunks). The stream completes with the
    /// last chunk; a path that cannot be opened, or is a directory, fails
    /// it when it starts, before anything is requested.
    ///
    /// # Errors
    ///
    /// [`ArgumentError::Zero`] for a `chunk_size` of 0.
    pub fn from_path(
        path: impl AsRef<Path>,
        chunk_size: usize,
    ) -> Result<Source<Bytes, Completion<IoResult>>, ArgumentError> {
        Self::from_path_at(path, chunk_size, 0)
    }

    /// The file at `path` from byte `start_position` on, in chunks of at
    /// most `chunk_size` bytes (as [`from_path`](Self::from_path)).
    ///
    /// # Errors
    ///
    /// [`ArgumentError::Zero`] for a `chunk_size` of 0.
    pub fn from_path_at(
        path: impl AsRef<Path>,
        chunk_size: usize,
        start_position: u64,
    ) -> Result<Source<Bytes, Completion<IoResult>>, ArgumentError> {
        if chunk_size == 0 {
            return Err(ArgumentError::Zero {
                argument: "chunk_size",
            });
        }
        let path: PathBuf = path.as_ref().to_owned();
        let at = path.clone();
        let open = move || {
            let failed = |e: &std::io::Error| IoError::new("open", Some(at.clone()), e);
            let mut file = File::open(&at).map_err(|e| failed(&e))?;
            let metadata = file.metadata().map_err(|e| failed(&e))?;
            // A directory opens, but every read of it fails: fail at start.
            if metadata.is_dir() {
                return Err(failed(&std::io::ErrorKind::IsADirectory.into()));
            }
            if start_position > 0 {
                file.seek(SeekFrom::Start(start_position))
                    .map_err(|e| IoError::new("seek", Some(at.clone()), &e))?;
            }
            // A regular file's size says where its end is (a device or a
            // pipe has none).
            let length = metadata
                .is_file()
                .then(|| metadata.len().saturating_sub(start_position));
            Ok(Opened {
                reader: Box::new(file),
                length,
            })
        };
        Ok(read_source(ReadSource {
            name: "file-source",
            open: Arc::new(open),
            chunk_size,
            path: Some(path),
        }))
    }

    /// A sink writing every chunk to the file at `path`, opened with
    /// `options` (see [`write_options`](Self::write_options) and
    /// [`append_options`](Self::append_options)).
    pub fn to_path(
        path: impl AsRef<Path>,
        options: OpenOptions,
    ) -> Sink<Bytes, Completion<IoResult>> {
        let path: PathBuf = path.as_ref().to_owned();
        let at = path.clone();
        let open = move || {
            let file = options
                .open(&at)
                .map_err(|e| IoError::new("open", Some(at.clone()), &e))?;
            // Small chunks are gathered into larger writes; a chunk larger
            // than the buffer is written directly.
            let writer = std::io::BufWriter::with_capacity(64 * 1024, file);
            Ok(Box::new(writer) as Box<dyn std::io::Write + Send>)
        };
        write_sink(WriteSink {
            name: "file-sink",
            open: Arc::new(open),
            path: Some(path),
        })
    }

    /// Create the file or truncate it, and write.
    pub fn write_options() -> OpenOptions {
        let mut options = OpenOptions::new();
        options.write(true).create(true).truncate(true);
        options
    }

    /// Create the file if needed, and append.
    pub fn append_options() -> OpenOptions {
        let mut options = OpenOptions::new();
        options.append(true).create(true);
        options
    }
}
