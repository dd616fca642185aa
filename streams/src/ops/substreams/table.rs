//! The substreams one splitting stage runs (`stage`), by slot: ids that
//! never name a finished substream's successor, the counts `parallelism`
//! and completion read, and the queue of substreams to poll.

use std::collections::VecDeque;

use super::direct::Body;

/// One running substream.
pub(super) struct Sub<T, U> {
    pub(super) id: u64,
    pub(super) runner: Body<T, U>,
    pub(super) input_closed: bool,
    /// Its output ended (or was cancelled): it no longer counts against
    /// `parallelism`, and stays until every stage in it has stopped.
    pub(super) output_done: bool,
    /// In the poll queue already.
    queued: bool,
}

/// The running substreams by slot; a substream's id is its slot in the
/// low 32 bits and the slot's generation above them, so a late event of a
/// finished substream never reaches its slot's successor.
pub(super) struct Table<T, U> {
    slots: Vec<Option<Sub<T, U>>>,
    free: Vec<u32>,
    generation: u64,
    /// Substreams whose output has not ended.
    pub(super) live: usize,
    /// Substreams in the table (their output ended or not).
    pub(super) hosted: usize,
    /// Substreams that may have something to give (output, completion):
    /// polled in this order, the only ones polled.
    dirty: VecDeque<u64>,
}

impl<T, U> Table<T, U> {
    pub(super) fn new() -> Self {
        Self {
            slots: Vec::new(),
            free: Vec::new(),
            generation: 0,
            live: 0,
            hosted: 0,
            dirty: VecDeque::new(),
        }
    }

    /// How many substreams were ever opened (the linearity test).
    #[cfg(all(test, not(loom)))]
    pub(super) fn opened(&self) -> u64 {
        self.generation
    }

    /// How many slots there are, open or free (the linearity test).
    #[cfg(all(test, not(loom)))]
    pub(super) fn slots(&self) -> usize {
        self.slots.len()
    }

    pub(super) fn get(&mut self, id: u64) -> Option<&mut Sub<T, U>> {
        let slot = (id & u64::from(u32::MAX)) as usize;
        self.slots
            .get_mut(slot)
            .and_then(Option::as_mut)
            .filter(|s| s.id == id)
    }

    pub(super) fn iter_mut(&mut self) -> impl Iterator<Item = &mut Sub<T, U>> {
        self.slots.iter_mut().flatten()
    }

    /// The id of the next substream; [`insert`](Self::insert) it, or
    /// [`release`](Self::release) the id if it could not be made.
    pub(super) fn reserve(&mut self) -> u64 {
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                self.slots.push(None);
                u32::try_from(self.slots.len() - 1).expect("fewer than 2^32 substreams at once")
            }
        };
        self.generation += 1;
        (self.generation << 32) | u64::from(slot)
    }

    pub(super) fn release(&mut self, id: u64) {
        self.free.push((id & u64::from(u32::MAX)) as u32);
    }

    /// Place substream `id` (from [`reserve`](Self::reserve)).
    pub(super) fn insert(&mut self, id: u64, runner: Body<T, U>) {
        let slot = (id & u64::from(u32::MAX)) as usize;
        self.slots[slot] = Some(Sub {
            id,
            runner,
            input_closed: false,
            output_done: false,
            queued: false,
        });
        self.live += 1;
        self.hosted += 1;
    }

    pub(super) fn remove(&mut self, id: u64) -> Option<Sub<T, U>> {
        let slot = (id & u64::from(u32::MAX)) as usize;
        let sub = self.slots.get_mut(slot)?.take_if(|s| s.id == id)?;
        self.free.push(slot as u32);
        self.hosted -= 1;
        if !sub.output_done {
            self.live -= 1;
        }
        Some(sub)
    }

    /// Queue substream `id` to be polled.
    pub(super) fn mark(&mut self, id: u64) {
        if let Some(sub) = self.get(id)
            && !sub.queued
        {
            sub.queued = true;
            self.dirty.push_back(id);
        }
    }

    /// Whether no substream waits to be polled.
    pub(super) fn quiet(&self) -> bool {
        self.dirty.is_empty()
    }

    /// The next substream to poll, taken off the queue.
    pub(super) fn next_dirty(&mut self) -> Option<Option<&mut Sub<T, U>>> {
        let id = self.dirty.pop_front()?;
        let mut sub = self.get(id);
        if let Some(sub) = sub.as_deref_mut() {
            sub.queued = false;
        }
        Some(sub)
    }

    pub(super) fn clear(&mut self) {
        self.slots.clear();
        self.dirty.clear();
        self.live = 0;
        self.hosted = 0;
    }
}
