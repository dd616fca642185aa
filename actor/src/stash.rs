//! Stash: put messages aside and take them back later, in order (Akka's
//! `Stash` / typed `StashBuffer`).
//!
//! An actor waiting for something (a connection, a reply, its own
//! initialisation) stashes the messages it cannot handle yet with
//! [`Context::stash`] and takes them back with [`Context::unstash_all`] or
//! [`Context::unstash`] once it can. Unstashed messages are handled next,
//! before anything still in the mailbox, in the order they were stashed.
//!
//! The stash is bounded ([`Props::with_stash_capacity`](crate::Props::with_stash_capacity),
//! default [`DEFAULT_STASH_CAPACITY`]); a full stash gives the message back
//! as [`StashError::Full`](crate::StashError::Full).
//!
//! Across a restart the stash is kept, as Akka's classic `Stash` does by
//! unstashing in `preRestart`: the new instance handles the stashed messages
//! first. When the actor stops, they go to dead letters.
//!
//! # Examples
//!
//! A typed actor changes behaviour with an enum state: it stashes requests
//! until it is connected, then serves them in order.
//!
//! ```
//! use weir_actor::{Actor, ActorRef, ActorSystem, Context, Props};
//!
//! enum Msg {
//!     Connected,
//!     Get(u32, ActorRef<u32>),
//! }
//!
//! enum State {
//!     Connecting,
//!     Serving,
//! }
//!
//! struct Client(State);
//!
//! impl Actor for Client {
//!     type Msg = Msg;
//!     fn receive(&mut self, ctx: &mut Context<Self>, msg: Msg) {
//!         match (&self.0, msg) {
//!             (State::Connecting, Msg::Connected) => {
//!                 self.0 = State::Serving; // `become`
//!                 ctx.unstash_all();
//!             }
//!             (State::Connecting, get @ Msg::Get(..)) => {
//!                 if let Err(full) = ctx.stash(get) {
//!                     drop(full.into_inner()); // or reply with an error
//!                 }
//!             }
//!             (State::Serving, Msg::Get(n, reply)) => reply.tell(n * 10),
//!             (State::Serving, Msg::Connected) => {}
//!         }
//!     }
//! }
//!
//! let system = ActorSystem::new("stash").unwrap();
//! let client = system.spawn(Props::new(|| Client(State::Connecting)), "client").unwrap();
//! let answers = weir_actor::ask(&client, |r| Msg::Get(4, r), std::time::Duration::from_secs(5));
//! client.tell(Msg::Connected);
//! assert_eq!(answers.wait(), Ok(40));
//! system.terminate().wait().unwrap();
//! ```

use std::collections::VecDeque;

use crate::actor::Actor;
use crate::context::Context;
use crate::error::StashError;

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

    /// Stop: everything left, unstashed first, for dead letters.
    pub(crate) fn drain(&mut self) -> impl Iterator<Item = M> + '_ {
        self.unstashed.drain(..).chain(self.stashed.drain(..))
    }
}

impl<A: Actor> Context<A> {
    /// Put `msg` aside until [`unstash_all`](Self::unstash_all) or
    /// [`unstash`](Self::unstash). See the [module docs](crate::stash) for an
    /// example.
    ///
    /// # Errors
    ///
    /// [`StashError::Full`] with the message when the stash holds its
    /// capacity already
    /// ([`Props::with_stash_capacity`](crate::Props::with_stash_capacity)).
    pub fn stash(&mut self, msg: A::Msg) -> Result<(), StashError<A::Msg>> {
        if self.stash.stashed.len() >= self.stash.capacity {
            return Err(StashError::Full(msg));
        }
        self.stash.stashed.push_back(msg);
        Ok(())
    }

    /// Take every stashed message back: they are handled next, before
    /// anything in the mailbox, in the order they were stashed (after any
    /// taken back earlier and not handled yet).
    pub fn unstash_all(&mut self) {
        self.stash.unstash_all();
    }

    /// Take back the `n` oldest stashed messages (fewer if there are fewer);
    /// returns how many. Handled as with [`unstash_all`](Self::unstash_all).
    pub fn unstash(&mut self, n: usize) -> usize {
        let n = n.min(self.stash.stashed.len());
        let stash = &mut self.stash;
        stash.unstashed.extend(stash.stashed.drain(..n));
        n
    }

    /// How many messages are stashed (not counting those taken back and not
    /// handled yet).
    pub fn stash_len(&self) -> usize {
        self.stash.stashed.len()
    }
}
