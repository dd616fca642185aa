//! `log(name)` (feature `tracing`): an event per element, at completion, at cancel and at failure, at the chosen levels.

use std::fmt::Debug;
use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};
use weir_streams::prelude::*;
use weir_streams::{LogLevels, StreamError};
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
    let events = Events::default();
    tracing::subscriber::set_global_default(events.clone()).unwrap();
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
        finish: Some(Level::INFO),
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
