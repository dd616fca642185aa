//! `log(name)` (feature `tracing`): an event per element, at completion, at cancel and at failure, at the levels of its attributes.

use std::fmt::Debug;
use std::sync::{Arc, Mutex, OnceLock};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};
use weir_actor::LogLevel;
use weir_streams::prelude::*;
use weir_streams::{Attributes as StageAttributes, LogLevels, StreamError};
use weir_tests::{PATIENCE, eventually, shutdown, stream_system};

/// Records `level stream message fields` of every `weir.stream` event.
#[derive(Clone, Default)]
struct Events(Arc<Mutex<Vec<String>>>);

struct Fields(String);
impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        self.0.push_str(&format!(" {}={:?}", field.name(), value));
    }
}

impl Subscriber for Events {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        if event.metadata().target() == "weir.stream" {
            let mut fields = Fields(event.metadata().level().to_string());
            event.record(&mut fields);
            self.0.lock().unwrap().push(fields.0);
        }
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

/// The one global subscriber of this test binary.
fn events() -> &'static Events {
    static EVENTS: OnceLock<Events> = OnceLock::new();
    EVENTS.get_or_init(|| {
        let events = Events::default();
        tracing::subscriber::set_global_default(events.clone()).unwrap();
        events
    })
}

impl Events {
    /// The events of stream `name`, emptied.
    fn of(&self, name: &str) -> Vec<String> {
        let tag = format!("stream=\"{name}\"");
        let mut all = self.0.lock().unwrap();
        let (mine, rest): (Vec<String>, Vec<String>) =
            all.drain(..).partition(|e| e.contains(&tag));
        *all = rest;
        mine
    }
}

#[test]
fn log_emits_elements_completion_cancel_and_failure_at_their_levels() {
    let events = events();
    let (system, mat) = stream_system("log");

    let done = Source::range(1u32..=2)
        .log("numbers")
        .run_with(Sink::ignore(), &mat);
    assert!(done.wait().is_ok());
    let seen = events.of("numbers");
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert!(
        seen[0].starts_with("DEBUG") && seen[0].contains("element=1"),
        "{seen:?}"
    );
    assert!(seen[1].contains("element=2"), "{seen:?}");
    assert!(seen[2].contains("upstream finished"), "{seen:?}");

    let failed = Source::<u32>::failed(StreamError::msg("boom"))
        .log("failing")
        .run_with(Sink::ignore(), &mat);
    assert!(failed.wait().is_err());
    let seen = events.of("failing");
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert!(
        seen[0].starts_with("ERROR") && seen[0].contains("boom"),
        "{seen:?}"
    );

    let levels = LogLevels {
        element: None,
        finish: Some(LogLevel::Info),
        ..LogLevels::default()
    };
    let first = Source::repeat(7u32)
        .log_with_levels("cancelled", levels)
        .run_with(Sink::head(), &mat);
    assert_eq!(first.wait(), Ok(7));
    // The cancel reaches the stage after the head sink has its element.
    let mut seen = Vec::new();
    assert!(eventually(PATIENCE, || {
        seen.extend(events.of("cancelled"));
        !seen.is_empty()
    }));
    assert_eq!(seen.len(), 1, "no element events: {seen:?}");
    assert!(
        seen[0].starts_with("INFO") && seen[0].contains("downstream cancelled"),
        "{seen:?}"
    );
    shutdown(&system);
}

#[test]
fn log_levels_come_from_the_stage_attributes() {
    let events = events();
    let (system, mat) = stream_system("log-attributes");

    // Elements at warning, completion silenced: set as an attribute.
    let levels = LogLevels {
        element: Some(LogLevel::Warning),
        finish: None,
        failure: Some(LogLevel::Info),
    };
    let done = Source::range(1u32..=2)
        .log("attributed")
        .with_attributes(StageAttributes::new().with_log_levels(levels))
        .run_with(Sink::ignore(), &mat);
    assert!(done.wait().is_ok());
    let seen = events.of("attributed");
    assert_eq!(seen.len(), 2, "no completion event: {seen:?}");
    assert!(seen.iter().all(|e| e.starts_with("WARN")), "{seen:?}");

    // Failure at the attribute's level, on a flow.
    let flow = Flow::<u32>::new()
        .log("attributed-flow")
        .with_attributes(StageAttributes::new().with_log_levels(levels));
    let failed = Source::<u32>::failed(StreamError::msg("bang"))
        .via(flow)
        .run_with(Sink::ignore(), &mat);
    assert!(failed.wait().is_err());
    let seen = events.of("attributed-flow");
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert!(
        seen[0].starts_with("INFO") && seen[0].contains("bang"),
        "{seen:?}"
    );

    // An attribute set after `log_with_levels` overrides its levels.
    let done = Source::single(5u32)
        .log_with_levels("overridden", LogLevels::off())
        .with_attributes(StageAttributes::new().with_log_levels(LogLevels {
            element: Some(LogLevel::Error),
            ..LogLevels::off()
        }))
        .run_with(Sink::ignore(), &mat);
    assert!(done.wait().is_ok());
    let seen = events.of("overridden");
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert!(
        seen[0].starts_with("ERROR") && seen[0].contains("element=5"),
        "{seen:?}"
    );
    shutdown(&system);
}
