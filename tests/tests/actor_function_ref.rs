//! `FunctionRef`: its callbacks run on other threads' stacks, so a panic in one never unwinds into them.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use weir_actor::{Actor, ActorSystem, Context, FunctionRef, Props, Terminated};
use weir_tests::{PATIENCE, Probe, eventually, shutdown};

struct Idle;
impl Actor for Idle {
    type Msg = ();
    fn receive(&mut self, _: &mut Context<Self>, _: ()) {}
}

/// Before the fix, the panic unwound the pool worker running the child's
/// stop sequence: the parent never heard of the child's stop and
/// `terminate().wait()` never returned.
#[test]
fn a_panicking_on_terminated_does_not_stall_the_watched_actors_stop() {
    let system = ActorSystem::builder()
        .name("fn-ref-watch")
        .threads(1)
        .build()
        .unwrap();
    let notices = Arc::new(AtomicUsize::new(0));
    let seen = notices.clone();
    let watcher = FunctionRef::with_death_watch(
        &system,
        "watcher",
        |(): ()| Ok(()),
        move |_: Terminated| {
            seen.fetch_add(1, Ordering::SeqCst);
            panic!("user callback fails");
        },
    )
    .unwrap();
    let child = system.spawn(Props::new(|| Idle), "watched").unwrap();
    watcher.watch(&child);
    child.stop();
    assert!(eventually(PATIENCE, || notices.load(Ordering::SeqCst) == 1));
    // The pool survived the panic: an actor spawned afterwards still runs.
    let probe = Probe::new();
    let tx = probe.sender();
    let echo = system
        .spawn(Props::new(move || Echo(tx.clone())), "echo")
        .unwrap();
    echo.tell(5u32);
    assert_eq!(probe.expect(), 5);
    // The watched actor's stop reached its parent, so terminate completes.
    shutdown(&system);
}

struct Echo(std::sync::mpsc::Sender<u32>);
impl Actor for Echo {
    type Msg = u32;
    fn receive(&mut self, _: &mut Context<Self>, n: u32) {
        self.0.send(n).unwrap();
    }
}

/// A handler runs on whichever thread tells: the scheduler's timer thread,
/// a pool worker, a stop sequence. Its panic stays with the reference.
#[test]
fn a_panicking_handler_does_not_unwind_into_the_sender() {
    let system = ActorSystem::new("fn-ref-handler").unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = calls.clone();
    let function = FunctionRef::new(&system, "boom", move |n: u32| {
        seen.fetch_add(1, Ordering::SeqCst);
        if n == 1 {
            panic!("handler fails on 1");
        }
        Ok(())
    })
    .unwrap();
    let target = function.actor_ref();
    let before = system.event_stream().dead_letter_count();
    target.tell(1u32); // would unwind the test thread before the fix
    target.tell(2u32); // the reference keeps working
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert!(!function.is_stopped());
    // The message the handler panicked on is lost to it: counted, not silent.
    assert_eq!(system.event_stream().dead_letter_count(), before + 1);
    shutdown(&system);
}
