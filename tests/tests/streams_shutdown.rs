//! Streams and shutdown: the coordinated shutdown stops running streams in
//! its `ServiceStop` phase, `Materializer::shutdown` stops one
//! materializer's streams, and a materializer does not keep its system
//! alive.

use std::os::unix::fs::OpenOptionsExt;
use std::sync::{Arc, Mutex};

use weir_actor::shutdown::{Phase, TaskOutcome};
use weir_streams::ErrorKind;
use weir_streams::io::FileIO;
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

// A graph that is one fused loop (an iterator source into a folding sink)
// runs as a task of the pool, not in an island: shutdown reaches it all
// the same.

/// A fused stream that runs until it is stopped: one task.
fn endless_task(materializer: &Materializer) -> Completion<()> {
    Source::repeat(1u32)
        .map(|x| x + 1)
        .run_with(Sink::ignore(), materializer)
}

/// A fused stream whose source never has anything ready: a task that
/// waits for a wake-up that never comes. The source keeps the waker, as a
/// real one would (so the task lives on until something wakes it).
fn waiting_task(materializer: &Materializer) -> Completion<()> {
    Source::from_poll_fn(|| {
        let mut parked: Vec<std::task::Waker> = Vec::new();
        move |cx: &mut std::task::Context<'_>| {
            parked.clear();
            parked.push(cx.waker().clone());
            std::task::Poll::<Option<Result<u32, StreamError>>>::Pending
        }
    })
    .run_with(Sink::ignore(), materializer)
}

#[test]
fn terminate_stops_fused_streams_run_as_tasks() {
    let (system, materializer) = stream_system("streams-task-stop");
    let (busy, waiting) = (endless_task(&materializer), waiting_task(&materializer));
    assert!(eventually(PATIENCE, || materializer.running_islands() == 2));
    shutdown(&system);
    for completion in [busy, waiting] {
        assert!(matches!(
            completion.wait().unwrap_err().kind(),
            ErrorKind::AbruptTermination
        ));
    }
    assert_eq!(materializer.running_islands(), 0);
}

#[test]
fn materializer_shutdown_wakes_and_stops_a_waiting_fused_stream() {
    let (system, materializer) = stream_system("streams-task-mat-shutdown");
    let other = Materializer::new(&system);
    let (mine, theirs) = (waiting_task(&materializer), endless_task(&other));
    assert!(eventually(PATIENCE, || materializer.running_islands() == 1));
    materializer.shutdown();
    let stopped = mine
        .wait_timeout(PATIENCE)
        .expect("the abort wakes the task");
    assert!(matches!(
        stopped.unwrap_err().kind(),
        ErrorKind::AbruptTermination
    ));
    assert!(eventually(PATIENCE, || materializer.running_islands() == 0));
    let theirs = theirs
        .wait_timeout(QUIET)
        .expect_err("the other materializer's stream runs on");
    assert_eq!(other.running_islands(), 1);
    shutdown(&system);
    assert!(matches!(
        theirs.wait().unwrap_err().kind(),
        ErrorKind::AbruptTermination
    ));
}

#[test]
fn a_fused_stream_on_a_terminated_system_fails_typed_and_does_not_hang() {
    let (system, materializer) = stream_system("streams-task-late");
    shutdown(&system);
    let late = Source::single(1u32).run_with(Sink::head(), &materializer);
    let late = late.wait_timeout(PATIENCE).expect("it does not hang");
    assert!(matches!(
        late.unwrap_err().kind(),
        ErrorKind::AbruptTermination
    ));
}

#[test]
fn a_fused_stream_that_never_ends_shares_its_only_worker() {
    // One worker: the task must give it up after each budget, or the
    // second stream would never run.
    let system = weir_actor::ActorSystem::builder()
        .name("streams-task-fair")
        .threads(1)
        .build()
        .unwrap();
    let materializer = Materializer::new(&system);
    let endless = endless_task(&materializer);
    let sum = Source::range(1u64..=100).run_with(Sink::fold(0, |a, x| a + x), &materializer);
    assert_eq!(
        sum.wait_timeout(PATIENCE).expect("it gets its turn"),
        Ok(5050)
    );
    shutdown(&system);
    assert!(matches!(
        endless.wait().unwrap_err().kind(),
        ErrorKind::AbruptTermination
    ));
}

#[test]
fn a_fused_stream_started_once_shutdown_began_is_stopped_in_service_stop() {
    // The first materializer is made inside a shutdown task of an earlier
    // phase: its registry still adds its task to `ServiceStop`, which stops
    // the stream there, before the actors go.
    let system = weir_actor::ActorSystem::new("streams-task-late-registry").unwrap();
    let slot: Arc<Mutex<Option<Completion<()>>>> = Arc::default();
    let (late, out) = (system.non_owning(), slot.clone());
    system
        .coordinated_shutdown()
        .add_task(Phase::BeforeServiceUnbind, "late-stream", move || {
            let materializer = Materializer::new(&late);
            *out.lock().unwrap() = Some(endless_task(&materializer));
            std::future::ready(())
        })
        .unwrap();
    system
        .terminate()
        .wait_timeout(PATIENCE)
        .expect("termination does not wait for the stream");
    let endless = slot.lock().unwrap().take().unwrap();
    let outcome = endless.wait_timeout(PATIENCE).expect("it was stopped");
    assert!(matches!(
        outcome.unwrap_err().kind(),
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
fn a_stream_run_after_the_service_stop_phase_still_runs_fused_or_not() {
    // A last flush in a late phase: the actors still run, and so does the
    // stream, whether it fuses into one loop or not.
    let (system, materializer) = stream_system("streams-task-after-stop");
    // (whether across a boundary, what the flush summed)
    type Flushed = Vec<(bool, Result<u64, StreamError>)>;
    let seen: Arc<Mutex<Flushed>> = Arc::default();
    for boundary in [false, true] {
        let (materializer, seen) = (materializer.clone(), seen.clone());
        let name = if boundary {
            "flush-islands"
        } else {
            "flush-fused"
        };
        system
            .coordinated_shutdown()
            .add_task(Phase::BeforeActorSystemTerminate, name, move || {
                let source = Source::from_iter(vec![1u64, 2, 3]);
                let source = if boundary {
                    source.async_boundary()
                } else {
                    source
                };
                let sum = source.run_with(Sink::fold(0u64, |a, x| a + x), &materializer);
                async move {
                    let sum = sum.await;
                    seen.lock().unwrap().push((boundary, sum));
                }
            })
            .unwrap();
    }
    shutdown(&system);
    let mut seen = seen.lock().unwrap().clone();
    seen.sort_by_key(|(boundary, _)| *boundary);
    assert_eq!(seen, [(false, Ok(6)), (true, Ok(6))]);
}

#[test]
fn a_completion_callback_that_panics_when_aborted_does_not_take_the_worker() {
    // One worker: the abort drops the stream's consumer there, and its
    // `on_complete` panics on the `AbruptTermination` it gets.
    let system = weir_actor::ActorSystem::builder()
        .name("streams-task-drop-panic")
        .threads(1)
        .build()
        .unwrap();
    let materializer = Materializer::new(&system);
    Source::repeat(1u32)
        .map(|x| x + 1)
        .run_with(Sink::on_complete(|r| r.expect("stopped")), &materializer);
    assert!(eventually(PATIENCE, || materializer.running_islands() == 1));
    materializer.shutdown();
    assert!(eventually(PATIENCE, || materializer.running_islands() == 0));
    let after = Source::range(1u64..=3).run_with(Sink::fold(0u64, |a, x| a + x), &materializer);
    assert_eq!(
        after.wait_timeout(PATIENCE).expect("the worker still runs"),
        Ok(6)
    );
    shutdown(&system);
}

#[test]
fn terminate_leaves_an_io_stage_blocked_in_a_system_call_behind() {
    // Opening a FIFO with no writer blocks the stage's own thread in
    // `open`: neither the streams' stop nor the actors' stop can reach it.
    let fifo = std::env::temp_dir().join(format!("weir-fifo-{}", std::process::id()));
    let _ = std::fs::remove_file(&fifo);
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo");
    let (system, materializer) = stream_system("streams-fifo");
    let shutdown = system.coordinated_shutdown();
    let short = std::time::Duration::from_millis(300);
    for phase in [Phase::ServiceStop, Phase::ActorSystemTerminate] {
        shutdown.set_phase_timeout(phase, short);
    }
    let _read = FileIO::from_path(&fifo, 64)
        .unwrap()
        .run_with(Sink::ignore(), &materializer);
    assert!(
        eventually(PATIENCE, blocked_in_fifo_open),
        "the stage opens the FIFO"
    );
    let started = std::time::Instant::now();
    let outcome = system.terminate().wait_timeout(PATIENCE);
    let elapsed = started.elapsed();
    // Open the writing end: the blocked `open` returns, the stage ends.
    // Without blocking (`O_NONBLOCK`): with no reader it fails instead.
    drop(
        std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(0o4000)
            .open(&fifo),
    );
    let _ = std::fs::remove_file(&fifo);
    let report = outcome.expect("termination ends within the phase time-outs");
    assert!(elapsed < std::time::Duration::from_secs(3), "{elapsed:?}");
    // The island is a task on a pinned thread of its own, not an actor.
    assert!(report.actors.is_empty(), "no actor left: {report:?}");
    assert_eq!(report.threads.len(), 1, "the island's thread: {report:?}");
    let tasks = system.coordinated_shutdown().run("again").report().tasks;
    assert!(
        tasks.contains(&(
            Phase::ServiceStop,
            "stop-streams".to_owned(),
            TaskOutcome::TimedOut
        )),
        "{tasks:?}"
    );
}

/// Whether a thread of this process waits in the kernel for a FIFO's other
/// end (Linux: its wait channel is `wait_for_partner`).
fn blocked_in_fifo_open() -> bool {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return false;
    };
    tasks.flatten().any(|task| {
        std::fs::read_to_string(task.path().join("wchan")).is_ok_and(|w| w == "wait_for_partner")
    })
}
