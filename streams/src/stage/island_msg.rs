//! The messages an island's host receives: the built island, async
//! callbacks and stage timers from the stages' substrate, and its own
//! resume signal.

use std::any::Any;

use crate::interpreter::island::Island;
use crate::stage::TimerKey;

/// A message to the actor that hosts one island.
pub(crate) enum IslandMsg {
    /// The materializer hands over the built island.
    Start(Box<Island>),
    /// An async callback was invoked.
    Async {
        stage: u32,
        handler: u32,
        payload: Box<dyn Any + Send>,
    },
    Timer {
        stage: u32,
        key: TimerKey,
        generation: u64,
    },
    /// Events are left over from the last budget: run them.
    Resume,
}
