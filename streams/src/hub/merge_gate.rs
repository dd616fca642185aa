//! The admission gate of a `MergeHub` with a total buffer bound: at most
//! `slots` producers hold room in the hub at once; the others wait, in
//! the order they were materialized, without pulling.
//!
//! A producer's [`Slot`] is shared by the producer stage and the hub's
//! entry for its hand-over: it is given back when both are gone (the
//! producer stopped and the hub took or dropped everything it handed
//! over), and then goes to the next waiter. A waiter is an `Arc` the
//! producer stage and the hub's entry hold (a waiting producer is in the
//! hub already, so a drain waits for it); the gate parks the slot in it
//! and wakes the stage, which takes a share of it. When the stage and the
//! entry are gone by then, the waiter's last `Arc` drops with the slot in
//! it, which gives the slot on: no slot is lost to a producer that stopped
//! while it waited.

use std::collections::VecDeque;

use crate::stage::AsyncCallback;
use crate::sync::{Arc, Mutex};

struct Room {
    free: usize,
    waiting: VecDeque<Arc<Waiter>>,
}

/// Room for a number of producers, and who waits for it.
pub(super) struct Gate {
    room: Mutex<Room>,
}

/// A producer waiting for room: woken by `admit`, it takes its slot.
pub(super) struct Waiter {
    slot: Mutex<Option<Slot>>,
    admit: AsyncCallback<()>,
}

/// One producer's room in the hub; dropping the last clone gives it on.
#[derive(Clone)]
pub(super) struct Slot {
    _held: Arc<Held>,
}

struct Held(Arc<Gate>);

impl Drop for Held {
    fn drop(&mut self) {
        Gate::release(&self.0);
    }
}

impl Gate {
    pub(super) fn new(slots: usize) -> Arc<Self> {
        Arc::new(Self {
            room: Mutex::new(Room {
                free: slots,
                waiting: VecDeque::new(),
            }),
        })
    }

    /// A slot now, or a waiter whose `admit` is invoked once it holds one.
    pub(super) fn enter(this: &Arc<Self>, admit: AsyncCallback<()>) -> Result<Slot, Arc<Waiter>> {
        let mut room = this.room.lock();
        if room.free > 0 {
            room.free -= 1;
            return Ok(Slot {
                _held: Arc::new(Held(Arc::clone(this))),
            });
        }
        let waiter = Arc::new(Waiter {
            slot: Mutex::new(None),
            admit,
        });
        room.waiting.push_back(Arc::clone(&waiter));
        Err(waiter)
    }

    /// A slot came back: to the first waiter, else to the free room.
    fn release(this: &Arc<Self>) {
        let next = {
            let mut room = this.room.lock();
            match room.waiting.pop_front() {
                Some(waiter) => waiter,
                None => {
                    room.free += 1;
                    return;
                }
            }
        };
        *next.slot.lock() = Some(Slot {
            _held: Arc::new(Held(Arc::clone(this))),
        });
        next.admit.invoke(());
        // When its stage is gone this was the last `Arc`: the slot goes on.
        drop(next);
    }
}

impl Waiter {
    /// A share of the slot, once the gate has parked it here (the slot
    /// stays parked: the hub's entry holds it through this waiter).
    pub(super) fn slot(&self) -> Option<Slot> {
        self.slot.lock().clone()
    }
}
