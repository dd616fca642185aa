//! The framing constructors: [`Framing`] and [`JsonFraming`].

use std::sync::Arc;

use bytes::Bytes;

use super::delimiter::Delimiter;
use super::encoder::SimpleEncoder;
use super::json::JsonObjects;
use super::length_field::{ByteOrder, LengthField, SimpleDecoder};
use super::stage::framing_flow;
use crate::blueprint::Flow;
use crate::error::ArgumentError;
use crate::graph::bidi_flow::BidiFlow;

/// Flows that cut a stream of byte chunks into frames, whatever the
/// chunk boundaries: a frame that lies within one chunk is a slice of it
/// (no copy); only a frame spread over several chunks is copied, once.
///
/// A frame longer than the maximum, a stream that ends inside a frame or
/// a malformed length field fails the stream with a
/// [`FramingError`](crate::io::FramingError) that says which and where.
///
/// # Examples
///
/// ```
/// use bytes::Bytes;
/// use weir_streams::io::Framing;
/// use weir_streams::prelude::*;
///
/// let system = weir_actor::ActorSystem::new("lines").unwrap();
/// let materializer = Materializer::new(&system);
/// let chunks = vec![Bytes::from_static(b"one\ntw"), Bytes::from_static(b"o\nthree\n")];
/// let lines = Source::from_iter(chunks)
///     .via(Framing::delimiter(b"\n", 1024, false)?)
///     .map(|line| String::from_utf8_lossy(&line).into_owned())
///     .run_with(Sink::collect(), &materializer);
/// assert_eq!(lines.wait(), Ok(vec!["one".to_owned(), "two".into(), "three".into()]));
/// system.terminate().wait().unwrap();
/// # Ok::<(), weir_streams::ArgumentError>(())
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub struct Framing;

impl Framing {
    /// Frames ended by `delimiter` (not included in the frame), each at
    /// most `maximum_frame_length` bytes. At the end of the stream, bytes
    /// after the last delimiter make a last frame if `allow_truncation`,
    /// and fail the stream with `FramingError::Truncated` if not.
    ///
    /// # Errors
    ///
    /// [`ArgumentError::Zero`] for an empty delimiter.
    pub fn delimiter(
        delimiter: impl AsRef<[u8]>,
        maximum_frame_length: usize,
        allow_truncation: bool,
    ) -> Result<Flow<Bytes, Bytes>, ArgumentError> {
        let delimiter = Bytes::copy_from_slice(delimiter.as_ref());
        if delimiter.is_empty() {
            return Err(ArgumentError::Zero {
                argument: "delimiter",
            });
        }
        Ok(framing_flow(
            "delimiter-framing",
            Delimiter {
                delimiter,
                maximum: maximum_frame_length,
                allow_truncation,
                scanned: 0,
            },
        ))
    }

    /// Frames that carry their length: `field_length` bytes (1 to 8) at
    /// `field_offset`, in `byte_order`, give the length of what follows
    /// the field. Each frame is emitted whole, header included, and is at
    /// most `maximum_frame_length` bytes.
    ///
    /// # Errors
    ///
    /// [`ArgumentError::Zero`] for a `field_length` of 0 and
    /// [`ArgumentError::Invalid`] for one above 8.
    ///
    /// # Examples
    ///
    /// ```
    /// use bytes::Bytes;
    /// use weir_streams::io::{ByteOrder, Framing};
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("length").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let wire = Bytes::from_static(b"\x00\x02hi\x00\x03yo!");
    /// let frames = Source::single(wire)
    ///     .via(Framing::length_field(2, 0, 64, ByteOrder::BigEndian)?)
    ///     .run_with(Sink::collect(), &materializer);
    /// assert_eq!(frames.wait(), Ok(vec![Bytes::from_static(b"\x00\x02hi"), Bytes::from_static(b"\x00\x03yo!")]));
    /// system.terminate().wait().unwrap();
    /// # Ok::<(), weir_streams::ArgumentError>(())
    /// ```
    pub fn length_field(
        field_length: usize,
        field_offset: usize,
        maximum_frame_length: usize,
        byte_order: ByteOrder,
    ) -> Result<Flow<Bytes, Bytes>, ArgumentError> {
        Ok(framing_flow(
            "length-field-framing",
            length_field(field_length, field_offset, maximum_frame_length, byte_order)?,
        ))
    }

    /// As [`length_field`](Self::length_field), with the frame's whole
    /// size computed by `frame_size` from the bytes before the field and
    /// the field's value (for protocols whose length counts more or less
    /// than the payload). A size smaller than the header fails the stream
    /// with `FramingError::MalformedLength`.
    ///
    /// # Errors
    ///
    /// As [`length_field`](Self::length_field).
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::io::{ByteOrder, Framing};
    ///
    /// // The length field counts the whole frame, its own byte included.
    /// let flow = Framing::length_field_with(1, 0, 256, ByteOrder::BigEndian, |_, length| length as usize)?;
    /// # let _ = flow;
    /// # Ok::<(), weir_streams::ArgumentError>(())
    /// ```
    pub fn length_field_with(
        field_length: usize,
        field_offset: usize,
        maximum_frame_length: usize,
        byte_order: ByteOrder,
        frame_size: impl Fn(&[u8], u64) -> usize + Send + Sync + 'static,
    ) -> Result<Flow<Bytes, Bytes>, ArgumentError> {
        let mut decoder =
            length_field(field_length, field_offset, maximum_frame_length, byte_order)?;
        decoder.frame_size = Some(Arc::new(frame_size));
        Ok(framing_flow("length-field-framing", decoder))
    }

    /// The simple framing protocol's encoder: each message, prefixed with
    /// its length as 4 big-endian bytes. A message longer than
    /// `maximum_message_length` fails the stream with
    /// `FramingError::MessageTooLong`. [`simple_framing_protocol`](Self::simple_framing_protocol)
    /// pairs it with the decoder in one [`BidiFlow`].
    ///
    /// # Examples
    ///
    /// ```
    /// use bytes::Bytes;
    /// use weir_streams::io::Framing;
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("protocol").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let messages = vec![Bytes::from_static(b"hello"), Bytes::new(), Bytes::from_static(b"world")];
    /// let round_trip = Source::from_iter(messages.clone())
    ///     .via(Framing::simple_framing_protocol_encoder(1024))
    ///     .via(Framing::simple_framing_protocol_decoder(1024))
    ///     .run_with(Sink::collect(), &materializer);
    /// assert_eq!(round_trip.wait(), Ok(messages));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn simple_framing_protocol_encoder(maximum_message_length: u32) -> Flow<Bytes, Bytes> {
        Flow::from_graph(SimpleEncoder {
            maximum: maximum_message_length as usize,
        })
    }

    /// The simple framing protocol's decoder: the messages the encoder
    /// framed, without their length prefix. A length above
    /// `maximum_message_length` fails the stream with
    /// `FramingError::FrameTooLong`.
    pub fn simple_framing_protocol_decoder(maximum_message_length: u32) -> Flow<Bytes, Bytes> {
        let inner = LengthField {
            field_length: 4,
            field_offset: 0,
            maximum: (maximum_message_length as usize).saturating_add(4),
            order: ByteOrder::BigEndian,
            frame_size: None,
        };
        framing_flow("simple-framing-decoder", SimpleDecoder { inner })
    }

    /// The simple framing protocol as one protocol layer (Akka's
    /// `Framing.simpleFramingProtocol`): its first direction is the
    /// [encoder](Self::simple_framing_protocol_encoder) (messages to
    /// framed bytes), its second the
    /// [decoder](Self::simple_framing_protocol_decoder) (bytes, in chunks
    /// cut anywhere, to messages), both with `maximum_message_length`.
    ///
    /// # Examples
    ///
    /// Messages down through the layer, over a "wire" that cuts the bytes
    /// into 3-byte chunks, and back up:
    ///
    /// ```
    /// use bytes::Bytes;
    /// use weir_streams::io::Framing;
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("protocol-bidi").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let wire = Flow::<Bytes>::new()
    ///     .map_concat(|b: Bytes| b.chunks(3).map(Bytes::copy_from_slice).collect::<Vec<_>>());
    /// let messages = vec![Bytes::from_static(b"hello"), Bytes::from_static(b"world")];
    /// let round_trip = Source::from_iter(messages.clone())
    ///     .via(Framing::simple_framing_protocol(1024).join(wire))
    ///     .run_with(Sink::collect(), &materializer);
    /// assert_eq!(round_trip.wait(), Ok(messages));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn simple_framing_protocol(
        maximum_message_length: u32,
    ) -> BidiFlow<Bytes, Bytes, Bytes, Bytes> {
        BidiFlow::from_flows(
            Self::simple_framing_protocol_encoder(maximum_message_length),
            Self::simple_framing_protocol_decoder(maximum_message_length),
        )
    }
}

fn length_field(
    field_length: usize,
    field_offset: usize,
    maximum: usize,
    order: ByteOrder,
) -> Result<LengthField, ArgumentError> {
    if field_length == 0 {
        return Err(ArgumentError::Zero {
            argument: "field_length",
        });
    }
    if field_length > 8 {
        return Err(ArgumentError::Invalid {
            argument: "field_length",
            reason: "a length field is at most 8 bytes",
        });
    }
    Ok(LengthField {
        field_length,
        field_offset,
        maximum,
        order,
        frame_size: None,
    })
}

/// JSON framing: each top-level object of a stream of JSON arrays or
/// concatenated objects, as its own frame.
///
/// # Examples
///
/// ```
/// use bytes::Bytes;
/// use weir_streams::io::JsonFraming;
/// use weir_streams::prelude::*;
///
/// let system = weir_actor::ActorSystem::new("json").unwrap();
/// let materializer = Materializer::new(&system);
/// let text = Bytes::from_static(br#"[{"a":1}, {"b":"}"}]"#);
/// let objects = Source::single(text)
///     .via(JsonFraming::object_scanner(1024))
///     .run_with(Sink::collect(), &materializer);
/// assert_eq!(objects.wait(), Ok(vec![Bytes::from_static(br#"{"a":1}"#), Bytes::from_static(br#"{"b":"}"}"#)]));
/// system.terminate().wait().unwrap();
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub struct JsonFraming;

impl JsonFraming {
    /// Emits each top-level JSON object, skipping the whitespace, commas
    /// and array brackets around them; objects are not parsed beyond
    /// their braces and strings. An object longer than `maximum_object_length`
    /// fails the stream with `FramingError::FrameTooLong`, anything else
    /// at the top level with `FramingError::InvalidByte`, and a stream
    /// that ends inside an object with `FramingError::Truncated`.
    pub fn object_scanner(maximum_object_length: usize) -> Flow<Bytes, Bytes> {
        framing_flow(
            "json-object-scanner",
            JsonObjects::new(maximum_object_length),
        )
    }
}
