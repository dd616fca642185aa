//! Top-level JSON objects out of a stream of arrays or concatenated
//! objects (`JsonFraming::object_scanner`).

use super::stage::{Decoder, Found, Joined};
use crate::io::FramingError;

#[derive(Debug, Clone)]
pub(crate) struct JsonObjects {
    pub(crate) maximum: usize,
    /// How far the scan has gone, from the start of the unconsumed bytes.
    pub(crate) pos: usize,
    /// Where the current object starts, once its `{` was seen.
    pub(crate) start: Option<usize>,
    pub(crate) depth: usize,
    pub(crate) in_string: bool,
    pub(crate) escaped: bool,
}

impl JsonObjects {
    pub(crate) fn new(maximum: usize) -> Self {
        Self {
            maximum,
            pos: 0,
            start: None,
            depth: 0,
            in_string: false,
            escaped: false,
        }
    }
}

impl Decoder for JsonObjects {
    fn decode(&mut self, data: Joined<'_>) -> Result<Option<Found>, FramingError> {
        while self.pos < data.len() {
            let at = self.pos;
            let byte = data.at(at);
            self.pos += 1;
            if self.in_string {
                match byte {
                    _ if self.escaped => self.escaped = false,
                    b'\\' => self.escaped = true,
                    b'"' => self.in_string = false,
                    _ => {}
                }
            } else if self.depth == 0 {
                // Between objects: separators and array brackets only.
                match byte {
                    b'{' => {
                        self.start = Some(at);
                        self.depth = 1;
                    }
                    b'[' | b']' | b',' | b' ' | b'\t' | b'\r' | b'\n' => {}
                    _ => {
                        return Err(FramingError::InvalidByte {
                            offset: at as u64,
                            byte,
                        });
                    }
                }
            } else {
                match byte {
                    b'"' => self.in_string = true,
                    b'{' => self.depth += 1,
                    b'}' => {
                        self.depth -= 1;
                        if self.depth == 0 {
                            let start = self.start.take().unwrap_or(0);
                            self.pos = 0;
                            return Ok(Some(Found {
                                frame: start..at + 1,
                                consumed: at + 1,
                            }));
                        }
                    }
                    _ => {}
                }
            }
            // The object, or the separators before one.
            if self.pos - self.start.unwrap_or(0) > self.maximum {
                return Err(FramingError::FrameTooLong {
                    offset: self.start.unwrap_or(0) as u64,
                    maximum: self.maximum,
                });
            }
        }
        Ok(None)
    }

    fn finish(&mut self, _: Joined<'_>) -> Result<Option<Found>, FramingError> {
        match self.start {
            Some(start) => Err(FramingError::Truncated {
                offset: start as u64,
                length: self.pos - start,
            }),
            // Only separators left.
            None => Ok(None),
        }
    }
}
