//! The custom stage API: handlers, emit, async callbacks, timers, attributes.

use std::sync::mpsc;
use std::time::Duration;

use weir_actor::{DeadLetterReason, Event};
use weir_streams::Attributes;
use weir_streams::prelude::*;
use weir_streams::stage::{
    AsyncCallback, GraphStage, GraphStageLogic, InPort, MatContext, OutPort, SinkShape,
    SourceShape, StageContext, StageResult, TimerKey,
};
use weir_streams::testkit::{TestSink, TestSource};
use weir_tests::{PATIENCE, QUIET, eventually, shutdown, stream_system};

/// A source driven from outside through an async callback; it reports
/// its attributes and timers to the test.
struct Remote;
struct RemoteLogic {
    shape: SourceShape<u32>,
    report: mpsc::Sender<String>,
}

enum Cmd {
    Emit(Vec<u32>),
    Finish,
    Once(u64, Duration),
    At(u64, std::time::Instant),
    Periodic(u64, Duration),
    Cancel(u64),
}

impl GraphStage for Remote {
    type Shape = SourceShape<u32>;
    type Mat = (AsyncCallback<Cmd>, mpsc::Receiver<String>);
    fn name(&self) -> &'static str {
        "remote"
    }
    fn initial_attributes(&self) -> Attributes {
        Attributes::new()
            .with_input_buffer(3)
            .expect("3 is a valid buffer")
    }
    fn create_logic(&self, cx: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, Self::Mat) {
        let (report, rx) = mpsc::channel();
        report
            .send(format!(
                "{:?}/{}",
                cx.attributes().name(),
                cx.attributes().input_buffer()
            ))
            .unwrap();
        let callback = cx.async_callback(|this: &mut RemoteLogic, cmd: Cmd, ctx| {
            match cmd {
                Cmd::Emit(xs) => ctx.emit_multiple(this.shape.out, xs)?,
                Cmd::Finish => ctx.complete(this.shape.out),
                Cmd::Once(k, d) => ctx.schedule_once(k, d),
                Cmd::At(k, at) => ctx.schedule_once_at(k, at),
                Cmd::Periodic(k, d) => ctx.schedule_periodically(k, d, d),
                Cmd::Cancel(k) => {
                    ctx.cancel_timer(k);
                    let _ = this
                        .report
                        .send(format!("active {}", ctx.is_timer_active(k)));
                }
            }
            Ok(())
        });
        (
            Box::new(RemoteLogic {
                shape: SourceShape::new(),
                report,
            }),
            (callback, rx),
        )
    }
}

impl GraphStageLogic for RemoteLogic {
    fn on_pull(&mut self, _: OutPort, _: &mut StageContext<'_>) -> StageResult {
        Ok(())
    }
    fn on_timer(&mut self, key: TimerKey, _: &mut StageContext<'_>) -> StageResult {
        let _ = self.report.send(format!("timer {}", key.0));
        Ok(())
    }
    fn post_stop(&mut self) {
        let _ = self.report.send("stopped".to_owned());
    }
}

#[test]
fn emit_multiple_is_delivered_in_order_on_demand_and_completion_waits_for_it() {
    let (system, mat) = stream_system("emit");
    let ((callback, _reports), mut down) = Source::from_graph(Remote)
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    callback.invoke(Cmd::Emit(vec![1, 2, 3, 4]));
    callback.invoke(Cmd::Finish);
    down.expect_no_message(QUIET);
    down.request(2);
    assert_eq!(down.expect_next_n(2), vec![1, 2]);
    down.expect_no_message(QUIET);
    down.request(5);
    assert_eq!(down.expect_next_n(2), vec![3, 4]);
    down.expect_complete();
    shutdown(&system);
}

#[test]
fn async_callbacks_work_before_start_and_are_reported_after_stop() {
    let (system, mat) = stream_system("callbacks");
    let graph = Source::from_graph(Remote).to_mat(Sink::collect(), Keep::both);
    let ((callback, reports), done) = graph.run(&mat);
    // Invoked at once, from another thread: nothing is lost or reordered.
    let sender = callback.clone();
    std::thread::spawn(move || {
        for i in 0..100 {
            sender.invoke(Cmd::Emit(vec![i]));
        }
        sender.invoke(Cmd::Finish);
    })
    .join()
    .unwrap();
    assert_eq!(done.wait(), Ok((0..100).collect::<Vec<_>>()));
    assert_eq!(
        reports.recv_timeout(PATIENCE).unwrap(),
        "Some(\"remote\")/3"
    );
    assert_eq!(reports.recv_timeout(PATIENCE).unwrap(), "stopped");

    let dead = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = std::sync::Arc::clone(&dead);
    let _subscription = system.event_stream().subscribe(move |event| {
        let Event::DeadLetter(letter) = event else {
            return;
        };
        log.lock().unwrap().push(letter.reason());
    });
    callback.invoke(Cmd::Emit(vec![1])); // after stop: a dead letter, no panic
    assert!(eventually(PATIENCE, || !dead.lock().unwrap().is_empty()));
    let reason = dead.lock().unwrap()[0];
    assert!(
        matches!(
            reason,
            DeadLetterReason::RecipientStopped | DeadLetterReason::StageStopped
        ),
        "{reason:?}"
    );
    shutdown(&system);
}

#[test]
fn keyed_timers_fire_once_periodically_and_can_be_cancelled() {
    let (system, mat, clock) = weir_tests::clocked_stream_system("timers");
    let ms = Duration::from_millis;
    let ((callback, reports), mut down) = Source::from_graph(Remote)
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    assert!(reports.recv_timeout(PATIENCE).unwrap().starts_with("Some"));
    // Let the island handle the commands sent so far (arming timers at the
    // clock's current time), advance, and wait until it has handled what
    // came due: the reports are complete when `fired` reads them.
    let mut advance = |by: Duration| {
        down.wait_idle();
        clock.advance(by);
        down.wait_idle();
    };
    let fired = || reports.try_iter().collect::<Vec<_>>();
    callback.invoke(Cmd::Once(1, ms(5)));
    advance(ms(4));
    assert!(fired().is_empty());
    advance(ms(1));
    assert_eq!(fired(), ["timer 1"]);
    advance(ms(50));
    assert!(fired().is_empty(), "a once timer fires once");

    callback.invoke(Cmd::Periodic(2, ms(5)));
    advance(ms(15));
    assert_eq!(fired(), ["timer 2"; 3]);
    callback.invoke(Cmd::Cancel(2));
    advance(ms(50));
    assert_eq!(fired(), ["active false"], "no tick after the cancel");

    // Replacing a timer with the same key: only the new one fires.
    callback.invoke(Cmd::Once(3, Duration::from_secs(60)));
    callback.invoke(Cmd::Once(3, ms(5)));
    advance(ms(5));
    assert_eq!(fired(), ["timer 3"]);
    advance(Duration::from_secs(60));
    assert!(fired().is_empty());

    // A deadline read from the clock before it moved on fires at that
    // deadline (a delay from the arming would fire 59 ms late); one that
    // has passed fires at once.
    let start = clock.now();
    advance(ms(59));
    callback.invoke(Cmd::At(4, start + ms(60)));
    callback.invoke(Cmd::At(5, start));
    advance(Duration::ZERO);
    assert_eq!(fired(), ["timer 5"]);
    advance(ms(1));
    assert_eq!(fired(), ["timer 4"]);
    shutdown(&system);
}

/// A sink that keeps going after its inlet closes, until a timer ends it.
struct Lingering;
struct LingeringLogic {
    shape: SinkShape<u8>,
    done: mpsc::Sender<&'static str>,
}

impl GraphStage for Lingering {
    type Shape = SinkShape<u8>;
    type Mat = mpsc::Receiver<&'static str>;
    fn name(&self) -> &'static str {
        "lingering"
    }
    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, Self::Mat) {
        let (done, rx) = mpsc::channel();
        (
            Box::new(LingeringLogic {
                shape: SinkShape::new(),
                done,
            }),
            rx,
        )
    }
}

impl GraphStageLogic for LingeringLogic {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.pull(self.shape.inlet)
    }
    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.grab(self.shape.inlet)?;
        ctx.pull(self.shape.inlet)
    }
    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.set_keep_going(true);
        ctx.schedule_once(TimerKey(9), Duration::from_millis(20));
        let _ = self.done.send("upstream finished");
        Ok(())
    }
    fn on_timer(&mut self, _: TimerKey, ctx: &mut StageContext<'_>) -> StageResult {
        let _ = self.done.send("timer");
        ctx.complete_stage();
        Ok(())
    }
    fn post_stop(&mut self) {
        let _ = self.done.send("stopped");
    }
}

#[test]
fn keep_going_holds_a_stage_open_after_its_ports_close() {
    let (system, mat, clock) = weir_tests::clocked_stream_system("keep-going");
    let events = Source::range(0u8..3).run_with(Sink::from_graph(Lingering), &mat);
    assert_eq!(events.recv_timeout(PATIENCE).unwrap(), "upstream finished");
    clock.advance(Duration::from_millis(19));
    assert!(events.try_recv().is_err(), "open until its timer fires");
    clock.advance(Duration::from_millis(1));
    assert_eq!(events.recv_timeout(PATIENCE).unwrap(), "timer");
    assert_eq!(events.recv_timeout(PATIENCE).unwrap(), "stopped");
    shutdown(&system);
}

#[test]
fn the_documented_custom_stage_pattern_works_under_probes() {
    // The same shape as examples/custom_stage.rs: drop repeats.
    use weir_streams::stage::FlowShape;
    struct Dedup;
    struct DedupLogic(FlowShape<u32, u32>, Option<u32>);
    impl GraphStage for Dedup {
        type Shape = FlowShape<u32, u32>;
        type Mat = ();
        fn name(&self) -> &'static str {
            "dedup"
        }
        fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
            (Box::new(DedupLogic(FlowShape::new(), None)), ())
        }
    }
    impl GraphStageLogic for DedupLogic {
        fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
            let x = ctx.grab(self.0.inlet)?;
            if self.1 == Some(x) {
                return ctx.pull(self.0.inlet);
            }
            self.1 = Some(x);
            ctx.push(self.0.out, x)
        }
        fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
            ctx.pull(self.0.inlet)
        }
    }
    let (system, mat) = stream_system("dedup");
    let (mut up, mut down) = TestSource::probe::<u32>()
        .via(Flow::from_graph(Dedup))
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    down.request(2);
    for x in [5, 5, 5, 6] {
        up.expect_request();
        up.send_next(x);
    }
    assert_eq!(down.expect_next_n(2), vec![5, 6]);
    up.expect_no_signal(QUIET);
    up.send_complete();
    down.expect_complete();
    shutdown(&system);
}

/// A flow that asks for `on_idle` on every element and records how many
/// elements each idle call saw.
struct Batches(mpsc::Sender<usize>);
struct BatchesLogic {
    shape: weir_streams::stage::FlowShape<u32, u32>,
    since_idle: usize,
    report: mpsc::Sender<usize>,
}

impl GraphStage for Batches {
    type Shape = weir_streams::stage::FlowShape<u32, u32>;
    type Mat = ();
    fn name(&self) -> &'static str {
        "batches"
    }
    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        let logic = BatchesLogic {
            shape: weir_streams::stage::FlowShape::new(),
            since_idle: 0,
            report: self.0.clone(),
        };
        (Box::new(logic), ())
    }
}

impl GraphStageLogic for BatchesLogic {
    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let x = ctx.grab(self.shape.inlet)?;
        self.since_idle += 1;
        ctx.request_idle_callback();
        ctx.push(self.shape.out, x)
    }
    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.pull(self.shape.inlet)
    }
    fn on_idle(&mut self, _: &mut StageContext<'_>) -> StageResult {
        let _ = self.report.send(std::mem::take(&mut self.since_idle));
        Ok(())
    }
}

#[test]
fn on_idle_runs_once_per_request_batch_when_the_island_runs_dry() {
    let (system, mat) = stream_system("on-idle");
    let (tx, rx) = mpsc::channel();
    let (mut up, mut down) = TestSource::probe::<u32>()
        .via(Flow::from_graph(Batches(tx)))
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    down.request(3);
    up.expect_request();
    up.send_next(1);
    assert_eq!(down.expect_next(), 1);
    assert_eq!(
        rx.recv_timeout(PATIENCE).unwrap(),
        1,
        "one idle call after the island ran dry"
    );
    assert!(
        rx.recv_timeout(QUIET).is_err(),
        "and no more without a new request"
    );
    // Later elements: every one is counted in exactly one idle call.
    up.expect_request();
    up.send_next(2);
    up.send_next(3);
    assert_eq!(down.expect_next_n(2), vec![2, 3]);
    let mut seen = 0;
    while seen < 2 {
        seen += rx.recv_timeout(PATIENCE).unwrap();
    }
    assert_eq!(seen, 2);
    shutdown(&system);
}

#[test]
fn attributes_named_alike_are_equal_however_the_name_is_kept() {
    let borrowed = weir_streams::Attributes::named("stage");
    let owned = weir_streams::Attributes::named(String::from("stage"));
    assert_eq!(borrowed, owned);
    assert_eq!(format!("{borrowed:?}"), format!("{owned:?}"));
    assert!(format!("{owned:?}").contains("name: Some(\"stage\")"));
}
