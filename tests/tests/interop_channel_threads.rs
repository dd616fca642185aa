//! Crossbeam bridges share one waiter thread, joined when the last bridge stops (one test per binary, so the thread count is exact).
#![cfg(target_os = "linux")]

use weir_interop::{SinkToSender, SourceFromReceiver};
use weir_streams::prelude::*;
use weir_tests::{PATIENCE, eventually, shutdown};

fn live_threads() -> usize {
    std::fs::read_dir("/proc/self/task").map_or(0, Iterator::count)
}

#[test]
fn bridges_share_one_waiter_that_is_joined_at_terminate() {
    let before = live_threads();
    let system = weir_actor::ActorSystem::builder()
        .name("channel-threads")
        .threads(2)
        .build()
        .unwrap();
    let mat = Materializer::new(&system);
    let system_threads = live_threads() - before; // 2 workers + the scheduler
    let mut inputs = Vec::new();
    let mut outputs = Vec::new();
    let mut done = Vec::new();
    for _ in 0..8 {
        // In: a channel nobody has sent on yet, so the bridge waits.
        let (tx, rx) = crossbeam_channel::bounded::<u32>(1);
        done.push(Source::from_receiver(rx).run_with(Sink::collect(), &mat));
        inputs.push(tx);
        // Out: a full channel, so the bridge waits for room.
        let (tx, rx) = crossbeam_channel::bounded::<u32>(1);
        tx.send(0).unwrap();
        drop(Source::single(1u32).run_with(Sink::to_sender(tx), &mat));
        outputs.push(rx);
    }
    // Every bridge is waiting; one thread waits for all of them.
    assert!(
        eventually(PATIENCE, || live_threads() == before + system_threads + 1),
        "16 waiting bridges, one waiter: {} threads over the baseline, {system_threads} of them the system's",
        live_threads() - before
    );
    // And it wakes them: every bridge moves on.
    for (tx, (rx, done)) in inputs.iter().zip(outputs.iter().zip(done.iter())) {
        tx.send(7).unwrap();
        assert_eq!(rx.recv_timeout(PATIENCE), Ok(0));
        assert_eq!(rx.recv_timeout(PATIENCE), Ok(1));
        assert!(!done.is_completed());
    }
    drop(inputs);
    for done in done {
        assert_eq!(done.wait(), Ok(vec![7]));
    }
    // Bridges still waiting when the system terminates.
    let (_tx, rx) = crossbeam_channel::bounded::<u32>(1);
    drop(Source::from_receiver(rx).run_with(Sink::ignore(), &mat));
    shutdown(&system);
    // A joined thread can stay listed in /proc for a moment while the
    // kernel tears it down; a thread left running never settles.
    assert!(
        eventually(std::time::Duration::from_secs(1), || live_threads()
            == before),
        "the waiter has been joined with the system's threads ({} -> {})",
        before,
        live_threads()
    );
}
