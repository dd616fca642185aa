//! A handler's error value reaches the parent's decider through
//! `ctx.fail(error)` and `Failure::error::<E>()`; panics stay supervised.

use std::fmt;
use std::sync::mpsc;
use std::time::Duration;

use weir_actor::{
    Actor, ActorRef, ActorSystem, Context, Directive, Failure, Props, SupervisorStrategy, ask,
};

const LONG: Duration = Duration::from_secs(10);

#[derive(Debug, PartialEq)]
enum StoreError {
    Busy,
    Corrupt(u32),
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Busy => f.write_str("store busy"),
            StoreError::Corrupt(page) => write!(f, "page {page} corrupt"),
        }
    }
}

impl std::error::Error for StoreError {}

enum Cmd {
    Fail(StoreError),
    Panic,
    /// Report the count of commands handled by this instance.
    Count(ActorRef<u32>),
}

struct Store {
    handled: u32,
}

impl Store {
    fn handle(&mut self, cmd: Cmd) -> Result<(), StoreError> {
        self.handled += 1;
        match cmd {
            Cmd::Fail(e) => Err(e),
            Cmd::Panic => panic!("store panicked"),
            Cmd::Count(reply_to) => {
                reply_to.tell(self.handled);
                Ok(())
            }
        }
    }
}

impl Actor for Store {
    type Msg = Cmd;
    fn receive(&mut self, ctx: &mut Context<Self>, cmd: Cmd) {
        if let Err(e) = self.handle(cmd) {
            ctx.fail(e);
        }
    }
}

/// Spawns the store and applies a decider that reads the error value.
struct Parent {
    seen: mpsc::Sender<(Option<String>, String)>,
    store: mpsc::Sender<ActorRef<Cmd>>,
}

impl Actor for Parent {
    type Msg = ();
    fn pre_start(&mut self, ctx: &mut Context<Self>) {
        let store = ctx
            .spawn(Props::new(|| Store { handled: 0 }), "store")
            .unwrap();
        self.store.send(store).unwrap();
    }
    fn receive(&mut self, _: &mut Context<Self>, _: ()) {}
    fn supervisor_strategy(&self) -> SupervisorStrategy {
        let seen = self.seen.clone();
        SupervisorStrategy::default().with_decider(move |failure: &Failure| {
            let error = failure.error::<StoreError>();
            let _ = seen.send((
                error.map(|e| format!("{e:?}")),
                failure.message().to_owned(),
            ));
            match error {
                Some(StoreError::Busy) => Directive::Resume,
                Some(StoreError::Corrupt(_)) => Directive::Restart,
                None => Directive::Stop,
            }
        })
    }
}

#[test]
fn the_decider_sees_the_error_value_and_panics_stay_supervised() {
    let system = ActorSystem::new("typed-failure").unwrap();
    let (seen_tx, seen) = mpsc::channel();
    let (store_tx, store_rx) = mpsc::channel();
    system
        .spawn(
            Props::new(move || Parent {
                seen: seen_tx.clone(),
                store: store_tx.clone(),
            }),
            "parent",
        )
        .unwrap();
    let store = store_rx.recv_timeout(LONG).unwrap();
    let count = || ask(&store, Cmd::Count, LONG).wait().unwrap();

    // Busy: resumed, the instance (and its count) kept.
    store.tell(Cmd::Fail(StoreError::Busy));
    assert_eq!(
        seen.recv_timeout(LONG),
        Ok((Some("Busy".to_owned()), "store busy".to_owned()))
    );
    assert_eq!(count(), 2);

    // Corrupt: restarted, a fresh instance.
    store.tell(Cmd::Fail(StoreError::Corrupt(7)));
    assert_eq!(
        seen.recv_timeout(LONG),
        Ok((Some("Corrupt(7)".to_owned()), "page 7 corrupt".to_owned()))
    );
    assert_eq!(count(), 1);

    // A panic carries no error value: stopped by this decider.
    store.tell(Cmd::Panic);
    assert_eq!(
        seen.recv_timeout(LONG),
        Ok((None, "store panicked".to_owned()))
    );
    let deadline = std::time::Instant::now() + LONG;
    while !store.is_terminated() {
        assert!(
            std::time::Instant::now() < deadline,
            "the store was not stopped"
        );
        std::thread::yield_now();
    }
    system.terminate().wait().unwrap();
}

/// Fails in `pre_restart`, which must not fail the next instance.
struct Flaky {
    starts: mpsc::Sender<()>,
}
impl Actor for Flaky {
    type Msg = ();
    fn pre_start(&mut self, _: &mut Context<Self>) {
        self.starts.send(()).unwrap();
    }
    fn receive(&mut self, ctx: &mut Context<Self>, _: ()) {
        ctx.fail(StoreError::Busy);
    }
    fn pre_restart(&mut self, ctx: &mut Context<Self>, _: &Failure) {
        ctx.fail(StoreError::Corrupt(1));
    }
}

#[test]
fn an_error_left_by_pre_restart_does_not_fail_the_new_instance() {
    let system = ActorSystem::new("pre-restart").unwrap();
    let (starts_tx, starts) = mpsc::channel();
    let flaky = system
        .spawn(
            Props::new(move || Flaky {
                starts: starts_tx.clone(),
            }),
            "flaky",
        )
        .unwrap();
    starts.recv_timeout(LONG).unwrap();
    flaky.tell(()); // fails; the default strategy restarts it
    starts.recv_timeout(LONG).unwrap();
    flaky.tell(()); // the new instance still runs and fails again
    starts.recv_timeout(LONG).unwrap();
    assert_eq!(system.event_stream().dead_letter_count(), 0);
    system.terminate().wait().unwrap();
}
