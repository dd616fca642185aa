//! A cancellation carries its cause (Pekko's `cancel(in, cause)`): a
//! failure downstream reaches the materialized values of the stages
//! upstream of it (FileIO's count, a queue's offers, `watch_termination`),
//! fused, unfused and across an async boundary alike.

use std::path::PathBuf;

use bytes::Bytes;
use weir_streams::io::{FileIO, IoResult};
use weir_streams::prelude::*;
use weir_streams::stage::{
    GraphStage, GraphStageLogic, InPort, MatContext, SinkShape, StageContext, StageResult,
};
use weir_streams::{Cancellation, ErrorKind, MonitorState, QueueOfferResult};
use weir_tests::{PATIENCE, eventually, shutdown, stream_system};

/// The ways a graph can run: fused, unfused, and with async boundaries
/// between the source and the failing stage.
#[derive(Debug, Clone, Copy)]
enum Form {
    Fused,
    Unfused,
    Boundary,
    /// Two boundaries with an island between them (run as a relay).
    Relayed,
}

const FORMS: [Form; 4] = [Form::Fused, Form::Unfused, Form::Boundary, Form::Relayed];

fn materializer(system: &weir_actor::ActorSystem, form: Form) -> Materializer {
    match form {
        Form::Unfused => Materializer::builder(system).fusion(false).build(),
        Form::Fused | Form::Boundary | Form::Relayed => Materializer::new(system),
    }
}

fn split<T: Send + 'static, M: Send + 'static>(source: Source<T, M>, form: Form) -> Source<T, M> {
    match form {
        Form::Boundary => source.async_boundary(),
        Form::Relayed => source.async_boundary().map(|x| x).async_boundary(),
        Form::Fused | Form::Unfused => source,
    }
}

fn wait<T>(completion: Completion<T>) -> Result<T, StreamError> {
    completion.wait_timeout(PATIENCE).expect("the stream ends")
}

fn is_boom(error: &StreamError) -> bool {
    matches!(error.kind(), ErrorKind::Panicked(m) if m.contains("boom"))
}

/// A file in the temp dir, removed when dropped.
struct TempFile(PathBuf);

impl TempFile {
    fn with(name: &str, len: usize) -> Self {
        let path = std::env::temp_dir().join(format!("weir-cause-{}-{name}", std::process::id()));
        std::fs::write(&path, vec![7u8; len]).unwrap();
        Self(path)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn a_file_sources_count_reports_a_failure_downstream() {
    let (system, _) = stream_system("cause-file");
    let file = TempFile::with("fail", 10_000);
    for form in FORMS {
        let m = materializer(&system, form);
        let source = split(FileIO::from_path(&file.0, 100).unwrap(), form);
        let (count, done) = source
            .map(|_: Bytes| -> Bytes { panic!("boom") })
            .to_mat(Sink::ignore(), Keep::both)
            .run(&m);
        let done = wait(done).expect_err("the stream fails");
        assert!(is_boom(&done), "{form:?}: {done:?}");
        let count = wait(count).expect_err(&format!("{form:?}: the count reports the failure"));
        assert!(is_boom(&count), "{form:?}: {count:?}");
    }
    shutdown(&system);
}

#[test]
fn a_normal_cancel_still_reports_the_count() {
    let (system, _) = stream_system("cause-file-take");
    let file = TempFile::with("take", 10_000);
    for form in FORMS {
        let m = materializer(&system, form);
        let source = split(FileIO::from_path(&file.0, 100).unwrap(), form);
        let (count, done) = source.take(1).to_mat(Sink::ignore(), Keep::both).run(&m);
        assert_eq!(wait(done), Ok(()), "{form:?}");
        let count = wait(count).unwrap_or_else(|e| panic!("{form:?}: {e:?}"));
        assert!(count.count >= 100, "{form:?}: {count:?}");
        assert_ne!(
            count,
            IoResult { count: 10_000 },
            "{form:?}: cancelled early"
        );
    }
    shutdown(&system);
}

#[test]
fn an_offer_after_a_failure_downstream_answers_with_the_failure() {
    let (system, _) = stream_system("cause-queue");
    for form in FORMS {
        let m = materializer(&system, form);
        let (queue, done) = split(Source::<u32, _>::queue(4).unwrap(), form)
            .map(|_: u32| -> u32 { panic!("boom") })
            .to_mat(Sink::ignore(), Keep::both)
            .run(&m);
        assert_eq!(queue.offer(1), QueueOfferResult::Enqueued);
        let done = wait(done).expect_err("the stream fails");
        assert!(is_boom(&done), "{form:?}: {done:?}");
        let mut last = None;
        assert!(
            eventually(PATIENCE, || {
                let answer = queue.offer(2);
                let settled = !matches!(answer, QueueOfferResult::Enqueued);
                last = Some(answer);
                settled
            }),
            "{form:?}: the queue hears of the failure"
        );
        match last {
            Some(QueueOfferResult::Failure(error, 2)) => {
                assert!(is_boom(&error), "{form:?}: {error:?}")
            }
            other => panic!("{form:?}: the failure, not {other:?}"),
        }
    }
    shutdown(&system);
}

#[test]
fn watch_termination_reports_a_failure_downstream() {
    let (system, _) = stream_system("cause-watch");
    for form in FORMS {
        let m = materializer(&system, form);
        let (watched, done) = split(Source::repeat(1u32), form)
            .via_mat(Flow::watch_termination(), Keep::right)
            .map(|_: u32| -> u32 { panic!("boom") })
            .to_mat(Sink::ignore(), Keep::both)
            .run(&m);
        let done = wait(done).expect_err("the stream fails");
        assert!(is_boom(&done), "{form:?}: {done:?}");
        let watched = wait(watched).expect_err(&format!("{form:?}: watch reports the failure"));
        assert!(is_boom(&watched), "{form:?}: {watched:?}");
    }
    shutdown(&system);
}

#[test]
fn watch_termination_reports_a_normal_cancel_as_success() {
    let (system, _) = stream_system("cause-watch-take");
    for form in FORMS {
        let m = materializer(&system, form);
        let (watched, done) = split(Source::repeat(1u32), form)
            .via_mat(Flow::watch_termination(), Keep::right)
            .take(3)
            .to_mat(Sink::ignore(), Keep::both)
            .run(&m);
        assert_eq!(wait(done), Ok(()), "{form:?}");
        assert_eq!(wait(watched), Ok(()), "{form:?}");
    }
    shutdown(&system);
}

#[test]
fn junctions_pass_the_cause_upstream() {
    let (system, _) = stream_system("cause-junctions");
    let file = TempFile::with("junctions", 10_000);
    for form in FORMS {
        let m = materializer(&system, form);
        // A broadcast with eager cancel: the side sink's failure.
        let source = split(FileIO::from_path(&file.0, 100).unwrap(), form);
        let (count, done) = source
            .also_to(Sink::for_each(|_: Bytes| panic!("boom")))
            .to_mat(Sink::ignore(), Keep::both)
            .run(&m);
        let _ = wait(done);
        let count = wait(count).expect_err(&format!("{form:?}: also_to's failure"));
        assert!(is_boom(&count), "{form:?}: {count:?}");
        // A wire tap: the main line's failure.
        let source = split(FileIO::from_path(&file.0, 100).unwrap(), form);
        let (count, done) = source
            .wire_tap(Sink::ignore())
            .map(|_: Bytes| -> Bytes { panic!("boom") })
            .to_mat(Sink::ignore(), Keep::both)
            .run(&m);
        let _ = wait(done);
        let count = wait(count).expect_err(&format!("{form:?}: the main line's failure"));
        assert!(is_boom(&count), "{form:?}: {count:?}");
    }
    shutdown(&system);
}

#[test]
fn monitor_reports_a_failure_downstream() {
    let (system, _) = stream_system("cause-monitor");
    for form in FORMS {
        let m = materializer(&system, form);
        let (monitor, done) = split(Source::repeat(1u32), form)
            .via_mat(Flow::monitor(), Keep::right)
            .map(|_: u32| -> u32 { panic!("boom") })
            .to_mat(Sink::ignore(), Keep::both)
            .run(&m);
        assert!(wait(done).is_err(), "{form:?}");
        assert!(
            eventually(PATIENCE, || matches!(
                monitor.state(),
                MonitorState::Failed(e) if is_boom(&e)
            )),
            "{form:?}: {:?}",
            monitor.state()
        );
    }
    shutdown(&system);
}

/// A sink that takes one element, then cancels with a cause of its own.
struct Refuse;

struct RefuseLogic(SinkShape<Bytes>);

impl GraphStage for Refuse {
    type Shape = SinkShape<Bytes>;
    type Mat = ();

    fn name(&self) -> &'static str {
        "refuse"
    }

    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        (Box::new(RefuseLogic(SinkShape::new())), ())
    }
}

impl GraphStageLogic for RefuseLogic {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.pull(self.0.inlet)
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let _ = ctx.grab(self.0.inlet)?;
        let cause = Cancellation::Failed(StreamError::msg("refused"));
        ctx.cancel_with(self.0.inlet, cause);
        Ok(())
    }
}

#[test]
fn a_custom_stage_cancels_with_its_own_cause() {
    let (system, _) = stream_system("cause-custom");
    let file = TempFile::with("custom", 10_000);
    for form in FORMS {
        let m = materializer(&system, form);
        let source = split(FileIO::from_path(&file.0, 100).unwrap(), form);
        let count = source.to(Sink::from_graph(Refuse)).run(&m);
        let count = wait(count).expect_err(&format!("{form:?}: the sink's cause"));
        assert_eq!(count.to_string(), "refused", "{form:?}");
    }
    shutdown(&system);
}
