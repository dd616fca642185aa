//! The errors byte streams fail with: [`FramingError`] and [`IoError`].

use std::fmt;
use std::path::PathBuf;

use crate::error::{ErrorKind, StreamError};

/// Why a framing stage failed the stream, and where: `offset` is the
/// position, counted in bytes from the start of the stream, of the frame
/// (or byte) at fault.
///
/// A stream failed by a framing stage carries it as its
/// [`ErrorKind::Custom`] value; [`FramingError::of`] finds it.
///
/// # Examples
///
/// ```
/// use weir_streams::io::FramingError;
///
/// let error = FramingError::FrameTooLong { offset: 12, maximum: 8 };
/// assert_eq!(error.offset(), 12);
/// assert!(error.to_string().contains("longer than the maximum of 8"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FramingError {
    /// The frame starting at `offset` is longer than `maximum` bytes.
    FrameTooLong {
        /// Where the frame starts.
        offset: u64,
        /// The longest frame allowed.
        maximum: usize,
    },
    /// The stream ended inside the frame starting at `offset`.
    Truncated {
        /// Where the unfinished frame starts.
        offset: u64,
        /// How many of its bytes arrived.
        length: usize,
    },
    /// The length field of the frame starting at `offset` gives a frame
    /// shorter than its own header.
    MalformedLength {
        /// Where the frame starts.
        offset: u64,
        /// The frame size the header gave.
        size: usize,
    },
    /// A byte that cannot be there: JSON outside an object at the top
    /// level.
    InvalidByte {
        /// Where the byte is.
        offset: u64,
        /// The byte.
        byte: u8,
    },
    /// A message to encode is longer than the protocol's maximum.
    MessageTooLong {
        /// The message's position in the stream of messages (from 0).
        offset: u64,
        /// Its length.
        length: usize,
        /// The longest allowed.
        maximum: usize,
    },
}

impl FramingError {
    /// Where the error is, in bytes from the start of the stream (for
    /// [`MessageTooLong`](Self::MessageTooLong), the message's index).
    pub fn offset(&self) -> u64 {
        match *self {
            Self::FrameTooLong { offset, .. }
            | Self::Truncated { offset, .. }
            | Self::MalformedLength { offset, .. }
            | Self::InvalidByte { offset, .. }
            | Self::MessageTooLong { offset, .. } => offset,
        }
    }

    /// The framing error a stream failed with, if it failed with one.
    ///
    /// ```
    /// use weir_streams::StreamError;
    /// use weir_streams::io::FramingError;
    ///
    /// let failed = StreamError::custom(FramingError::Truncated { offset: 3, length: 2 });
    /// assert_eq!(FramingError::of(&failed), Some(&FramingError::Truncated { offset: 3, length: 2 }));
    /// assert_eq!(FramingError::of(&StreamError::msg("other")), None);
    /// ```
    pub fn of(error: &StreamError) -> Option<&FramingError> {
        custom(error)
    }

    /// The same error, `base` bytes further into the stream.
    pub(crate) fn shifted(mut self, base: u64) -> Self {
        match &mut self {
            Self::FrameTooLong { offset, .. }
            | Self::Truncated { offset, .. }
            | Self::MalformedLength { offset, .. }
            | Self::InvalidByte { offset, .. } => *offset += base,
            Self::MessageTooLong { .. } => {}
        }
        self
    }
}

impl fmt::Display for FramingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::FrameTooLong { offset, maximum } => write!(
                f,
                "the frame at byte {offset} is longer than the maximum of {maximum} bytes"
            ),
            Self::Truncated { offset, length } => write!(
                f,
                "the stream ended inside the frame at byte {offset} ({length} bytes of it arrived)"
            ),
            Self::MalformedLength { offset, size } => write!(
                f,
                "the length field of the frame at byte {offset} gives a size of {size}, shorter than its header"
            ),
            Self::InvalidByte { offset, byte } => {
                write!(f, "invalid byte {byte:#04x} at byte {offset}")
            }
            Self::MessageTooLong {
                offset,
                length,
                maximum,
            } => write!(
                f,
                "message {offset} is {length} bytes, longer than the maximum of {maximum}"
            ),
        }
    }
}

impl std::error::Error for FramingError {}

/// Why an IO stage (a file, a reader or writer) failed the stream: the
/// [`std::io::ErrorKind`], what the stage was doing, the path if there
/// is one, and the error's message.
///
/// The sink's or source's completion fails with it, and so does the
/// stream (as its [`ErrorKind::Custom`] value; [`IoError::of`] finds it).
///
/// # Examples
///
/// ```
/// use weir_streams::io::IoError;
///
/// let missing = std::fs::File::open("/no/such/file").unwrap_err();
/// let error = IoError::new("open", Some("/no/such/file".into()), &missing);
/// assert_eq!(error.kind(), std::io::ErrorKind::NotFound);
/// assert!(error.to_string().starts_with("open /no/such/file:"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IoError {
    kind: std::io::ErrorKind,
    operation: &'static str,
    path: Option<PathBuf>,
    message: String,
}

impl IoError {
    /// An error of `operation` (`"open"`, `"read"`, `"write"`, ...) on
    /// `path`, from `error`.
    pub fn new(operation: &'static str, path: Option<PathBuf>, error: &std::io::Error) -> Self {
        Self {
            kind: error.kind(),
            operation,
            path,
            message: error.to_string(),
        }
    }

    /// The kind of the `std::io::Error`.
    pub fn kind(&self) -> std::io::ErrorKind {
        self.kind
    }

    /// What the stage was doing: `"open"`, `"seek"`, `"read"`, `"write"`, `"flush"`.
    pub fn operation(&self) -> &'static str {
        self.operation
    }

    /// The file, for a file stage.
    pub fn path(&self) -> Option<&std::path::Path> {
        self.path.as_deref()
    }

    /// The IO error a stream failed with, if it failed with one.
    pub fn of(error: &StreamError) -> Option<&IoError> {
        custom(error)
    }
}

impl fmt::Display for IoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.path {
            Some(path) => write!(f, "{} {}: {}", self.operation, path.display(), self.message),
            None => write!(f, "{}: {}", self.operation, self.message),
        }
    }
}

impl std::error::Error for IoError {}

fn custom<E: std::error::Error + 'static>(error: &StreamError) -> Option<&E> {
    match error.kind() {
        ErrorKind::Custom(e) => e.downcast_ref::<E>(),
        _ => None,
    }
}
