//! The messages an island receives from its stages' substrate: async
//! callbacks and stage timers; and, from the registry of running
//! streams, the question for a snapshot.

use std::any::Any;

use crate::snapshot::SnapshotReply;
use crate::stage::TimerKey;

/// A message to one island (through its [`IslandRef`](super::IslandRef)).
pub(crate) enum IslandMsg {
    /// An async callback was invoked.
    Async {
        stage: u32,
        handler: u32,
        payload: Box<dyn Any + Send>,
    },
    /// A stage timer fired (ignored if it was cancelled or replaced since:
    /// `generation` tells).
    Timer {
        stage: u32,
        key: TimerKey,
        generation: u64,
    },
    /// A snapshot of the island was asked for (`crate::snapshot`): the
    /// task that runs the island answers it between two turns; dropped
    /// unanswered (the island has ended), the island is left out.
    Snapshot(SnapshotReply),
}
