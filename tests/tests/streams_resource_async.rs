//! `Source::unfold_resource_async`: opened on the first pull, one read
//! per pull, closed exactly once at the end, after a failed read, on
//! cancel (also while the resource is still opening). Fused and unfused.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Poll, Waker};
use std::time::Duration;

use weir_streams::Materializer;
use weir_streams::prelude::*;
use weir_streams::testkit::TestSink;
use weir_tests::{PATIENCE, eventually, shutdown};

const QUIET: Duration = Duration::from_millis(50);

/// What happened to the resources of one run, and a latch that holds
/// `open` until the test releases it.
#[derive(Clone, Default)]
struct Journal {
    notes: Arc<Mutex<Vec<&'static str>>>,
    reads: Arc<AtomicU32>,
    hold_open: Arc<AtomicBool>,
    waiting: Arc<Mutex<Option<Waker>>>,
}

impl Journal {
    fn note(&self, what: &'static str) {
        self.notes.lock().unwrap().push(what);
    }

    fn notes(&self) -> Vec<&'static str> {
        self.notes.lock().unwrap().clone()
    }

    fn release_open(&self) {
        self.hold_open.store(false, Ordering::SeqCst);
        if let Some(waker) = self.waiting.lock().unwrap().take() {
            waker.wake();
        }
    }

    /// `n` elements; `fail_read` fails the second read, `fail_close` the
    /// close.
    fn source(&self, n: u32, fail_read: bool, fail_close: bool) -> Source<u32> {
        let (open, read, close) = (self.clone(), self.clone(), self.clone());
        Source::unfold_resource_async(
            move || {
                let open = open.clone();
                async move {
                    std::future::poll_fn(|cx| {
                        if open.hold_open.load(Ordering::SeqCst) {
                            *open.waiting.lock().unwrap() = Some(cx.waker().clone());
                            if open.hold_open.load(Ordering::SeqCst) {
                                return Poll::Pending;
                            }
                        }
                        Poll::Ready(())
                    })
                    .await;
                    open.note("open");
                    Ok(Arc::new(AtomicU32::new(0)))
                }
            },
            move |next: Arc<AtomicU32>| {
                let reads = read.reads.clone();
                async move {
                    reads.fetch_add(1, Ordering::SeqCst);
                    let x = next.fetch_add(1, Ordering::SeqCst) + 1;
                    if fail_read && x == 2 {
                        return Err(StreamError::msg("read"));
                    }
                    Ok((x <= n).then_some(x))
                }
            },
            move |_| {
                let close = close.clone();
                async move {
                    close.note("close");
                    if fail_close {
                        Err(StreamError::msg("close"))
                    } else {
                        Ok(())
                    }
                }
            },
        )
    }
}

fn systems(name: &str) -> (weir_actor::ActorSystem, [Materializer; 2]) {
    let system = weir_actor::ActorSystem::new(name).unwrap();
    let mats = [
        Materializer::new(&system),
        Materializer::builder(&system).fusion(false).build(),
    ];
    (system, mats)
}

#[test]
fn closes_exactly_once_at_the_end_after_a_failed_read_and_on_cancel() {
    let (system, mats) = systems("resource-async");
    for mat in &mats {
        let journal = Journal::default();
        let all = journal
            .source(3, false, false)
            .run_with(Sink::collect(), mat);
        assert_eq!(all.wait(), Ok(vec![1, 2, 3]));
        assert_eq!(
            journal.notes(),
            ["open", "close"],
            "closed before completing"
        );

        let journal = Journal::default();
        let failed = journal
            .source(3, true, false)
            .run_with(Sink::collect(), mat);
        let error = failed.wait().unwrap_err().to_string();
        assert!(error.ends_with("read"), "{error}");
        assert_eq!(journal.notes(), ["open", "close"]);

        let journal = Journal::default();
        let closing = journal
            .source(2, false, true)
            .run_with(Sink::collect(), mat);
        let error = closing.wait().unwrap_err().to_string();
        assert!(
            error.ends_with("close"),
            "a failing close fails the stream: {error}"
        );

        let journal = Journal::default();
        let first = journal
            .source(u32::MAX, false, false)
            .take(1)
            .run_with(Sink::collect(), mat);
        assert_eq!(first.wait(), Ok(vec![1]));
        assert!(
            eventually(PATIENCE, || journal.notes() == ["open", "close"]),
            "{:?}",
            journal.notes()
        );
    }
    shutdown(&system);
}

/// Nothing is opened before the first pull; one read per pull; a failed
/// open fails the stream with nothing to close.
#[test]
fn opens_on_demand_reads_one_per_pull_and_a_failed_open_closes_nothing() {
    let (system, mats) = systems("resource-async-demand");
    for mat in &mats {
        let journal = Journal::default();
        let mut down = journal
            .source(10, false, false)
            .run_with(TestSink::probe(), mat);
        down.expect_no_message(QUIET);
        assert!(journal.notes().is_empty(), "opened only on demand");
        down.request(2);
        assert_eq!(down.expect_next_n(2), vec![1, 2]);
        down.expect_no_message(QUIET);
        assert_eq!(journal.reads.load(Ordering::SeqCst), 2, "no read ahead");
        down.cancel();
        assert!(eventually(PATIENCE, || journal.notes() == ["open", "close"]));

        let closed = Arc::new(AtomicU32::new(0));
        let counted = closed.clone();
        let failed = Source::<u32>::unfold_resource_async(
            || async { Err::<u32, _>(StreamError::msg("no connection")) },
            |_| async { Ok(None) },
            move |_| {
                counted.fetch_add(1, Ordering::SeqCst);
                async { Ok(()) }
            },
        )
        .run_with(Sink::collect(), mat);
        assert!(
            failed
                .wait()
                .unwrap_err()
                .to_string()
                .ends_with("no connection")
        );
        assert_eq!(closed.load(Ordering::SeqCst), 0);
    }
    shutdown(&system);
}

/// Cancelled while `open` is still running: the resource is closed once
/// it has opened, not leaked.
#[test]
fn a_resource_still_opening_at_cancel_is_closed_once_open() {
    let (system, mats) = systems("resource-async-opening");
    for mat in &mats {
        let journal = Journal::default();
        journal.hold_open.store(true, Ordering::SeqCst);
        let mut down = journal
            .source(10, false, false)
            .run_with(TestSink::probe(), mat);
        down.request(1);
        down.expect_no_message(QUIET);
        down.cancel();
        down.wait_idle();
        assert!(journal.notes().is_empty());
        journal.release_open();
        assert!(
            eventually(PATIENCE, || journal.notes() == ["open", "close"]),
            "{:?}",
            journal.notes()
        );
    }
    shutdown(&system);
}
