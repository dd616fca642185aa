//! A stream under test between two probes, on a test clock.

use std::time::Duration;

use weir_actor::ActorSystem;
use weir_actor::testkit::TestClock;
use weir_streams::Flow;
use weir_streams::prelude::*;
use weir_streams::testkit::{SinkProbe, SourceProbe, TestSink, TestSource};

/// `flow` between a source probe and a sink probe, on a test clock.
#[derive(Debug)]
pub struct Rig<I, O> {
    pub system: ActorSystem,
    pub clock: TestClock,
    pub up: SourceProbe<I>,
    pub down: SinkProbe<O>,
}

impl<I: Send + 'static, O: Send + 'static> Rig<I, O> {
    /// Materialize `flow` between the probes and wait until it runs.
    pub fn new(name: &str, flow: Flow<I, O>) -> Self {
        let (system, mat, clock) = crate::clocked_stream_system(name);
        let (up, mut down) = TestSource::probe::<I>()
            .via(flow)
            .to_mat(TestSink::probe(), Keep::both)
            .run(&mat);
        down.wait_idle();
        Self {
            system,
            clock,
            up,
            down,
        }
    }

    /// Let the island handle what the test sent, advance the clock by
    /// `by`, and let the island handle what came due.
    pub fn advance(&mut self, by: Duration) {
        self.down.wait_idle();
        self.clock.advance(by);
        self.down.wait_idle();
    }

    /// Downstream has received nothing (checked once the island is idle,
    /// so without waiting).
    pub fn expect_nothing(&mut self) {
        self.down.wait_idle();
        self.down.expect_no_message(Duration::ZERO);
    }

    /// How many elements upstream has been asked for since the last call
    /// (once the island is idle).
    pub fn requests(&mut self) -> u64 {
        self.down.wait_idle();
        self.up.take_requests()
    }

    /// Send each of `elements` from upstream.
    pub fn send(&mut self, elements: impl IntoIterator<Item = I>) {
        for element in elements {
            self.up.send_next(element);
        }
    }

    pub fn shutdown(self) {
        crate::shutdown(&self.system);
    }
}
