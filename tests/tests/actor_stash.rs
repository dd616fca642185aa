//! Stash: order of unstashed messages, the bound and its typed error, kept across restarts, dead letters on stop.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};

use weir_actor::{Actor, ActorSystem, Context, DeadLetterReason, Event, Props, StashError};
use weir_tests::{PATIENCE, Probe, eventually, shutdown};

#[derive(Debug)]
enum Msg {
    /// Handled only once open; stashed before.
    Work(u32),
    /// Open: unstash everything.
    Open,
    /// Take back one stashed message (and stay closed).
    One,
    /// Panic (the guardian restarts the actor).
    Boom,
}

/// Closed: stashes work (reporting a full stash as `u32::MAX - n`). Open:
/// reports work.
struct Gate {
    open: bool,
    seen: Sender<u32>,
}

impl Actor for Gate {
    type Msg = Msg;
    fn receive(&mut self, ctx: &mut Context<Self>, msg: Msg) {
        match msg {
            Msg::Work(n) if self.open => self.seen.send(n).unwrap(),
            Msg::Work(n) => {
                if let Err(StashError::Full(Msg::Work(back))) = ctx.stash(Msg::Work(n)) {
                    self.seen.send(u32::MAX - back).unwrap();
                }
            }
            Msg::Open => {
                self.open = true;
                ctx.unstash_all();
            }
            Msg::One => {}
            Msg::Boom => panic!("boom"),
        }
    }
}

fn gate(
    system: &ActorSystem,
    name: &str,
    capacity: Option<usize>,
) -> (weir_actor::ActorRef<Msg>, Probe<u32>) {
    let probe = Probe::new();
    let seen = probe.sender();
    let props = Props::new(move || Gate {
        open: false,
        seen: seen.clone(),
    });
    let props = match capacity {
        Some(c) => props.with_stash_capacity(c),
        None => props,
    };
    (system.spawn(props, name).unwrap(), probe)
}

#[test]
fn unstashed_messages_come_first_and_in_order() {
    let system = ActorSystem::new("stashOrder").unwrap();
    let (actor, seen) = gate(&system, "gate", None);
    for n in 1..=5 {
        actor.tell(Msg::Work(n));
    }
    actor.tell(Msg::Open);
    actor.tell(Msg::Work(6)); // queued after Open: after every stashed one
    assert_eq!(seen.expect_n(6), vec![1, 2, 3, 4, 5, 6]);
    shutdown(&system);
}

#[test]
fn a_full_stash_gives_the_message_back() {
    let system = ActorSystem::new("stashFull").unwrap();
    let (actor, seen) = gate(&system, "gate", Some(2));
    for n in 1..=3 {
        actor.tell(Msg::Work(n));
    }
    assert_eq!(
        seen.expect(),
        u32::MAX - 3,
        "the third was refused with its message"
    );
    actor.tell(Msg::Open);
    assert_eq!(seen.expect_n(2), vec![1, 2]);
    seen.expect_nothing();
    shutdown(&system);
}

#[test]
fn a_zero_capacity_stash_refuses_everything() {
    let system = ActorSystem::new("stashZero").unwrap();
    let (actor, seen) = gate(&system, "gate", Some(0));
    actor.tell(Msg::Work(1));
    assert_eq!(seen.expect(), u32::MAX - 1);
    shutdown(&system);
}

#[test]
fn unstash_n_takes_the_oldest_one_at_a_time() {
    /// Stashes work; `One` unstashes exactly one, which is then handled
    /// before the actor closes again.
    struct OneByOne(Sender<u32>, bool);
    impl Actor for OneByOne {
        type Msg = Msg;
        fn receive(&mut self, ctx: &mut Context<Self>, msg: Msg) {
            match msg {
                Msg::Work(n) if self.1 => {
                    self.0.send(n).unwrap();
                    self.1 = false;
                }
                Msg::Work(n) => ctx.stash(Msg::Work(n)).unwrap(),
                Msg::One => {
                    self.1 = true;
                    assert_eq!(ctx.unstash(1), 1);
                    assert_eq!(ctx.unstash(0), 0);
                }
                Msg::Open | Msg::Boom => {}
            }
        }
    }
    let system = ActorSystem::new("stashOne").unwrap();
    let probe = Probe::new();
    let tx = probe.sender();
    let actor = system
        .spawn(Props::new(move || OneByOne(tx.clone(), false)), "one")
        .unwrap();
    for n in 1..=4 {
        actor.tell(Msg::Work(n));
    }
    for _ in 0..3 {
        actor.tell(Msg::One);
    }
    assert_eq!(probe.expect_n(3), vec![1, 2, 3]);
    probe.expect_nothing();
    shutdown(&system);
}

#[test]
fn the_stash_is_kept_across_a_restart() {
    let system = ActorSystem::new("stashRestart").unwrap();
    let probe = Probe::new();
    let seen = probe.sender();
    let instances = AtomicUsize::new(0);
    // The first instance is closed; the one after the restart is open.
    let props = Props::new(move || Gate {
        open: instances.fetch_add(1, Ordering::SeqCst) > 0,
        seen: seen.clone(),
    });
    let actor = system.spawn(props, "gate").unwrap();
    actor.tell(Msg::Work(1));
    actor.tell(Msg::Work(2));
    actor.tell(Msg::Boom);
    actor.tell(Msg::Work(3));
    // No `Open`: the new instance handles what the old one stashed, first.
    assert_eq!(probe.expect_n(3), vec![1, 2, 3]);
    shutdown(&system);
}

#[test]
fn stashed_messages_go_to_dead_letters_on_stop() {
    let system = ActorSystem::new("stashStop").unwrap();
    let letters = Arc::new(Mutex::new(Vec::new()));
    let sink = letters.clone();
    let _subscription = system.event_stream().subscribe(move |event| {
        let Event::DeadLetter(letter) = event else {
            return;
        };
        if let Some(Msg::Work(n)) = letter.downcast_ref::<Msg>() {
            sink.lock().unwrap().push((*n, letter.reason()));
        }
    });
    let (actor, _seen) = gate(&system, "gate", None);
    actor.tell(Msg::Work(1));
    actor.tell(Msg::Work(2));
    actor.poison_pill();
    assert!(eventually(PATIENCE, || letters.lock().unwrap().len() == 2));
    assert_eq!(
        *letters.lock().unwrap(),
        vec![
            (1, DeadLetterReason::RecipientStopped),
            (2, DeadLetterReason::RecipientStopped)
        ]
    );
    shutdown(&system);
}
