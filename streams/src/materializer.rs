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
        }
    }

    /// The actor system streams run in.
    pub fn system(&self) -> &ActorSystem {
        &self.system
    }

    pub(crate) fn next_stream_id(&self) -> u64 {
        self.streams.fetch_add(1, Ordering::Relaxed)
    }
}
