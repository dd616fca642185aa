//! The phases of an island's actor: messages that arrive before the
//! island is handed over are kept, in order, and replayed after its start;
//! messages after it finished are refused (the caller makes them dead
//! letters). Nothing is handled before start, twice, or out of order.
//!
//! The materializer spawns the island's actor first (so async callbacks
//! and stage actors have a target), builds the island, then hands it over
//! with a `Start` message. Anything a materialized handle sends meanwhile
//! waits in the actor's mailbox (FIFO per sender) and then here.

/// What to do with one message.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Accept<M> {
    /// The island runs: handle it now.
    Handle(M),
    /// Kept until the island starts.
    Kept,
    /// The island has finished: nobody will handle it.
    Refused(M),
}

#[derive(Debug)]
pub(crate) enum Lifecycle<I, M> {
    /// Waiting for the island; messages that came first, in order.
    Starting(Vec<M>),
    Running(I),
    Done,
}

impl<I, M> Default for Lifecycle<I, M> {
    fn default() -> Self {
        Lifecycle::Starting(Vec::new())
    }
}

impl<I, M> Lifecycle<I, M> {
    /// The island arrives: it runs from now on; the messages that came
    /// before it are returned, in order, to be handled first.
    pub(crate) fn start(&mut self, island: I) -> Vec<M> {
        match std::mem::replace(self, Lifecycle::Running(island)) {
            Lifecycle::Starting(early) => early,
            Lifecycle::Running(_) | Lifecycle::Done => Vec::new(),
        }
    }

    pub(crate) fn accept(&mut self, message: M) -> Accept<M> {
        match self {
            Lifecycle::Starting(early) => {
                early.push(message);
                Accept::Kept
            }
            Lifecycle::Running(_) => Accept::Handle(message),
            Lifecycle::Done => Accept::Refused(message),
        }
    }

    pub(crate) fn island(&mut self) -> Option<&mut I> {
        match self {
            Lifecycle::Running(island) => Some(island),
            _ => None,
        }
    }

    /// The island finished (or is torn down): later messages are refused.
    pub(crate) fn finish(&mut self) -> Option<I> {
        match std::mem::replace(self, Lifecycle::Done) {
            Lifecycle::Running(island) => Some(island),
            Lifecycle::Starting(_) | Lifecycle::Done => None,
        }
    }
}

#[cfg(loom)]
mod loom_models;
