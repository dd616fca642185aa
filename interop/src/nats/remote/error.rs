//! What can go wrong with remote actors: [`RemoteFailure`] (refused by the
//! receiving system), [`RemoteError`] (a local call), [`RemoteAskError`].

use std::fmt;
use std::time::Duration;

use bytes::Bytes;
use serde::{Deserialize, Serialize};

use crate::nats::{BoxError, NatsError};

/// Why a remote message was refused by the receiving system (an ask's
/// error, and the reason of the dead letter published there).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum RemoteFailure {
    /// No actor is exposed at this path.
    UnknownPath(String),
    /// The actor takes another message type.
    WrongType {
        /// The type the exposed actor takes.
        expected: String,
        /// The type that was sent.
        got: String,
    },
    /// The payload did not decode.
    Undecodable(String),
    /// The actor did not answer the ask (it stopped, or timed out).
    NoAnswer(String),
    /// The actor is exposed for tells, not asks (or the reverse).
    WrongKind(String),
}

impl fmt::Display for RemoteFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownPath(path) => write!(f, "no actor exposed at /user/{path}"),
            Self::WrongType { expected, got } => {
                write!(f, "the actor takes {expected}, not {got}")
            }
            Self::Undecodable(error) => write!(f, "the message did not decode: {error}"),
            Self::NoAnswer(error) => write!(f, "the actor did not answer: {error}"),
            Self::WrongKind(what) => write!(f, "{what}"),
        }
    }
}

impl std::error::Error for RemoteFailure {}

/// What the receiving system publishes as the dead letter of a remote
/// message it could not deliver.
#[derive(Debug, Clone)]
pub struct RemoteLetter {
    /// The subject it came on.
    pub subject: String,
    /// Why it was not delivered.
    pub failure: RemoteFailure,
    /// The raw payload.
    pub payload: Bytes,
}

/// Why a remote-actor call failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum RemoteError {
    /// Not a `weir+nats://<system>/user/<path>` URI.
    InvalidUri(String),
    /// Another actor is already exposed at this path.
    PathTaken(String),
    /// A message could not be encoded.
    Encode(String),
    /// NATS failed (subscribing, connecting).
    Nats(NatsError),
    /// The local actor system refused (it is terminating).
    System(String),
}

impl fmt::Display for RemoteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidUri(uri) => {
                write!(f, "not a weir+nats://<system>/user/<path> URI: {uri}")
            }
            Self::PathTaken(path) => write!(f, "an actor is already exposed at /user/{path}"),
            Self::Encode(error) => write!(f, "the message did not encode: {error}"),
            Self::Nats(error) => write!(f, "{error}"),
            Self::System(error) => write!(f, "the actor system refused: {error}"),
        }
    }
}

impl std::error::Error for RemoteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Nats(error) => Some(error),
            _ => None,
        }
    }
}

/// Why a remote ask failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum RemoteAskError {
    /// No answer within the time-out.
    Timeout(Duration),
    /// No system serves that actor's subject (it is not running).
    NoResponders,
    /// The receiving system refused the question.
    Remote(RemoteFailure),
    /// The question did not encode.
    Encode(String),
    /// The answer did not decode into the expected type.
    Decode(String),
    /// NATS failed.
    Nats(BoxError),
}

impl fmt::Display for RemoteAskError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Timeout(after) => write!(f, "remote ask timed out after {after:?}"),
            Self::NoResponders => write!(f, "no system serves that actor"),
            Self::Remote(failure) => write!(f, "remote ask refused: {failure}"),
            Self::Encode(error) => write!(f, "the question did not encode: {error}"),
            Self::Decode(error) => write!(f, "the answer did not decode: {error}"),
            Self::Nats(error) => write!(f, "nats: {error}"),
        }
    }
}

impl std::error::Error for RemoteAskError {}
