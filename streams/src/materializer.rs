//! [`Materializer`]: runs blueprints on an actor system.

use crate::sync::{Arc, AtomicU64, Ordering, StaticAtomicU64};

use weir_actor::ActorSystem;

/// Runs blueprints: each island of a materialized graph becomes an actor
/// of this system (under `/system`, named `stream-<n>-<island>-<stage>`).
/// Cheap to clone; making one starts nothing.
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
    system: ActorSystem,
    streams: Arc<AtomicU64>,
    fusion: bool,
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

    /// The materializer.
    pub fn build(self) -> Materializer {
        let mut materializer = Materializer::new(&self.system);
        materializer.fusion = self.fusion;
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
            system: system.clone(),
            streams: Arc::new(AtomicU64::new(base)),
            fusion: true,
        }
    }

    /// A materializer for `system` with settings (see [`MaterializerBuilder`]).
    pub fn builder(system: &ActorSystem) -> MaterializerBuilder {
        MaterializerBuilder {
            system: system.clone(),
            fusion: true,
        }
    }

    /// Whether the planner fuses stages (see [`MaterializerBuilder::fusion`]).
    pub fn fusion(&self) -> bool {
        self.fusion
    }

    /// The actor system streams run in.
    pub fn system(&self) -> &ActorSystem {
        &self.system
    }

    pub(crate) fn next_stream_id(&self) -> u64 {
        self.streams.fetch_add(1, Ordering::Relaxed)
    }
}
