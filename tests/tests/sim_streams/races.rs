//! More races: a hub whose producer fails while consumers attach, a
//! partition hub, substreams cut short, a kill switch racing completion.

use weir_actor::sim::Simulation;
use weir_streams::prelude::*;
use weir_streams::{BroadcastHub, KillSwitches, PartitionHub, StreamError};

use super::sweep;

/// The elements a consumer got are consecutive (nothing lost between).
fn consecutive(got: &[u64]) -> bool {
    got.windows(2).all(|w| w[1] == w[0] + 1)
}

#[test]
fn a_broadcast_hub_whose_producer_fails_while_consumers_attach() {
    sweep(|sim: &Simulation| {
        let mat = Materializer::new(sim.system());
        let fail_at = 20 + sim.seed() % 60;
        let source = Source::from_iter(0..200u64)
            .map(move |x| {
                if x == fail_at {
                    Err(StreamError::msg("producer fails"))
                } else {
                    Ok(x)
                }
            })
            .map_async(1, std::future::ready)
            .unwrap()
            .async_boundary()
            .run_with(BroadcastHub::sink(4).unwrap(), &mat);
        let mut consumers = Vec::new();
        for c in 0..4u64 {
            consumers.push((c, source.clone().run_with(Sink::collect(), &mat)));
            for _ in 0..(sim.seed() + c) % 9 * 4 {
                sim.step();
            }
        }
        for (c, consumer) in consumers {
            // The failure reaches every consumer attached before the end;
            // one attached after it completes at once, empty.
            match consumer.wait() {
                Err(_) => {}
                Ok(got) => assert!(got.is_empty(), "consumer {c}: {got:?}"),
            }
        }
    });
}

#[test]
fn a_partition_hub_routes_each_element_to_its_consumer_in_order() {
    sweep(|sim: &Simulation| {
        let mat = Materializer::new(sim.system());
        let consumers = 3u64;
        let source = Source::from_iter(0..300u64).async_boundary().run_with(
            PartitionHub::sink(|n, x: &u64| Some((*x % n as u64) as usize), 3, 8).unwrap(),
            &mat,
        );
        let outs: Vec<_> = (0..consumers)
            .map(|_| source.clone().run_with(Sink::collect(), &mat))
            .collect();
        let mut all: Vec<u64> = Vec::new();
        for out in outs {
            let got = out.wait().unwrap();
            // One residue class per consumer, in order.
            assert!(got.windows(2).all(|w| w[1] == w[0] + consumers), "{got:?}");
            all.extend(got);
        }
        all.sort_unstable();
        assert_eq!(all, (0..300).collect::<Vec<_>>(), "nothing lost or doubled");
    });
}

#[test]
fn substreams_cut_short_by_a_take_cancel_cleanly() {
    sweep(|sim: &Simulation| {
        let mat = Materializer::new(sim.system());
        let keep = 1 + sim.seed() % 15;
        let sums = Source::from_iter(0..200u64)
            .async_boundary()
            .split_when(|x| x % 10 == 0)
            .map(|x| x + 1)
            .concat_substreams()
            .async_boundary()
            .take(keep * 10)
            .run_with(Sink::collect(), &mat);
        let got = sums.wait().unwrap();
        assert_eq!(got, (1..=keep * 10).collect::<Vec<_>>());
    });
}

#[test]
fn a_kill_switch_racing_the_completion_of_finite_streams() {
    sweep(|sim: &Simulation| {
        let mat = Materializer::new(sim.system());
        let switch = KillSwitches::shared("race");
        let runs: Vec<_> = (0..4u64)
            .map(|i| {
                Source::from_iter(0..100 + i * 50)
                    .async_boundary()
                    .via(switch.flow())
                    .run_with(Sink::collect(), &mat)
            })
            .collect();
        for _ in 0..sim.seed() * 17 % 300 {
            sim.step();
        }
        let abort = sim.seed().is_multiple_of(2);
        if abort {
            switch.abort(StreamError::msg("aborted"));
        } else {
            switch.shutdown();
        }
        for (i, run) in runs.into_iter().enumerate() {
            let n = 100 + i as u64 * 50;
            match run.wait() {
                // Completed before the switch fired, or shut down: a prefix.
                Ok(got) => {
                    assert!(consecutive(&got) && got.len() as u64 <= n, "stream {i}");
                    assert!(
                        !abort || got.len() as u64 == n,
                        "stream {i}: aborted yet Ok"
                    );
                }
                Err(_) => assert!(abort, "stream {i} failed on a shutdown"),
            }
        }
    });
}
