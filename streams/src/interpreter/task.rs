//! An island run as a task of the system's pool ([`IslandTask`]), with its
//! own inbox ([`TaskInbox`]) for async callbacks and stage timers.
//!
//! An island used to be an actor: a path, a cell, a mailbox, a place among
//! `/system`'s children and a supervised stop, for a host that only ever
//! receives its own stages' callbacks and timers. A task of the pool is
//! what it needs: polled when its inbox has messages or its events are
//! left over from the last budget, holding no worker while it waits.
//!
//! # The inbox and the wake-up
//!
//! The inbox is a queue, a `notified` flag and the task's waker under one
//! lock. Delivering a message pushes it and, if `notified` was clear, sets
//! it and wakes the task (outside the lock: a calling-thread dispatcher
//! polls the task inside the wake-up); a turn clears `notified` as it
//! takes the queue. So the task is woken once per batch of messages, and a
//! message delivered during a turn wakes it again (the pool's task state
//! then queues another poll behind what waits). The flag starts set: the
//! task is queued for its first poll when it is spawned, and messages
//! delivered before that wait for it; that poll leaves its waker.
//!
//! The waker is what keeps a waiting island alive, as a parent keeps its
//! child actor: the inbox holds it until the island ends (its stages hold
//! the inbox, so this is a cycle, and the end breaks it: the task's
//! future, and with it the island, is dropped, and closing the inbox drops
//! the waker). The registry of running streams aborts every island at
//! shutdown, which ends it the same way.
//! The loom model in `inbox` checks that no message is stranded.
//!
//! # Ends
//!
//! The task completes when every stage has finished; its inbox closes and
//! what is still in it becomes dead letters. Aborted (the registry of
//! running streams stops it) or dropped unfinished (its pool shut down),
//! it aborts the island with `AbruptTermination`. A panic that escapes
//! the stages' own catch fails the stream with that panic.

use std::collections::VecDeque;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use weir_actor::{ActorPath, ActorSystem};

use super::inbox::Queue;
use super::island::Island;
use crate::error::{ErrorKind, StreamError};
use crate::snapshot::{Answer, Inspect, SnapshotReply};
use crate::stage::{Inbox, IslandMsg, island_path, refuse_message};
use crate::sync::{Arc, Mutex};

// How many events an island processes per poll before it yields.
use crate::tuning::ISLAND_EVENT_BUDGET as EVENT_BUDGET;

/// The longest island name: `stream-`, two numbers of at most 20 digits,
/// two `-` and 40 characters of the stage name.
const NAME_MAX: usize = 7 + 20 + 1 + 20 + 1 + 40;

/// An island's inbox (module docs).
pub(crate) struct TaskInbox {
    queue: Mutex<Queue<IslandMsg>>,
    system: ActorSystem,
    name: IslandName,
    /// The stream's number and the island's in its plan, for snapshots.
    stream: u64,
    island: usize,
}

impl TaskInbox {
    pub(crate) fn new(
        system: ActorSystem,
        stream: u64,
        island: usize,
        first: Option<&str>,
    ) -> Self {
        Self {
            queue: Mutex::new(Queue::new()),
            system,
            name: IslandName::new(stream, island, first),
            stream,
            island,
        }
    }

    /// Close the inbox: what is left becomes dead letters.
    fn close(&self) {
        let (left, waker) = self.queue.lock().close();
        drop(waker);
        for msg in left {
            refuse_message(&self.system, &self.name, msg);
        }
    }
}

impl Inbox for TaskInbox {
    fn deliver(&self, msg: IslandMsg) -> Result<(), IslandMsg> {
        let waker = self.queue.lock().push(msg)?;
        if let Some(waker) = waker {
            waker.wake();
        }
        Ok(())
    }

    fn is_closed(&self) -> bool {
        self.queue.lock().is_closed()
    }

    fn name(&self) -> &str {
        &self.name
    }
}

impl Inspect for TaskInbox {
    fn name(&self) -> String {
        self.name.to_string()
    }

    fn inspect(&self, reply: SnapshotReply) {
        // An ended island gives the question back: dropped, the reply
        // leaves the island out.
        drop(self.deliver(IslandMsg::Snapshot(reply)));
    }
}

/// The future that runs one island (module docs).
pub(crate) struct IslandTask {
    island: Island,
    inbox: Arc<TaskInbox>,
    /// The messages of the current turn (the inbox's queue, swapped out).
    batch: VecDeque<IslandMsg>,
    started: bool,
    /// The island was finished, failed or aborted: nothing more to do.
    ended: bool,
    /// Its path for the instrumentation hook, made on the first turn a
    /// hook sees.
    subject: Option<ActorPath>,
    /// When the last turn that made progress began (on the system's
    /// clock, read once per turn, never per element); `None` before the
    /// first turn. A snapshot reports the time since. The turn's start,
    /// not its end: what a turn sends out (a reply a test waits for) is
    /// seen before the turn ends, and must not be seen as later.
    progressed_at: Option<Instant>,
}

impl IslandTask {
    /// The task for `island`, whose stages address `inbox`; a registered
    /// island can be asked for snapshots through its inbox.
    pub(crate) fn new(island: Island, inbox: Arc<TaskInbox>) -> Self {
        Self {
            island,
            inbox,
            batch: VecDeque::new(),
            started: false,
            ended: false,
            subject: None,
            progressed_at: None,
        }
    }

    /// One turn: start; take what came; run the events left over from the
    /// last turn; then each message in order with the events it causes,
    /// all within one budget of events. At least one message is handled
    /// per turn, even behind an island whose events fill every budget (an
    /// island's actor interleaved its messages with its resumes the same
    /// way); those the budget does not reach wait in `batch`, ahead of the
    /// inbox, for the next turn. A question for a snapshot is answered
    /// in its place among the messages, and is no progress.
    fn turn(&mut self, waker: &Waker) -> Turn {
        let start = self.inbox.system.scheduler().now();
        if let Some(counters) = self.island.counters.as_deref_mut() {
            counters.turn_begins(&self.island.core, start);
        }
        if !self.started {
            self.started = true;
            self.progressed_at = Some(start);
            self.island.start();
        }
        self.inbox.queue.lock().take(&mut self.batch, waker);
        let mut left = EVENT_BUDGET;
        let mut more = self.island.run_within(&mut left);
        if left < EVENT_BUDGET {
            self.progressed_at = Some(start);
        }
        let mut first = true;
        while first || !more {
            let Some(msg) = self.batch.pop_front() else {
                break;
            };
            first = false;
            if let IslandMsg::Snapshot(reply) = msg {
                self.answer(reply);
                continue;
            }
            self.progressed_at = Some(start);
            self.island.on_message(msg);
            more = self.island.run_within(&mut left);
        }
        if self.island.is_done() {
            Turn::Done
        } else if more || !self.batch.is_empty() {
            Turn::Yield
        } else {
            Turn::Wait
        }
    }

    /// Answer a snapshot: the island now, and how long it has waited.
    fn answer(&self, reply: SnapshotReply) {
        let idle_for = self.progressed_at.map_or(Duration::ZERO, |since| {
            self.inbox
                .system
                .scheduler()
                .now()
                .saturating_duration_since(since)
        });
        let island = self
            .island
            .inspect(self.inbox.island, &self.inbox.name, idle_for);
        reply.answer(Answer {
            stream: self.inbox.stream,
            island,
        });
    }

    /// The island is over: close the inbox, and abort the island with
    /// `error` if it had not finished.
    fn end(&mut self, error: Option<StreamError>) {
        self.ended = true;
        if let Some(error) = error {
            self.island.abort(&error);
        }
        // The island's registration among the running streams goes with
        // the island, after its logics (field order): a stage that reports
        // its end when dropped (a fused consumer's completion) has reported
        // it before the registry, and so a shutdown waiting on it, sees the
        // island gone.
        for msg in self.batch.drain(..) {
            refuse_message(&self.inbox.system, &self.inbox.name, msg);
        }
        self.inbox.close();
    }
}

enum Turn {
    /// Every stage has finished.
    Done,
    /// Events are left over: poll again, behind what waits.
    Yield,
    /// Nothing to do until a message comes.
    Wait,
}

impl Future for IslandTask {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        if this.ended {
            return Poll::Ready(());
        }
        let turn = if this.inbox.system.is_instrumented() {
            // The hook sees each turn as a message to the island, at the
            // path its actor had.
            let inbox = Arc::clone(&this.inbox);
            let path = this
                .subject
                .get_or_insert_with(|| island_path(&inbox.system, &inbox.name))
                .clone();
            inbox
                .system
                .instrument_turn::<IslandTask, IslandMsg, _>(&path, || {
                    catch_unwind(AssertUnwindSafe(|| this.turn(cx.waker())))
                })
        } else {
            catch_unwind(AssertUnwindSafe(|| this.turn(cx.waker())))
        };
        match turn {
            Ok(Turn::Done) => this.end(None),
            Ok(Turn::Yield) => {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            Ok(Turn::Wait) => return Poll::Pending,
            // A panic outside every stage handler (each of those fails only
            // its stage): the island's state is suspect, so the stream fails
            // with the panic.
            Err(payload) => {
                let message = format!(
                    "the island's task panicked: {}",
                    StreamError::panicked(&*payload)
                );
                this.end(Some(StreamError::from_kind(ErrorKind::Panicked(message))));
            }
        }
        Poll::Ready(())
    }
}

impl Drop for IslandTask {
    /// Aborted, or dropped by a pool that shut down: the island's stages
    /// end with `AbruptTermination`.
    fn drop(&mut self) {
        if !self.ended {
            self.end(Some(StreamError::from_kind(ErrorKind::AbruptTermination)));
        }
    }
}

/// An island's name, made on the stack: `stream-<n>-<island>-<first
/// stage>`, with the stage name reduced to characters actor names accept.
struct IslandName {
    bytes: [u8; NAME_MAX],
    len: usize,
}

impl std::ops::Deref for IslandName {
    type Target = str;

    fn deref(&self) -> &str {
        std::str::from_utf8(&self.bytes[..self.len]).expect("island names are ASCII")
    }
}

impl IslandName {
    fn new(stream: u64, island: usize, first: Option<&str>) -> Self {
        let mut name = Self {
            bytes: [0u8; NAME_MAX],
            len: 0,
        };
        name.push(b"stream-");
        name.push_decimal(stream);
        name.push(b"-");
        name.push_decimal(island as u64);
        if let Some(first) = first {
            name.push(b"-");
            for c in crate::stage::name_chars(first).take(40) {
                debug_assert!(c.is_ascii(), "`name_chars` maps to ASCII");
                name.push(&[c as u8]);
            }
        }
        name
    }

    /// Append `bytes` (ASCII); [`NAME_MAX`] leaves room for the longest name.
    fn push(&mut self, bytes: &[u8]) {
        self.bytes[self.len..self.len + bytes.len()].copy_from_slice(bytes);
        self.len += bytes.len();
    }

    /// Append `n` in decimal (no `fmt` machinery: this is on every run).
    fn push_decimal(&mut self, mut n: u64) {
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        loop {
            at -= 1;
            digits[at] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        self.push(&digits[at..]);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use proptest::prelude::*;

    use super::IslandName;

    proptest! {
        /// Whatever the stream, island and stage, the name fits its
        /// buffer whole and is a valid actor name (dead letters use it in
        /// a path).
        #[test]
        fn every_island_name_is_whole_and_valid(
            stream in any::<u64>(),
            island in any::<usize>(),
            label in proptest::option::of(any::<String>()),
        ) {
            let name = IslandName::new(stream, island, label.as_deref());
            let mut expected = format!("stream-{stream}-{island}");
            if let Some(label) = &label {
                expected.push('-');
                expected.extend(crate::stage::name_chars(label).take(40));
            }
            prop_assert_eq!(&*name, expected.as_str());
            prop_assert_eq!(weir_actor::validate_name(&name), Ok(()));
        }
    }
}
