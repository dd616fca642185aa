//! The `tracing` feature: every message becomes a `weir.message` span with path, actor type and message type.

use std::fmt::Debug;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};
use weir_actor::instrument::TracingInstrumentation;
use weir_actor::{Actor, ActorSystem, Context, Props};
use weir_tests::{PATIENCE, Probe, eventually, shutdown};

/// Records the fields of every `weir.message` span.
#[derive(Default)]
struct Spans {
    seen: Mutex<Vec<String>>,
    next: AtomicU64,
    entered: AtomicU64,
    exited: AtomicU64,
}

struct Fields(String);
impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        self.0.push_str(&format!("{}={:?} ", field.name(), value));
    }
}

impl Subscriber for Spans {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        if attrs.metadata().name() == "weir.message" {
            let mut fields = Fields(String::new());
            attrs.record(&mut fields);
            self.seen.lock().unwrap().push(fields.0);
        }
        Id::from_u64(self.next.fetch_add(1, Ordering::Relaxed) + 1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, _: &Event<'_>) {}
    fn enter(&self, _: &Id) {
        self.entered.fetch_add(1, Ordering::SeqCst);
    }
    fn exit(&self, _: &Id) {
        self.exited.fetch_add(1, Ordering::SeqCst);
    }
}

struct Greeter(std::sync::mpsc::Sender<()>);
impl Actor for Greeter {
    type Msg = String;
    fn receive(&mut self, _: &mut Context<Self>, _: String) {
        self.0.send(()).unwrap();
    }
}

#[test]
fn each_message_is_a_span_with_path_actor_type_and_message_type() {
    let spans = Arc::new(Spans::default());
    tracing::subscriber::set_global_default(SharedSpans(spans.clone())).unwrap();
    let system = ActorSystem::builder()
        .name("traced")
        .instrumentation(Arc::new(TracingInstrumentation))
        .build()
        .unwrap();
    let probe = Probe::new();
    let tx = probe.sender();
    let greeter = system
        .spawn(Props::new(move || Greeter(tx.clone())), "greeter")
        .unwrap();
    greeter.tell("hello".to_owned());
    probe.expect();
    assert!(
        eventually(PATIENCE, || spans.seen.lock().unwrap().iter().any(|s| s
            .contains("path=weir://traced/user/greeter#")
            && s.contains("actor_type=\"actor_tracing::Greeter\"")
            && s.contains("message_type=\"alloc::string::String\"")
            && s.contains("kind=User"))),
        "{:?}",
        spans.seen.lock().unwrap()
    );
    // Entered before each message and exited after it.
    assert!(spans.entered.load(Ordering::SeqCst) > 0);
    assert!(eventually(PATIENCE, || spans.exited.load(Ordering::SeqCst)
        == spans.entered.load(Ordering::SeqCst)));
    shutdown(&system);
}

/// `set_global_default` takes the subscriber by value; share it through an Arc.
struct SharedSpans(Arc<Spans>);
impl Subscriber for SharedSpans {
    fn enabled(&self, m: &Metadata<'_>) -> bool {
        self.0.enabled(m)
    }
    fn new_span(&self, a: &Attributes<'_>) -> Id {
        self.0.new_span(a)
    }
    fn record(&self, i: &Id, r: &Record<'_>) {
        self.0.record(i, r)
    }
    fn record_follows_from(&self, a: &Id, b: &Id) {
        self.0.record_follows_from(a, b)
    }
    fn event(&self, e: &Event<'_>) {
        self.0.event(e)
    }
    fn enter(&self, i: &Id) {
        self.0.enter(i)
    }
    fn exit(&self, i: &Id) {
        self.0.exit(i)
    }
}
