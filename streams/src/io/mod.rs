//! Byte streams on [`bytes::Bytes`]: framing, files, readers and writers,
//! compression.
//!
//! - [`Framing`] and [`JsonFraming`] cut chunks into frames (slices of
//!   the chunks where a frame lies within one), failing with a
//!   [`FramingError`] that says what and where.
//! - [`FileIO`] reads and writes files; [`StreamConverters`] turns
//!   `std::io` readers and writers into sources and sinks. Each
//!   materializes a completion with the [`IoResult`] byte count, or an
//!   [`IoError`].
//! - `Compression` (feature `compression`) gzips, gunzips, deflates and
//!   inflates.
//!
//! IO stages block, so each carries [`Attributes::blocking`](crate::Attributes::blocking):
//! its island runs on a thread of its own, never on the shared pool.
//! Override it with `.with_attributes(Attributes::new().with_dispatcher(..))`,
//! say to share a named pool among many files.

mod as_read;
mod as_write;
#[cfg(feature = "compression")]
mod compression;
mod converters;
mod error;
mod file;
mod framing;
mod io_result;
mod read_source;
mod write_sink;

pub use as_read::{DEFAULT_READ_TIMEOUT, StreamReader};
pub use as_write::StreamWriter;
pub use bytes::{Bytes, BytesMut};
#[cfg(feature = "compression")]
pub use compression::{Compression, DEFAULT_LEVEL};
pub use converters::StreamConverters;
pub use error::{FramingError, IoError};
pub use file::FileIO;
pub use framing::{ByteOrder, Framing, JsonFraming};
pub use io_result::IoResult;
