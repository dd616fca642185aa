//! Paths: display and parse, child lookup, relative and absolute resolution, /temp, selection.

use std::sync::mpsc::Sender;

use weir_actor::{
    Actor, ActorHandle, ActorPath, ActorRef, ActorSystem, Context, DeadLetterReason, Event,
    NameError, PathError, Props, ResolveError, ask,
};
use weir_tests::{PATIENCE, Probe, eventually, shutdown};

/// Spawns the chain of children given by `below` (`"a/b/c"`), one per level.
struct Chain {
    below: String,
}

impl Actor for Chain {
    type Msg = ();
    fn pre_start(&mut self, ctx: &mut Context<Self>) {
        if let Some((first, rest)) = self
            .below
            .split_once('/')
            .or(Some((&self.below, "")))
            .filter(|(f, _)| !f.is_empty())
        {
            let rest = rest.to_owned();
            ctx.spawn(
                Props::new(move || Chain {
                    below: rest.clone(),
                }),
                first,
            )
            .unwrap();
        }
    }
    fn receive(&mut self, _: &mut Context<Self>, _: ()) {}
}

fn chain(system: &ActorSystem, top: &str, below: &str) -> ActorHandle {
    let below_owned = below.to_owned();
    let top = system
        .spawn(
            Props::new(move || Chain {
                below: below_owned.clone(),
            }),
            top,
        )
        .unwrap()
        .handle();
    assert!(
        eventually(PATIENCE, || top.child(below).is_some()),
        "chain built"
    );
    top
}

#[test]
fn display_and_parse_round_trip() {
    let system = ActorSystem::new("paths").unwrap();
    let top = chain(&system, "top", "a/b");
    let b = top.child("a/b").unwrap();
    let shown = b.path().to_string();
    assert!(shown.starts_with("weir://paths/user/top/a/b#"), "{shown}");
    let parsed = ActorPath::parse(&shown).unwrap();
    assert_eq!(&parsed, b.path());
    assert_eq!(parsed.uid(), b.path().uid());
    assert_eq!(parsed.to_string(), shown);
    let root = ActorPath::parse("weir://paths/").unwrap();
    assert_eq!(root.elements().count(), 0);
    assert_eq!(root.to_string(), "weir://paths/#0");
    assert_eq!(
        "weir://paths/user".parse::<ActorPath>().unwrap().name(),
        "user"
    );
    shutdown(&system);
}

#[test]
fn parse_errors_say_what_is_wrong() {
    assert_eq!(
        ActorPath::parse("akka://x/user"),
        Err(PathError::MissingScheme)
    );
    assert_eq!(
        ActorPath::parse("weir://bad name/user"),
        Err(PathError::InvalidSystemName(NameError::InvalidChar {
            ch: ' ',
            position: 3
        }))
    );
    assert_eq!(
        ActorPath::parse("weir://s/user/a?b"),
        Err(PathError::InvalidElement {
            index: 1,
            error: NameError::InvalidChar {
                ch: '?',
                position: 1
            }
        })
    );
    assert_eq!(
        ActorPath::parse("weir://s/user//x"),
        Err(PathError::InvalidElement {
            index: 1,
            error: NameError::Empty
        })
    );
    assert_eq!(
        ActorPath::parse("weir://s/user#x1"),
        Err(PathError::InvalidUid)
    );
    assert_eq!(
        ActorPath::parse("weir://s/user#"),
        Err(PathError::InvalidUid)
    );
}

struct Idle;
impl Actor for Idle {
    type Msg = u32;
    fn receive(&mut self, _: &mut Context<Self>, _: u32) {}
}

#[test]
fn path_equality_ignores_the_uid_but_ref_equality_does_not() {
    let system = ActorSystem::new("uids").unwrap();
    let first = system.spawn(Props::new(|| Idle), "same").unwrap();
    first.stop();
    let second = loop {
        if let Ok(r) = system.spawn(Props::new(|| Idle), "same") {
            break r;
        }
        std::thread::yield_now();
    };
    assert_eq!(first.path(), second.path());
    assert_ne!(first.path().uid(), second.path().uid());
    assert_ne!(first, second);
    assert_ne!(first.handle(), second.handle());
    shutdown(&system);
}

#[test]
fn relative_resolution_from_a_handle() {
    let system = ActorSystem::new("relative").unwrap();
    let top = chain(&system, "top", "a/b/c");
    let a = top.child("a").unwrap();
    let b = top.child("a/b").unwrap();
    let c = top.child("a/b/c").unwrap();
    assert_eq!(a.child("b/c"), Some(c.clone()));
    assert_eq!(c.child(".."), Some(b.clone()));
    assert_eq!(c.child("../.."), Some(a.clone()));
    assert_eq!(b.child("../b/c"), Some(c.clone()), "up then down");
    assert_eq!(
        top.child("a//b/./c/"),
        Some(c.clone()),
        "empty and '.' segments stay"
    );
    assert_eq!(top.child(""), Some(top.clone()));
    assert_eq!(c.parent(), Some(b.clone()));
    // name#uid: only that incarnation.
    let uid = b.path().uid();
    assert_eq!(top.child(&format!("a/b#{uid}")), Some(b.clone()));
    assert_eq!(top.child(&format!("a/b#{}", uid + 1000)), None, "stale uid");
    assert_eq!(top.child("a/b#notanumber"), None, "malformed uid");
    assert_eq!(top.child("a/nobody/c"), None);
    assert_eq!(top.child("a/b c"), None, "malformed element");
    // `..` above the root gives nothing.
    assert_eq!(top.child("../../../.."), None);
    shutdown(&system);
}

#[test]
fn absolute_resolution_from_the_system() {
    let system = ActorSystem::new("absolute").unwrap();
    let top = chain(&system, "top", "a");
    let a = top.child("a").unwrap();
    assert_eq!(system.resolve("/user/top/a"), Ok(a.clone()));
    assert_eq!(
        system.resolve("/user/top/a/"),
        Ok(a.clone()),
        "trailing slash"
    );
    assert_eq!(system.resolve("weir://absolute/user/top/a"), Ok(a.clone()));
    assert_eq!(
        system.resolve(&a.path().to_string()),
        Ok(a.clone()),
        "with #uid"
    );
    assert_eq!(system.resolve("/user/top/a/../a"), Ok(a.clone()));
    assert_eq!(
        system.resolve("/").unwrap(),
        system.resolve("/user/..").unwrap(),
        "the root"
    );
    let root = system.resolve("/").unwrap();
    assert_eq!(
        system.resolve(&root.path().to_string()),
        Ok(root.clone()),
        "the root's own full form, with #uid"
    );
    assert_eq!(
        system.resolve(&format!("/#{}", root.path().uid() + 1)),
        Err(ResolveError::NotFound),
        "another incarnation of the root"
    );
    assert!(matches!(
        system.resolve("/#x"),
        Err(ResolveError::Malformed(_))
    ));
    assert_eq!(system.resolve("/user/top/zz"), Err(ResolveError::NotFound));
    assert_eq!(
        system.resolve("/.."),
        Err(ResolveError::NotFound),
        "above the root"
    );
    assert_eq!(
        system.resolve("weir://other/user/top/a"),
        Err(ResolveError::NotFound),
        "another system"
    );
    assert_eq!(
        system.resolve(""),
        Err(ResolveError::Malformed(PathError::NotAbsolute)),
        "empty path"
    );
    assert_eq!(
        system.resolve("user/top"),
        Err(ResolveError::Malformed(PathError::NotAbsolute))
    );
    assert_eq!(
        system.resolve("/user/t p/a"),
        Err(ResolveError::Malformed(PathError::InvalidElement {
            index: 1, // elements count from the first after the address: user = 0
            error: NameError::InvalidChar {
                ch: ' ',
                position: 1
            }
        }))
    );
    assert!(
        matches!(
            system.resolve("/user/nobody/b c"),
            Err(ResolveError::Malformed(_))
        ),
        "malformed wins over not found"
    );
    assert!(matches!(
        system.resolve("weir://bad name/user"),
        Err(ResolveError::Malformed(_))
    ));
    shutdown(&system);
}

#[test]
fn a_stopped_child_is_not_found() {
    let system = ActorSystem::new("stopped").unwrap();
    let top = chain(&system, "top", "a");
    let a = top.child("a").unwrap();
    a.stop();
    assert!(eventually(PATIENCE, || a.is_terminated()));
    // Even before the parent has processed the termination.
    assert_eq!(top.child("a"), None);
    assert_eq!(system.resolve("/user/top/a"), Err(ResolveError::NotFound));
    shutdown(&system);
}

struct Holder(Sender<ActorRef<u32>>);
impl Actor for Holder {
    type Msg = ActorRef<u32>;
    fn receive(&mut self, _: &mut Context<Self>, reply_to: ActorRef<u32>) {
        self.0.send(reply_to).unwrap();
    }
}

#[test]
fn temporary_ask_actors_resolve_under_temp_while_alive() {
    let system = ActorSystem::new("temp").unwrap();
    let probe = Probe::new();
    let tx = probe.sender();
    let holder = system
        .spawn(Props::new(move || Holder(tx.clone())), "holder")
        .unwrap();
    let answer = ask(&holder, |r| r, PATIENCE);
    let reply_to = probe.expect();
    let path = reply_to.path().to_string_without_uid();
    assert!(path.starts_with("weir://temp/temp/holder$"), "{path}");
    let found = system.resolve(&path).expect("pending ask resolves");
    assert_eq!(found, reply_to.handle());
    assert_eq!(found.downcast::<u32>(), Some(reply_to.clone()));
    let name = reply_to.path().name().to_owned();
    assert_eq!(
        system.select(&format!("/temp/{name}")).unwrap().resolve(),
        vec![reply_to.handle()],
        "an exact selection of its own name reaches it"
    );
    // Nothing else does: no wildcard, no parent step into /temp.
    let other = ask(&holder, |r| r, PATIENCE);
    let other_reply_to = probe.expect();
    for pattern in [
        "/temp/*".to_owned(),
        "/temp/holder$?".to_owned(),
        "/t*/*".to_owned(),
        format!("/temp/../temp/{name}"),
        format!("/user/../temp/{name}"),
        format!("/temp/{}/../{name}", other_reply_to.path().name()),
    ] {
        let selection = system.select(&pattern).unwrap();
        assert_eq!(selection.resolve(), vec![], "{pattern}");
        assert_eq!(selection.tell(1u32), 0, "{pattern}");
    }
    for path in [
        format!("/temp/../temp/{name}"),
        format!("/user/../temp/{name}"),
        format!("/temp/{}/../{name}", other_reply_to.path().name()),
    ] {
        assert_eq!(system.resolve(&path), Err(ResolveError::NotFound), "{path}");
    }
    assert_eq!(holder.handle().child(&format!("../../temp/{name}")), None);
    other_reply_to.tell(6u32);
    assert_eq!(other.wait(), Ok(6));
    reply_to.tell(5u32);
    assert_eq!(answer.wait(), Ok(5));
    assert_eq!(
        system.resolve(&path),
        Err(ResolveError::NotFound),
        "gone once answered"
    );
    shutdown(&system);
}

struct Other;
impl Actor for Other {
    type Msg = String;
    fn receive(&mut self, _: &mut Context<Self>, _: String) {}
}

#[test]
fn selection_with_wildcards_and_its_dead_letters() {
    let system = ActorSystem::new("select").unwrap();
    let dead = Probe::new();
    let tx = dead.sender();
    let _sub = system.event_stream().subscribe(move |e| {
        let Event::DeadLetter(d) = e else { return };
        tx.send((d.recipient().to_string_without_uid(), d.reason()))
            .unwrap();
    });
    chain(&system, "workers", "");
    for name in ["w1", "w2", "w10"] {
        system.spawn(Props::new(|| Idle), name).unwrap();
    }
    system.spawn(Props::new(|| Other), "wx").unwrap();
    let names = |pattern: &str| -> Vec<String> {
        system
            .select(pattern)
            .unwrap()
            .resolve()
            .iter()
            .map(|h| h.path().name().to_owned())
            .collect()
    };
    assert_eq!(names("/user/w?"), ["w1", "w2", "wx"]);
    assert_eq!(names("/user/w*"), ["w1", "w10", "w2", "workers", "wx"]);
    assert_eq!(names("/user/w1*"), ["w1", "w10"]);
    assert_eq!(
        names("/*"),
        ["system", "user"],
        "/temp is a directory, not an actor"
    );
    assert_eq!(names("weir://select/user/w2/../w1"), ["w1"]);
    // Type mismatch: a dead letter with the reason, never a panic.
    assert_eq!(system.select("/user/w?").unwrap().tell(1u32), 2);
    let (recipient, reason) = dead.expect();
    assert_eq!(recipient, "weir://select/user/wx");
    assert!(
        matches!(reason, DeadLetterReason::WrongMessageType { actor_type } if actor_type.ends_with("Other"))
    );
    // No match: the message goes to dead letters.
    assert_eq!(system.select("/user/nobody*").unwrap().tell(1u32), 0);
    assert_eq!(
        dead.expect(),
        (
            "weir://select/user/nobody*".to_owned(),
            DeadLetterReason::NoMatch
        )
    );
    assert!(matches!(
        system.select("user/*"),
        Err(ResolveError::Malformed(PathError::NotAbsolute))
    ));
    assert!(matches!(
        system.select("/user/a b"),
        Err(ResolveError::Malformed(_))
    ));
    shutdown(&system);
}

#[test]
fn a_message_of_the_wrong_type_through_a_handle_comes_back() {
    let system = ActorSystem::new("tryTell").unwrap();
    let idle = system.spawn(Props::new(|| Idle), "idle").unwrap().handle();
    let err = idle.try_tell("not a u32".to_owned()).unwrap_err();
    assert_eq!(err.message, "not a u32");
    assert!(
        err.to_string().contains("does not take messages of type"),
        "{err}"
    );
    assert!(idle.try_tell(3u32).is_ok());
    shutdown(&system);
}

#[test]
fn resolution_races_spawn_and_stop_without_panics() {
    let system = ActorSystem::new("race").unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let names = ["r0", "r1", "r2", "r3"];
    let spawners: Vec<_> = (0..2)
        .map(|t| {
            let system = system.clone();
            std::thread::spawn(move || {
                for i in 0..2_000 {
                    let name = names[(i + t) % names.len()];
                    if let Ok(r) = system.spawn(Props::new(|| Idle), name) {
                        if i % 2 == 0 {
                            r.stop();
                        } else {
                            r.poison_pill();
                        }
                    }
                }
            })
        })
        .collect();
    let resolvers: Vec<_> = (0..2)
        .map(|_| {
            let (system, stop) = (system.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut found = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    for name in names {
                        let path = format!("/user/{name}");
                        match system.resolve(&path) {
                            Ok(h) => {
                                assert_eq!(h.path().name(), name);
                                // A resolved actor is fully built: it takes its type.
                                assert!(h.downcast::<u32>().is_some());
                                found += 1;
                            }
                            Err(ResolveError::NotFound) => {}
                            Err(e) => panic!("well-formed path reported {e}"),
                        }
                    }
                }
                found
            })
        })
        .collect();
    for s in spawners {
        s.join().unwrap();
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for r in resolvers {
        r.join().unwrap();
    }
    shutdown(&system);
}
