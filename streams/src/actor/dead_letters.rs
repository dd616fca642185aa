//! Where the elements an actor-backed stage cannot deliver go: dead
//! letters for its reference, so nothing is lost silently (DESIGN
//! invariant 4). One path for all of them: the overflow strategy's drops,
//! what arrives after the stream ended, and what the stage still holds
//! (buffered, taken and not acted on, queued in the inbox) when it stops.

use std::collections::VecDeque;

use weir_actor::{ActorPath, ActorSystem, DeadLetterReason, LogLevel};

use super::inbox::{Inbox, Signal, Wake};

/// A stage's dead-letter address: its reference's path, and the level its
/// drops ask to be logged at (`Attributes::with_drop_log_level`).
#[derive(Clone)]
pub(super) struct Letters {
    system: ActorSystem,
    path: ActorPath,
    level: LogLevel,
}

impl Letters {
    pub(super) fn new(system: ActorSystem, path: ActorPath, level: LogLevel) -> Self {
        Self {
            system,
            path,
            level,
        }
    }

    /// Publish one element as a dead letter.
    pub(super) fn publish<T: Send + 'static>(&self, element: T, reason: DeadLetterReason) {
        (self.system.event_stream())
            .publish_dead_letter_at(&self.path, element, reason, self.level);
    }

    /// The drops of one batch, each published with `reason`.
    pub(super) fn drops(&self, reason: DeadLetterReason) -> Drops<'_> {
        Drops {
            letters: self,
            reason,
            heard: None,
            count: 0,
            unheard: 0,
        }
    }

    /// The stage stopped: close `inbox` (later tells become dead letters
    /// at the sender) and publish every element it still has — those
    /// queued in the inbox, those taken and not acted on (`taken`,
    /// emptied) and `held` (its buffer) — as `StageStopped` dead letters,
    /// counted on the handle as dropped.
    pub(super) fn close<T: Send + 'static, W: Wake>(
        &self,
        inbox: &Inbox<T, W>,
        taken: &mut VecDeque<Signal<T>>,
        held: impl IntoIterator<Item = T>,
    ) {
        let mut drops = self.drops(DeadLetterReason::StageStopped);
        held.into_iter().for_each(|element| drops.element(element));
        drops.rest(taken);
        drops.rest(&mut inbox.close());
        drops.settle(inbox);
    }
}

/// The drops of one batch: published one by one (at the stage's drop log
/// level) when someone listens for dead letters, else counted and settled
/// once.
pub(super) struct Drops<'a> {
    letters: &'a Letters,
    reason: DeadLetterReason,
    /// Whether anyone listens, asked at the first drop.
    heard: Option<bool>,
    count: u64,
    unheard: u64,
}

impl Drops<'_> {
    /// One element that will not be delivered.
    pub(super) fn element<T: Send + 'static>(&mut self, element: T) {
        self.count += 1;
        let events = self.letters.system.event_stream();
        if *self.heard.get_or_insert_with(|| events.has_listeners()) {
            self.letters.publish(element, self.reason);
        } else {
            self.unheard += 1;
        }
    }

    /// Every element left in `signals`, emptying it.
    pub(super) fn rest<T: Send + 'static>(&mut self, signals: &mut VecDeque<Signal<T>>) {
        for signal in signals.drain(..) {
            if let Signal::Element(element) = signal {
                self.element(element);
            }
        }
    }

    /// Count the batch on the handle (`ActorRefSource::dropped`) and the
    /// unpublished ones on the event stream.
    pub(super) fn settle<T: Send, W: Wake>(self, inbox: &Inbox<T, W>) {
        if self.count > 0 {
            inbox.count_dropped(self.count);
        }
        if self.unheard > 0 {
            self.letters
                .system
                .event_stream()
                .count_dead_letters(self.unheard);
        }
    }
}
