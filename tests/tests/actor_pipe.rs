//! Piping futures into actors: `ActorRef::pipe` and `ctx.pipe_to_self` deliver results without blocking a worker.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use weir_actor::{
    Actor, ActorRef, ActorSystem, Context, DeadLetterReason, Event, Promise, Props, ask,
};
use weir_tests::{PATIENCE, Probe, eventually, shutdown};

/// A future that completes when its promise is completed (from any thread).
struct Later(Arc<Promise<u32>>);

impl Future for Later {
    type Output = u32;
    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<u32> {
        self.0.poll_take(cx)
    }
}

fn later() -> (Arc<Promise<u32>>, Later) {
    let promise = Arc::new(Promise::new());
    (promise.clone(), Later(promise))
}

/// Reports every message to the probe.
struct Report(std::sync::mpsc::Sender<u32>);

impl Actor for Report {
    type Msg = u32;
    fn receive(&mut self, _: &mut Context<Self>, n: u32) {
        self.0.send(n).unwrap();
    }
}

fn report(system: &ActorSystem, name: &str) -> (ActorRef<u32>, Probe<u32>) {
    let probe = Probe::new();
    let tx = probe.sender();
    (
        system
            .spawn(Props::new(move || Report(tx.clone())), name)
            .unwrap(),
        probe,
    )
}

#[test]
fn pipe_delivers_a_ready_future() {
    let system = ActorSystem::new("pipeReady").unwrap();
    let (actor, seen) = report(&system, "report");
    actor.pipe(async { 7 });
    assert_eq!(seen.expect(), 7);
    shutdown(&system);
}

#[test]
fn a_waiting_future_holds_no_worker() {
    // One worker: if the pending future held it, nothing else would run.
    let system = ActorSystem::builder()
        .name("pipeWaits")
        .threads(1)
        .build()
        .unwrap();
    let (actor, seen) = report(&system, "report");
    let (promise, future) = later();
    actor.pipe(future);
    for n in 1..=3 {
        actor.tell(n);
    }
    assert_eq!(seen.expect_n(3), vec![1, 2, 3]);
    assert!(promise.complete(99).is_ok());
    assert_eq!(seen.expect(), 99, "woken from another thread, delivered");
    shutdown(&system);
}

#[test]
fn pipe_to_self_maps_the_output_into_a_message() {
    enum Msg {
        Start(Arc<Promise<u32>>),
        Done(u32),
        Ping,
    }
    struct Worker(std::sync::mpsc::Sender<String>);
    impl Actor for Worker {
        type Msg = Msg;
        fn receive(&mut self, ctx: &mut Context<Self>, msg: Msg) {
            match msg {
                Msg::Start(promise) => ctx.pipe_to_self(Later(promise), |n| Msg::Done(n + 1)),
                Msg::Done(n) => self.0.send(format!("done {n}")).unwrap(),
                Msg::Ping => self.0.send("ping".to_owned()).unwrap(),
            }
        }
    }
    let system = ActorSystem::new("pipeToSelf").unwrap();
    let probe = Probe::new();
    let tx = probe.sender();
    let worker = system
        .spawn(Props::new(move || Worker(tx.clone())), "worker")
        .unwrap();
    let (promise, _unused) = later();
    worker.tell(Msg::Start(promise.clone()));
    worker.tell(Msg::Ping);
    assert_eq!(
        probe.expect(),
        "ping",
        "the actor goes on while the future waits"
    );
    assert!(promise.complete(41).is_ok());
    assert_eq!(probe.expect(), "done 42");
    shutdown(&system);
}

#[test]
fn pipe_from_inside_an_ask_round_trip() {
    /// Answers `n * 2` to the reply ref.
    struct Doubler;
    impl Actor for Doubler {
        type Msg = (u32, ActorRef<u32>);
        fn receive(&mut self, _: &mut Context<Self>, (n, reply): (u32, ActorRef<u32>)) {
            reply.tell(n * 2);
        }
    }
    let system = ActorSystem::builder()
        .name("pipeAsk")
        .threads(1)
        .build()
        .unwrap();
    let doubler = system.spawn(Props::new(|| Doubler), "doubler").unwrap();
    let (actor, seen) = report(&system, "report");
    let answer = ask(&doubler, |r| (21, r), PATIENCE);
    actor.pipe(async move { answer.await.unwrap_or(0) });
    assert_eq!(seen.expect(), 42);
    shutdown(&system);
}

#[test]
fn many_wake_ups_deliver_once() {
    /// Pending `left` times, waking itself each time (from this or another thread).
    struct Spin(u32);
    impl Future for Spin {
        type Output = u32;
        fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<u32> {
            if self.0 == 0 {
                return Poll::Ready(5);
            }
            self.0 -= 1;
            let waker = cx.waker().clone();
            if self.0.is_multiple_of(2) {
                waker.wake_by_ref();
                waker.wake();
            } else {
                std::thread::spawn(move || waker.wake());
            }
            Poll::Pending
        }
    }
    let system = ActorSystem::new("pipeSpin").unwrap();
    let (actor, seen) = report(&system, "report");
    for _ in 0..20 {
        actor.pipe(Spin(50));
    }
    assert_eq!(seen.expect_n(20), vec![5; 20]);
    seen.expect_nothing();
    shutdown(&system);
}

#[test]
fn output_for_a_stopped_actor_is_a_dead_letter() {
    let system = ActorSystem::new("pipeStopped").unwrap();
    let letters = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = letters.clone();
    let _subscription = system.event_stream().subscribe(move |event| {
        let Event::DeadLetter(letter) = event else {
            return;
        };
        if let Some(&n) = letter.downcast_ref::<u32>() {
            sink.lock().unwrap().push((n, letter.reason()));
        }
    });
    let (actor, _seen) = report(&system, "report");
    let (promise, future) = later();
    actor.pipe(future);
    actor.stop();
    assert!(eventually(PATIENCE, || actor.is_terminated()));
    assert!(promise.complete(8).is_ok());
    assert!(eventually(PATIENCE, || !letters.lock().unwrap().is_empty()));
    assert_eq!(
        *letters.lock().unwrap(),
        vec![(8, DeadLetterReason::RecipientStopped)]
    );
    shutdown(&system);
}

#[test]
fn a_panicking_future_delivers_nothing_and_harms_nothing() {
    let system = ActorSystem::new("pipePanics").unwrap();
    let (actor, seen) = report(&system, "report");
    actor.pipe(async { panic!("a broken future") });
    actor.tell(1);
    assert_eq!(seen.expect(), 1);
    seen.expect_nothing();
    shutdown(&system);
}

/// A future that wakes itself and stays pending until `stop` is set,
/// counting its polls.
struct Spinner {
    stop: Arc<std::sync::atomic::AtomicBool>,
    polls: Arc<std::sync::atomic::AtomicUsize>,
}

impl Future for Spinner {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<()> {
        use std::sync::atomic::Ordering;
        self.polls.fetch_add(1, Ordering::SeqCst);
        if self.stop.load(Ordering::SeqCst) {
            return Poll::Ready(());
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

#[test]
fn a_task_that_wakes_itself_yields_its_only_worker() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let system = ActorSystem::builder()
        .name("taskYields")
        .threads(1)
        .build()
        .unwrap();
    let (actor, seen) = report(&system, "report");
    let (stop, polls) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicUsize::new(0)),
    );
    system
        .spawn_task(Spinner {
            stop: stop.clone(),
            polls: polls.clone(),
        })
        .unwrap();
    assert!(eventually(PATIENCE, || polls.load(Ordering::SeqCst) > 1));
    actor.tell(1);
    assert_eq!(seen.expect(), 1, "the actor ran beside the spinning task");
    stop.store(true, Ordering::SeqCst);
    shutdown(&system);
}

#[test]
fn a_task_waits_for_its_waker_and_completes_once() {
    let system = ActorSystem::new("taskWaits").unwrap();
    let (promise, future) = later();
    let out = Arc::new(Promise::new());
    let result = out.clone();
    system
        .spawn_task(async move {
            let _ = result.complete(future.await);
        })
        .unwrap();
    assert!(!out.is_completed());
    promise.complete(5).unwrap();
    assert_eq!(out.wait_take(), 5);
    shutdown(&system);
}

#[test]
fn spawn_task_on_a_terminated_system_is_refused() {
    let system = ActorSystem::new("taskLate").unwrap();
    shutdown(&system);
    assert_eq!(
        system.spawn_task(async {}).unwrap_err(),
        weir_actor::SpawnError::ParentStopped
    );
}

/// Counts its drops.
struct DropCount(Arc<std::sync::atomic::AtomicUsize>);

impl Drop for DropCount {
    fn drop(&mut self) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

#[test]
fn an_aborted_task_is_dropped_without_another_poll() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let system = ActorSystem::new("taskAbort").unwrap();
    let (dropped, polled) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (promise, future) = later();
    let (guard, polls) = (DropCount(dropped.clone()), polled.clone());
    let handle = system
        .spawn_task(async move {
            let _guard = guard;
            polls.fetch_add(1, Ordering::SeqCst);
            future.await; // waits: the promise is completed only after the abort
            polls.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap();
    assert!(eventually(PATIENCE, || polled.load(Ordering::SeqCst) == 1));
    handle.abort();
    assert!(eventually(PATIENCE, || dropped.load(Ordering::SeqCst) == 1));
    // Dropped, so it can never be polled again: the completion wakes nothing.
    promise.complete(1).unwrap();
    handle.abort(); // finished: nothing to do
    assert_eq!(
        polled.load(Ordering::SeqCst),
        1,
        "never polled past the abort"
    );
    assert_eq!(dropped.load(Ordering::SeqCst), 1);
    shutdown(&system);
}

#[test]
fn a_task_aborted_before_its_first_run_is_never_polled() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    // One worker, kept busy until the abort: the task cannot have run yet.
    let system = ActorSystem::builder()
        .name("taskAbortEarly")
        .threads(1)
        .build()
        .unwrap();
    let gate = Arc::new(Promise::new());
    let blocker = gate.clone();
    system
        .spawn_task(async move {
            blocker.wait_completed();
        })
        .unwrap();
    let (dropped, polled) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (guard, polls) = (DropCount(dropped.clone()), polled.clone());
    let handle = system
        .spawn_task(async move {
            let _guard = guard;
            polls.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap();
    handle.abort();
    gate.complete(()).unwrap();
    assert!(eventually(PATIENCE, || dropped.load(Ordering::SeqCst) == 1));
    assert_eq!(polled.load(Ordering::SeqCst), 0);
    shutdown(&system);
}

/// A future that keeps its waker where the test can reach it, waits for
/// ever, and says when it is dropped.
struct Parked {
    waker: Arc<std::sync::Mutex<Option<std::task::Waker>>>,
    dropped: Arc<std::sync::atomic::AtomicBool>,
}

impl Future for Parked {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<()> {
        *self.waker.lock().unwrap() = Some(cx.waker().clone());
        Poll::Pending
    }
}

impl Drop for Parked {
    fn drop(&mut self) {
        self.dropped
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

#[test]
fn a_task_woken_after_its_pool_shut_down_is_dropped_not_stranded() {
    let system = ActorSystem::builder()
        .name("stranded")
        .threads(1)
        .build()
        .unwrap();
    let waker = Arc::new(std::sync::Mutex::new(None));
    let dropped = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let parked = Parked {
        waker: waker.clone(),
        dropped: dropped.clone(),
    };
    system.spawn_task(parked).unwrap();
    assert!(eventually(PATIENCE, || waker.lock().unwrap().is_some()));
    // An idle task does not hold termination up; the workers return.
    system.terminate().wait().unwrap();
    let waker = waker.lock().unwrap().take().expect("polled once");
    // Queued on a pool with no workers, it would wait for ever, and with
    // it whatever it holds (a stream's island, whose sinks never hear).
    waker.wake();
    assert!(
        dropped.load(std::sync::atomic::Ordering::SeqCst),
        "the task is dropped at once"
    );
}
