//! Frames ended by a delimiter (`Framing::delimiter`).

use std::ops::ControlFlow;

use bytes::Bytes;

use super::stage::{Decoder, Found, Joined};
use crate::io::FramingError;

#[derive(Debug, Clone)]
pub(crate) struct Delimiter {
    pub(crate) delimiter: Bytes,
    pub(crate) maximum: usize,
    pub(crate) allow_truncation: bool,
    /// How many bytes from the start are known to hold no delimiter start.
    pub(crate) scanned: usize,
}

impl Decoder for Delimiter {
    fn decode(&mut self, data: Joined<'_>) -> Result<Option<Found>, FramingError> {
        let n = self.delimiter.len();
        match data.find(&self.delimiter, self.scanned) {
            Some(end) if end <= self.maximum => {
                self.scanned = 0;
                Ok(Some(Found {
                    frame: 0..end,
                    consumed: end + n,
                }))
            }
            Some(_) => Err(self.too_long()),
            None => {
                // A delimiter may still start in the last n - 1 bytes.
                self.scanned = data.len().saturating_sub(n - 1);
                if self.scanned > self.maximum {
                    return Err(self.too_long());
                }
                Ok(None)
            }
        }
    }

    /// One-byte delimiters (lines): one `memchr` pass over the chunk, a
    /// slice per frame, with none of `decode`'s per-frame bookkeeping
    /// (`weir-bench io`). A frame over the maximum stops it: `decode`
    /// reports that one.
    fn frames_within(
        &mut self,
        chunk: &Bytes,
        each: &mut impl FnMut(Bytes) -> ControlFlow<()>,
    ) -> (usize, ControlFlow<()>) {
        let &[delimiter] = &self.delimiter[..] else {
            return (0, ControlFlow::Continue(()));
        };
        if self.scanned != 0 {
            return (0, ControlFlow::Continue(())); // not where decode left off
        }
        let mut start = 0;
        for end in memchr::memchr_iter(delimiter, chunk) {
            if end - start > self.maximum {
                break;
            }
            let frame = chunk.slice(start..end);
            start = end + 1;
            if each(frame).is_break() {
                return (start, ControlFlow::Break(()));
            }
        }
        (start, ControlFlow::Continue(()))
    }

    fn finish(&mut self, data: Joined<'_>) -> Result<Option<Found>, FramingError> {
        if !self.allow_truncation {
            return Err(FramingError::Truncated {
                offset: 0,
                length: data.len(),
            });
        }
        if data.len() > self.maximum {
            return Err(self.too_long());
        }
        Ok(Some(Found {
            frame: 0..data.len(),
            consumed: data.len(),
        }))
    }
}

impl Delimiter {
    fn too_long(&self) -> FramingError {
        FramingError::FrameTooLong {
            offset: 0,
            maximum: self.maximum,
        }
    }
}
