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
