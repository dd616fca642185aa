//! `Source::from_poll_fn` under every driver (a stage pulled one element at
//! a time, a fused folding sink, an async boundary, a pulling sink), and
//! `Sink::with_pull`; and `Source::cycle`, built on it.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use weir_streams::prelude::*;
use weir_streams::testkit::TestSink;
use weir_streams::{Completer, ErrorKind, Pulled};
use weir_tests::{PATIENCE, QUIET, eventually, shutdown, stream_system};

/// A source fed by hand: what is pushed comes out, and a poll that finds
/// nothing registers the waker (and is counted).
#[derive(Default)]
struct Feed {
    items: VecDeque<Option<Result<u32, StreamError>>>,
    waker: Option<Waker>,
    polls: usize,
}

#[derive(Clone, Default)]
struct Fed(Arc<Mutex<Feed>>);

impl Fed {
    fn push(&self, item: Option<Result<u32, StreamError>>) {
        let waker = {
            let mut feed = self.0.lock().unwrap();
            feed.items.push_back(item);
            feed.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    fn polls(&self) -> usize {
        self.0.lock().unwrap().polls
    }

    /// Everything pushed was taken, and a poll since found nothing.
    fn waiting(&self) -> bool {
        let feed = self.0.lock().unwrap();
        feed.items.is_empty() && feed.waker.is_some()
    }

    fn source(&self) -> Source<u32> {
        let fed = self.clone();
        Source::from_poll_fn(move || {
            let fed = fed.clone();
            move |cx: &mut Context<'_>| {
                let mut feed = fed.0.lock().unwrap();
                feed.polls += 1;
                match feed.items.pop_front() {
                    Some(Some(item)) => Poll::Ready(Some(item)),
                    Some(None) => Poll::Ready(None),
                    None => {
                        feed.waker = Some(cx.waker().clone());
                        Poll::Pending
                    }
                }
            }
        })
    }
}

#[test]
fn a_pending_source_is_polled_again_only_when_woken_under_a_fused_sink() {
    let (system, mat) = stream_system("poll-fused");
    let fed = Fed::default();
    let done = fed.source().map(|x| x * 2).run_with(Sink::collect(), &mat);
    assert!(
        eventually(PATIENCE, || fed.polls() >= 1),
        "polled once at start"
    );
    assert!(
        !eventually(QUIET, || fed.polls() > 1),
        "then it waits for the waker"
    );
    for i in 1..=3 {
        fed.push(Some(Ok(i)));
    }
    fed.push(None);
    assert_eq!(done.wait(), Ok(vec![2, 4, 6]));
    assert!(
        fed.polls() <= 1 + 4 + 4,
        "about one poll per wake-up: {}",
        fed.polls()
    );
    shutdown(&system);
}

#[test]
fn a_pending_source_is_polled_on_demand_under_a_stage_sink() {
    let (system, mat) = stream_system("poll-probe");
    let fed = Fed::default();
    for i in 0..5 {
        fed.push(Some(Ok(i)));
    }
    let mut down = fed.source().run_with(TestSink::probe(), &mat);
    down.expect_no_message(QUIET);
    assert_eq!(fed.polls(), 0, "no demand, no poll");
    down.request(2);
    assert_eq!(down.expect_next_n(2), vec![0, 1]);
    down.expect_no_message(QUIET);
    assert_eq!(fed.polls(), 2, "one poll per element asked for");
    down.request(10);
    assert_eq!(down.expect_next_n(3), vec![2, 3, 4]);
    down.expect_no_message(QUIET);
    fed.push(Some(Ok(5)));
    assert_eq!(
        down.expect_next_n(1),
        vec![5],
        "the wake-up answers the pull"
    );
    fed.push(None);
    down.expect_complete();
    shutdown(&system);
}

#[test]
fn a_pending_source_before_an_async_boundary_hands_over_what_it_has() {
    let (system, mat) = stream_system("poll-boundary");
    let fed = Fed::default();
    let done = fed
        .source()
        .async_boundary()
        .run_with(Sink::collect(), &mat);
    fed.push(Some(Ok(1)));
    // 1 is handed over on its own: the source took it and waits again.
    assert!(eventually(PATIENCE, || fed.waiting()));
    fed.push(Some(Ok(2)));
    fed.push(None);
    assert_eq!(done.wait(), Ok(vec![1, 2]));
    shutdown(&system);
}

#[test]
fn a_failure_comes_after_the_elements_before_it_under_every_driver() {
    let (system, mat) = stream_system("poll-failure");
    let feed = || {
        let fed = Fed::default();
        fed.push(Some(Ok(1)));
        fed.push(Some(Err(StreamError::msg("feed broke"))));
        fed
    };
    let fused = feed().source().run_with(Sink::collect(), &mat).wait();
    assert!(fused.unwrap_err().to_string().ends_with("feed broke"));

    let mut down = feed().source().run_with(TestSink::probe(), &mat);
    down.request(5);
    assert_eq!(down.expect_next_n(1), vec![1]);
    assert!(down.expect_error().to_string().ends_with("feed broke"));

    let seen = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&seen);
    let across = feed()
        .source()
        .async_boundary()
        .run_with(
            Sink::for_each(move |_| {
                counter.fetch_add(1, Ordering::SeqCst);
            }),
            &mat,
        )
        .wait();
    assert!(across.unwrap_err().to_string().ends_with("feed broke"));
    assert_eq!(
        seen.load(Ordering::SeqCst),
        1,
        "the element before the failure arrived"
    );
    shutdown(&system);
}

#[test]
fn a_panicking_poll_function_fails_the_stream_naming_the_fused_stage() {
    let (system, mat) = stream_system("poll-panic");
    let exploding = Source::from_poll_fn(|| {
        |_: &mut Context<'_>| -> Poll<Option<Result<u32, StreamError>>> { panic!("poll broke") }
    });
    let error = exploding
        .map(|x| x + 1)
        .run_with(Sink::collect(), &mat)
        .wait()
        .unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::Panicked(m) if m == "poll broke"),
        "{error}"
    );
    assert_eq!(error.stage(), Some("from_poll_fn.map.collect"));
    shutdown(&system);
}

/// A sink that sums on the thread that runs the graph when the source is
/// fused (and never pending), and on an island otherwise; it records the
/// thread it ran on.
fn summing_sink(ran_on: Arc<Mutex<Vec<std::thread::ThreadId>>>) -> Sink<u64, Completion<u64>> {
    Sink::fold(0u64, |a, x| a + x).with_pull(move |mut pull| {
        ran_on.lock().unwrap().push(std::thread::current().id());
        let (mut completer, completion) = Completer::new();
        let (mut batch, mut sum) = (Vec::new(), 0u64);
        let mut cx = Context::from_waker(Waker::noop());
        loop {
            let pulled = pull.poll_fill(&mut cx, &mut batch, 64);
            sum += batch.drain(..).sum::<u64>();
            match pulled {
                Pulled::More => continue,
                Pulled::Completed => completer.complete(Ok(sum)),
                Pulled::Failed(error) => completer.complete(Err(error)),
                other => panic!("a range is never pending: {other:?}"),
            }
            return completion;
        }
    })
}

#[test]
fn a_pulling_sink_runs_a_fused_source_itself_and_other_graphs_on_islands() {
    let (system, mat) = stream_system("pull-sink");
    let ran_on = Arc::new(Mutex::new(Vec::new()));
    let sink = summing_sink(Arc::clone(&ran_on));
    let here = std::thread::current().id();

    let fused = Source::range(1u64..=100)
        .map(|x| x * 2)
        .filter(|x| x % 4 == 0)
        .run_with(sink.clone(), &mat);
    assert_eq!(fused.wait(), Ok(5_100));
    assert_eq!(
        *ran_on.lock().unwrap(),
        vec![here],
        "pulled by the caller of run"
    );

    let on_islands = Source::range(1u64..=100)
        .async_boundary()
        .map(|x| x * 2)
        .run_with(sink.clone(), &mat);
    assert_eq!(on_islands.wait(), Ok(10_100));
    assert_eq!(
        ran_on.lock().unwrap().len(),
        1,
        "the island form ran the fold stage"
    );

    // The materialized value is mapped the same way in both forms.
    let doubled = sink.map_materialized_value(|done| done.wait().map(|sum| sum * 2));
    let pulled = Source::range(1u64..=3).run_with(doubled.clone(), &mat);
    let staged = Source::range(1u64..=3)
        .async_boundary()
        .run_with(doubled, &mat);
    assert_eq!((pulled, staged), (Ok(12), Ok(12)));
    shutdown(&system);
}

#[test]
fn a_panic_in_a_pulled_source_names_source_and_sink() {
    let (system, mat) = stream_system("pull-panic");
    let sink = summing_sink(Arc::default()).named("summing");
    let error = Source::range(1u64..=10)
        .map(|x| {
            if x == 5 {
                panic!("map broke at {x}")
            } else {
                x
            }
        })
        .run_with(sink, &mat)
        .wait()
        .unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::Panicked(m) if m == "map broke at 5"),
        "{error}"
    );
    assert_eq!(error.stage(), Some("range.map.summing"));
    shutdown(&system);
}

/// `Source::cycle` (Pekko's `Source.cycle`): lazy, repeats on demand only,
/// stops on cancel, fails with `EmptyCycle` on an empty iterator; fused
/// (the maps fuse into it) and with fusion off.
mod cycle {
    use super::*;

    fn materializers(system: &weir_actor::ActorSystem) -> [Materializer; 2] {
        [
            Materializer::new(system),
            Materializer::builder(system).fusion(false).build(),
        ]
    }

    /// A factory of `[1, 2]` counting its calls.
    fn counted(
        calls: &Arc<AtomicUsize>,
    ) -> impl FnMut() -> Vec<u32> + Clone + Send + Sync + 'static {
        let calls = Arc::clone(calls);
        move || {
            calls.fetch_add(1, Ordering::Relaxed);
            vec![1, 2]
        }
    }

    #[test]
    fn repeats_on_demand_only_and_stops_on_cancel() {
        let (system, _) = stream_system("cycle-demand");
        for mat in materializers(&system) {
            let calls = Arc::new(AtomicUsize::new(0));
            let mut out = Source::cycle(counted(&calls))
                .map(|x| x * 10)
                .run_with(TestSink::probe(), &mat);
            out.wait_idle();
            assert_eq!(
                calls.load(Ordering::Relaxed),
                0,
                "nothing before the first pull"
            );
            assert_eq!(out.request_next_n(5), vec![10, 20, 10, 20, 10]);
            out.expect_no_message(QUIET);
            assert_eq!(calls.load(Ordering::Relaxed), 3, "one call per round begun");
            out.cancel();
            out.wait_idle();
            assert!(!eventually(QUIET, || calls.load(Ordering::Relaxed) > 3));
        }
        shutdown(&system);
    }

    #[test]
    fn take_completes_it_with_no_further_demand() {
        let (system, _) = stream_system("cycle-take");
        for mat in materializers(&system) {
            let calls = Arc::new(AtomicUsize::new(0));
            let mut out = Source::cycle(counted(&calls))
                .take(3)
                .run_with(TestSink::probe(), &mat);
            out.request(3);
            assert_eq!(out.expect_next_n(3), vec![1, 2, 1]);
            out.expect_complete();
            let all = Source::cycle(counted(&calls))
                .take(4)
                .run_with(Sink::collect(), &mat);
            assert_eq!(all.wait(), Ok(vec![1, 2, 1, 2]));
        }
        shutdown(&system);
    }

    #[test]
    fn an_empty_iterator_fails_the_stream() {
        let (system, _) = stream_system("cycle-empty");
        for mat in materializers(&system) {
            // Empty at the first call.
            let mut out = Source::cycle(Vec::<u32>::new).run_with(TestSink::probe(), &mat);
            out.request(1);
            assert!(matches!(out.expect_error().kind(), ErrorKind::EmptyCycle));
            let failed = Source::cycle(Vec::<u32>::new).run_with(Sink::count(), &mat);
            assert!(matches!(
                failed.wait().unwrap_err().kind(),
                ErrorKind::EmptyCycle
            ));

            // Empty at a later call: the elements before it come out first.
            let calls = Arc::new(AtomicUsize::new(0));
            let counter = Arc::clone(&calls);
            let once = move || {
                if counter.fetch_add(1, Ordering::Relaxed) == 0 {
                    vec![7u32, 8]
                } else {
                    vec![]
                }
            };
            let mut out = Source::cycle(once).run_with(TestSink::probe(), &mat);
            out.request(3);
            assert_eq!(out.expect_next_n(2), vec![7, 8]);
            assert!(matches!(out.expect_error().kind(), ErrorKind::EmptyCycle));
        }
        shutdown(&system);
    }
}
