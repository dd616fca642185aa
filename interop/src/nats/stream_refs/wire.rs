//! What the two ends of a stream ref say to each other (postcard, as the
//! remote actors' envelopes), each on the subject of the end it is for.

use serde::{Deserialize, Serialize};

use super::StreamRefError;

/// One message between the ends. The producer sends `Element`s, `Sent`,
/// `Complete` and `Failed`; the consumer `Demand` and `Cancel`; the end
/// that runs a ref sends `Handshake` to the end that made it, which
/// answers `Accepted` or `Refused`.
#[derive(Serialize, Deserialize)]
pub(super) enum Frame<T> {
    /// The runner asks to be the other end: answer on `reply_to`.
    Handshake {
        /// The runner's subject.
        reply_to: String,
        /// The element type it runs the ref with.
        type_name: String,
    },
    /// The origin took the runner as its other end.
    Accepted,
    /// The origin refused the runner.
    Refused(Refusal),
    /// Element number `seq` (from 0).
    Element {
        /// Its sequence number.
        seq: u64,
        /// The element.
        element: T,
    },
    /// The producer may send elements numbered below `up_to` (cumulative,
    /// so a repeat or a late one changes nothing); sent at least once per
    /// heartbeat interval, it is also the consumer's keep-alive.
    Demand {
        /// One past the last element the consumer has room for.
        up_to: u64,
    },
    /// The producer's keep-alive: it has sent `count` elements so far
    /// (after them on the same subject, so fewer received is a gap).
    Sent {
        /// Elements sent.
        count: u64,
    },
    /// The producer's upstream completed after `count` elements.
    Complete {
        /// Elements sent.
        count: u64,
    },
    /// The producer's upstream failed.
    Failed {
        /// The failure's message.
        message: String,
    },
    /// The consumer's downstream cancelled, because of a failure if any.
    Cancel {
        /// The failure's message.
        failure: Option<String>,
    },
}

impl<T> Frame<T> {
    /// The frame's name, for errors.
    pub(super) fn kind(&self) -> &'static str {
        match self {
            Self::Handshake { .. } => "Handshake",
            Self::Accepted => "Accepted",
            Self::Refused(_) => "Refused",
            Self::Element { .. } => "Element",
            Self::Demand { .. } => "Demand",
            Self::Sent { .. } => "Sent",
            Self::Complete { .. } => "Complete",
            Self::Failed { .. } => "Failed",
            Self::Cancel { .. } => "Cancel",
        }
    }

    /// Whether nothing comes after this frame from its sender.
    pub(super) fn is_last(&self) -> bool {
        matches!(
            self,
            Self::Refused(_) | Self::Complete { .. } | Self::Failed { .. } | Self::Cancel { .. }
        )
    }
}

/// Why an origin refused a runner.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) enum Refusal {
    /// Another runner runs the ref already.
    AlreadyRun,
    /// The runner's element type is not the origin's.
    WrongType {
        /// The origin's.
        expected: String,
        /// The runner's.
        got: String,
    },
}

impl From<Refusal> for StreamRefError {
    fn from(refusal: Refusal) -> Self {
        match refusal {
            Refusal::AlreadyRun => Self::AlreadyRun,
            Refusal::WrongType { expected, got } => Self::WrongType { expected, got },
        }
    }
}

/// A frame without an element, encoded.
pub(super) fn encode(frame: &Frame<()>) -> Vec<u8> {
    // A frame of strings and integers always encodes.
    postcard::to_allocvec(frame).expect("a control frame encodes")
}

/// An element frame, encoded.
pub(super) fn encode_element<T: Serialize>(
    seq: u64,
    element: &T,
) -> Result<Vec<u8>, StreamRefError> {
    postcard::to_allocvec(&Frame::Element { seq, element })
        .map_err(|error| StreamRefError::Encode(error.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_frames_decode_as_frames_of_any_element_type() {
        let bytes = encode(&Frame::Demand { up_to: 7 });
        let frame: Frame<String> = postcard::from_bytes(&bytes).expect("decodes");
        assert!(matches!(frame, Frame::Demand { up_to: 7 }));
        let bytes = encode_element(3, &"x".to_string()).expect("encodes");
        let frame: Frame<String> = postcard::from_bytes(&bytes).expect("decodes");
        assert!(matches!(frame, Frame::Element { seq: 3, element } if element == "x"));
    }
}
