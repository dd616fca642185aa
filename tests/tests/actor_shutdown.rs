//! Coordinated shutdown: phases in order, tasks of a phase together, a
//! hanging task left behind at the phase's time-out (on a test clock), a
//! panicking task reported, the system terminated at the end.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use weir_actor::shutdown::{
    DEFAULT_PHASE_TIMEOUT, Phase, ShutdownError, TERMINATE_REASON, TaskOutcome,
};
use weir_actor::{Actor, ActorRef, ActorSystem, Context, DispatcherKind, Props, WaitError, ask};
use weir_tests::{PATIENCE, Probe, QUIET, clocked_system, eventually};

/// A future that never completes.
struct Never;
impl Future for Never {
    type Output = ();
    fn poll(self: Pin<&mut Self>, _: &mut TaskContext<'_>) -> Poll<()> {
        Poll::Pending
    }
}

fn logger(
    log: &Arc<Mutex<Vec<String>>>,
    entry: &str,
) -> impl FnOnce() -> std::future::Ready<()> + Send + 'static {
    let (log, entry) = (log.clone(), entry.to_owned());
    move || {
        log.lock().unwrap().push(entry);
        std::future::ready(())
    }
}

#[test]
fn phases_run_in_order_then_the_system_terminates() {
    let system = ActorSystem::new("phases").unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    let shutdown = system.coordinated_shutdown();
    // Added out of order: the phase decides, not the order of adding.
    for (phase, name) in [
        (Phase::ActorSystemTerminate, "last"),
        (Phase::ServiceStop, "stop"),
        (Phase::BeforeServiceUnbind, "first"),
        (Phase::ServiceUnbind, "unbind"),
        (Phase::ServiceRequestsDone, "drain"),
        (Phase::BeforeActorSystemTerminate, "before-terminate"),
    ] {
        shutdown.add_task(phase, name, logger(&log, name)).unwrap();
    }
    let report = shutdown.run("test").wait().unwrap();
    assert_eq!(
        *log.lock().unwrap(),
        [
            "first",
            "unbind",
            "drain",
            "stop",
            "before-terminate",
            "last"
        ]
    );
    assert!(report.all_done(), "{report:?}");
    assert_eq!(report.reason, "test");
    assert_eq!(report.tasks.len(), 6);
    assert!(system.when_terminated().is_completed());
}

#[test]
fn a_hanging_task_is_left_behind_at_its_phases_time_out() {
    let (system, clock) = clocked_system("hanging");
    let log = Arc::new(Mutex::new(Vec::new()));
    let shutdown = system.coordinated_shutdown();
    shutdown.set_phase_timeout(Phase::ServiceUnbind, Duration::from_secs(2));
    shutdown
        .add_task(Phase::ServiceUnbind, "hangs", || Never)
        .unwrap();
    shutdown
        .add_task(Phase::ServiceUnbind, "quick", logger(&log, "quick"))
        .unwrap();
    shutdown
        .add_task(Phase::ServiceStop, "after", logger(&log, "after"))
        .unwrap();
    let handle = shutdown.run("hang");

    assert!(eventually(PATIENCE, || *log.lock().unwrap() == ["quick"]));
    clock.advance(Duration::from_millis(1999));
    assert!(!handle.is_finished(), "the phase waits for its time-out");
    assert_eq!(*log.lock().unwrap(), ["quick"]);
    clock.advance(Duration::from_millis(1));
    let report = handle.wait().unwrap();
    assert_eq!(*log.lock().unwrap(), ["quick", "after"]);
    assert_eq!(
        report.tasks,
        [
            (
                Phase::ServiceUnbind,
                "hangs".to_owned(),
                TaskOutcome::TimedOut
            ),
            (Phase::ServiceUnbind, "quick".to_owned(), TaskOutcome::Done),
            (Phase::ServiceStop, "after".to_owned(), TaskOutcome::Done),
        ]
    );
}

#[test]
fn a_phase_without_a_set_time_out_waits_the_default() {
    let (system, clock) = clocked_system("default-timeout");
    let shutdown = system.coordinated_shutdown();
    shutdown
        .add_task(Phase::ServiceStop, "hangs", || Never)
        .unwrap();
    let handle = shutdown.run("default");
    clock.advance(DEFAULT_PHASE_TIMEOUT - Duration::from_millis(1));
    assert!(!handle.is_finished());
    clock.advance(Duration::from_millis(1));
    let report = handle.wait().unwrap();
    assert_eq!(report.tasks[0].2, TaskOutcome::TimedOut);
}

#[test]
fn a_panicking_task_is_reported_and_the_shutdown_goes_on() {
    let system = ActorSystem::new("panicking").unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    let shutdown = system.coordinated_shutdown();
    shutdown
        .add_task(Phase::ServiceUnbind, "panics", || async {
            panic!("socket gone")
        })
        .unwrap();
    shutdown
        .add_task(
            Phase::ServiceRequestsDone,
            "panics-early",
            || -> std::future::Ready<()> { panic!("before its future") },
        )
        .unwrap();
    shutdown
        .add_task(Phase::ServiceStop, "after", logger(&log, "after"))
        .unwrap();
    let report = shutdown.run("panic").wait().unwrap();
    assert_eq!(*log.lock().unwrap(), ["after"]);
    assert_eq!(
        report.tasks[0].2,
        TaskOutcome::Panicked("socket gone".to_owned())
    );
    assert!(matches!(report.tasks[1].2, TaskOutcome::Panicked(_)));
    assert_eq!(report.tasks[2].2, TaskOutcome::Done);
    assert!(!report.all_done());
}

#[test]
fn it_runs_once_and_takes_no_task_after_it_ran() {
    let system = ActorSystem::new("once").unwrap();
    let shutdown = system.coordinated_shutdown();
    shutdown
        .add_task(Phase::ServiceStop, "t", || async {})
        .unwrap();
    let first = shutdown.run("first");
    assert!(shutdown.is_started());
    let second = shutdown.run("second");
    let (a, b) = (first.wait().unwrap(), second.wait().unwrap());
    assert_eq!(a, b);
    assert_eq!(a.reason, "first");
    assert_eq!(a.tasks.len(), 1);
    assert_eq!(
        shutdown.add_task(Phase::ActorSystemTerminate, "late", || async {}),
        Err(ShutdownError::AlreadyStarted)
    );
}

#[test]
fn a_task_may_add_tasks_to_later_phases_not_to_started_ones() {
    // On a test clock that never moves: no phase ends by its time-out.
    let (system, _clock) = clocked_system("later-phase");
    let log = Arc::new(Mutex::new(Vec::new()));
    let refused = Arc::new(Mutex::new(Vec::new()));
    let (inner, task_log, task_refused) = (system.clone(), log.clone(), refused.clone());
    system
        .coordinated_shutdown()
        .add_task(Phase::ServiceUnbind, "unbind", move || {
            let shutdown = inner.coordinated_shutdown();
            task_log.lock().unwrap().push("unbind".to_owned());
            for phase in [Phase::ServiceStop, Phase::ActorSystemTerminate] {
                let name = format!("added-to-{}", phase.name());
                shutdown
                    .add_task(phase, name.clone(), logger(&task_log, &name))
                    .expect("a later phase takes tasks");
            }
            for phase in [Phase::BeforeServiceUnbind, Phase::ServiceUnbind] {
                task_refused
                    .lock()
                    .unwrap()
                    .push(shutdown.add_task(phase, "too-late", || async {}));
            }
            std::future::ready(())
        })
        .unwrap();
    let report = system.coordinated_shutdown().run("late").wait().unwrap();
    assert_eq!(
        *log.lock().unwrap(),
        [
            "unbind",
            "added-to-service-stop",
            "added-to-actor-system-terminate"
        ]
    );
    assert_eq!(
        *refused.lock().unwrap(),
        [
            Err(ShutdownError::PhaseStarted(Phase::BeforeServiceUnbind)),
            Err(ShutdownError::PhaseStarted(Phase::ServiceUnbind)),
        ]
    );
    assert!(report.all_done(), "{report:?}");
    assert_eq!(report.tasks.len(), 3, "{report:?}");
}

#[test]
fn a_terminating_system_takes_no_task() {
    let system = ActorSystem::new("terminating").unwrap();
    let termination = system.terminate();
    assert_eq!(
        system
            .coordinated_shutdown()
            .add_task(Phase::ServiceStop, "t", || async {}),
        Err(ShutdownError::AlreadyStarted)
    );
    termination.wait().unwrap();
}

/// Counts requests; `Drain` answers with the count once asked.
enum Service {
    Request,
    Drain(ActorRef<u32>),
}
struct Counter(u32);
impl Actor for Counter {
    type Msg = Service;
    fn receive(&mut self, _: &mut Context<Self>, msg: Service) {
        match msg {
            Service::Request => self.0 += 1,
            Service::Drain(reply) => reply.tell(self.0),
        }
    }
}

#[test]
fn a_task_can_ask_an_actor_before_the_actors_stop() {
    let system = ActorSystem::new("drain").unwrap();
    let counter = system.spawn(Props::new(|| Counter(0)), "counter").unwrap();
    for _ in 0..3 {
        counter.tell(Service::Request);
    }
    let probe = Probe::new();
    let tx = probe.sender();
    system
        .coordinated_shutdown()
        .add_task(Phase::ServiceRequestsDone, "drain", move || async move {
            let served = ask(&counter, Service::Drain, PATIENCE).await;
            tx.send(served).unwrap();
        })
        .unwrap();
    let report = system.coordinated_shutdown().run("drain").wait().unwrap();
    assert!(report.all_done(), "{report:?}");
    assert_eq!(probe.expect(), Ok(3));
}

struct WaitsInside(std::sync::mpsc::Sender<Result<(), WaitError>>);
impl Actor for WaitsInside {
    type Msg = ();
    fn receive(&mut self, ctx: &mut Context<Self>, (): ()) {
        let outcome = ctx
            .system()
            .coordinated_shutdown()
            .run("inside")
            .wait()
            .map(|_| ());
        let _ = self.0.send(outcome);
    }
}

#[test]
fn waiting_from_inside_an_actor_is_refused_while_the_shutdown_goes_on() {
    let system = ActorSystem::new("inside").unwrap();
    let probe = Probe::new();
    let tx = probe.sender();
    let actor = system
        .spawn(Props::new(move || WaitsInside(tx.clone())), "w")
        .unwrap();
    actor.tell(());
    assert_eq!(probe.expect(), Err(WaitError::OnDispatcherThread));
    assert!(system.when_terminated().wait_timeout(PATIENCE).is_ok());
}

#[test]
fn terminate_runs_the_coordinated_shutdown_first() {
    let system = ActorSystem::new("terminate-runs").unwrap();
    let counter = system.spawn(Props::new(|| Counter(0)), "counter").unwrap();
    counter.tell(Service::Request);
    let probe = Probe::new();
    let tx = probe.sender();
    system
        .coordinated_shutdown()
        .add_task(Phase::ServiceStop, "drain", move || async move {
            // The actors are still running in this phase.
            tx.send(ask(&counter, Service::Drain, PATIENCE).await)
                .unwrap();
        })
        .unwrap();
    system.terminate().wait().unwrap();
    assert_eq!(probe.expect(), Ok(1));
    // The run `terminate` started, with its reason.
    let report = system.coordinated_shutdown().run("ignored").report();
    assert_eq!(report.reason, TERMINATE_REASON);
    assert_eq!(
        report.tasks,
        [(Phase::ServiceStop, "drain".to_owned(), TaskOutcome::Done)]
    );
}

#[test]
fn terminate_waits_for_a_hanging_task_only_until_its_phases_time_out() {
    let (system, clock) = clocked_system("terminate-hanging");
    let shutdown = system.coordinated_shutdown();
    shutdown.set_phase_timeout(Phase::ServiceUnbind, Duration::from_secs(3));
    shutdown
        .add_task(Phase::ServiceUnbind, "hangs", || Never)
        .unwrap();
    let termination = system.terminate();
    clock.advance(Duration::from_millis(2999));
    assert_eq!(
        termination.wait_timeout(QUIET),
        Err(WaitError::TimedOut),
        "the actors wait for the phase"
    );
    clock.advance(Duration::from_millis(1));
    termination.wait().unwrap();
}

/// Calls `terminate` from inside `receive`, then keeps answering.
struct TerminatesItself(u32);
impl Actor for TerminatesItself {
    type Msg = Service;
    fn receive(&mut self, ctx: &mut Context<Self>, msg: Service) {
        match msg {
            Service::Request => drop(ctx.system().terminate()),
            Service::Drain(reply) => {
                self.0 += 1;
                reply.tell(self.0)
            }
        }
    }
}

#[test]
fn terminate_from_inside_an_actor_runs_the_shutdown_without_deadlock() {
    let system = ActorSystem::new("terminate-inside").unwrap();
    let actor = system
        .spawn(Props::new(|| TerminatesItself(0)), "a")
        .unwrap();
    let probe = Probe::new();
    let tx = probe.sender();
    let asked = actor.clone();
    system
        .coordinated_shutdown()
        .add_task(Phase::ServiceRequestsDone, "ask", move || async move {
            tx.send(ask(&asked, Service::Drain, PATIENCE).await)
                .unwrap();
        })
        .unwrap();
    actor.tell(Service::Request);
    // The task's ask is answered by the actor that called `terminate`.
    assert_eq!(probe.expect(), Ok(1));
    system.when_terminated().wait_timeout(PATIENCE).unwrap();
}

#[test]
fn terminate_from_a_shutdown_task_joins_the_run() {
    // On a test clock: no phase here needs a time-out to end.
    let (system, _clock) = clocked_system("terminate-task");
    let counter = system.spawn(Props::new(|| Counter(0)), "counter").unwrap();
    let shutdown = system.coordinated_shutdown();
    let inner = system.clone();
    shutdown
        .add_task(Phase::ServiceUnbind, "terminates", move || {
            let termination = inner.terminate();
            assert!(!termination.is_completed());
            std::future::ready(())
        })
        .unwrap();
    let probe = Probe::new();
    let tx = probe.sender();
    shutdown
        .add_task(Phase::ServiceStop, "after", move || async move {
            // `terminate` in the earlier phase did not stop the actors.
            tx.send(ask(&counter, Service::Drain, PATIENCE).await)
                .unwrap();
        })
        .unwrap();
    let report = shutdown.run("outer").wait().unwrap();
    assert_eq!(probe.expect(), Ok(0));
    assert_eq!(report.reason, "outer");
    assert!(report.all_done(), "{report:?}");
}

#[test]
fn a_task_that_blocks_its_thread_does_not_hang_termination() {
    // One worker, and the task blocks it: the later phases, the actors'
    // stop and termination must all go on without it, each bounded.
    let system = ActorSystem::builder()
        .name("blocking-task")
        .threads(1)
        .build()
        .unwrap();
    system.spawn(Props::new(|| Counter(0)), "counter").unwrap();
    let (release, blocked) = std::sync::mpsc::channel::<()>();
    let shutdown = system.coordinated_shutdown();
    let short = Duration::from_millis(300);
    for phase in [Phase::ServiceUnbind, Phase::ActorSystemTerminate] {
        shutdown.set_phase_timeout(phase, short);
    }
    let (done, finished) = std::sync::mpsc::channel::<()>();
    shutdown
        .add_task(Phase::ServiceUnbind, "blocks", move || async move {
            let _ = blocked.recv();
            let _ = done.send(());
        })
        .unwrap();
    let started = std::time::Instant::now();
    let outcome = system.terminate().wait_timeout(PATIENCE);
    let elapsed = started.elapsed();
    release.send(()).unwrap(); // let the worker go, whatever happened
    let report = outcome.expect("termination ends within the phase time-outs");
    assert!(elapsed < Duration::from_secs(3), "{elapsed:?}");
    assert!(
        report.actors.iter().any(|path| path.name() == "counter"),
        "{report:?}"
    );
    assert_eq!(report.threads.len(), 1, "the blocked worker: {report:?}");
    assert!(!report.is_clean());
    // The task ends late, on its abandoned thread: the report stays.
    finished.recv_timeout(PATIENCE).unwrap();
    let handle = system.coordinated_shutdown().run("again");
    let timed_out = [(
        Phase::ServiceUnbind,
        "blocks".to_owned(),
        TaskOutcome::TimedOut,
    )];
    assert!(
        !eventually(QUIET, || handle.report().tasks != timed_out),
        "{:?}",
        handle.report()
    );
}

#[test]
fn a_clean_termination_leaves_nothing_behind() {
    let system = ActorSystem::new("clean-report").unwrap();
    system.spawn(Props::new(|| Counter(0)), "counter").unwrap();
    let report = system.terminate().wait().unwrap();
    assert!(report.is_clean(), "{report:?}");
}

/// Tells it entered, then blocks its thread until released.
struct Blocks {
    entered: std::sync::mpsc::Sender<()>,
    release: std::sync::mpsc::Receiver<()>,
}
impl Actor for Blocks {
    type Msg = ();
    fn receive(&mut self, _: &mut Context<Self>, (): ()) {
        self.entered.send(()).unwrap();
        let _ = self.release.recv();
    }
}

#[test]
fn an_actor_blocked_in_its_handler_is_left_behind_at_the_time_out() {
    let system = ActorSystem::new("blocked-actor").unwrap();
    system
        .coordinated_shutdown()
        .set_phase_timeout(Phase::ActorSystemTerminate, Duration::from_millis(300));
    let (entered_tx, entered) = std::sync::mpsc::channel();
    let (release, release_rx) = std::sync::mpsc::channel();
    let slot = Mutex::new(Some((entered_tx, release_rx)));
    let blocked = system
        .spawn(
            Props::new(move || {
                let (entered, release) = slot.lock().unwrap().take().expect("started once");
                Blocks { entered, release }
            })
            .with_dispatcher(DispatcherKind::Pinned),
            "blocked",
        )
        .unwrap();
    blocked.tell(());
    entered.recv_timeout(PATIENCE).unwrap();
    let started = std::time::Instant::now();
    let outcome = system.terminate().wait_timeout(PATIENCE);
    let elapsed = started.elapsed();
    release.send(()).unwrap();
    let report = outcome.expect("termination ends at the time-out");
    assert!(elapsed < Duration::from_secs(3), "{elapsed:?}");
    let names: Vec<&str> = report.actors.iter().map(|path| path.name()).collect();
    assert!(names.contains(&"blocked"), "{report:?}");
    assert_eq!(report.threads.len(), 1, "its pinned thread: {report:?}");
}
