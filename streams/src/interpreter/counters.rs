//! Per-stage counters, when the materializer asks for them
//! (`MaterializerBuilder::stage_counters`): the elements pushed over each
//! connection (kept in the connection, `Conn::pushed`), and how long each stage waited for demand or for an
//! element, for a snapshot (`crate::snapshot::StageCounters`).
//!
//! # What they cost
//!
//! Off (the default), an island has no [`Counters`] and runs the event
//! loop instantiated without counting (`Island::run_within` picks the
//! instance once per call, not per element): the instructions per element
//! are those of an island that cannot count. On, a push delivered adds one
//! to its connection's count, and at the start of each turn (whose time
//! the island reads anyway) the time since the last turn began goes to
//! every stage waiting then: one pass over the connections per turn.
//!
//! # What "waited" means
//!
//! Between two turns nothing runs, so each connection's state at the start
//! of a turn is the one it had since the last turn ended: a stage whose
//! outlet is not pulled (or whose element is not grabbed) waited for
//! demand; a stage that pulled an inlet and got nothing waited for an
//! element. The time counted is from the start of the last turn to the
//! start of this one: the idle time, and the last turn's own running time
//! (a turn is at most a budget of events, microseconds, against waits
//! that matter in milliseconds; the turn's end is not read, which keeps
//! the clock reads at one per turn). A stage waiting on several ports
//! counts the time once.

use std::time::{Duration, Instant};

use super::inspect::connection_state;
use crate::snapshot::{Side, StageCounters};
use crate::stage::core::Core;

/// One island's counters (module docs).
pub(crate) struct Counters {
    /// Per stage: idle time spent waiting for demand.
    for_demand: Vec<Duration>,
    /// Per stage: idle time spent waiting for an element.
    for_element: Vec<Duration>,
    /// When the island's last turn began; `None` before the first.
    last_turn: Option<Instant>,
    /// Scratch per stage: waits for demand (bit 0), for an element (bit 1).
    waits: Vec<u8>,
}

impl Counters {
    pub(crate) fn new(stages: usize) -> Self {
        Self {
            for_demand: vec![Duration::ZERO; stages],
            for_element: vec![Duration::ZERO; stages],
            last_turn: None,
            waits: vec![0; stages],
        }
    }

    /// A turn begins at `now`: each stage waiting now has waited since the
    /// last turn began (module docs).
    pub(crate) fn turn_begins(&mut self, core: &Core, now: Instant) {
        // No connection, no wait (an island of one fused stage, as both
        // halves of a fully fused boundary are): its turns, a few elements
        // each with a small buffer, pay nothing here.
        if core.conns.is_empty() {
            return;
        }
        let Some(since) = self.last_turn.replace(now) else {
            return;
        };
        let idle = now.saturating_duration_since(since);
        for conn in &core.conns {
            match connection_state(conn.state).waits_for() {
                Some(Side::Downstream) => self.waits[conn.up as usize] |= 1,
                Some(Side::Upstream) => self.waits[conn.down as usize] |= 2,
                None => {}
            }
        }
        // Each stage's flags are read and cleared for the next turn.
        for (stage, waits) in self.waits.iter_mut().enumerate() {
            let flags = std::mem::take(waits);
            if flags & 1 != 0 {
                self.for_demand[stage] += idle;
            }
            if flags & 2 != 0 {
                self.for_element[stage] += idle;
            }
        }
    }

    /// Stage `stage`'s counters: the elements over its inlets and its
    /// outlets, and its waits.
    pub(crate) fn of_stage(&self, core: &Core, stage: usize) -> StageCounters {
        let ports = core.ports[stage];
        let base = ports.base as usize;
        let ins = usize::from(ports.ins);
        let sum =
            |links: &[u32]| -> u64 { links.iter().map(|&c| core.conns[c as usize].pushed).sum() };
        StageCounters {
            elements_in: sum(&core.links[base..base + ins]),
            elements_out: sum(&core.links[base + ins..base + ins + usize::from(ports.outs)]),
            waited_for_demand: self.for_demand[stage],
            waited_for_element: self.for_element[stage],
        }
    }
}
