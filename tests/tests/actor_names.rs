//! Spawning with names: every validation error, duplicates, generated names, reuse after stop.

use weir_actor::{
    Actor, ActorSystem, BuildError, Context, NameError, Props, SpawnError, validate_name,
};
use weir_tests::{PATIENCE, eventually, shutdown};

struct Idle;
impl Actor for Idle {
    type Msg = ();
    fn receive(&mut self, _: &mut Context<Self>, _: ()) {}
}

fn invalid(system: &ActorSystem, name: &str) -> NameError {
    match system.spawn(Props::new(|| Idle), name) {
        Err(SpawnError::InvalidName { name: n, reason }) => {
            assert_eq!(n, name);
            reason
        }
        other => panic!("expected an invalid-name error for {name:?}, got {other:?}"),
    }
}

#[test]
fn every_invalid_name_is_a_typed_error() {
    let system = ActorSystem::new("names").unwrap();
    assert_eq!(invalid(&system, ""), NameError::Empty);
    assert_eq!(
        invalid(&system, "a/b"),
        NameError::InvalidChar {
            ch: '/',
            position: 1
        }
    );
    assert_eq!(
        invalid(&system, "ab#3"),
        NameError::InvalidChar {
            ch: '#',
            position: 2
        }
    );
    assert_eq!(
        invalid(&system, "sp ace"),
        NameError::InvalidChar {
            ch: ' ',
            position: 2
        }
    );
    assert_eq!(
        invalid(&system, "ü"),
        NameError::InvalidChar {
            ch: 'ü',
            position: 0
        }
    );
    assert_eq!(
        invalid(&system, "x%41"),
        NameError::InvalidChar {
            ch: '%',
            position: 1
        }
    );
    assert_eq!(invalid(&system, "$anon"), NameError::ReservedPrefix);
    assert_eq!(invalid(&system, ".."), NameError::Reserved);
    assert_eq!(invalid(&system, "."), NameError::Reserved);
    // Errors explain themselves.
    let message = SpawnError::InvalidName {
        name: "a/b".into(),
        reason: NameError::InvalidChar {
            ch: '/',
            position: 1,
        },
    }
    .to_string();
    assert!(
        message.contains("'/'") && message.contains("position 1"),
        "{message}"
    );
    shutdown(&system);
}

#[test]
fn the_documented_character_set_is_accepted() {
    assert_eq!(validate_name("Az09-_.:@&=+,!~*';$"), Ok(()));
    assert_eq!(
        validate_name("a$b"),
        Ok(()),
        "'$' is only reserved as the first character"
    );
}

#[test]
fn duplicate_live_sibling_is_refused_and_the_name_frees_after_stop() {
    let system = ActorSystem::new("dups").unwrap();
    let first = system.spawn(Props::new(|| Idle), "same").unwrap();
    assert_eq!(
        system.spawn(Props::new(|| Idle), "same").unwrap_err(),
        SpawnError::DuplicateName("same".into())
    );
    first.stop();
    // The name is free once the parent has processed the termination.
    assert!(eventually(PATIENCE, || system
        .spawn(Props::new(|| Idle), "same")
        .is_ok()));
    assert!(first.is_terminated());
    shutdown(&system);
}

#[test]
fn anonymous_children_get_distinct_generated_names() {
    let system = ActorSystem::new("anon").unwrap();
    let a = system.spawn_anonymous(Props::new(|| Idle)).unwrap();
    let b = system.spawn_anonymous(Props::new(|| Idle)).unwrap();
    assert!(a.path().name().starts_with('$'), "{}", a.path());
    assert!(b.path().name().starts_with('$'));
    assert_ne!(a.path().name(), b.path().name());
    assert_eq!(
        a.path().to_string_without_uid(),
        format!("weir://anon/user/{}", a.path().name())
    );
    shutdown(&system);
}

#[test]
fn spawning_on_a_terminated_system_is_an_error() {
    let system = ActorSystem::new("late").unwrap();
    shutdown(&system);
    assert_eq!(
        system.spawn(Props::new(|| Idle), "late").unwrap_err(),
        SpawnError::ParentStopped
    );
}

#[test]
fn bad_system_settings_are_typed_errors() {
    assert_eq!(
        ActorSystem::builder().name("a/b").build().unwrap_err(),
        BuildError::InvalidName(NameError::InvalidChar {
            ch: '/',
            position: 1
        })
    );
    assert_eq!(
        ActorSystem::builder().throughput(0).build().unwrap_err(),
        BuildError::Zero("throughput")
    );
    assert_eq!(
        ActorSystem::builder().threads(0).build().unwrap_err(),
        BuildError::Zero("threads")
    );
}
