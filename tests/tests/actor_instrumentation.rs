//! Instrumentation: hooks see every message of every actor, outcomes, lifecycle, dead letters; broken hooks harm nothing.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use weir_actor::{
    Actor, ActorRef, ActorSystem, Context, DeadLetter, Instrumentation, LifecycleEvent,
    MessageInfo, MessageKind, Outcome, Processed, Props, ask,
};
use weir_tests::{PATIENCE, Probe, eventually, shutdown};

/// One processed message: path, kind, message type, outcome, sender context.
type Seen = (String, MessageKind, &'static str, Outcome, u64);

/// Records every message and every lifecycle event.
#[derive(Default)]
struct Recorder {
    messages: Mutex<Vec<Seen>>,
    lifecycle: Mutex<Vec<String>>,
    dead_letters: AtomicU64,
    waited: Mutex<Vec<Duration>>,
}

thread_local! {
    static TRACE: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    /// The contexts that were current before each message being processed
    /// on this thread (processing nests: an ask reply inside a message).
    static OUTER: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Instrumentation for Recorder {
    fn before_message(&self, info: &MessageInfo<'_>) {
        // Make the sender's context current while processing, as a tracer would.
        let previous = TRACE.with(|t| t.replace(info.sender_context()));
        OUTER.with(|o| o.borrow_mut().push(previous));
    }
    fn after_message(&self, info: &MessageInfo<'_>, processed: &Processed) {
        let previous = OUTER
            .with(|o| o.borrow_mut().pop())
            .expect("before_message ran");
        TRACE.with(|t| t.set(previous));
        if let (Some(at), Some(timing)) = (info.enqueued_at(), processed.timing) {
            self.waited
                .lock()
                .unwrap()
                .push(timing.started.saturating_duration_since(at));
        }
        self.messages.lock().unwrap().push((
            info.path().to_string_without_uid(),
            info.kind(),
            info.message_type(),
            processed.outcome.clone(),
            info.sender_context(),
        ));
    }
    fn capture_context(&self, _: &weir_actor::ActorPath) -> u64 {
        TRACE.with(|t| t.get())
    }
    fn captures_context(&self) -> bool {
        true
    }
    fn wants_enqueue_time(&self) -> bool {
        true
    }
    fn wants_timing(&self) -> bool {
        true
    }
    fn on_lifecycle(&self, event: &LifecycleEvent<'_>) {
        let line = match event {
            LifecycleEvent::Started { path, .. } => format!("started {}", path.name()),
            LifecycleEvent::Restarted { path, .. } => format!("restarted {}", path.name()),
            LifecycleEvent::Stopped { path, .. } => format!("stopped {}", path.name()),
            _ => "other".to_owned(),
        };
        self.lifecycle.lock().unwrap().push(line);
    }
    fn on_dead_letter(&self, _: &DeadLetter) {
        self.dead_letters.fetch_add(1, Ordering::Relaxed);
    }
}

impl Recorder {
    fn user_counts(&self) -> HashMap<String, usize> {
        let mut counts = HashMap::new();
        for (path, kind, ..) in self.messages.lock().unwrap().iter() {
            if *kind == MessageKind::User {
                *counts.entry(path.clone()).or_default() += 1;
            }
        }
        counts
    }
}

#[derive(Clone)]
enum Msg {
    Count,
    Crash,
    Echo(ActorRef<u32>),
}

/// Spawns one child until `depth` levels exist; reports every `n`-th message.
struct Level {
    depth: usize,
    seen: usize,
    report: Sender<String>,
    children: Sender<ActorRef<Msg>>,
}

impl Actor for Level {
    type Msg = Msg;
    fn pre_start(&mut self, ctx: &mut Context<Self>) {
        self.children.send(ctx.myself()).unwrap();
        if self.depth > 1 {
            let (depth, report, children) =
                (self.depth - 1, self.report.clone(), self.children.clone());
            ctx.spawn(
                Props::new(move || Level {
                    depth,
                    seen: 0,
                    report: report.clone(),
                    children: children.clone(),
                }),
                &format!("l{depth}"),
            )
            .unwrap();
        }
    }
    fn receive(&mut self, ctx: &mut Context<Self>, msg: Msg) {
        match msg {
            Msg::Count => {
                self.seen += 1;
                if self.seen.is_multiple_of(100) {
                    self.report.send(ctx.path().name().to_owned()).unwrap();
                }
            }
            Msg::Crash => panic!("boom"),
            Msg::Echo(to) => to.tell(7u32),
        }
    }
}

fn level(depth: usize, report: &Sender<String>, children: &Sender<ActorRef<Msg>>) -> Props<Level> {
    let (report, children) = (report.clone(), children.clone());
    Props::new(move || Level {
        depth,
        seen: 0,
        report: report.clone(),
        children: children.clone(),
    })
}

#[test]
fn a_counting_hook_sees_exactly_every_message_at_every_level_and_of_system_actors() {
    let recorder = Arc::new(Recorder::default());
    let system = ActorSystem::builder()
        .name("seen")
        .instrumentation(recorder.clone())
        .build()
        .unwrap();
    let (reports, refs) = (Probe::new(), Probe::new());
    system
        .spawn(level(3, &reports.sender(), &refs.sender()), "l3")
        .unwrap();
    let levels = refs.expect_n(3);
    let service = system
        .spawn_system_actor(level(1, &reports.sender(), &refs.sender()), "service")
        .unwrap();
    refs.expect();
    for actor in levels.iter().chain([&service]) {
        for _ in 0..100 {
            actor.tell(Msg::Count);
        }
    }
    reports.expect_n(4);
    // The hook records after processing returns: let the last ones land.
    let paths = [
        "weir://seen/user/l3",
        "weir://seen/user/l3/l2",
        "weir://seen/user/l3/l2/l1",
        "weir://seen/system/service",
    ];
    // Exactly 100 each: a count that overshoots never settles here.
    assert!(
        eventually(PATIENCE, || {
            let counts = recorder.user_counts();
            paths.iter().all(|p| counts.get(*p) == Some(&100))
        }),
        "{:?}",
        recorder.user_counts()
    );
    // The reply of an ask is seen at its temporary actor.
    assert_eq!(ask(&levels[2], Msg::Echo, PATIENCE).wait(), Ok(7));
    assert!(eventually(PATIENCE, || recorder
        .messages
        .lock()
        .unwrap()
        .iter()
        .any(|(path, kind, ty, ..)| path
            .starts_with("weir://seen/temp/")
            && *kind == MessageKind::AskReply
            && *ty == "u32")));
    // Guardians process system messages too: a crash reaches /user as ChildFailed.
    levels[0].tell(Msg::Crash);
    assert!(eventually(PATIENCE, || recorder
        .messages
        .lock()
        .unwrap()
        .iter()
        .any(|(path, kind, ty, ..)| path == "weir://seen/user"
            && *kind == MessageKind::System
            && *ty == "weir::ChildFailed")));
    // Every recorded user message had an enqueue time.
    assert!(recorder.waited.lock().unwrap().len() >= 400);
    shutdown(&system);
}

#[test]
fn panics_are_reported_as_outcomes_and_lifecycle_events_arrive_in_order() {
    let recorder = Arc::new(Recorder::default());
    let system = ActorSystem::builder()
        .name("outcome")
        .instrumentation(recorder.clone())
        .build()
        .unwrap();
    let (reports, refs) = (Probe::new(), Probe::new());
    let a = system
        .spawn(level(1, &reports.sender(), &refs.sender()), "a")
        .unwrap();
    refs.expect();
    a.tell(Msg::Crash);
    refs.expect(); // restarted: pre_start ran again
    a.stop();
    assert!(eventually(PATIENCE, || a.is_terminated()));
    let outcomes: Vec<Outcome> = recorder
        .messages
        .lock()
        .unwrap()
        .iter()
        .filter(|(path, kind, ..)| path == "weir://outcome/user/a" && *kind == MessageKind::User)
        .map(|m| m.3.clone())
        .collect();
    assert_eq!(outcomes, [Outcome::Panicked("boom".into())]);
    let lifecycle: Vec<String> = recorder
        .lifecycle
        .lock()
        .unwrap()
        .iter()
        .filter(|l| l.ends_with(" a"))
        .cloned()
        .collect();
    assert_eq!(lifecycle, ["started a", "restarted a", "stopped a"]);
    a.tell(Msg::Count);
    assert_eq!(recorder.dead_letters.load(Ordering::Relaxed), 1);
    shutdown(&system);
}

/// Sends to the `next` actor from inside its own processing.
struct Relay {
    next: Option<ActorRef<u32>>,
    seen: Sender<u32>,
}
impl Actor for Relay {
    type Msg = u32;
    fn receive(&mut self, _: &mut Context<Self>, n: u32) {
        match &self.next {
            Some(next) => next.tell(n),
            None => self.seen.send(n).unwrap(),
        }
    }
}

#[test]
fn the_sender_context_travels_with_the_message() {
    let recorder = Arc::new(Recorder::default());
    let system = ActorSystem::builder()
        .name("ctx")
        .instrumentation(recorder.clone())
        .build()
        .unwrap();
    let seen = Probe::new();
    let tx = seen.sender();
    let last = system
        .spawn(
            Props::new(move || Relay {
                next: None,
                seen: tx.clone(),
            }),
            "last",
        )
        .unwrap();
    let first = system
        .spawn(
            Props::new(move || Relay {
                next: Some(last.clone()),
                seen: seen_sender(),
            }),
            "first",
        )
        .unwrap();
    TRACE.with(|t| t.set(42));
    first.tell(1u32);
    TRACE.with(|t| t.set(0));
    assert_eq!(seen.expect(), 1);
    // The hook records after processing returns: let both records land.
    assert!(eventually(PATIENCE, || recorder.user_counts().len() == 2));
    let contexts: HashMap<String, u64> = recorder
        .messages
        .lock()
        .unwrap()
        .iter()
        .filter(|(_, kind, ..)| *kind == MessageKind::User)
        .map(|m| (m.0.clone(), m.4))
        .collect();
    assert_eq!(
        contexts.get("weir://ctx/user/first"),
        Some(&42),
        "captured on the test thread"
    );
    assert_eq!(
        contexts.get("weir://ctx/user/last"),
        Some(&42),
        "carried on by the hook while processing"
    );
    shutdown(&system);
}

fn seen_sender() -> Sender<u32> {
    std::sync::mpsc::channel().0
}

/// Panics on every call.
#[derive(Default)]
struct Broken {
    calls: AtomicU64,
}
impl Instrumentation for Broken {
    fn before_message(&self, _: &MessageInfo<'_>) {
        self.calls.fetch_add(1, Ordering::Relaxed);
        panic!("broken hook");
    }
}

#[test]
fn a_panicking_hook_never_stops_an_actor_and_is_disabled() {
    let broken = Arc::new(Broken::default());
    let recorder = Arc::new(Recorder::default());
    let system = ActorSystem::builder()
        .name("broken")
        .instrumentation(broken.clone())
        .instrumentation(recorder.clone())
        .build()
        .unwrap();
    let (reports, refs) = (Probe::new(), Probe::new());
    let a = system
        .spawn(level(1, &reports.sender(), &refs.sender()), "a")
        .unwrap();
    refs.expect();
    for _ in 0..100 {
        a.tell(Msg::Count);
    }
    assert_eq!(reports.expect(), "a", "every message was processed");
    assert!(!a.is_terminated());
    // Disabled after its first panic; calls already in flight on the other
    // worker may panic too, but none start afterwards.
    let calls = broken.calls.load(Ordering::Relaxed);
    assert!((1..=2).contains(&calls), "calls: {calls}");
    assert!(
        eventually(PATIENCE, || recorder
            .user_counts()
            .get("weir://broken/user/a")
            == Some(&100)),
        "the other hook still sees all"
    );
    for _ in 0..100 {
        a.tell(Msg::Count);
    }
    assert_eq!(reports.expect(), "a");
    assert_eq!(
        broken.calls.load(Ordering::Relaxed),
        calls,
        "a disabled hook is not called again"
    );
    shutdown(&system);
}

#[test]
fn the_hook_sees_the_islands_of_a_stream() {
    use weir_streams::prelude::*;
    let recorder = Arc::new(Recorder::default());
    let system = ActorSystem::builder()
        .name("seen-stream")
        .instrumentation(recorder.clone())
        .build()
        .unwrap();
    let materializer = Materializer::new(&system);
    let done = Source::range(0u32..1000)
        .map(|x| x + 1)
        .named("numbers")
        .async_boundary()
        .run_with(Sink::fold(0u64, |a, x| a + u64::from(x)), &materializer);
    assert_eq!(done.wait(), Ok(500_500));
    // Each island is an actor under /system: the hook saw messages at both,
    // the island hand-over (`Start`) and the boundary's wake-ups among them.
    assert!(eventually(PATIENCE, || {
        let messages = recorder.messages.lock().unwrap();
        let islands: std::collections::HashSet<&str> = messages
            .iter()
            .filter(|(path, kind, ..)| {
                path.contains("/system/stream-") && *kind == MessageKind::User
            })
            .map(|(path, ..)| path.as_str())
            .collect();
        islands.len() == 2
    }));
    shutdown(&system);
}

/// Panics in `after_message`, once the message was processed.
#[derive(Default)]
struct BrokenAfter {
    before: AtomicU64,
    after: AtomicU64,
}
impl Instrumentation for BrokenAfter {
    fn before_message(&self, _: &MessageInfo<'_>) {
        self.before.fetch_add(1, Ordering::Relaxed);
    }
    fn after_message(&self, _: &MessageInfo<'_>, _: &Processed) {
        self.after.fetch_add(1, Ordering::Relaxed);
        panic!("broken after");
    }
}

#[test]
fn a_hook_panicking_after_a_message_is_disabled_and_the_others_go_on() {
    let broken = Arc::new(BrokenAfter::default());
    let recorder = Arc::new(Recorder::default());
    let system = ActorSystem::builder()
        .name("broken-after")
        .instrumentation(recorder.clone())
        .instrumentation(broken.clone())
        .build()
        .unwrap();
    let (reports, refs) = (Probe::new(), Probe::new());
    let a = system
        .spawn(level(1, &reports.sender(), &refs.sender()), "a")
        .unwrap();
    refs.expect();
    for _ in 0..100 {
        a.tell(Msg::Count);
    }
    assert_eq!(reports.expect(), "a", "every message was processed");
    assert!(!a.is_terminated());
    let (before, after) = (
        broken.before.load(Ordering::Relaxed),
        broken.after.load(Ordering::Relaxed),
    );
    assert!((1..=2).contains(&after), "after: {after}");
    assert!(
        before <= after + 1,
        "no before_message once disabled: {before}"
    );
    assert!(
        eventually(PATIENCE, || recorder
            .user_counts()
            .get("weir://broken-after/user/a")
            == Some(&100)),
        "the other hook still sees all"
    );
    for _ in 0..100 {
        a.tell(Msg::Count);
    }
    assert_eq!(reports.expect(), "a");
    assert_eq!(
        broken.before.load(Ordering::Relaxed),
        before,
        "disabled for good"
    );
    assert_eq!(
        broken.after.load(Ordering::Relaxed),
        after,
        "disabled for good"
    );
    shutdown(&system);
}

/// Logs its calls, named, for the actor named `watched` and for ask replies.
struct Logger {
    name: &'static str,
    log: Arc<Mutex<Vec<String>>>,
}
impl Logger {
    fn watched(info: &MessageInfo<'_>) -> bool {
        info.path().name() == "watched" || info.kind() == MessageKind::AskReply
    }
}
impl Instrumentation for Logger {
    fn before_message(&self, info: &MessageInfo<'_>) {
        if Self::watched(info) {
            let line = format!("{} before {:?}", self.name, info.kind());
            self.log.lock().unwrap().push(line);
        }
    }
    fn after_message(&self, info: &MessageInfo<'_>, processed: &Processed) {
        if Self::watched(info) {
            let line = format!(
                "{} after {:?} {:?}",
                self.name,
                info.kind(),
                processed.outcome
            );
            self.log.lock().unwrap().push(line);
        }
    }
}

#[test]
fn several_hooks_nest_with_the_first_installed_outermost() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let system = ActorSystem::builder()
        .name("nested")
        .instrumentation(Arc::new(Logger {
            name: "outer",
            log: log.clone(),
        }))
        .instrumentation(Arc::new(Logger {
            name: "inner",
            log: log.clone(),
        }) as Arc<dyn Instrumentation>)
        .build()
        .unwrap();
    let (reports, refs) = (Probe::new(), Probe::new());
    let watched = system
        .spawn(level(1, &reports.sender(), &refs.sender()), "watched")
        .unwrap();
    refs.expect();
    log.lock().unwrap().clear();
    // The reply is handled at the temporary actor, inside `watched`'s
    // message on the same thread: its hooks nest inside.
    assert_eq!(ask(&watched, Msg::Echo, PATIENCE).wait(), Ok(7));
    let expected = [
        "outer before User",
        "inner before User",
        "outer before AskReply",
        "inner before AskReply",
        "inner after AskReply Handled",
        "outer after AskReply Handled",
        "inner after User Handled",
        "outer after User Handled",
    ];
    assert!(
        eventually(PATIENCE, || log.lock().unwrap().len() == expected.len()),
        "{:?}",
        log.lock().unwrap()
    );
    assert_eq!(*log.lock().unwrap(), expected);
    shutdown(&system);
}
