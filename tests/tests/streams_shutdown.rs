//! Streams and shutdown: the coordinated shutdown stops running streams in
//! its `ServiceStop` phase, `Materializer::shutdown` stops one
//! materializer's streams, and a materializer does not keep its system
//! alive.

use std::sync::{Arc, Mutex};

use weir_actor::shutdown::{Phase, TaskOutcome};
use weir_streams::ErrorKind;
use weir_streams::prelude::*;
use weir_tests::{PATIENCE, QUIET, clocked_stream_system, eventually, shutdown, stream_system};

/// A stream that runs until it is stopped, across an async boundary (so
/// it has two islands).
fn endless(materializer: &Materializer) -> Completion<()> {
    Source::repeat(1u32)
        .async_boundary()
        .run_with(Sink::ignore(), materializer)
}

#[test]
fn terminate_stops_running_streams_in_the_service_stop_phase() {
    // On a test clock that never moves: the phase ends because the streams
    // stopped, not at a time-out.
    let (system, materializer, _clock) = clocked_stream_system("streams-stop");
    let running = endless(&materializer);
    assert!(eventually(PATIENCE, || materializer.running_islands() == 2));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let running = Arc::new(Mutex::new(Some(running)));
    for (phase, name) in [
        (Phase::ServiceRequestsDone, "before"),
        (Phase::BeforeActorSystemTerminate, "after"),
    ] {
        let (seen, running) = (seen.clone(), running.clone());
        system
            .coordinated_shutdown()
            .add_task(phase, name, move || {
                let done = running.lock().unwrap().as_ref().unwrap().is_completed();
                seen.lock().unwrap().push((name, done));
                std::future::ready(())
            })
            .unwrap();
    }
    system.terminate().wait_timeout(PATIENCE).unwrap();
    assert_eq!(*seen.lock().unwrap(), [("before", false), ("after", true)]);
    let completion = running.lock().unwrap().take().unwrap();
    assert!(matches!(
        completion.wait().unwrap_err().kind(),
        ErrorKind::AbruptTermination
    ));
    let report = system.coordinated_shutdown().run("again").report();
    assert!(
        report.tasks.contains(&(
            Phase::ServiceStop,
            "stop-streams".to_owned(),
            TaskOutcome::Done
        )),
        "{report:?}"
    );
}

#[test]
fn a_finished_stream_leaves_the_registry() {
    let (system, materializer) = stream_system("streams-registry");
    let sum = Source::range(1u64..=1000)
        .async_boundary()
        .run_with(Sink::fold(0, |a, x| a + x), &materializer);
    assert_eq!(sum.wait(), Ok(500_500));
    assert!(eventually(PATIENCE, || materializer.running_islands() == 0));
    shutdown(&system);
}

#[test]
fn materializer_shutdown_stops_only_its_own_streams() {
    let (system, first) = stream_system("streams-mat-shutdown");
    let second = Materializer::new(&system);
    let (mine, other) = (endless(&first), endless(&second));
    first.clone().shutdown(); // clones share the streams
    assert!(matches!(
        mine.wait().unwrap_err().kind(),
        ErrorKind::AbruptTermination
    ));
    assert!(eventually(PATIENCE, || first.running_islands() == 0));
    let other = other
        .wait_timeout(QUIET)
        .expect_err("the other materializer's stream runs on");
    assert_eq!(second.running_islands(), 2);
    // And the first materializer still runs new streams.
    let sum = Source::range(1u64..=10)
        .async_boundary()
        .run_with(Sink::fold(0, |a, x| a + x), &first);
    assert_eq!(sum.wait(), Ok(55));
    shutdown(&system);
    assert!(matches!(
        other.wait().unwrap_err().kind(),
        ErrorKind::AbruptTermination
    ));
}

#[test]
fn a_materializer_does_not_keep_its_system_alive() {
    let (system, materializer) = stream_system("streams-mat-drop");
    let terminated = system.when_terminated();
    drop(system); // the last owning handle
    assert!(terminated.is_completed());
    // Running on the terminated system fails, typed, and does not hang.
    let late = Source::single(1u32)
        .async_boundary()
        .run_with(Sink::head(), &materializer);
    assert!(matches!(
        late.wait().unwrap_err().kind(),
        ErrorKind::AbruptTermination
    ));
}
