//! Shared helpers for the Weir benchmarks (see `benches/`).
//!
//! [`CountingAlloc`] counts heap allocations so a bench can report
//! allocations per message next to its timings.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

/// A global allocator that counts allocations (not frees) and forwards to
/// the system allocator. Install it in a bench binary with
/// `#[global_allocator]`.
#[derive(Debug)]
pub struct CountingAlloc {
    allocations: AtomicU64,
    bytes: AtomicU64,
}

impl CountingAlloc {
    /// A counter at zero.
    pub const fn new() -> Self {
        Self {
            allocations: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
        }
    }

    /// Allocations so far.
    pub fn allocations(&self) -> u64 {
        self.allocations.load(Ordering::Relaxed)
    }

    /// Bytes requested by allocations so far (frees are not subtracted).
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }
}

impl Default for CountingAlloc {
    fn default() -> Self {
        Self::new()
    }
}

// SAFETY: every call forwards to `System` with the caller's arguments
// unchanged, so `System`'s guarantees carry over; the counter has no effect on
// the memory handed out.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        self.allocations.fetch_add(1, Ordering::Relaxed);
        self.bytes
            .fetch_add(layout.size() as u64, Ordering::Relaxed);
        // SAFETY: forwarded unchanged from our caller, who upholds `alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        self.allocations.fetch_add(1, Ordering::Relaxed);
        self.bytes
            .fetch_add(layout.size() as u64, Ordering::Relaxed);
        // SAFETY: forwarded unchanged from our caller, who upholds `alloc_zeroed`'s
        // contract. (`System`'s calloc skips the memset the default
        // `alloc` + zeroing would do for fresh pages.)
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System` via `alloc`/`realloc` above with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        self.allocations.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(new_size as u64, Ordering::Relaxed);
        // SAFETY: forwarded unchanged from our caller, who upholds `realloc`'s contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// A two-actor ping-pong: one ball bounced `n` times between two players.
pub mod ping_pong {
    use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

    use weir_actor::{Actor, ActorRef, ActorSystem, Context, Props};

    /// What the players exchange.
    #[derive(Debug)]
    pub enum Ball {
        /// Who to play with.
        Peer(ActorRef<Ball>),
        /// The ball, with the number of hits left.
        Hit(u64),
    }

    struct Player {
        peer: Option<ActorRef<Ball>>,
        done: SyncSender<()>,
    }

    impl Actor for Player {
        type Msg = Ball;
        fn receive(&mut self, _: &mut Context<Self>, msg: Ball) {
            match msg {
                Ball::Peer(p) => self.peer = Some(p),
                Ball::Hit(0) => self.done.send(()).unwrap(),
                Ball::Hit(n) => self.peer.as_ref().expect("peer set").tell(Ball::Hit(n - 1)),
            }
        }
    }

    /// Two players that know each other.
    #[derive(Debug)]
    pub struct PingPong {
        first: ActorRef<Ball>,
        done: Receiver<()>,
    }

    impl PingPong {
        /// Spawn the two players in `system`.
        pub fn new(system: &ActorSystem) -> Self {
            let (tx, done) = sync_channel(1);
            let (ta, tb) = (tx.clone(), tx);
            let a = system
                .spawn_anonymous(Props::new(move || Player {
                    peer: None,
                    done: ta.clone(),
                }))
                .unwrap();
            let b = system
                .spawn_anonymous(Props::new(move || Player {
                    peer: None,
                    done: tb.clone(),
                }))
                .unwrap();
            a.tell(Ball::Peer(b.clone()));
            b.tell(Ball::Peer(a.clone()));
            Self { first: a, done }
        }

        /// Play `hits` hits (`hits + 1` messages) and wait for the last.
        pub fn play(&self, hits: u64) {
            self.first.tell(Ball::Hit(hits));
            self.done.recv().unwrap();
        }
    }
}

/// Run `rows` measurements `runs` times each, interleaved: round after
/// round every row once, the order rotated each round so no row always
/// runs first (a burst of load elsewhere on the box hits them all alike).
/// `measure(i)` runs row `i` once and returns its rate; the result is each
/// row's median rate.
///
/// ```
/// let medians = weir_benches::interleaved_medians(3, 2, |i| (i + 1) as f64);
/// assert_eq!(medians, vec![1.0, 2.0]);
/// ```
pub fn interleaved_medians(
    runs: usize,
    rows: usize,
    mut measure: impl FnMut(usize) -> f64,
) -> Vec<f64> {
    let runs = runs.max(1);
    let mut rates: Vec<Vec<f64>> = vec![Vec::with_capacity(runs); rows];
    for round in 0..runs {
        for k in 0..rows {
            let i = (k + round) % rows;
            rates[i].push(measure(i));
        }
    }
    rates
        .into_iter()
        .map(|mut r| {
            r.sort_by(f64::total_cmp);
            r[r.len() / 2]
        })
        .collect()
}

pub mod akka_pingpong;
pub mod async_pingpong;
pub mod gated_tell;
pub mod hops;
pub mod hubs;
pub mod idle_streams;

pub mod actor_ref_source;
/// Async operators beside `futures::StreamExt::buffered` (`weir-bench
/// async-ops`, feature `tokio`).
#[cfg(feature = "tokio")]
pub mod async_ops;
pub mod interop;
pub mod io;
pub mod islands;
/// Many small graphs materialized (`weir-bench materialize`).
pub mod materialize;
#[cfg(feature = "nats")]
pub mod nats_server;
/// Peer frameworks side by side (`weir-bench peers`, with the `peers` feature).
pub mod peers;
#[cfg(feature = "nats")]
pub mod remote;
#[cfg(feature = "nats")]
pub mod remote_refs;
#[cfg(feature = "nats")]
pub mod remote_reliable;
pub mod routers;
#[cfg(feature = "sim")]
pub mod sim;
pub mod streams_graph;
pub mod streams_pipeline;
pub mod streams_substreams;
#[cfg(feature = "peers")]
pub mod tcp_echo;
pub mod time_ops;
