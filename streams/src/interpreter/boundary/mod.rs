//! The async boundary: two stages in two islands joined by one bounded
//! queue, moving elements in batches.
//!
//! Credit bounds the queue: the upstream half starts with `capacity`
//! credits, spends one per element it takes in, and the downstream half
//! returns them in batches of `capacity / 2` as it passes elements on
//! (so at most `capacity` elements are between the two islands). The
//! upstream half collects elements locally and hands them over under one
//! lock per batch (when the batch is full, and whenever its island has
//! run out of events); the downstream half takes the whole queue under
//! one lock when its local batch is empty. A half that finds nothing to
//! do marks itself waiting; the other half wakes it with an async
//! callback (one message per wake-up, not per element).
//!
//! Fusion reaches across the boundary when the planner (`crate::plan`)
//! says so: an iterator source right before it runs inside the upstream
//! half (a loop into the batch, no ports), and a folding sink right after
//! it (with any simple operators before the sink) runs inside the
//! downstream half (a loop over the batch).

use std::marker::PhantomData;
use crate::sync::{Arc, Mutex, MutexGuard};

mod downstream;
mod upstream;

use downstream::{BoundaryIn, Downstream};
use upstream::{BoundaryOut, Upstream};

use super::materialize::{BoundaryFactory, Half};
use crate::fusion::{ConsumerNode, FusedConsumer, FusedIter, IterNode};
use crate::stage::{AsyncCallback, SlotKind};
use crate::StreamError;

/// Elements a fused half moves per actor message before it yields.
pub(super) const FUSED_BUDGET: usize = 4096;

pub(super) struct State<T> {
    /// Handed over, oldest first.
    pub(super) queue: Vec<T>,
    /// Credits the downstream half has returned that upstream has not taken.
    pub(super) credit: usize,
    /// Upstream finished: `Some(None)` completed, `Some(Some(e))` failed.
    pub(super) done: Option<Option<StreamError>>,
    pub(super) cancelled: bool,
    pub(super) up_waiting: bool,
    pub(super) down_waiting: bool,
    pub(super) wake_up: Option<AsyncCallback<()>>,
    pub(super) wake_down: Option<AsyncCallback<()>>,
}

pub(super) struct Shared<T> {
    pub(super) state: Mutex<State<T>>,
}

impl<T> Shared<T> {
    pub(super) fn lock(&self) -> MutexGuard<'_, State<T>> {
        // Neither half panics while holding the lock (`crate::sync::Mutex`
        // recovers the state anyway).
        self.state.lock()
    }
}

/// The boundary for elements of type `T`. What runs in its halves (a
/// fused source, a fused sink) is the planner's choice, given at `create`.
pub(crate) struct Boundary<T> {
    _elements: PhantomData<fn(T)>,
}

impl<T> Boundary<T> {
    pub(crate) fn new() -> Self {
        Self {
            _elements: PhantomData,
        }
    }
}

impl<T: Send + 'static> BoundaryFactory for Boundary<T> {
    fn create(
        &self,
        capacity: usize,
        source: Option<(&dyn IterNode, &Arc<str>)>,
        sink: Option<(&dyn ConsumerNode, &Arc<str>)>,
    ) -> (Half, Half) {
        let capacity = capacity.max(1);
        // A huge input buffer is a bound, not a size: reserve what every
        // bounded buffer does and grow as elements arrive.
        let reserve = crate::overflow::upfront_capacity(capacity);
        let shared: Arc<Shared<T>> = Arc::new(Shared {
            state: Mutex::new(State {
                queue: Vec::with_capacity(reserve),
                credit: 0,
                done: None,
                cancelled: false,
                up_waiting: false,
                down_waiting: false,
                wake_up: None,
                wake_down: None,
            }),
        });
        let batch = (capacity / 2).max(1);
        let (upstream, up_name, up_ports) = match source {
            Some((iter, name)) => (Upstream::Iter(FusedIter::<T>::of(iter)()), Arc::clone(name), (0, 0)),
            None => (Upstream::Port, Arc::from("async-boundary-out"), (1, 0)),
        };
        let (downstream, down_name, down_ports, down_mats, slot) = match sink {
            Some((consumer, name)) => {
                let (consumer, mat) = FusedConsumer::<T>::of(consumer)();
                (
                    Downstream::Consumer(consumer),
                    Arc::clone(name),
                    (0, 0),
                    vec![mat],
                    None,
                )
            }
            None => (
                Downstream::Port,
                Arc::from("async-boundary-in"),
                (0, 1),
                Vec::new(),
                Some(SlotKind::of::<T>()),
            ),
        };
        let up = BoundaryOut {
            shared: Arc::clone(&shared),
            local: Vec::with_capacity(reserve),
            credit: capacity,
            batch,
            upstream,
            resume: None,
        };
        let down = BoundaryIn {
            shared,
            local: Vec::with_capacity(reserve),
            consumed: 0,
            batch,
            finished: false,
            downstream,
            resume: None,
        };
        (
            Half {
                logic: Box::new(up),
                name: up_name,
                ports: up_ports,
                slot: None,
                mats: Vec::new(),
            },
            Half {
                logic: Box::new(down),
                name: down_name,
                ports: down_ports,
                slot,
                mats: down_mats,
            },
        )
    }
}
