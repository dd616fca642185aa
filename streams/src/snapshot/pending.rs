//! The collection of the islands' answers into a [`PendingSnapshot`].
//!
//! A [`PendingSnapshot`] holds one slot per island asked. Each island gets
//! a reply ([`SnapshotReply`]) for its slot: answered, the slot holds the
//! island's snapshot; dropped unanswered (the island ended before it took
//! the question, and its inbox dropped it), the slot is empty and the
//! island is left out. When no slot waits any more the pending snapshot
//! completes.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use weir_actor::Promise;

use super::view::{IslandSnapshot, StreamSnapshot};
use crate::error::SnapshotError;
use crate::sync::{Arc, Mutex};

/// What one island answers: its stream's number and its snapshot.
pub(crate) struct Answer {
    pub(crate) stream: u64,
    pub(crate) island: IslandSnapshot,
}

/// What one island was asked, and its answer.
enum Slot {
    /// Not answered yet; the island's name.
    Waiting(String),
    Answered(Answer),
    /// The island ended before it answered.
    Gone,
}

struct Gather {
    slots: Vec<Slot>,
    waiting: usize,
}

/// The collection behind a [`PendingSnapshot`] (module docs).
struct Collector {
    gather: Mutex<Gather>,
    done: Promise<()>,
}

impl Collector {
    fn settle(&self, slot: usize, with: Slot) {
        let done = {
            let mut gather = self.gather.lock();
            if !matches!(gather.slots[slot], Slot::Waiting(_)) {
                return;
            }
            gather.slots[slot] = with;
            gather.waiting -= 1;
            gather.waiting == 0
        };
        if done {
            let _ = self.done.complete(());
        }
    }

    /// The streams answered so far, grouped by stream in stream order, and
    /// the names of the islands that have not answered.
    fn collect(&self) -> (Vec<StreamSnapshot>, Vec<String>) {
        let gather = self.gather.lock();
        let mut answers: Vec<&Answer> = Vec::new();
        let mut silent = Vec::new();
        for slot in &gather.slots {
            match slot {
                Slot::Waiting(name) => silent.push(name.clone()),
                Slot::Answered(answer) => answers.push(answer),
                Slot::Gone => {}
            }
        }
        answers.sort_by_key(|a| (a.stream, a.island.index));
        let mut streams: Vec<StreamSnapshot> = Vec::new();
        for answer in answers {
            match streams.last_mut() {
                Some(last) if last.stream == answer.stream => {
                    last.islands.push(answer.island.clone())
                }
                _ => streams.push(StreamSnapshot {
                    stream: answer.stream,
                    islands: vec![answer.island.clone()],
                }),
            }
        }
        (streams, silent)
    }
}

/// What the registry of running streams asks a running island through.
pub(crate) trait Inspect: Send + Sync {
    /// The island's name (asked only when a snapshot is taken, so a
    /// fused task makes it then, not for every run).
    fn name(&self) -> String;

    /// Ask the island for its snapshot; it answers `reply` from its own
    /// task (or drops it if it has ended).
    fn inspect(&self, reply: SnapshotReply);
}

/// The question to one island: answer it with
/// [`answer`](Self::answer); dropped unanswered, the island is left out.
pub(crate) struct SnapshotReply {
    collector: Arc<Collector>,
    slot: usize,
}

impl SnapshotReply {
    pub(crate) fn answer(self, answer: Answer) {
        self.collector.settle(self.slot, Slot::Answered(answer));
    }
}

impl Drop for SnapshotReply {
    fn drop(&mut self) {
        self.collector.settle(self.slot, Slot::Gone);
    }
}

/// A snapshot being taken: a future of the running streams, with a
/// blocking [`wait_timeout`](Self::wait_timeout) for code that is not
/// async. From [`Materializer::snapshot`](crate::Materializer::snapshot).
///
/// Awaited, it completes when every island asked has answered or ended;
/// an island blocked inside a stage never answers, so bound the wait
/// (`tokio::time::timeout`, or `wait_timeout`). Cancel safety: dropping
/// it affects no stream.
#[must_use = "a snapshot is taken by waiting for it"]
pub struct PendingSnapshot {
    collector: Arc<Collector>,
}

impl PendingSnapshot {
    /// Ask each of `islands` for its snapshot.
    pub(crate) fn ask(islands: Vec<Arc<dyn Inspect>>) -> Self {
        let collector = Arc::new(Collector {
            gather: Mutex::new(Gather {
                waiting: islands.len(),
                slots: islands
                    .iter()
                    .map(|island| Slot::Waiting(island.name()))
                    .collect(),
            }),
            done: Promise::new(),
        });
        if islands.is_empty() {
            let _ = collector.done.complete(());
        }
        // Asked outside every lock: a calling-thread dispatcher answers
        // inside the ask.
        for (slot, island) in islands.iter().enumerate() {
            island.inspect(SnapshotReply {
                collector: Arc::clone(&collector),
                slot,
            });
        }
        Self { collector }
    }

    /// Block for at most `timeout` until every island has answered; the
    /// running streams (a stream whose islands have all finished is left
    /// out). A `timeout` too long for the clock (`Duration::MAX`) waits as
    /// long as it takes.
    ///
    /// Do not call it on a pool thread an island asked needs (a
    /// calling-thread dispatcher answers at once, and is fine).
    ///
    /// # Errors
    ///
    /// [`SnapshotError::TimedOut`] when an island has not answered in
    /// time (it is busy or blocked inside a stage): it carries what the
    /// others answered and the names of those that did not.
    pub fn wait_timeout(self, timeout: Duration) -> Result<Vec<StreamSnapshot>, SnapshotError> {
        self.collector.done.wait_completed_for(timeout);
        let (streams, silent) = self.collector.collect();
        if silent.is_empty() {
            Ok(streams)
        } else {
            Err(SnapshotError::TimedOut {
                answered: streams,
                silent,
            })
        }
    }
}

impl Future for PendingSnapshot {
    type Output = Vec<StreamSnapshot>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.collector.done.poll_completed(cx) {
            Poll::Ready(()) => Poll::Ready(self.collector.collect().0),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl fmt::Debug for PendingSnapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let waiting = self.collector.gather.lock().waiting;
        f.debug_struct("PendingSnapshot")
            .field("waiting", &waiting)
            .finish()
    }
}
