//! The messages an island receives from its stages' substrate: async
//! callbacks and stage timers.

use std::any::Any;

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
}
