//! weir-streams' test probes on a simulation's thread: their waits drive
//! the simulation (timeouts on its clock), as `TestProbe`'s do.

use std::time::{Duration, Instant};

use weir_actor::sim::Simulation;
use weir_streams::prelude::*;
use weir_streams::testkit::{TestSink, TestSource};

use super::sweep;

/// A probe-driven stream across two boundaries, with an `initial_delay`
/// of a simulated minute: every `expect_*` drives the simulation (the
/// clock jumps over the delay), so the script runs in no real time and
/// replays from its seed. Waiting for real, as the probes did, nothing
/// ran the simulation: the first `expect_request` found nothing.
#[test]
fn probes_drive_the_simulation_they_wait_on() {
    let real = Instant::now();
    sweep(|sim: &Simulation| {
        let mat = Materializer::new(sim.system());
        let (mut up, down) = TestSource::probe::<u64>()
            .async_boundary()
            .initial_delay(Duration::from_secs(60))
            .map(|x| x * 2)
            .async_boundary()
            .to_mat(TestSink::probe(), Keep::both)
            .run(&mat);
        let mut down = down.with_timeout(Duration::from_secs(120));
        down.request(3);
        up.expect_request();
        for x in 1..=3 {
            up.send_next(x);
        }
        assert_eq!(down.expect_next_n(3), vec![2, 4, 6]);
        assert!(sim.clock().elapsed() >= Duration::from_secs(60));
        // A bounded wait for nothing moves the simulation's clock, not
        // the wall's.
        let before = sim.clock().elapsed();
        down.expect_no_message(Duration::from_secs(5));
        assert_eq!(sim.clock().elapsed() - before, Duration::from_secs(5));
        up.send_complete();
        down.expect_complete();
        down.wait_idle();
    });
    assert!(
        real.elapsed() < Duration::from_secs(20),
        "{:?}",
        real.elapsed()
    );
}

/// A sink probe's cancellation reaches a source probe across a boundary
/// in every interleaving.
#[test]
fn a_cancellation_crosses_a_boundary_to_the_source_probe() {
    sweep(|sim: &Simulation| {
        let mat = Materializer::new(sim.system());
        let (mut up, mut down) = TestSource::probe::<u64>()
            .async_boundary()
            .filter(|x| x % 2 == 0)
            .to_mat(TestSink::probe(), Keep::both)
            .run(&mat);
        down.request(1);
        up.send_next(1);
        up.send_next(2);
        assert_eq!(down.expect_next(), 2);
        down.cancel();
        up.expect_cancellation();
    });
}
