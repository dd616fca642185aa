//! Framing: flows that cut byte chunks into frames by a delimiter, a
//! length field, the simple framing protocol or JSON objects.

mod api;
mod delimiter;
mod encoder;
mod fused;
mod json;
mod length_field;
mod stage;

pub use api::{Framing, JsonFraming};
pub use length_field::ByteOrder;
