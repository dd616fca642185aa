//! [`StreamRefError`]: why a stream ref's end failed.

use std::fmt;
use std::time::Duration;

use crate::nats::NatsError;

/// Why one end of a stream ref failed; its stream fails with it as
/// `StreamError::custom(StreamRefError)` (a source end fails downstream,
/// a sink end cancels upstream with it and reports it in its
/// materialized completion, if it has one).
///
/// # Examples
///
/// ```
/// use weir_interop::nats::StreamRefError;
/// use weir_streams::{ErrorKind, StreamError};
///
/// fn lost_elements(error: &StreamError) -> Option<u64> {
///     match error.kind() {
///         ErrorKind::Custom(custom) => match custom.downcast_ref::<StreamRefError>()? {
///             StreamRefError::SequenceGap { expected, got } => Some(got - expected),
///             _ => None,
///         },
///         _ => None,
///     }
/// }
///
/// let gap = StreamError::custom(StreamRefError::SequenceGap { expected: 3, got: 5 });
/// assert_eq!(lost_elements(&gap), Some(2));
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum StreamRefError {
    /// The ref this end made was not run within the subscription time-out.
    SubscriptionTimeout(Duration),
    /// The ref was run already: a ref runs once.
    AlreadyRun,
    /// The ref was run with another element type than it was made with.
    WrongType {
        /// The type it was made with.
        expected: String,
        /// The type it was run with.
        got: String,
    },
    /// The end that made the ref did not answer within the heartbeat
    /// time-out: it finished or timed out already, or its process is gone.
    OriginNotFound(Duration),
    /// Nothing came from the other end for the heartbeat time-out: its
    /// process died, or the connection is down.
    Unreachable(Duration),
    /// Elements were lost on the way (at-most-once, never silently): the
    /// next element expected was number `expected`, but the producer's
    /// next one was `got` (it sent `got` elements before a keep-alive or
    /// its completion).
    SequenceGap {
        /// The next element number this end expected.
        expected: u64,
        /// The number the producer was at.
        got: u64,
    },
    /// The producer's stream failed with this message.
    RemoteFailed(String),
    /// The consumer's stream failed with this message and cancelled.
    RemoteCancelled(String),
    /// The other end broke the protocol (for example, sent more elements
    /// than it was given credit for).
    Protocol(String),
    /// An element did not encode.
    Encode(String),
    /// What came did not decode (for an element: into this end's type).
    Decode(String),
    /// NATS failed (subscribing to this end's subject).
    Nats(NatsError),
}

impl fmt::Display for StreamRefError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::SubscriptionTimeout(after) => {
                write!(
                    f,
                    "stream ref: not run within its subscription time-out of {after:?}"
                )
            }
            Self::AlreadyRun => write!(f, "stream ref: the ref was run already (a ref runs once)"),
            Self::WrongType { expected, got } => {
                write!(
                    f,
                    "stream ref: made for elements of {expected}, run with {got}"
                )
            }
            Self::OriginNotFound(after) => write!(
                f,
                "stream ref: the end that made the ref did not answer in {after:?} \
                 (it finished, timed out, or its process is gone)"
            ),
            Self::Unreachable(after) => {
                write!(
                    f,
                    "stream ref: nothing heard from the other end for {after:?}"
                )
            }
            Self::SequenceGap { expected, got } => write!(
                f,
                "stream ref: elements lost: expected element {expected}, the producer was at {got}"
            ),
            Self::RemoteFailed(message) => {
                write!(f, "stream ref: the producing stream failed: {message}")
            }
            Self::RemoteCancelled(message) => {
                write!(f, "stream ref: the consuming stream failed: {message}")
            }
            Self::Protocol(what) => write!(f, "stream ref: protocol violation: {what}"),
            Self::Encode(error) => write!(f, "stream ref: an element did not encode: {error}"),
            Self::Decode(error) => write!(f, "stream ref: a message did not decode: {error}"),
            Self::Nats(error) => write!(f, "stream ref: {error}"),
        }
    }
}

impl std::error::Error for StreamRefError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Nats(error) => Some(error),
            _ => None,
        }
    }
}
