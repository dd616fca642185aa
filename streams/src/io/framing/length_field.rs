//! Frames that start with their length (`Framing::length_field`), and the
//! simple framing protocol's encoder.

use std::sync::Arc;

use bytes::{BufMut, Bytes, BytesMut};

use super::stage::{Decoder, Found, Joined};
use crate::io::FramingError;

/// The byte order of a length field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ByteOrder {
    /// Most significant byte first (network order).
    #[default]
    BigEndian,
    /// Least significant byte first.
    LittleEndian,
}

/// From the bytes before the length field and the field's value to the
/// whole frame's size.
pub(crate) type FrameSize = Arc<dyn Fn(&[u8], u64) -> usize + Send + Sync>;

#[derive(Clone)]
pub(crate) struct LengthField {
    pub(crate) field_length: usize,
    pub(crate) field_offset: usize,
    pub(crate) maximum: usize,
    pub(crate) order: ByteOrder,
    /// `None`: the frame is the header plus `length` bytes.
    pub(crate) frame_size: Option<FrameSize>,
}

impl std::fmt::Debug for LengthField {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LengthField")
            .field("field_length", &self.field_length)
            .field("field_offset", &self.field_offset)
            .field("maximum", &self.maximum)
            .field("order", &self.order)
            .finish_non_exhaustive()
    }
}

impl LengthField {
    fn header(&self) -> usize {
        self.field_offset + self.field_length
    }
}

impl Decoder for LengthField {
    fn decode(&mut self, data: Joined<'_>) -> Result<Option<Found>, FramingError> {
        let header = self.header();
        if data.len() < header {
            return Ok(None);
        }
        let mut length = 0u64;
        for i in 0..self.field_length {
            let byte = u64::from(data.at(self.field_offset + i));
            length = match self.order {
                ByteOrder::BigEndian => (length << 8) | byte,
                ByteOrder::LittleEndian => length | (byte << (8 * i)),
            };
        }
        let size = match &self.frame_size {
            None => usize::try_from(length)
                .ok()
                .and_then(|l| l.checked_add(header))
                .unwrap_or(usize::MAX),
            Some(compute) => {
                let prefix: Vec<u8> = (0..self.field_offset).map(|i| data.at(i)).collect();
                let size = compute(&prefix, length);
                if size < header {
                    return Err(FramingError::MalformedLength { offset: 0, size });
                }
                size
            }
        };
        if size > self.maximum {
            return Err(FramingError::FrameTooLong {
                offset: 0,
                maximum: self.maximum,
            });
        }
        if data.len() < size {
            return Ok(None);
        }
        Ok(Some(Found {
            frame: 0..size,
            consumed: size,
        }))
    }

    fn finish(&mut self, data: Joined<'_>) -> Result<Option<Found>, FramingError> {
        Err(FramingError::Truncated {
            offset: 0,
            length: data.len(),
        })
    }
}

/// The simple framing protocol's decoder: a 4-byte big-endian length,
/// then the message; emits the message alone.
#[derive(Debug, Clone)]
pub(crate) struct SimpleDecoder {
    pub(crate) inner: LengthField,
}

impl Decoder for SimpleDecoder {
    fn decode(&mut self, data: Joined<'_>) -> Result<Option<Found>, FramingError> {
        Ok(self.inner.decode(data)?.map(strip_header))
    }

    fn finish(&mut self, data: Joined<'_>) -> Result<Option<Found>, FramingError> {
        Ok(self.inner.finish(data)?.map(strip_header))
    }
}

fn strip_header(found: Found) -> Found {
    Found {
        frame: found.frame.start + 4..found.frame.end,
        consumed: found.consumed,
    }
}

/// Prefix `message` with its length as 4 big-endian bytes.
pub(crate) fn encode_simple(message: &Bytes) -> Bytes {
    let mut out = BytesMut::with_capacity(4 + message.len());
    // The caller checked `message.len() <= maximum <= u32::MAX`.
    out.put_u32(u32::try_from(message.len()).unwrap_or(u32::MAX));
    out.extend_from_slice(message);
    out.freeze()
}
