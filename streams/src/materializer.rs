//! [`Materializer`]: runs blueprints on an actor system.

use crate::running::{Registration, Running};
use crate::sync::{Arc, AtomicU64, Ordering, StaticAtomicU64};

use weir_actor::ActorSystem;

/// Runs blueprints: each island of a materialized graph becomes a task of
/// this system's pool, with an inbox of its own (named
/// `stream-<n>-<island>-<stage>` in dead letters, the instrumentation hook
/// and snapshots). Cheap to clone; making one starts nothing.
///
/// A materializer does not own its system: dropping the system's last
/// owning handle terminates it even while materializers live (streams run
/// afterwards fail to start, with `MaterializeError`).
///
/// # Shutdown
///
/// The streams of a system stop in the `ServiceStop` phase of its
/// [coordinated shutdown](weir_actor::shutdown) (which
/// [`ActorSystem::terminate`] runs): every running stream is aborted, its
/// sinks' completions fail with `ErrorKind::AbruptTermination`, and the
/// phase waits until they have all stopped (at most the phase's time-out).
/// A stream started by a shutdown task of an earlier phase is stopped
/// there too; one started later stops with the actors. A stream that
/// cannot stop (an IO stage blocked in a system call) does not hold
/// termination up: it is left behind, and the
/// [`TerminationReport`](weir_actor::TerminationReport) lists its actor and
/// thread. [`shutdown`](Self::shutdown) does the same for the streams of
/// one materializer.
///
/// # Examples
///
/// ```
/// use weir_streams::prelude::*;
///
/// let system = weir_actor::ActorSystem::new("mat").unwrap();
/// let materializer = Materializer::new(&system);
/// let total = Source::range(1u64..=10).run_with(Sink::fold(0, |a, x| a + x), &materializer);
/// assert_eq!(total.wait(), Ok(55));
/// system.terminate().wait().unwrap();
/// ```
#[derive(Clone, Debug)]
pub struct Materializer {
    /// Non-owning: a materializer must not keep its system running.
    system: ActorSystem,
    streams: Arc<AtomicU64>,
    /// The system's running streams.
    running: Arc<Running>,
    fusion: bool,
    stage_counters: bool,
}

/// Settings for a [`Materializer`], from [`Materializer::builder`].
///
/// # Examples
///
/// ```
/// use weir_streams::prelude::*;
///
/// let system = weir_actor::ActorSystem::new("unfused").unwrap();
/// // Every operator runs as its own stage: slower, and the same result.
/// let unfused = Materializer::builder(&system).fusion(false).build();
/// let evens = Source::range(1u64..=10).filter(|x| x % 2 == 0).map(|x| x * 10);
/// assert_eq!(evens.run_with(Sink::collect(), &unfused).wait(), Ok(vec![20, 40, 60, 80, 100]));
/// system.terminate().wait().unwrap();
/// ```
#[derive(Debug)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct MaterializerBuilder {
    system: ActorSystem,
    fusion: bool,
    stage_counters: bool,
}

impl MaterializerBuilder {
    /// Whether the planner fuses (on by default): runs of simple operators
    /// into one stage, an iterator source into the operators and folding
    /// sink after it, a folding sink into an async boundary, and so on.
    /// Off, every operator runs as its own stage, which gives the same
    /// results more slowly: the differential tests compare the two.
    pub fn fusion(mut self, on: bool) -> Self {
        self.fusion = on;
        self
    }

    /// Whether each island counts, per stage, the elements in and out and
    /// how long the stage waited for demand or for an element (off by
    /// default), for [`Materializer::snapshot`] to show
    /// ([`StageCounters`](crate::snapshot::StageCounters)). Off, nothing is
    /// counted and an island runs exactly as if counters did not exist;
    /// on, each element costs one more add per connection it crosses, and
    /// each turn of an island one pass over its connections.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("counting").unwrap();
    /// let counting = Materializer::builder(&system).stage_counters(true).build();
    /// assert!(counting.stage_counters());
    /// assert!(!Materializer::new(&system).stage_counters());
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn stage_counters(mut self, on: bool) -> Self {
        self.stage_counters = on;
        self
    }

    /// The materializer.
    pub fn build(self) -> Materializer {
        let mut materializer = Materializer::new(&self.system);
        materializer.fusion = self.fusion;
        materializer.stage_counters = self.stage_counters;
        materializer
    }
}

static MATERIALIZERS: StaticAtomicU64 = StaticAtomicU64::new(0);

impl Materializer {
    /// A materializer for `system`.
    pub fn new(system: &ActorSystem) -> Self {
        // Stream numbers are unique per process so that several
        // materializers of one system never pick the same actor name.
        let base = MATERIALIZERS.fetch_add(1, Ordering::Relaxed) << 40;
        Self {
            system: system.non_owning(),
            streams: Arc::new(AtomicU64::new(base)),
            running: Running::of(system),
            fusion: true,
            stage_counters: false,
        }
    }

    /// A materializer for `system` with settings (see [`MaterializerBuilder`]).
    pub fn builder(system: &ActorSystem) -> MaterializerBuilder {
        MaterializerBuilder {
            system: system.non_owning(),
            fusion: true,
            stage_counters: false,
        }
    }

    /// Whether the planner fuses stages (see [`MaterializerBuilder::fusion`]).
    pub fn fusion(&self) -> bool {
        self.fusion
    }

    /// Whether its islands count per stage (see
    /// [`MaterializerBuilder::stage_counters`]).
    pub fn stage_counters(&self) -> bool {
        self.stage_counters
    }

    /// The actor system streams run in.
    pub fn system(&self) -> &ActorSystem {
        &self.system
    }

    /// Stop every stream this materializer (or a clone of it) runs: they
    /// are aborted as in the system's shutdown (see [Shutdown](#shutdown)).
    /// The materializer can run new streams afterwards.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// use weir_streams::ErrorKind;
    ///
    /// let system = weir_actor::ActorSystem::new("mat-shutdown").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let never_ends = Source::repeat(1u32).async_boundary().run_with(Sink::ignore(), &materializer);
    /// materializer.shutdown();
    /// assert!(matches!(never_ends.wait().unwrap_err().kind(), ErrorKind::AbruptTermination));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn shutdown(&self) {
        drop(Arc::clone(&self.running).stop(Some(self.id())));
    }

    /// Ask every running island of this materializer's streams for a
    /// snapshot: its stages, each connection's state (which side it waits
    /// for) and how long the island has waited, so a stuck stream shows
    /// the stage that holds it back. See [`crate::snapshot`].
    ///
    /// Each island answers from its own task between two turns, reading
    /// state it keeps anyway: taking a snapshot costs the running streams
    /// one message per island and nothing per element. A graph run as one
    /// fused loop (a single pool task with no ports) is not listed.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("mat-snapshot").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let (queue, done) = Source::<u32, _>::queue(4).unwrap()
    ///     .async_boundary()
    ///     .to_mat(Sink::ignore(), Keep::both)
    ///     .run(&materializer);
    /// let streams = materializer.snapshot().wait_timeout(Duration::from_secs(5)).unwrap();
    /// assert_eq!(streams[0].islands.len(), 2); // one each side of the boundary
    /// queue.complete();
    /// done.wait().unwrap();
    /// // A finished stream is gone from the snapshot.
    /// assert!(materializer.snapshot().wait_timeout(Duration::from_secs(5)).unwrap().is_empty());
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn snapshot(&self) -> crate::snapshot::PendingSnapshot {
        self.running.snapshot(Some(self.id()))
    }

    /// [`snapshot`](Self::snapshot) of every stream running on this
    /// materializer's system, whichever materializer ran it.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("system-snapshot").unwrap();
    /// let (one, two) = (Materializer::new(&system), Materializer::new(&system));
    /// let (queue, done) = Source::<u32, _>::queue(4).unwrap()
    ///     .to_mat(Sink::ignore(), Keep::both)
    ///     .run(&one);
    /// let streams = two.system_snapshot().wait_timeout(Duration::from_secs(5)).unwrap();
    /// assert_eq!(streams.len(), 1);
    /// queue.complete();
    /// done.wait().unwrap();
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn system_snapshot(&self) -> crate::snapshot::PendingSnapshot {
        self.running.snapshot(None)
    }

    /// How many islands of this materializer's streams are running (a
    /// graph run as a pool task counts as one).
    #[doc(hidden)]
    pub fn running_islands(&self) -> usize {
        self.running.count(Some(self.id()))
    }

    /// Unique per materializer (and its clones): the high bits of its
    /// stream numbers.
    fn id(&self) -> u64 {
        self.streams.load(Ordering::Relaxed) >> 40
    }

    /// Reserve a place among the running streams for an island (or a
    /// fused graph) about to run as a pool task.
    pub(crate) fn reserve_task(&self) -> Registration {
        self.running.reserve_task(self.id())
    }

    pub(crate) fn next_stream_id(&self) -> u64 {
        self.streams.fetch_add(1, Ordering::Relaxed)
    }
}
