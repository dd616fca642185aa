//! An actor's stash storage: what [`Context::stash`](crate::Context::stash)
//! put aside and what was taken back from it, which the run loop handles
//! before the mailbox. The stash API itself is a layer on top
//! ([`crate::stash`]).

use std::collections::VecDeque;

/// How many messages a stash holds unless the props say otherwise.
pub const DEFAULT_STASH_CAPACITY: usize = 1024;

/// An actor's stash and the messages taken back from it that wait to be
/// handled. Only the run-token holder touches it (it lives in the context).
pub(crate) struct Stash<M> {
    stashed: VecDeque<M>,
    /// Unstashed, handled before the mailbox (see the run loop).
    unstashed: VecDeque<M>,
    capacity: usize,
}

impl<M> Stash<M> {
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            stashed: VecDeque::new(),
            unstashed: VecDeque::new(),
            capacity,
        }
    }

    /// The next unstashed message, taken before the mailbox's.
    #[inline]
    pub(crate) fn next_unstashed(&mut self) -> Option<M> {
        self.unstashed.pop_front()
    }

    pub(crate) fn has_unstashed(&self) -> bool {
        !self.unstashed.is_empty()
    }

    /// Restart: everything stashed is handled first by the new instance.
    pub(crate) fn unstash_all(&mut self) {
        self.unstashed.append(&mut self.stashed);
    }

    /// Put `msg` aside, or give it back when the stash holds its capacity.
    pub(crate) fn push(&mut self, msg: M) -> Result<(), M> {
        if self.stashed.len() >= self.capacity {
            return Err(msg);
        }
        self.stashed.push_back(msg);
        Ok(())
    }

    /// Take back the `n` oldest stashed messages (fewer if there are fewer);
    /// returns how many.
    pub(crate) fn unstash(&mut self, n: usize) -> usize {
        let n = n.min(self.stashed.len());
        self.unstashed.extend(self.stashed.drain(..n));
        n
    }

    /// How many messages are stashed (not counting those taken back).
    pub(crate) fn stashed_len(&self) -> usize {
        self.stashed.len()
    }

    /// Stop: everything left, unstashed first, for dead letters.
    pub(crate) fn drain(&mut self) -> impl Iterator<Item = M> + '_ {
        self.unstashed.drain(..).chain(self.stashed.drain(..))
    }
}
