//! The async and stateful operators: `scan_async`, `fold_async`,
//! `stateful_map`, `map_with_resource`, `Sink::for_each_async`,
//! `Sink::fold_async`, `Source::future`, `unfold_async`,
//! `unfold_resource`. Each test runs fused and unfused; futures are held
//! open by a `Gate` the test releases, so "a future is running" is a
//! state the test controls.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Poll, Waker};
use std::time::Duration;

use weir_streams::prelude::*;
use weir_streams::testkit::{TestSink, TestSource};
use weir_streams::{ErrorKind, Materializer};
use weir_tests::{PATIENCE, eventually, shutdown};

type BoxFuture<T> = Pin<Box<dyn Future<Output = Result<T, StreamError>> + Send>>;

/// Futures that finish when the test opens them, in order of making.
#[derive(Clone, Default)]
struct Gate(Arc<Mutex<GateState>>);

#[derive(Default)]
struct GateState {
    made: usize,
    opened: usize,
    running: usize,
    most_running: usize,
    wakers: Vec<Waker>,
}

impl Gate {
    /// A future that gives `value` once the test has opened as many
    /// futures as were made before it, plus itself.
    fn hold<T: Send + 'static>(&self, value: T) -> BoxFuture<T> {
        let gate = self.clone();
        let number = {
            let mut s = self.0.lock().unwrap();
            s.made += 1;
            s.running += 1;
            s.most_running = s.most_running.max(s.running);
            s.made
        };
        let mut value = Some(value);
        Box::pin(std::future::poll_fn(move |cx| {
            let mut s = gate.0.lock().unwrap();
            if s.opened >= number {
                s.running -= 1;
                Poll::Ready(Ok(value.take().expect("polled once after ready")))
            } else {
                s.wakers.push(cx.waker().clone());
                Poll::Pending
            }
        }))
    }

    /// Let the next future finish.
    fn open_next(&self) {
        let wakers = {
            let mut s = self.0.lock().unwrap();
            s.opened += 1;
            std::mem::take(&mut s.wakers)
        };
        wakers.into_iter().for_each(Waker::wake);
    }

    fn made(&self) -> usize {
        self.0.lock().unwrap().made
    }

    fn most_running(&self) -> usize {
        self.0.lock().unwrap().most_running
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

const QUIET: Duration = Duration::from_millis(50);

/// `scan_async` emits its zero first, then each accumulator once its future
/// finishes; it asks upstream for the next element only after downstream
/// took the last accumulator; a completion while a future runs waits for
/// its result.
#[test]
fn scan_async_emits_zero_then_each_result_pulling_one_at_a_time() {
    let (system, mats) = systems("scan-async");
    for mat in &mats {
        let gate = Gate::default();
        let g = gate.clone();
        let (mut up, mut down) = TestSource::probe::<u32>()
            .scan_async(100u32, move |acc, x| g.hold(acc + x))
            .to_mat(TestSink::probe(), Keep::both)
            .run(mat);
        down.request(1);
        assert_eq!(down.expect_next(), 100);
        up.expect_no_signal(QUIET);
        down.request(2);
        assert_eq!(up.expect_request(), 1);
        up.send_next(1);
        down.expect_no_message(QUIET);
        gate.open_next();
        assert_eq!(down.expect_next(), 101);
        assert_eq!(up.expect_request(), 1);
        up.send_next(2);
        up.send_complete();
        down.expect_no_message(QUIET);
        gate.open_next();
        assert_eq!(down.expect_next(), 103);
        down.expect_complete();
        assert_eq!(gate.made(), 2);
    }
    shutdown(&system);
}

/// An empty upstream: `scan_async` gives its zero, `fold_async` too.
#[test]
fn an_empty_stream_scans_and_folds_to_zero() {
    let (system, mats) = systems("scan-empty");
    for mat in &mats {
        let scanned = Source::empty()
            .scan_async(7u32, |acc, x: u32| async move { Ok(acc + x) })
            .run_with(Sink::collect(), mat);
        assert_eq!(scanned.wait(), Ok(vec![7]));
        let folded = Source::empty()
            .fold_async(7u32, |acc, x: u32| async move { Ok(acc + x) })
            .run_with(Sink::collect(), mat);
        assert_eq!(folded.wait(), Ok(vec![7]));
        let sink = Source::empty().run_with(
            Sink::fold_async(7u32, |acc, x: u32| async move { Ok(acc + x) }),
            mat,
        );
        assert_eq!(sink.wait(), Ok(7));
    }
    shutdown(&system);
}

/// `fold_async` keeps pulling while its futures finish, and emits the last
/// accumulator with the completion.
#[test]
fn fold_async_threads_the_accumulator_through_pending_futures() {
    let (system, mats) = systems("fold-async");
    for mat in &mats {
        let gate = Gate::default();
        let g = gate.clone();
        let (mut up, mut down) = TestSource::probe::<u32>()
            .fold_async(Vec::new(), move |mut acc: Vec<u32>, x| {
                acc.push(x);
                g.hold(acc)
            })
            .to_mat(TestSink::probe(), Keep::both)
            .run(mat);
        down.request(1);
        assert_eq!(up.expect_request(), 1);
        up.send_next(3);
        up.expect_no_signal(QUIET);
        gate.open_next();
        assert_eq!(up.expect_request(), 1);
        up.send_next(4);
        gate.open_next();
        assert_eq!(up.expect_request(), 1);
        up.send_complete();
        assert_eq!(down.expect_next(), vec![3, 4]);
        down.expect_complete();
    }
    shutdown(&system);
}

/// A future's `Err` fails the stream; a panic in `f` fails it naming the
/// stage.
#[test]
fn scan_async_fails_on_an_err_and_on_a_panic() {
    let (system, mats) = systems("scan-fail");
    for mat in &mats {
        let failed = Source::range(1u32..=3)
            .scan_async(0u32, |acc, x| async move {
                if x == 2 {
                    Err(StreamError::msg("two"))
                } else {
                    Ok(acc + x)
                }
            })
            .run_with(Sink::collect(), mat)
            .wait()
            .unwrap_err();
        assert!(failed.to_string().ends_with("two"), "{failed}");
        let panicked = Source::range(1u32..=3)
            .fold_async(0u32, |acc, x| {
                assert!(x < 2, "no twos");
                async move { Ok(acc + x) }
            })
            .run_with(Sink::collect(), mat)
            .wait()
            .unwrap_err();
        assert!(
            matches!(panicked.kind(), ErrorKind::Panicked(m) if m.contains("no twos")),
            "{panicked:?}"
        );
        assert!(
            panicked.stage().is_some_and(|s| s.contains("fold_async")),
            "{panicked:?}"
        );
    }
    shutdown(&system);
}

/// Counts the ends a `stateful_map` ran, and what they were given.
#[derive(Clone, Default)]
struct Ends(Arc<Mutex<Vec<u32>>>);

impl Ends {
    fn seen(&self) -> Vec<u32> {
        self.0.lock().unwrap().clone()
    }
}

/// Running sums, the end emitting the total (negated, to tell it apart).
fn summing(ends: &Ends) -> Flow<u32, i64> {
    let ends = ends.clone();
    Flow::new().stateful_map(
        || 0u32,
        |sum, x: u32| {
            *sum += x;
            i64::from(*sum)
        },
        move |sum| {
            ends.0.lock().unwrap().push(sum);
            Some(-i64::from(sum))
        },
    )
}

/// `stateful_map`'s end runs once however the stage stops; its element is
/// emitted only when upstream completes, before the completion.
#[test]
fn stateful_map_runs_its_end_once_on_completion_failure_and_cancel() {
    let (system, mats) = systems("stateful-map");
    for mat in &mats {
        let ends = Ends::default();
        let done = Source::range(1u32..=3)
            .via(summing(&ends))
            .run_with(Sink::collect(), mat);
        assert_eq!(done.wait(), Ok(vec![1, 3, 6, -6]));
        assert_eq!(ends.seen(), vec![6]);

        let ends = Ends::default();
        let failed = Source::range(1u32..=5)
            .map(|x| if x == 3 { panic!("three") } else { x })
            .via(summing(&ends))
            .run_with(Sink::collect(), mat);
        assert!(failed.wait().is_err());
        assert!(
            eventually(PATIENCE, || ends.seen() == vec![3]),
            "{:?}",
            ends.seen()
        );

        let ends = Ends::default();
        let (mut up, mut down) = TestSource::probe::<u32>()
            .via(summing(&ends))
            .to_mat(TestSink::probe(), Keep::both)
            .run(mat);
        down.request(1);
        up.expect_request();
        up.send_next(5);
        assert_eq!(down.expect_next(), 5);
        down.cancel();
        up.expect_cancellation();
        assert!(
            eventually(PATIENCE, || ends.seen() == vec![5]),
            "{:?}",
            ends.seen()
        );
        down.expect_no_message(QUIET);
    }
    shutdown(&system);
}

/// `map_with_resource` closes its resource once, also when downstream
/// takes only a prefix.
#[test]
fn map_with_resource_closes_once_when_downstream_stops_early() {
    let (system, mats) = systems("with-resource");
    for mat in &mats {
        let opened = Arc::new(AtomicUsize::new(0));
        let closed = Arc::new(AtomicUsize::new(0));
        let (o, c) = (opened.clone(), closed.clone());
        let flow = Flow::<u32>::new().map_with_resource(
            move || o.fetch_add(1, Ordering::SeqCst),
            |id, x| (*id, x),
            move |_| {
                c.fetch_add(1, Ordering::SeqCst);
                None
            },
        );
        let first = Source::range(1u32..=100)
            .via(flow.clone())
            .take(2)
            .run_with(Sink::collect(), mat);
        assert_eq!(first.wait().unwrap().len(), 2);
        let all = Source::range(1u32..=3)
            .via(flow)
            .run_with(Sink::collect(), mat);
        assert_eq!(all.wait().unwrap().len(), 3);
        assert!(eventually(PATIENCE, || closed.load(Ordering::SeqCst) == 2));
        assert_eq!(opened.load(Ordering::SeqCst), 2, "one resource per run");
    }
    shutdown(&system);
}

/// `for_each_async` runs at most `parallelism` futures at once and
/// completes when the last has finished; an `Err` fails its completion.
#[test]
fn for_each_async_bounds_its_futures_and_completes_after_the_last() {
    let (system, mats) = systems("for-each-async");
    for mat in &mats {
        let gate = Gate::default();
        let g = gate.clone();
        let done = Source::range(0u32..6).run_with(
            Sink::for_each_async(2, move |x| g.hold(x).into_unit()).unwrap(),
            mat,
        );
        assert!(eventually(PATIENCE, || gate.made() == 2));
        std::thread::sleep(QUIET);
        assert_eq!(gate.made(), 2, "no third future before one finishes");
        for _ in 0..6 {
            gate.open_next();
        }
        assert_eq!(done.wait(), Ok(()));
        assert_eq!(gate.most_running(), 2);

        let failed = Source::range(0u32..6).run_with(
            Sink::for_each_async(3, |x| async move {
                if x == 4 {
                    Err(StreamError::msg("four"))
                } else {
                    Ok(())
                }
            })
            .unwrap(),
            mat,
        );
        assert!(failed.wait().is_err());
    }
    assert!(Sink::<u32, _>::for_each_async(0, |_| async { Ok(()) }).is_err());
    shutdown(&system);
}

/// A future giving `Result<T>` mapped to `Result<()>`.
trait IntoUnit {
    fn into_unit(self) -> BoxFuture<()>;
}

impl<T: Send + 'static> IntoUnit for BoxFuture<T> {
    fn into_unit(self) -> BoxFuture<()> {
        Box::pin(async move { self.await.map(|_| ()) })
    }
}

/// `Source::future` makes its future for each run and waits for it;
/// `unfold_async` runs one future per element, only on demand.
#[test]
fn future_and_unfold_async_wait_for_their_futures_on_demand() {
    let (system, mats) = systems("future-sources");
    for mat in &mats {
        let gate = Gate::default();
        let g = gate.clone();
        let single = Source::future(move || g.hold(9u8));
        let mut first = single.clone().run_with(TestSink::probe(), mat);
        first.request(1);
        first.expect_no_message(QUIET);
        gate.open_next();
        assert_eq!(first.expect_next(), 9);
        first.expect_complete();
        gate.open_next();
        assert_eq!(single.run_with(Sink::collect(), mat).wait(), Ok(vec![9]));
        assert_eq!(gate.made(), 2, "one future per run");

        let gate = Gate::default();
        let g = gate.clone();
        let mut down = Source::unfold_async(0u32, move |n| g.hold((n < 2).then_some((n + 1, n))))
            .run_with(TestSink::probe(), mat);
        down.expect_no_message(QUIET);
        assert_eq!(gate.made(), 0, "nothing made before demand");
        down.request(1);
        gate.open_next();
        assert_eq!(down.expect_next(), 0);
        down.expect_no_message(QUIET);
        assert_eq!(gate.made(), 1, "the next future waits for demand");
        down.request(5);
        gate.open_next();
        gate.open_next();
        assert_eq!(down.expect_next(), 1);
        down.expect_complete();

        let failed = Source::unfold_async(0u32, |n| async move {
            if n == 1 {
                Err(StreamError::msg("one"))
            } else {
                Ok(Some((n + 1, n)))
            }
        })
        .run_with(Sink::collect(), mat)
        .wait();
        assert!(failed.is_err());
    }
    shutdown(&system);
}

/// A resource that records what happened to it.
#[derive(Clone, Default)]
struct Journal(Arc<Mutex<Vec<&'static str>>>);

impl Journal {
    fn note(&self, what: &'static str) {
        self.0.lock().unwrap().push(what);
    }

    fn read(&self) -> Vec<&'static str> {
        self.0.lock().unwrap().clone()
    }

    /// A source of `n` elements from a journaled resource; `fail_read`
    /// makes the read of element 2 fail, `fail_close` the close.
    fn source(&self, n: u32, fail_read: bool, fail_close: bool) -> Source<u32> {
        let (open, close) = (self.clone(), self.clone());
        Source::unfold_resource(
            move || {
                open.note("open");
                Ok(0u32)
            },
            move |next| {
                *next += 1;
                if fail_read && *next == 2 {
                    return Err(StreamError::msg("read"));
                }
                Ok((*next <= n).then_some(*next))
            },
            move |_| {
                close.note("close");
                if fail_close {
                    Err(StreamError::msg("close"))
                } else {
                    Ok(())
                }
            },
        )
    }
}

/// `unfold_resource` opens on demand and closes exactly once: at the end,
/// on a read failure (which is what the stream reports), and on cancel; a
/// failing close at the end fails the stream.
#[test]
fn unfold_resource_closes_exactly_once_however_the_stream_ends() {
    let (system, mats) = systems("unfold-resource");
    for mat in &mats {
        let journal = Journal::default();
        let all = journal
            .source(3, false, false)
            .run_with(Sink::collect(), mat);
        assert_eq!(all.wait(), Ok(vec![1, 2, 3]));
        assert!(eventually(PATIENCE, || journal.read() == ["open", "close"]));

        let journal = Journal::default();
        let failed = journal
            .source(3, true, false)
            .run_with(Sink::collect(), mat);
        let error = failed.wait().unwrap_err().to_string();
        assert!(error.ends_with("read"), "{error}");
        assert!(eventually(PATIENCE, || journal.read() == ["open", "close"]));

        let journal = Journal::default();
        let first = journal
            .source(u32::MAX, false, false)
            .take(1)
            .run_with(Sink::collect(), mat);
        assert_eq!(first.wait(), Ok(vec![1]));
        assert!(
            eventually(PATIENCE, || journal.read() == ["open", "close"]),
            "{:?}",
            journal.read()
        );

        let journal = Journal::default();
        let closing = journal
            .source(2, false, true)
            .run_with(Sink::collect(), mat);
        let error = closing.wait().unwrap_err().to_string();
        assert!(error.ends_with("close"), "{error}");

        let journal = Journal::default();
        let mut idle = journal
            .source(2, false, false)
            .run_with(TestSink::probe(), mat);
        idle.expect_no_message(QUIET);
        assert!(journal.read().is_empty(), "opened only on demand");
        idle.cancel();
    }
    shutdown(&system);
}

/// `lazy_source` builds its source on the first demand of each run, not
/// at materialization; `lazy_future_source` waits for its future, and
/// its `Err` fails the stream.
#[test]
fn lazy_sources_build_on_the_first_demand_of_each_run() {
    let (system, mats) = systems("lazy-sources");
    for mat in &mats {
        let built = Arc::new(AtomicUsize::new(0));
        let counter = built.clone();
        let lazy = Source::lazy_source(move || {
            counter.fetch_add(1, Ordering::SeqCst);
            Source::range(1u32..=2)
        });
        let mut down = lazy.clone().run_with(TestSink::probe(), mat);
        down.expect_no_message(QUIET);
        assert_eq!(built.load(Ordering::SeqCst), 0, "not built before demand");
        down.request(5);
        assert_eq!(down.expect_next_n(2), vec![1, 2]);
        down.expect_complete();
        assert_eq!(lazy.run_with(Sink::collect(), mat).wait(), Ok(vec![1, 2]));
        assert_eq!(built.load(Ordering::SeqCst), 2, "once per run");

        let gate = Gate::default();
        let g = gate.clone();
        let mut chosen = Source::lazy_future_source(move || g.hold(Source::single(7u8)))
            .run_with(TestSink::probe(), mat);
        chosen.request(1);
        chosen.expect_no_message(QUIET);
        gate.open_next();
        assert_eq!(chosen.expect_next(), 7);
        chosen.expect_complete();

        let failed = Source::<u8>::lazy_future_source(|| async {
            Err::<Source<u8>, _>(StreamError::msg("no source"))
        })
        .run_with(Sink::collect(), mat)
        .wait();
        assert!(failed.unwrap_err().to_string().contains("no source"));
    }
    shutdown(&system);
}
