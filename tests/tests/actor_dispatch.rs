//! Dispatchers: pinned actors get their own thread; idle pool threads sleep (no busy spinning).

use std::sync::mpsc::Sender;

use weir_actor::{Actor, ActorSystem, Context, DispatcherKind, Props};
use weir_tests::{PATIENCE, Probe, eventually, shutdown};

struct ThreadName(Sender<String>);
impl Actor for ThreadName {
    type Msg = ();
    fn receive(&mut self, _: &mut Context<Self>, _: ()) {
        self.0
            .send(std::thread::current().name().unwrap_or("").to_owned())
            .unwrap();
    }
}

/// Blocks its thread until told to stop.
struct Blocker(std::sync::mpsc::Receiver<()>);
impl Actor for Blocker {
    type Msg = ();
    fn receive(&mut self, _: &mut Context<Self>, _: ()) {
        let _ = self.0.recv_timeout(PATIENCE);
    }
}

#[test]
fn a_pinned_blocking_actor_does_not_block_the_shared_pool() {
    let system = ActorSystem::builder()
        .name("pin")
        .threads(1)
        .build()
        .unwrap();
    let probe = Probe::new();
    let (unblock, blocked_rx) = std::sync::mpsc::channel();
    let blocked_rx = std::sync::Mutex::new(Some(blocked_rx));
    let blocker = system
        .spawn(
            Props::new(move || Blocker(blocked_rx.lock().unwrap().take().expect("made once")))
                .with_dispatcher(DispatcherKind::Pinned),
            "blocker",
        )
        .unwrap();
    blocker.tell(());
    // The only pool thread is free while the pinned one blocks.
    let tx = probe.sender();
    let shared = system
        .spawn(Props::new(move || ThreadName(tx.clone())), "shared")
        .unwrap();
    shared.tell(());
    assert_eq!(probe.expect(), "pin-0");
    let tx = probe.sender();
    let pinned = system
        .spawn(
            Props::new(move || ThreadName(tx.clone())).with_dispatcher(DispatcherKind::Pinned),
            "pinned",
        )
        .unwrap();
    pinned.tell(());
    assert_eq!(probe.expect(), "pin-pinned");
    unblock.send(()).unwrap();
    shutdown(&system);
}

/// The scheduler state letter of each thread whose name starts with `prefix`.
#[cfg(target_os = "linux")] // reads /proc
fn thread_states(prefix: &str) -> Vec<char> {
    let mut states = Vec::new();
    for task in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if !comm.trim_end().starts_with(prefix) {
            continue;
        }
        let stat = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
        // The state follows the parenthesised command name.
        if let Some(state) = stat
            .rsplit(')')
            .next()
            .and_then(|rest| rest.trim_start().chars().next())
        {
            states.push(state);
        }
    }
    states
}

#[test]
#[cfg(target_os = "linux")] // reads /proc
fn idle_pool_threads_sleep() {
    let system = ActorSystem::builder()
        .name("idle")
        .threads(2)
        .build()
        .unwrap();
    let probe = Probe::new();
    let tx = probe.sender();
    let a = system
        .spawn(Props::new(move || ThreadName(tx.clone())), "a")
        .unwrap();
    for _ in 0..1000 {
        a.tell(());
    }
    probe.expect_n(1000);
    // A timer armed far ahead must not keep the timer thread ticking.
    let _far = system
        .scheduler()
        .schedule_once(std::time::Duration::from_secs(3600), &a, ());
    // Workers and the timer thread all end up asleep ('S'), not running.
    assert!(
        eventually(PATIENCE, || {
            let states = thread_states("idle-");
            states.len() == 3 && states.iter().all(|&s| s == 'S')
        }),
        "states: {:?}",
        thread_states("idle-")
    );
    shutdown(&system);
}

/// Counts messages; forwards each to `next` (if any) until `hops` runs out.
struct Hop {
    seen: std::sync::Arc<std::sync::atomic::AtomicU64>,
    next: Option<weir_actor::ActorRef<u64>>,
}
impl Actor for Hop {
    type Msg = u64;
    fn receive(&mut self, ctx: &mut Context<Self>, hops: u64) {
        self.seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        if hops > 0 {
            match &self.next {
                Some(next) => next.tell(hops - 1),
                None => ctx.myself().tell(hops - 1),
            }
        }
    }
}

#[test]
fn calling_thread_actors_run_before_tell_returns_without_recursion() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};
    let system = ActorSystem::new("calling").unwrap();
    let seen = Arc::new(AtomicU64::new(0));
    let s = seen.clone();
    let props = move || {
        Props::new({
            let s = s.clone();
            move || Hop {
                seen: s.clone(),
                next: None,
            }
        })
    };
    let a = system
        .spawn(
            props()
                .with_dispatcher(DispatcherKind::CallingThread)
                .with_throughput(1),
            "a",
        )
        .unwrap();
    // Started on spawn, on this thread; each tell is processed before it returns.
    a.tell(0u64);
    assert_eq!(seen.load(Ordering::SeqCst), 1);
    // An actor that sends itself 100,000 more messages, with a throughput
    // of 1: every run yields, and none of it may grow the stack.
    a.tell(100_000u64);
    assert_eq!(seen.load(Ordering::SeqCst), 100_002);
    shutdown(&system);
}

#[test]
fn named_pools_run_their_actors_on_their_own_threads() {
    let system = ActorSystem::builder()
        .name("named")
        .threads(1)
        .pool("io", 2)
        .build()
        .unwrap();
    let probe = Probe::new();
    let tx = probe.sender();
    let on_io = system
        .spawn(
            Props::new(move || ThreadName(tx.clone())).with_dispatcher(DispatcherKind::Named("io")),
            "io-actor",
        )
        .unwrap();
    on_io.tell(());
    assert!(probe.expect().starts_with("named-io-"));
    let tx = probe.sender();
    assert_eq!(
        system
            .spawn(
                Props::new(move || ThreadName(tx.clone()))
                    .with_dispatcher(DispatcherKind::Named("nope")),
                "x"
            )
            .unwrap_err(),
        weir_actor::SpawnError::UnknownDispatcher("nope".into())
    );
    assert_eq!(
        ActorSystem::builder()
            .pool("a", 1)
            .pool("a", 2)
            .build()
            .unwrap_err(),
        weir_actor::BuildError::DuplicatePool("a")
    );
    assert_eq!(
        ActorSystem::builder().pool("a", 0).build().unwrap_err(),
        weir_actor::BuildError::Zero("threads")
    );
    shutdown(&system);
}

/// Takes `ms` milliseconds per message and logs its name.
struct Slow {
    name: &'static str,
    log: std::sync::Arc<std::sync::Mutex<Vec<&'static str>>>,
}
impl Actor for Slow {
    type Msg = u64;
    fn receive(&mut self, _: &mut Context<Self>, ms: u64) {
        std::thread::sleep(std::time::Duration::from_millis(ms));
        self.log.lock().unwrap().push(self.name);
    }
}

/// Blocks until released.
struct Hold(
    std::sync::Arc<std::sync::Mutex<std::sync::mpsc::Receiver<()>>>,
    std::sync::mpsc::Sender<()>,
);
impl Actor for Hold {
    type Msg = ();
    fn receive(&mut self, _: &mut Context<Self>, _: ()) {
        self.1.send(()).unwrap();
        self.0.lock().unwrap().recv().unwrap();
    }
}

/// With `on_named`, the actors run on a named one-thread pool that has the
/// deadline, and the shared pool has none.
fn order_with(deadline: Option<std::time::Duration>, on_named: bool) -> Vec<&'static str> {
    use std::sync::{Arc, Mutex};
    let mut builder = ActorSystem::builder()
        .name("deadline")
        .threads(1)
        .throughput(1000);
    match (deadline, on_named) {
        (Some(d), false) => builder = builder.throughput_deadline(d),
        (Some(d), true) => builder = builder.pool_with_deadline("slow", 1, d),
        (None, _) => builder = builder.pool("slow", 1),
    }
    let kind = if on_named {
        DispatcherKind::Named("slow")
    } else {
        DispatcherKind::Shared
    };
    let system = builder.build().unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    let (release, held) = std::sync::mpsc::channel();
    let (entered_tx, entered) = std::sync::mpsc::channel();
    let held = Arc::new(Mutex::new(held));
    let hold = system
        .spawn(
            Props::new(move || Hold(held.clone(), entered_tx.clone())).with_dispatcher(kind),
            "hold",
        )
        .unwrap();
    let spawn = |name: &'static str| {
        let log = log.clone();
        system
            .spawn(
                Props::new(move || Slow {
                    name,
                    log: log.clone(),
                })
                .with_dispatcher(kind),
                name,
            )
            .unwrap()
    };
    let (a, b) = (spawn("a"), spawn("b"));
    hold.tell(());
    entered.recv_timeout(PATIENCE).unwrap();
    for _ in 0..3 {
        a.tell(2u64);
        b.tell(2u64);
    }
    release.send(()).unwrap();
    assert!(eventually(PATIENCE, || log.lock().unwrap().len() == 6));
    shutdown(&system);
    log.lock().unwrap().clone()
}

#[test]
fn a_throughput_deadline_makes_a_slow_actor_yield() {
    // Each message takes 2 ms; with a 1 ms deadline every run ends after one.
    let ms = std::time::Duration::from_millis;
    assert_eq!(
        order_with(Some(ms(1)), false),
        ["a", "b", "a", "b", "a", "b"]
    );
    assert_eq!(order_with(None, false), ["a", "a", "a", "b", "b", "b"]);
    // A named pool's own deadline.
    assert_eq!(
        order_with(Some(ms(1)), true),
        ["a", "b", "a", "b", "a", "b"]
    );
    assert_eq!(order_with(None, true), ["a", "a", "a", "b", "b", "b"]);
}

#[test]
fn a_throughput_deadline_too_long_for_the_clock_means_no_deadline() {
    // `Duration::MAX` cannot be added to an `Instant`: it must mean "never",
    // not panic in a pool worker.
    let max = Some(std::time::Duration::MAX);
    assert_eq!(order_with(max, false), ["a", "a", "a", "b", "b", "b"]);
    assert_eq!(order_with(max, true), ["a", "a", "a", "b", "b", "b"]);
}

struct Idle;
impl Actor for Idle {
    type Msg = ();
    fn receive(&mut self, _: &mut Context<Self>, _: ()) {}
}

#[test]
#[cfg(target_os = "linux")] // reads /proc
fn ten_thousand_idle_actors_need_no_extra_threads_and_sleep() {
    let system = ActorSystem::builder()
        .name("tenk")
        .threads(2)
        .build()
        .unwrap();
    let actors: Vec<_> = (0..10_000)
        .map(|i| system.spawn(Props::new(|| Idle), &format!("i{i}")).unwrap())
        .collect();
    for a in &actors {
        a.tell(());
    }
    // Two workers and the timer thread: nothing per actor.
    assert!(
        eventually(PATIENCE, || {
            let states = thread_states("tenk-");
            states.len() == 3 && states.iter().all(|&s| s == 'S')
        }),
        "states: {:?}",
        thread_states("tenk-")
    );
    shutdown(&system);
}

/// Answers with the number it is given.
struct Answer;
impl Actor for Answer {
    type Msg = (u32, weir_actor::ActorRef<u32>);
    fn receive(&mut self, _: &mut Context<Self>, (n, reply_to): (u32, weir_actor::ActorRef<u32>)) {
        reply_to.tell(n);
    }
}

/// Blocks its worker on an ask to an actor it has just woken (an
/// anti-pattern, but one the pool must survive: the answerer's task sits
/// alone on the blocked worker's deque).
struct BlockingAsker {
    answer: weir_actor::ActorRef<(u32, weir_actor::ActorRef<u32>)>,
    out: std::sync::mpsc::Sender<Result<u32, weir_actor::AskError>>,
}
impl Actor for BlockingAsker {
    type Msg = u32;
    fn receive(&mut self, _: &mut Context<Self>, n: u32) {
        let reply = weir_actor::ask(&self.answer, |r| (n, r), PATIENCE).wait();
        self.out.send(reply).unwrap();
    }
}

#[test]
fn a_handler_blocked_on_an_ask_still_gets_its_answer() {
    let system = ActorSystem::builder()
        .name("blocked")
        .threads(2)
        .build()
        .unwrap();
    let probe = Probe::new();
    for i in 0..20u32 {
        let answer = system
            .spawn(Props::new(|| Answer), &format!("answer{i}"))
            .unwrap();
        let out = probe.sender();
        let asker = system
            .spawn(
                Props::new(move || BlockingAsker {
                    answer: answer.clone(),
                    out: out.clone(),
                }),
                &format!("asker{i}"),
            )
            .unwrap();
        asker.tell(i);
        let started = std::time::Instant::now();
        assert_eq!(probe.expect(), Ok(i));
        assert!(
            started.elapsed() < PATIENCE,
            "answered by a stealing worker, not by the time-out"
        );
    }
    shutdown(&system);
}

thread_local! {
    /// Set by a thread context (see below) on the threads that enter it.
    static IN_CONTEXT: std::cell::Cell<&'static str> = const { std::cell::Cell::new("none") };
}

/// What `IN_CONTEXT` says on the thread that runs the actor.
struct ContextOfThread(Sender<&'static str>);
impl Actor for ContextOfThread {
    type Msg = ();
    fn receive(&mut self, _: &mut Context<Self>, _: ()) {
        self.0.send(IN_CONTEXT.with(std::cell::Cell::get)).unwrap();
    }
}

fn seen_in(system: &ActorSystem, kind: DispatcherKind, name: &str) -> &'static str {
    let (tx, rx) = std::sync::mpsc::channel();
    let actor = system
        .spawn(
            Props::new(move || ContextOfThread(tx.clone())).with_dispatcher(kind),
            name,
        )
        .unwrap();
    actor.tell(());
    rx.recv_timeout(PATIENCE).unwrap()
}

/// `thread_context` wraps the whole work of every thread the system
/// starts: the shared pool, a named pool and a pinned actor's thread all
/// run inside it.
#[test]
fn every_thread_of_the_system_runs_inside_its_thread_context() {
    let system = ActorSystem::builder()
        .name("context")
        .threads(2)
        .pool("side", 1)
        .thread_context(|work| {
            IN_CONTEXT.with(|c| c.set("entered"));
            work();
            IN_CONTEXT.with(|c| c.set("left"));
        })
        .build()
        .unwrap();
    assert_eq!(
        seen_in(&system, DispatcherKind::Shared, "shared"),
        "entered"
    );
    assert_eq!(
        seen_in(&system, DispatcherKind::Named("side"), "named"),
        "entered"
    );
    assert_eq!(
        seen_in(&system, DispatcherKind::Pinned, "pinned"),
        "entered"
    );
    shutdown(&system);
}

/// A context that forgets to call the work, or panics before it, cannot
/// leave the system without threads: the work runs after it; a second
/// call does nothing.
#[test]
fn a_thread_context_that_skips_panics_or_repeats_still_runs_the_work_once() {
    for (name, mode) in [("skips", 0), ("panics", 1), ("repeats", 2)] {
        let system = ActorSystem::builder()
            .name(name)
            .threads(1)
            .thread_context(move |work| match mode {
                0 => {}
                1 => panic!("a broken context"),
                _ => {
                    work();
                    work();
                }
            })
            .build()
            .unwrap();
        assert_eq!(
            seen_in(&system, DispatcherKind::Shared, "a"),
            "none",
            "{name}"
        );
        shutdown(&system);
    }
}
