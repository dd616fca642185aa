//! Routing logics and the routee table they choose from.

use std::fmt;
use std::hash::{BuildHasher, Hash};

use crate::core::actor_ref::{ActorRef, Delivery, Envelope};
use crate::core::instrument::Stamp;
use crate::core::mailbox::BalanceQueue;
use crate::error::RoutingError;
use crate::sync::{Arc, AtomicUsize, Ordering};

/// Virtual nodes per routee on a consistent-hashing ring (Akka's
/// `virtual-nodes-factor` default).
pub const DEFAULT_VIRTUAL_NODES: usize = 10;

/// The most virtual nodes per routee a consistent-hashing ring takes. The
/// ring holds 16 bytes per point and is rebuilt (one hash per point) on
/// every change of routees: at this cap that is 64 KiB and 4096 hashes per
/// routee, already far past where more points even out the shares.
pub const MAX_VIRTUAL_NODES: usize = 4096;

/// How a [`Router`](super::Router) picks the routee for a message.
///
/// Every logic runs on the sender's thread; none goes through the router
/// actor. Send a question to all routees and take the first answer with
/// [`Router::scatter_gather`](super::Router::scatter_gather), which works
/// with any logic.
///
/// # Examples
///
/// ```
/// use weir_actor::routing::Routing;
///
/// struct Order {
///     customer: u64,
/// }
///
/// // Every order of one customer goes to the same routee.
/// let by_customer = Routing::consistent_hashing(|order: &Order| order.customer);
/// let spread: Routing<Order> = Routing::round_robin();
/// # let _ = (by_customer, spread);
/// ```
pub struct Routing<M> {
    pub(crate) kind: Kind<M>,
}

type KeyFn<M> = Arc<dyn Fn(&M) -> u64 + Send + Sync>;

pub(crate) enum Kind<M> {
    RoundRobin,
    Random,
    SmallestMailbox,
    ConsistentHashing {
        key: KeyFn<M>,
        virtual_nodes: usize,
    },
    Broadcast(fn(&M) -> M),
    /// A balancing pool: the queue its routees share.
    Balancing(Arc<BalanceQueue<Envelope<M>>>),
}

impl<M> Clone for Routing<M> {
    fn clone(&self) -> Self {
        let kind = match &self.kind {
            Kind::RoundRobin => Kind::RoundRobin,
            Kind::Random => Kind::Random,
            Kind::SmallestMailbox => Kind::SmallestMailbox,
            Kind::ConsistentHashing { key, virtual_nodes } => Kind::ConsistentHashing {
                key: key.clone(),
                virtual_nodes: *virtual_nodes,
            },
            Kind::Broadcast(copy) => Kind::Broadcast(*copy),
            Kind::Balancing(queue) => Kind::Balancing(queue.clone()),
        };
        Self { kind }
    }
}

impl<M> fmt::Debug for Routing<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match &self.kind {
            Kind::RoundRobin => "RoundRobin",
            Kind::Random => "Random",
            Kind::SmallestMailbox => "SmallestMailbox",
            Kind::ConsistentHashing { .. } => "ConsistentHashing",
            Kind::Broadcast(_) => "Broadcast",
            Kind::Balancing(_) => "Balancing",
        })
    }
}

impl<M: Send + 'static> Routing<M> {
    /// Each message to the next routee in turn.
    pub fn round_robin() -> Self {
        Self {
            kind: Kind::RoundRobin,
        }
    }

    /// Each message to a routee picked at random.
    pub fn random() -> Self {
        Self { kind: Kind::Random }
    }

    /// Each message to the routee with the fewest messages waiting,
    /// preferring one that is idle. The mailbox sizes are read at send time
    /// (one lock per routee until an idle, empty one is found), so this
    /// logic costs more per message than the others; the sizes are hints,
    /// stale as soon as read.
    pub fn smallest_mailbox() -> Self {
        Self {
            kind: Kind::SmallestMailbox,
        }
    }

    /// Messages with equal keys go to the same routee, placed on a hash
    /// ring with [`DEFAULT_VIRTUAL_NODES`] points per routee, so adding or
    /// removing a routee moves only the keys of its share of the ring.
    pub fn consistent_hashing<K: Hash>(key: impl Fn(&M) -> K + Send + Sync + 'static) -> Self {
        Self::ring(key, DEFAULT_VIRTUAL_NODES)
    }

    /// [`consistent_hashing`](Self::consistent_hashing) with
    /// `virtual_nodes` points per routee on the ring.
    ///
    /// # Errors
    ///
    /// [`RoutingError::ZeroVirtualNodes`] for zero points, and
    /// [`RoutingError::TooManyVirtualNodes`] above [`MAX_VIRTUAL_NODES`].
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_actor::routing::{MAX_VIRTUAL_NODES, Routing, RoutingError};
    ///
    /// let fine = Routing::<u64>::consistent_hashing_with_virtual_nodes(|n: &u64| *n, 100);
    /// assert!(fine.is_ok());
    /// let huge = Routing::<u64>::consistent_hashing_with_virtual_nodes(|n: &u64| *n, usize::MAX);
    /// assert_eq!(
    ///     huge.err(),
    ///     Some(RoutingError::TooManyVirtualNodes { requested: usize::MAX, max: MAX_VIRTUAL_NODES })
    /// );
    /// ```
    pub fn consistent_hashing_with_virtual_nodes<K: Hash>(
        key: impl Fn(&M) -> K + Send + Sync + 'static,
        virtual_nodes: usize,
    ) -> Result<Self, RoutingError> {
        if virtual_nodes == 0 {
            return Err(RoutingError::ZeroVirtualNodes);
        }
        if virtual_nodes > MAX_VIRTUAL_NODES {
            return Err(RoutingError::TooManyVirtualNodes {
                requested: virtual_nodes,
                max: MAX_VIRTUAL_NODES,
            });
        }
        Ok(Self::ring(key, virtual_nodes))
    }

    fn ring<K: Hash>(key: impl Fn(&M) -> K + Send + Sync + 'static, virtual_nodes: usize) -> Self {
        Self {
            kind: Kind::ConsistentHashing {
                key: Arc::new(move |msg: &M| ring_hasher().hash_one(key(msg))),
                virtual_nodes,
            },
        }
    }

    /// Every message to every routee (a copy each).
    pub fn broadcast() -> Self
    where
        M: Clone,
    {
        Self {
            kind: Kind::Broadcast(<M as Clone>::clone),
        }
    }
}

/// One fixed hasher for keys and ring points, so a key's place on the ring
/// depends only on the key and the routees.
fn ring_hasher() -> foldhash::fast::FixedState {
    foldhash::fast::FixedState::with_seed(0x5745_4952_524f_5554)
}

/// The routees of a router at one moment; replaced whole on every change.
pub(crate) struct Routees<M> {
    pub(crate) refs: Vec<ActorRef<M>>,
    /// Consistent hashing only: (point, index into `refs`), sorted.
    ring: Vec<(u64, u32)>,
}

impl<M: Send + 'static> Routees<M> {
    pub(crate) fn new(refs: Vec<ActorRef<M>>, routing: &Routing<M>) -> Self {
        let ring = match &routing.kind {
            Kind::ConsistentHashing { virtual_nodes, .. } => {
                let hasher = &ring_hasher();
                let mut ring: Vec<(u64, u32)> = refs
                    .iter()
                    .enumerate()
                    .flat_map(|(i, r)| {
                        // The path with its uid: one incarnation, one place.
                        let id = r.path().to_string();
                        (0..*virtual_nodes).map(move |v| (hasher.hash_one((&id, v)), i as u32))
                    })
                    .collect();
                ring.sort_unstable();
                ring
            }
            _ => Vec::new(),
        };
        Self { refs, ring }
    }

    /// The routee for a message with ring key `key`.
    fn on_ring(&self, key: u64) -> &ActorRef<M> {
        let at = self.ring.partition_point(|&(point, _)| point < key);
        let (_, index) = self.ring[if at == self.ring.len() { 0 } else { at }];
        &self.refs[index as usize]
    }

    /// The least busy routee; the first idle one with an empty mailbox ends
    /// the search.
    fn least_busy(&self) -> &ActorRef<M> {
        let mut best = &self.refs[0];
        let mut best_load = usize::MAX;
        for routee in &self.refs {
            let load = routee.inner.load_hint();
            if load == 0 {
                return routee;
            }
            if load < best_load {
                best = routee;
                best_load = load;
            }
        }
        best
    }

    /// Send `msg` to the routee(s) `routing` picks; `next` is the
    /// round-robin counter. `None` gives the message back: no routee.
    #[inline]
    pub(crate) fn route(
        &self,
        routing: &Routing<M>,
        next: &AtomicUsize,
        msg: M,
    ) -> Result<bool, M> {
        let len = self.refs.len();
        if len == 0 {
            return Err(msg);
        }
        let target = match &routing.kind {
            Kind::RoundRobin => &self.refs[next.fetch_add(1, Ordering::Relaxed) % len],
            Kind::Random => &self.refs[crate::random::below(len)],
            Kind::SmallestMailbox => self.least_busy(),
            Kind::ConsistentHashing { key, .. } => self.on_ring(key(&msg)),
            Kind::Broadcast(copy) => return Ok(self.broadcast(msg, *copy)),
            Kind::Balancing(queue) => {
                queue.push(Envelope::Msg(msg, Stamp::default()));
                self.nudge_one(next.fetch_add(1, Ordering::Relaxed));
                return Ok(true);
            }
        };
        Ok(target.deliver(msg) != Delivery::DeadLetter)
    }

    /// Start one idle routee of a balancing pool, trying them from `start`
    /// on (mailbox rule 6): if none is idle, each is scheduled or running
    /// and takes from the shared queue before it goes idle.
    fn nudge_one(&self, start: usize) {
        let len = self.refs.len();
        for i in 0..len {
            if self.refs[(start + i) % len].inner.clone().nudge() {
                return;
            }
        }
    }

    /// A copy to every routee; whether any took it.
    pub(crate) fn broadcast(&self, msg: M, copy: fn(&M) -> M) -> bool {
        let Some((last, rest)) = self.refs.split_last() else {
            return false;
        };
        let mut delivered = false;
        for routee in rest {
            delivered |= routee.deliver(copy(&msg)) != Delivery::DeadLetter;
        }
        delivered | (last.deliver(msg) != Delivery::DeadLetter)
    }
}
