//! `map_async` and `map_async_unordered`: order, the parallelism bound, out-of-order completion and failure, with futures the test completes.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::task::{Poll, Waker};

use weir_streams::prelude::*;
use weir_tests::{PATIENCE, QUIET, eventually, shutdown, stream_system};

/// A one-shot future completed by the test (no async runtime, no timing).
type Cell = Arc<Mutex<(Option<u64>, Option<Waker>)>>;

/// The futures `map_async` made, by element, for the test to complete in
/// any order it likes.
#[derive(Clone, Default)]
struct Pending(Arc<Mutex<BTreeMap<u64, Cell>>>);

impl Pending {
    /// The function to give `map_async`: element `x` becomes a future that
    /// resolves to `x * 2` once the test calls `complete(x)`.
    fn function(
        &self,
    ) -> impl FnMut(u64) -> std::pin::Pin<Box<dyn Future<Output = Result<u64, StreamError>> + Send>>
    + Clone
    + Send
    + Sync
    + 'static {
        let pending = self.clone();
        move |x| {
            let cell: Cell = Arc::default();
            pending.0.lock().unwrap().insert(x, Arc::clone(&cell));
            Box::pin(std::future::poll_fn(move |cx| {
                let mut c = cell.lock().unwrap();
                match c.0.take() {
                    Some(v) => Poll::Ready(Ok(v)),
                    None => {
                        c.1 = Some(cx.waker().clone());
                        Poll::Pending
                    }
                }
            }))
        }
    }

    /// How many futures have been made.
    fn made(&self) -> usize {
        self.0.lock().unwrap().len()
    }

    /// Resolve the future of element `x`.
    fn complete(&self, x: u64) {
        let cell = Arc::clone(&self.0.lock().unwrap()[&x]);
        let waker = {
            let mut c = cell.lock().unwrap();
            c.0 = Some(x * 2);
            c.1.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

#[test]
fn unordered_emits_in_completion_order_and_ordered_in_input_order() {
    let (system, mat) = stream_system("map-async-order");
    for ordered in [false, true] {
        let pending = Pending::default();
        let source = Source::range(0u64..4);
        let flow = if ordered {
            source.map_async(4, pending.function())
        } else {
            source.map_async_unordered(4, pending.function())
        };
        let done = flow.unwrap().run_with(Sink::collect(), &mat);
        assert!(
            eventually(PATIENCE, || pending.made() == 4),
            "all four in flight"
        );
        // Completed last to first. Each wake-up is a message to the
        // island, sent in this order, so the stage sees them in this order.
        for x in (0..4).rev() {
            pending.complete(x);
        }
        let expected = if ordered {
            vec![0, 2, 4, 6]
        } else {
            vec![6, 4, 2, 0]
        };
        assert_eq!(done.wait(), Ok(expected), "ordered: {ordered}");
    }
    shutdown(&system);
}

#[test]
fn at_most_parallelism_futures_are_in_flight() {
    let (system, mat) = stream_system("map-async-bound");
    for ordered in [false, true] {
        let pending = Pending::default();
        let source = Source::range(0u64..5);
        let flow = if ordered {
            source.map_async(2, pending.function())
        } else {
            source.map_async_unordered(2, pending.function())
        };
        let done = flow.unwrap().run_with(Sink::collect(), &mat);
        assert!(eventually(PATIENCE, || pending.made() == 2));
        assert!(
            !eventually(QUIET, || pending.made() > 2),
            "no third before one finishes"
        );
        for x in 0..5 {
            pending.complete(x);
            // One finished: the next element's future is made.
            assert!(eventually(PATIENCE, || pending.made() == (x as usize + 3).min(5)));
        }
        assert_eq!(done.wait(), Ok(vec![0, 2, 4, 6, 8]), "ordered: {ordered}");
    }
    shutdown(&system);
}

#[test]
fn an_err_fails_the_stream_naming_the_stage() {
    let (system, mat) = stream_system("map-async-err");
    let failed = Source::range(0u32..5)
        .map_async(2, |x| async move {
            if x == 3 {
                Err(StreamError::msg("no 3"))
            } else {
                Ok(x)
            }
        })
        .unwrap()
        .run_with(Sink::collect(), &mat)
        .wait()
        .unwrap_err();
    assert!(failed.to_string().contains("no 3"));
    assert_eq!(failed.stage(), Some("map_async"));
    assert!(
        Source::range(0u8..1)
            .map_async(0, |x| async move { Ok(x) })
            .is_err()
    );
    assert!(
        Source::range(0u8..1)
            .map_async_unordered(0, |x| async move { Ok(x) })
            .is_err()
    );
    shutdown(&system);
}

/// A function whose futures never finish, counting how many it made.
fn never_finishing(
    made: &Arc<std::sync::atomic::AtomicUsize>,
) -> impl FnMut(u64) -> std::future::Pending<Result<u64, StreamError>> + Clone + Send + Sync + 'static
{
    let made = Arc::clone(made);
    move |_| {
        made.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        std::future::pending()
    }
}

/// Pekko's `mapAsync` starts no work before downstream asks for something;
/// from the first request on it keeps up to `parallelism` futures running.
#[test]
fn no_future_starts_before_the_first_request() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let (system, mat) = stream_system("map-async-no-demand");
    for ordered in [false, true] {
        let made = Arc::new(AtomicUsize::new(0));
        let source = Source::range(1u64..=20);
        let flow = if ordered {
            source.map_async(8, never_finishing(&made))
        } else {
            source.map_async_unordered(8, never_finishing(&made))
        };
        let mut probe = flow
            .unwrap()
            .run_with(weir_streams::testkit::TestSink::probe(), &mat);
        probe.wait_idle();
        assert!(
            !eventually(QUIET, || made.load(Ordering::Relaxed) > 0),
            "no demand, no work (ordered: {ordered})"
        );
        probe.request(1);
        assert!(eventually(PATIENCE, || made.load(Ordering::Relaxed) == 8));
        assert!(!eventually(QUIET, || made.load(Ordering::Relaxed) > 8));
        probe.cancel();
    }
    shutdown(&system);
}

/// `parallelism` is a bound; the stage caps it at 65 536 futures in flight
/// (documented on `map_async`), so a huge one over an endless upstream
/// makes no work before demand and bounded work after.
#[test]
fn a_huge_parallelism_over_an_endless_upstream_makes_bounded_work() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    const MOST_IN_FLIGHT: usize = 1 << 16;
    let (system, mat) = stream_system("map-async-huge");
    for ordered in [false, true] {
        let made = Arc::new(AtomicUsize::new(0));
        let source = Source::repeat(1u64);
        let flow = if ordered {
            source.map_async(usize::MAX, never_finishing(&made))
        } else {
            source.map_async_unordered(usize::MAX, never_finishing(&made))
        };
        let mut probe = flow
            .unwrap()
            .run_with(weir_streams::testkit::TestSink::probe(), &mat);
        probe.wait_idle();
        assert!(!eventually(QUIET, || made.load(Ordering::Relaxed) > 0));
        probe.request(1);
        assert!(eventually(PATIENCE, || made.load(Ordering::Relaxed) == MOST_IN_FLIGHT));
        assert!(!eventually(QUIET, || made.load(Ordering::Relaxed) > MOST_IN_FLIGHT));
        probe.cancel();
    }
    shutdown(&system);
}

mod partitioned {
    //! `map_async_partitioned` (Pekko's `mapAsyncPartitioned`): one element
    //! per partition in the stage, results in input order, `parallelism`
    //! bounding waiting elements too; each test runs fused and unfused.

    use super::*;
    use weir_streams::testkit::{SinkProbe, SourceProbe, TestSink, TestSource};

    fn materializers(system: &weir_actor::ActorSystem) -> [Materializer; 2] {
        [
            Materializer::new(system),
            Materializer::builder(system).fusion(false).build(),
        ]
    }

    /// Source probe -> map_async_partitioned(parallelism, x % partitions) -> sink probe.
    fn probed(
        mat: &Materializer,
        parallelism: usize,
        partitions: u64,
        pending: &Pending,
    ) -> (SourceProbe<u64>, SinkProbe<u64>) {
        let mut f = pending.function();
        TestSource::probe::<u64>()
            .map_async_partitioned(parallelism, move |x| x % partitions, move |x, _| f(x))
            .unwrap()
            .to_mat(TestSink::probe(), Keep::both)
            .run(mat)
    }

    #[test]
    fn one_element_per_partition_until_it_is_emitted() {
        let (system, _) = stream_system("map-async-partitioned-one");
        for mat in materializers(&system) {
            let pending = Pending::default();
            let mut f = pending.function();
            let mut out = Source::range(0u64..6)
                .map_async_partitioned(4, |x| x % 2, move |x, _| f(x))
                .unwrap()
                .run_with(TestSink::probe(), &mat);
            out.request(1);
            assert!(
                eventually(PATIENCE, || pending.made() == 2),
                "0 and 1 start"
            );
            assert!(!eventually(QUIET, || pending.made() > 2), "2 and 3 wait");
            // 1 is done but not emitted (0 comes first): its partition stays busy.
            pending.complete(1);
            assert!(
                !eventually(QUIET, || pending.made() > 2),
                "3 waits for 1's emission"
            );
            pending.complete(0);
            assert_eq!(out.expect_next(), 0);
            assert!(
                eventually(PATIENCE, || pending.made() == 3),
                "0 emitted: 2 starts"
            );
            assert!(
                !eventually(QUIET, || pending.made() > 3),
                "1 not emitted yet: 3 waits"
            );
            assert_eq!(out.request_next_n(1), vec![2]);
            assert!(
                eventually(PATIENCE, || pending.made() == 4),
                "1 emitted: 3 starts"
            );
            // 2 and 3 done, but not emitted without demand: 4 and 5 wait.
            pending.complete(2);
            pending.complete(3);
            assert!(
                !eventually(QUIET, || pending.made() > 4),
                "no demand, no emission"
            );
            // Exactly the four left, then completion with no further demand.
            out.request(4);
            assert_eq!(out.expect_next_n(2), vec![4, 6]);
            assert!(
                eventually(PATIENCE, || pending.made() == 6),
                "4 and 5 start"
            );
            pending.complete(4);
            pending.complete(5);
            assert_eq!(out.expect_next_n(2), vec![8, 10]);
            out.expect_complete();
        }
        shutdown(&system);
    }

    #[test]
    fn waiting_elements_count_towards_parallelism() {
        let (system, _) = stream_system("map-async-partitioned-bound");
        for mat in materializers(&system) {
            let pending = Pending::default();
            // One partition, two elements at most in the stage.
            let (mut up, mut out) = probed(&mat, 2, 1, &pending);
            out.wait_idle();
            up.expect_no_signal(QUIET);
            out.request(1);
            up.expect_request();
            up.send_next(0);
            up.expect_request();
            up.send_next(1);
            up.expect_no_signal(QUIET);
            assert_eq!(pending.made(), 1, "1 waits for 0");
            pending.complete(0);
            assert_eq!(out.expect_next(), 0);
            up.expect_request();
            assert!(eventually(PATIENCE, || pending.made() == 2));
            pending.complete(1);
            out.expect_no_message(QUIET);
            up.send_complete();
            out.request(1);
            assert_eq!(out.expect_next(), 2);
            out.expect_complete();
        }
        shutdown(&system);
    }

    #[test]
    fn upstream_completion_waits_for_the_elements_in_the_stage() {
        let (system, _) = stream_system("map-async-partitioned-complete");
        for mat in materializers(&system) {
            let pending = Pending::default();
            let (mut up, mut out) = probed(&mat, 4, 1, &pending);
            out.request(3);
            for x in 0..3 {
                up.expect_request();
                up.send_next(x);
            }
            up.send_complete();
            out.expect_no_message(QUIET);
            for x in 0..3 {
                assert!(eventually(PATIENCE, || pending.made() == x as usize + 1));
                pending.complete(x);
            }
            assert_eq!(out.expect_next_n(3), vec![0, 2, 4]);
            out.expect_complete();
        }
        shutdown(&system);
    }

    #[test]
    fn failures_and_cancellation() {
        let (system, _) = stream_system("map-async-partitioned-fail");
        for mat in materializers(&system) {
            // A failed future fails the stream and cancels upstream.
            let (mut up, mut out) = TestSource::probe::<u64>()
                .map_async_partitioned(
                    2,
                    |x| x % 2,
                    |x, _| async move {
                        if x == 1 {
                            Err(StreamError::msg("no 1"))
                        } else {
                            Ok(x)
                        }
                    },
                )
                .unwrap()
                .to_mat(TestSink::probe(), Keep::both)
                .run(&mat);
            out.request(1);
            up.expect_request();
            up.send_next(1);
            let error = out.expect_error();
            assert!(error.to_string().contains("no 1"), "{error}");
            assert_eq!(error.stage(), Some("map_async_partitioned"));
            up.expect_cancellation();

            // Upstream's failure fails the stream.
            let pending = Pending::default();
            let (mut up, mut out) = probed(&mat, 2, 2, &pending);
            out.request(1);
            up.expect_request();
            up.send_error(StreamError::msg("upstream"));
            assert!(out.expect_error().to_string().contains("upstream"));

            // Downstream's cancel cancels upstream.
            let (mut up, mut out) = probed(&mat, 2, 2, &pending);
            out.request(1);
            up.expect_request();
            out.cancel();
            up.expect_cancellation();
        }
        assert!(
            Source::range(0u8..1)
                .map_async_partitioned(0, |x| *x, |x, _| async move { Ok(x) })
                .is_err()
        );
        shutdown(&system);
    }

    #[test]
    fn a_panicking_partitioner_is_supervised() {
        use weir_streams::{Attributes, SupervisionStrategy};
        let (system, _) = stream_system("map-async-partitioned-supervised");
        for mat in materializers(&system) {
            let resume =
                Attributes::new().with_supervision_strategy(SupervisionStrategy::resuming());
            let out = Source::range(0u64..5)
                .map_async_partitioned(
                    2,
                    |x| if *x == 2 { panic!("two") } else { x % 2 },
                    |x, _| async move { Ok::<_, StreamError>(x) },
                )
                .unwrap()
                .with_attributes(resume)
                .run_with(Sink::collect(), &mat);
            assert_eq!(out.wait(), Ok(vec![0, 1, 3, 4]));
        }
        shutdown(&system);
    }
}
