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
//! as [`StashError::Full`].
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

use crate::core::actor::Actor;
use crate::core::context::Context;
use crate::error::StashError;

pub use crate::core::cell::DEFAULT_STASH_CAPACITY;

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
        self.stash.push(msg).map_err(StashError::Full)
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
        self.stash.unstash(n)
    }

    /// How many messages are stashed (not counting those taken back and not
    /// handled yet).
    pub fn stash_len(&self) -> usize {
        self.stash.stashed_len()
    }
}
