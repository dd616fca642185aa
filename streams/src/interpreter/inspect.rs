//! An island's answer to a snapshot (`crate::snapshot`): its stages and
//! connections read from the state the interpreter keeps anyway (the
//! connections' state bits, the stages' names and port counts). Nothing
//! is counted per element.

use std::time::Duration;

use super::island::Island;
use crate::snapshot::{ConnectionSnapshot, ConnectionState, IslandSnapshot, StageSnapshot};
use crate::stage::core::{AVAILABLE, DEMANDED, DOWN_CLOSED, IN_DONE, PUSHED, UP_CLOSED};

impl Island {
    /// The island as it is now, numbered `index` in its stream and named
    /// `name`, having waited `idle_for`.
    pub(crate) fn inspect(&self, index: usize, name: &str, idle_for: Duration) -> IslandSnapshot {
        let core = &self.core;
        let stages = core
            .stages
            .iter()
            .zip(&core.ports)
            .zip(&self.logics)
            .enumerate()
            .map(|(i, ((meta, ports), logic))| StageSnapshot {
                name: meta.name.to_string(),
                inlets: ports.ins,
                outlets: ports.outs,
                finished: meta.finished,
                buffer: meta.gauge.and_then(|gauge| gauge(&**logic)),
                counters: self.counters.as_ref().map(|c| c.of_stage(core, i)),
            })
            .collect();
        let connections = core
            .conns
            .iter()
            .map(|conn| ConnectionSnapshot {
                from: conn.up as usize,
                to: conn.down as usize,
                state: connection_state(conn.state),
            })
            .collect();
        IslandSnapshot {
            index,
            name: name.to_owned(),
            stages,
            connections,
            idle_for,
        }
    }
}

/// What a connection's state bits (`crate::stage::core`'s table) say it
/// waits for. A cancel closes it at once; an element pushed before a
/// completion is still delivered, so the completion counts only once
/// nothing is in flight.
pub(super) fn connection_state(bits: u16) -> ConnectionState {
    if bits & (DOWN_CLOSED | IN_DONE) != 0 {
        ConnectionState::Closed
    } else if bits & PUSHED != 0 {
        ConnectionState::Pushed
    } else if bits & AVAILABLE != 0 {
        ConnectionState::NotGrabbed
    } else if bits & UP_CLOSED != 0 {
        ConnectionState::Closed
    } else if bits & DEMANDED != 0 {
        ConnectionState::Pulled
    } else {
        ConnectionState::NotPulled
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::connection_state;
    use crate::snapshot::ConnectionState;
    use crate::stage::core::{AVAILABLE, DEMANDED, DOWN_CLOSED, IN_DONE, PUSHED, UP_CLOSED};

    #[test]
    fn each_protocol_step_reads_as_what_it_waits_for() {
        assert_eq!(connection_state(0), ConnectionState::NotPulled);
        assert_eq!(connection_state(DEMANDED), ConnectionState::Pulled);
        assert_eq!(connection_state(PUSHED), ConnectionState::Pushed);
        assert_eq!(connection_state(AVAILABLE), ConnectionState::NotGrabbed);
        // Completed behind an element: the element is still to take.
        assert_eq!(
            connection_state(UP_CLOSED | AVAILABLE),
            ConnectionState::NotGrabbed
        );
        assert_eq!(
            connection_state(UP_CLOSED | DEMANDED),
            ConnectionState::Closed
        );
        assert_eq!(
            connection_state(DOWN_CLOSED | IN_DONE),
            ConnectionState::Closed
        );
    }
}
