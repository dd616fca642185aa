//! The async boundary: two stages in two islands joined by one bounded
//! queue, moving elements in batches.
//!
//! The halves are the two ends of a hand-over (`crate::handover`):
//! credit-bounded (at most `capacity` elements between the islands),
//! batched (the upstream half hands over when its batch is full and
//! whenever its island has run out of events; the downstream half takes
//! everything handed over when its batch is empty), and a half that finds
//! nothing to do waits for an async callback from the other (one message
//! per wake-up, not per element).
//!
//! Fusion reaches across the boundary when the planner (`crate::plan`)
//! says so: an iterator source right before it runs inside the upstream
//! half (a loop into the batch, no ports), and a folding sink right after
//! it (with any simple operators before the sink) runs inside the
//! downstream half (a loop over the batch).

use std::any::Any;
use std::marker::PhantomData;

use std::task::Waker;

use crate::handover::{self, Consumer, FeedLogic, Notify, Order, Producer};
use crate::sync::Arc;

mod downstream;
mod relay;
mod upstream;

use downstream::{BoundaryIn, Downstream};
use upstream::{BoundaryOut, PortOut, Upstream};

use crate::fusion::{ConsumerNode, FusedConsumer, FusedIter, IterNode};
use crate::plan::{BoundaryFactory, Half};
use crate::snapshot::BufferFill;
use crate::stage::{AsyncCallback, GraphStageLogic, SlotKind};

/// Elements a fused half moves per actor message before it yields.
pub(super) const FUSED_BUDGET: usize = 4096;

/// The hand-over between the halves; both ends are notified by an async
/// callback into their island.
pub(super) type Down<T> = Consumer<T, AsyncCallback<()>, AsyncCallback<()>>;

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

/// The upstream half over `producer`, running `source` if the planner
/// fused one into it.
fn upstream_half<T: Send + 'static, C: Notify + 'static>(
    producer: Producer<T, AsyncCallback<()>, C>,
    capacity: usize,
    source: Option<(&dyn IterNode, &Arc<str>)>,
) -> Half {
    let (logic, name, ports): (Box<dyn GraphStageLogic>, _, _) = match source {
        Some((iter, name)) => (
            Box::new(BoundaryOut {
                producer,
                capacity,
                upstream: Upstream::Iter(FusedIter::<T>::of(iter)()),
                resume: None,
            }),
            Arc::clone(name),
            (0, 0),
        ),
        None => (
            Box::new(PortOut {
                feed: FeedLogic::wrapped(producer),
                capacity,
            }),
            Arc::from("async-boundary-out"),
            (1, 0),
        ),
    };
    Half {
        logic,
        name,
        ports,
        slot: None,
        mats: Vec::new(),
    }
}

impl<T: Send + 'static> BoundaryFactory for Boundary<T> {
    fn create(
        &self,
        capacity: usize,
        source: Option<(&dyn IterNode, &Arc<str>)>,
        sink: Option<(&dyn ConsumerNode, &Arc<str>)>,
    ) -> (Half, Half) {
        let capacity = capacity.max(1); // as the channel takes it
        let (up_end, down_end) = handover::channel(
            capacity,
            if sink.is_some() {
                Order::Drain
            } else {
                Order::Pop
            },
        );
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
        let down = BoundaryIn {
            consumer: down_end,
            capacity,
            finished: false,
            downstream,
            resume: None,
        };
        (
            upstream_half::<T, AsyncCallback<()>>(up_end, capacity, source),
            Half {
                logic: Box::new(down),
                name: down_name,
                ports: down_ports,
                slot,
                mats: down_mats,
            },
        )
    }

    fn create_relay(
        &self,
        capacity: usize,
        source: Option<(&dyn IterNode, &Arc<str>)>,
    ) -> (Half, Arc<dyn IterNode>) {
        let capacity = capacity.max(1);
        let (up_end, down_end) =
            handover::channel::<T, AsyncCallback<()>, Waker>(capacity, Order::Drain);
        (
            upstream_half(up_end, capacity, source),
            relay::leaf(down_end),
        )
    }
}

/// How full the buffer is at the downstream half (`crate::stage::core::Gauge`):
/// what was handed over and not yet passed into its island.
fn gauge_in<T: Send + 'static>(logic: &dyn GraphStageLogic) -> Option<BufferFill> {
    let any: &dyn Any = logic;
    let half = any.downcast_ref::<BoundaryIn<T>>()?;
    Some(BufferFill {
        len: half.consumer.buffered(),
        capacity: half.capacity,
    })
}

/// How full the buffer is at the upstream half: the places it has used
/// and not been given back (at the capacity, it waits for credit).
fn fill_out<T, C: Notify>(
    producer: &Producer<T, AsyncCallback<()>, C>,
    capacity: usize,
) -> BufferFill {
    BufferFill {
        len: capacity.saturating_sub(producer.free()),
        capacity,
    }
}

/// [`fill_out`] of an upstream half with a fused source.
fn gauge_out<T: Send + 'static, C: Notify + 'static>(
    logic: &dyn GraphStageLogic,
) -> Option<BufferFill> {
    let any: &dyn Any = logic;
    let half = any.downcast_ref::<BoundaryOut<T, C>>()?;
    Some(fill_out(&half.producer, half.capacity))
}

/// [`fill_out`] of an upstream half fed from its inlet.
fn gauge_port<T: Send + 'static, C: Notify + 'static>(
    logic: &dyn GraphStageLogic,
) -> Option<BufferFill> {
    let any: &dyn Any = logic;
    let half = any.downcast_ref::<PortOut<T, C>>()?;
    Some(fill_out(half.feed.producer(), half.capacity))
}
