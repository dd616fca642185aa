//! Byte streams on [`bytes::Bytes`]: framing, files, readers and writers,
//! compression.
//!
//! - [`Framing`] and [`JsonFraming`] cut chunks into frames (slices of
//!   the chunks where a frame lies within one), failing with a
//!   [`FramingError`] that says what and where.
//!
//! IO stages block, so each carries [`Attributes::blocking`](crate::Attributes::blocking):
//! its island runs on a thread of its own, never on the shared pool.

mod error;
mod framing;

pub use bytes::{Bytes, BytesMut};
pub use error::{FramingError, IoError};
pub use framing::{ByteOrder, Framing, JsonFraming};
