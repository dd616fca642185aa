//! What a simulation records of its run: a digest of every step, and the
//! steps themselves when asked.

use std::fmt;
use std::time::Duration;

/// One step of a simulation, as its [`Trace`] records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TraceEntry {
    /// A unit ran (an actor's turn, a task's poll, an island's turn).
    Ran {
        /// The step's number, from 0.
        step: u64,
        /// The unit that ran: its key, given in the order units were first
        /// submitted (stable across runs of one seed).
        unit: u64,
        /// How many units its turn made runnable.
        submitted: u32,
        /// A digest of the keys of those units, in their queue order.
        digest: u64,
    },
    /// Nothing was runnable (or a timer was chosen to fire first): the
    /// clock moved to the next deadline and ran what was due there.
    Timer {
        /// The step's number, from 0.
        step: u64,
        /// The clock's time since the simulation started, after the jump.
        at: Duration,
        /// How many units the timers made runnable.
        submitted: u32,
        /// A digest of the keys of those units, in their queue order.
        digest: u64,
    },
    /// A value the test recorded with [`Simulation::record`](super::Simulation::record).
    Event {
        /// The number of steps taken before it.
        step: u64,
        /// The value recorded.
        value: u64,
    },
}

/// What a simulation did, step by step: a digest of every step (always
/// kept, a few instructions per step) and, when the simulation was built
/// with [`record_trace`](super::SimulationBuilder::record_trace), the
/// steps themselves. Two runs of one seed give equal traces.
///
/// # Examples
///
/// ```
/// use weir_actor::sim::Simulation;
///
/// let run = |seed| {
///     let sim = Simulation::new(seed).unwrap();
///     sim.run_until_quiet().unwrap();
///     sim.trace()
/// };
/// assert_eq!(run(7), run(7));
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Trace {
    pub(super) digest: u64,
    pub(super) steps: u64,
    pub(super) entries: Option<Vec<TraceEntry>>,
}

impl Trace {
    /// A digest of every step so far: equal digests mean (all but surely)
    /// equal runs.
    pub fn digest(&self) -> u64 {
        self.digest
    }

    /// How many steps the simulation has taken.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// The steps, when recorded (empty otherwise).
    pub fn entries(&self) -> &[TraceEntry] {
        self.entries.as_deref().unwrap_or(&[])
    }

    /// The index of the first entry where `self` and `other` differ, if
    /// any (for a test that reports where two runs parted).
    pub fn first_difference(&self, other: &Trace) -> Option<usize> {
        let (a, b) = (self.entries(), other.entries());
        a.iter()
            .zip(b)
            .position(|(x, y)| x != y)
            .or_else(|| (a.len() != b.len()).then(|| a.len().min(b.len())))
    }

    pub(super) fn push(&mut self, entry: TraceEntry) {
        let (tag, a, b, c) = match entry {
            TraceEntry::Ran {
                unit,
                submitted,
                digest,
                ..
            } => (1, unit, u64::from(submitted), digest),
            TraceEntry::Timer {
                at,
                submitted,
                digest,
                ..
            } => (2, at.as_nanos() as u64, u64::from(submitted), digest),
            TraceEntry::Event { value, .. } => (3, value, 0, 0),
        };
        self.digest = mix(mix(mix(mix(self.digest ^ tag) ^ a) ^ b) ^ c);
        if !matches!(entry, TraceEntry::Event { .. }) {
            self.steps += 1;
        }
        if let Some(entries) = &mut self.entries {
            entries.push(entry);
        }
    }
}

/// A 64-bit finaliser (splitmix64's): every input bit moves every output
/// bit.
pub(super) fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

impl fmt::Debug for Trace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Trace")
            .field("digest", &format_args!("{:#018x}", self.digest))
            .field("steps", &self.steps)
            .field("recorded", &self.entries.as_ref().map(Vec::len))
            .finish()
    }
}
