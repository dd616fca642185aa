//! The hand-over: one credit-bounded, batched channel between a running
//! island and anything outside it (another island, a task, a thread).
//!
//! The async boundary, interop's `as_stream` on islands, the hubs
//! (`MergeHub`, `BroadcastHub`, `PartitionHub`) and `Source::queue` all
//! move elements through it.
//!
//! # Protocol
//!
//! - **Credit.** The [`Producer`] starts with `capacity` credits and spends
//!   one per element it takes in. The [`Consumer`] gives credit back as it
//!   passes elements on, `capacity / 2` at a time (and everything it owes
//!   whenever it finds nothing handed over), so at most `capacity` elements
//!   are ever between the two sides. (A shared producer's consumer gives
//!   each place back as it passes the element on: see "Many producers".)
//! - **Batches.** The producer collects elements locally and hands them
//!   over under one lock per batch ([`Producer::hand_over`]); the consumer
//!   takes everything handed over under one lock when its own batch is
//!   empty ([`Consumer::refill`]).
//! - **Waiting.** A side that cannot go on marks itself waiting under the
//!   lock (the producer when it is out of credit, the consumer when it
//!   found nothing); the other side clears the flag and notifies it after
//!   releasing the lock: one notification per wait, not per element.
//! - **Ends.** [`Producer::finish`] hands over the end (completion or
//!   failure) after the last batch; the consumer sees it exactly once, after
//!   every element ([`Refill::End`]). [`Consumer::cancel`] (or dropping the
//!   consumer) drops what is queued and notifies the producer once; the
//!   producer learns it from [`Producer::hand_over`]. The first of the two
//!   wins; dropping a producer that never finished ends the channel with
//!   [`ErrorKind::AbruptTermination`](crate::ErrorKind::AbruptTermination).
//! - **Many producers.** A shared producer (`SharedProducer`, behind
//!   `Source::queue`) is the producer side for many threads at once: it
//!   puts each element straight into the handed-over queue under the same
//!   one lock, spending credit kept in the shared state (no local batch),
//!   and keeps the senders waiting for credit in that state, first in line
//!   first. Its consumer gives credit back one element at a time (the
//!   producers take the lock per element anyway, so a batch would save
//!   little, and `Source::queue` promises to refuse an offer only when it
//!   holds `capacity` elements). Waiting senders are woken in batches:
//!   once `capacity / 2` places are free, or when the consumer finds
//!   nothing handed over, it takes one waiting sender per free place out
//!   of line and wakes them after releasing the lock (one wake-up per
//!   freed place made a park and an unpark per element); a sender woken
//!   for a place it does not use passes the wake-up on. An `offer`, or a
//!   new send, takes any free place at once. Its ends are a
//!   completion (after every element) and a failure that overtakes what is
//!   queued (`Consumer::take_abort` hands it to a consumer holding a
//!   batch).
//!
//! Each side is notified through a [`Notify`]: an island's
//! [`AsyncCallback`](crate::stage::AsyncCallback), a task's
//! [`Waker`](std::task::Waker) or a blocked [`Thread`](std::thread::Thread).
//! The loom models in `handover/loom_models.rs` check that credit never
//! exceeds the capacity, that neither side misses a wake-up, and that the
//! end and the cancellation are each delivered once, with one producer and
//! with several (the `shared_*` models).
//!
//! # Examples
//!
//! ```
//! use weir_streams::handover::{self, Order, Refill, Wait};
//!
//! // Two threads: notifications unpark them.
//! let (mut producer, mut consumer) =
//!     handover::channel::<u32, std::thread::Thread, std::thread::Thread>(4, Order::Pop);
//! consumer.set_notify(std::thread::current());
//! let feeder = std::thread::spawn(move || {
//!     producer.set_notify(std::thread::current());
//!     for i in 0..100 {
//!         while producer.credit() == 0 {
//!             producer.hand_over();
//!             if producer.credit() == 0 {
//!                 std::thread::park();
//!             }
//!         }
//!         if producer.push(i) {
//!             producer.hand_over();
//!         }
//!     }
//!     producer.finish(Ok(()));
//! });
//! let mut received = Vec::new();
//! loop {
//!     match consumer.refill(Wait::Yes) {
//!         Refill::Ready => {
//!             while let Some(x) = consumer.pop() {
//!                 received.push(x);
//!             }
//!         }
//!         Refill::Empty => std::thread::park(),
//!         Refill::End(outcome) => break assert_eq!(outcome, Ok(())),
//!         Refill::Done => unreachable!(),
//!     }
//! }
//! feeder.join().unwrap();
//! assert_eq!(received, (0..100).collect::<Vec<_>>());
//! ```

mod channel;
mod consumer;
#[cfg(not(loom))] // stages are not built under loom (it models the channel alone)
mod feed;
mod notify;
mod producer;
mod shared;

pub use channel::channel;
use channel::{HandoverCore, HandoverState};
pub use consumer::{Consumer, Order, Refill, Wait};
#[cfg(not(loom))]
pub use feed::FeedLogic;
pub use notify::Notify;
pub use producer::Producer;
pub(crate) use shared::{Refused, SendSlot, SharedProducer, shared_channel};

#[cfg(loom)]
mod loom_models;
