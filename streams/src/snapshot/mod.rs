//! A snapshot of the running streams: which islands run, their stages, and
//! where each connection waits, so "which stage holds my stream back" has
//! an answer (Pekko's `MaterializerState.streamSnapshots`).
//!
//! [`Materializer::snapshot`](crate::Materializer::snapshot) asks every
//! running island of a materializer (and
//! [`Materializer::system_snapshot`](crate::Materializer::system_snapshot)
//! of its whole system) for its state: each island answers from its own
//! task, between two turns, by reading the connections' state bits it
//! keeps anyway, so nothing is counted or timed per element (unless the
//! materializer asks for [`StageCounters`]). A graph run as one fused pool
//! task answers from what its task records per poll. An island stuck
//! inside a stage's handler (a blocking call) cannot answer: the wait
//! times out with [`SnapshotError::TimedOut`](crate::SnapshotError::TimedOut),
//! which names it.
//!
//! The values ([`StreamSnapshot`] and what it holds) are in `view`; the
//! collection of the islands' answers ([`PendingSnapshot`]) in `pending`.

mod pending;
mod view;

pub use pending::PendingSnapshot;
pub(crate) use pending::{Answer, Inspect, SnapshotReply};
pub use view::{
    BufferFill, ConnectionSnapshot, ConnectionState, IslandSnapshot, Side, StageCounters,
    StageSnapshot, StreamSnapshot,
};
