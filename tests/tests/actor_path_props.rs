//! Property tests of the path parser, the name validator and resolution: no panic on any input, parse(display(p)) == p.

use proptest::prelude::*;
use weir_actor::{
    ActorPath, ActorSystem, NAME_PUNCTUATION, NameError, ResolveError, validate_name,
};
use weir_tests::shutdown;

fn element() -> impl Strategy<Value = String> {
    let plain = "[a-zA-Z0-9\\-_.:@&=+,!~*';$]{1,12}"
        .prop_filter("not '.' or '..', no leading '$'", |s| {
            s != "." && s != ".." && !s.starts_with('$')
        });
    let generated = "[a-z]{1,4}".prop_map(|s| format!("${s}"));
    prop_oneof![4 => plain, 1 => generated]
}

fn system_name() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9][a-zA-Z0-9\\-_]{0,10}"
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn the_name_validator_never_panics_and_is_exact(name in "\\PC{0,20}") {
        match validate_name(&name) {
            Ok(()) => {
                prop_assert!(!name.is_empty() && !name.starts_with('$') && name != "." && name != "..");
                prop_assert!(name.chars().all(|c| c.is_ascii_alphanumeric() || NAME_PUNCTUATION.contains(c)));
            }
            Err(NameError::InvalidChar { ch, position }) => {
                prop_assert_eq!(name.chars().nth(position), Some(ch));
                prop_assert!(!(ch.is_ascii_alphanumeric() || NAME_PUNCTUATION.contains(ch)));
            }
            Err(_) => {}
        }
    }

    #[test]
    fn the_parser_never_panics(input in "\\PC{0,40}", tail in "[a-z/#.$*?0-9]{0,20}") {
        let _ = ActorPath::parse(&input);
        let _ = ActorPath::parse(&format!("weir://{tail}"));
        let _ = ActorPath::parse(&format!("weir://s/{tail}"));
    }

    #[test]
    fn parse_of_display_is_identity(
        system in system_name(),
        elements in prop::collection::vec(element(), 0..6),
        uid in any::<u64>(),
    ) {
        let text = format!("weir://{system}/{}#{uid}", elements.join("/"));
        let path = ActorPath::parse(&text).expect("generated paths are valid");
        prop_assert_eq!(path.system_name(), system.as_str());
        prop_assert_eq!(path.elements().collect::<Vec<_>>(), elements.iter().map(String::as_str).collect::<Vec<_>>());
        prop_assert_eq!(path.uid(), uid);
        let again = ActorPath::parse(&path.to_string()).unwrap();
        prop_assert_eq!(&again, &path);
        prop_assert_eq!(again.uid(), path.uid());
        prop_assert_eq!(again.to_string(), path.to_string());
    }
}

#[test]
fn resolution_never_panics_on_any_input() {
    let system = ActorSystem::builder()
        .name("props")
        .threads(1)
        .build()
        .unwrap();
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(2_000));
    runner
        .run(&"[a-z/#.$*?0-9 :]{0,30}", |input| {
            for path in [
                input.clone(),
                format!("/{input}"),
                format!("weir://props/{input}"),
            ] {
                match system.resolve(&path) {
                    Ok(_) | Err(ResolveError::NotFound | ResolveError::Malformed(_)) => {}
                    Err(e) => prop_assert!(false, "unexpected {e:?}"),
                }
                let _ = system.select(&path).map(|s| s.resolve());
            }
            Ok(())
        })
        .unwrap();
    shutdown(&system);
}
