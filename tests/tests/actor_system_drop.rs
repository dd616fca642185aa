//! Dropping the last owning handle of an `ActorSystem` terminates it and joins its threads.

use std::sync::Mutex;
use weir_actor::{Actor, ActorRef, ActorSystem, Context, Props, ask};
use weir_tests::{PATIENCE, Probe};

/// One system at a time, so each test sees only its own.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Replies to every message; reports its `post_stop`.
struct Echo {
    stopped: Option<std::sync::mpsc::Sender<&'static str>>,
}

impl Actor for Echo {
    type Msg = ActorRef<u32>;
    fn receive(&mut self, _: &mut Context<Self>, reply: ActorRef<u32>) {
        reply.tell(7);
    }
    fn post_stop(&mut self, _: &mut Context<Self>) {
        if let Some(stopped) = &self.stopped {
            let _ = stopped.send("stopped");
        }
    }
}

fn echo(stopped: Option<std::sync::mpsc::Sender<&'static str>>) -> Props<Echo> {
    Props::new(move || Echo {
        stopped: stopped.clone(),
    })
}

#[test]
fn dropping_the_last_handle_stops_every_actor() {
    let _serial = serial();
    let probe = Probe::new();
    let system = ActorSystem::new("dropLast").unwrap();
    system.spawn(echo(Some(probe.sender())), "echo").unwrap();
    let terminated = system.when_terminated();
    drop(system);
    // The drop returned: termination is complete, not merely started.
    assert!(terminated.is_completed());
    assert_eq!(probe.expect(), "stopped");
}

#[test]
fn a_clone_keeps_the_system_running() {
    let _serial = serial();
    let system = ActorSystem::new("dropClone").unwrap();
    let echo = system.spawn(echo(None), "echo").unwrap();
    let other = system.clone();
    let terminated = system.when_terminated();
    drop(system);
    assert!(!terminated.is_completed());
    assert_eq!(ask(&echo, |r| r, PATIENCE).wait(), Ok(7));
    drop(other);
    assert!(terminated.is_completed());
}

#[test]
fn refs_and_handles_from_inside_actors_do_not_keep_it_alive() {
    /// Keeps a clone of `ctx.system()` in its state.
    struct Keeper {
        system: Option<ActorSystem>,
    }
    impl Actor for Keeper {
        type Msg = ();
        fn pre_start(&mut self, ctx: &mut Context<Self>) {
            self.system = Some(ctx.system().clone());
        }
        fn receive(&mut self, _: &mut Context<Self>, (): ()) {}
    }
    let _serial = serial();
    let system = ActorSystem::new("dropInternal").unwrap();
    let keeper = system
        .spawn(Props::new(|| Keeper { system: None }), "keeper")
        .unwrap();
    keeper.tell(());
    let selection = system.select("/user/*").unwrap();
    let terminated = system.when_terminated();
    drop(system);
    assert!(terminated.is_completed());
    assert!(keeper.is_terminated());
    drop(selection);
}

#[test]
fn the_last_handle_dropped_inside_an_actor_terminates_without_blocking_it() {
    /// Holds an owning handle until it is told to let go.
    struct Holder {
        system: Option<ActorSystem>,
    }
    impl Actor for Holder {
        type Msg = Option<ActorSystem>;
        fn receive(&mut self, _: &mut Context<Self>, msg: Option<ActorSystem>) {
            // Taking `None` drops the last owner here, on a worker thread.
            self.system = msg;
        }
    }
    let _serial = serial();
    let system = ActorSystem::new("dropInside").unwrap();
    let holder = system
        .spawn(Props::new(|| Holder { system: None }), "holder")
        .unwrap();
    let terminated = system.when_terminated();
    holder.tell(Some(system));
    holder.tell(None);
    assert!(
        terminated.wait_timeout(PATIENCE).is_ok(),
        "termination completes"
    );
}

#[test]
fn terminate_then_drop_is_harmless() {
    let _serial = serial();
    let system = ActorSystem::new("dropAfter").unwrap();
    system.terminate().wait().unwrap();
    drop(system);
}
