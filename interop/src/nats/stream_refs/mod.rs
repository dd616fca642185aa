//! Stream refs over core NATS: [`StreamRefs`], [`SourceRef`],
//! [`SinkRef`]. The overview (pairing, credit, sequence numbers,
//! liveness, guarantees) is in the public `nats` module's docs, under
//! "Stream refs".
//!
//! Files: `refs` (the public types), `producer` and `consumer` (the two
//! stages), `link` (what both ends share: the NATS task, pairing and
//! liveness), `wire` (the frames), `error`.

mod consumer;
mod error;
mod link;
mod producer;
mod refs;
mod wire;

pub use error::StreamRefError;
pub use refs::{SinkRef, SourceRef, StreamRefs};
