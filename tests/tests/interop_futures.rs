//! weir-interop: futures Streams into Weir sources and Weir sinks out as Streams: order, back-pressure, cancellation and errors both ways.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context, Poll};

use futures_core::Stream;
use futures_util::StreamExt;
use weir_interop::{SinkAsStream, SourceFromStream};
use weir_streams::prelude::*;
use weir_streams::testkit::{TestSink, TestSource};
use weir_tests::{PATIENCE, QUIET, eventually, shutdown, stream_system};

/// Counts its polls and whether it was dropped.
struct Counted<S> {
    inner: S,
    polls: Arc<AtomicUsize>,
    dropped: Arc<AtomicBool>,
}

impl<S: Stream + Unpin> Stream for Counted<S> {
    type Item = S::Item;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        self.polls.fetch_add(1, Ordering::SeqCst);
        Pin::new(&mut self.inner).poll_next(cx)
    }
}

impl<S> Drop for Counted<S> {
    fn drop(&mut self) {
        self.dropped.store(true, Ordering::SeqCst);
    }
}

fn counted<S>(inner: S) -> (Counted<S>, Arc<AtomicUsize>, Arc<AtomicBool>) {
    let (polls, dropped) = (
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicBool::new(false)),
    );
    (
        Counted {
            inner,
            polls: Arc::clone(&polls),
            dropped: Arc::clone(&dropped),
        },
        polls,
        dropped,
    )
}

#[test]
fn a_million_elements_round_trip_in_order() {
    let (system, mat) = stream_system("interop-round-trip");
    let out = Source::from_stream(futures_util::stream::iter(0u64..1_000_000))
        .map(|x| x * 2)
        .run_with(Sink::as_stream(), &mat);
    let (count, ordered, last) =
        futures_executor::block_on(out.fold((0u64, true, None::<u64>), |(n, ok, last), x| {
            let x = x.expect("no failure");
            futures_util::future::ready((n + 1, ok && last.is_none_or(|l| x == l + 2), Some(x)))
        }));
    assert_eq!((count, ordered, last), (1_000_000, true, Some(1_999_998)));
    shutdown(&system);
}

#[test]
fn the_stream_is_polled_only_on_demand() {
    let (system, mat) = stream_system("interop-demand");
    let (stream, polls, _) = counted(futures_util::stream::iter(0u32..1000));
    let mut down = Source::from_stream(stream).run_with(TestSink::probe(), &mat);
    down.expect_no_message(QUIET);
    assert_eq!(polls.load(Ordering::SeqCst), 0, "no demand, no poll");
    down.request(2);
    assert_eq!(down.expect_next_n(2), vec![0, 1]);
    down.expect_no_message(QUIET);
    assert_eq!(
        polls.load(Ordering::SeqCst),
        2,
        "one poll per element asked for"
    );
    shutdown(&system);
}

#[test]
fn a_pending_stream_wakes_the_island_instead_of_being_polled_in_a_loop() {
    let (system, mat) = stream_system("interop-pending");
    let (tx, rx) = futures_channel_like();
    let (stream, polls, _) = counted(rx);
    let out = Source::from_stream(stream).run_with(Sink::collect(), &mat);
    std::thread::sleep(QUIET);
    let idle_polls = polls.load(Ordering::SeqCst);
    assert!(
        idle_polls <= 1,
        "a pending stream is not polled again until woken: {idle_polls}"
    );
    for i in 0..3 {
        tx.send(Some(i));
    }
    tx.send(None);
    assert_eq!(out.wait(), Ok(vec![0, 1, 2]));
    assert!(
        polls.load(Ordering::SeqCst) <= 1 + 4 + 4,
        "about one poll per wake-up"
    );
    shutdown(&system);
}

#[test]
fn dropping_the_output_stream_cancels_upstream_and_cancelling_drops_the_input_stream() {
    let (system, mat) = stream_system("interop-cancel");
    let (mut up, out) = TestSource::probe::<u32>()
        .to_mat(Sink::as_stream(), Keep::both)
        .run(&mat);
    let mut out = out;
    let first = futures_executor::block_on(async {
        up.send_next(5);
        out.next().await
    });
    assert!(matches!(first, Some(Ok(5))));
    drop(out);
    up.expect_cancellation();

    let (stream, _, dropped) = counted(futures_util::stream::iter(0u32..));
    let first = Source::from_stream(stream)
        .run_with(Sink::head(), &mat)
        .wait();
    assert_eq!(first, Ok(0));
    assert!(
        eventually(PATIENCE, || dropped.load(Ordering::SeqCst)),
        "the input stream is dropped on cancel"
    );
    shutdown(&system);
}

#[test]
fn errors_cross_both_ways() {
    let (system, mat) = stream_system("interop-errors");
    let (mut up, out) = TestSource::probe::<u32>()
        .to_mat(Sink::as_stream(), Keep::both)
        .run(&mat);
    up.send_error(StreamError::msg("graph failed"));
    let items: Vec<_> = futures_executor::block_on(out.collect());
    assert_eq!(items.len(), 1, "one error, then the end");
    assert!(
        items[0]
            .as_ref()
            .unwrap_err()
            .to_string()
            .ends_with("graph failed")
    );

    let exploding = futures_util::stream::iter(0u32..3)
        .map(|x| if x == 1 { panic!("stream broke") } else { x });
    let failed = Source::from_stream(exploding)
        .run_with(Sink::collect(), &mat)
        .wait()
        .unwrap_err();
    // The stream and the sink run fused, as one stage named after both.
    assert_eq!(failed.stage(), Some("from_stream.collect"));
    shutdown(&system);
}

#[test]
fn a_single_stream_runs_once_and_a_factory_runs_many_times() {
    let (system, mat) = stream_system("interop-once");
    let once = Source::from_stream(futures_util::stream::iter(vec![1u8, 2]));
    assert_eq!(
        once.clone().run_with(Sink::collect(), &mat).wait(),
        Ok(vec![1, 2])
    );
    let again = once.run_with(Sink::collect(), &mat).wait().unwrap_err();
    assert!(again.to_string().contains("from_stream_fn"), "{again}");
    let many = Source::from_stream_fn(|| futures_util::stream::iter(vec![3u8]));
    assert_eq!(
        many.clone().run_with(Sink::collect(), &mat).wait(),
        Ok(vec![3])
    );
    assert_eq!(many.run_with(Sink::collect(), &mat).wait(), Ok(vec![3]));
    shutdown(&system);
}

/// A stream fed from another thread, pending until it is.
fn futures_channel_like<T: Send + 'static>() -> (Feeder<T>, Fed<T>) {
    let shared = Arc::new(std::sync::Mutex::new((
        std::collections::VecDeque::new(),
        None::<std::task::Waker>,
    )));
    (Feeder(Arc::clone(&shared)), Fed(shared))
}

type Slot<T> = Arc<
    std::sync::Mutex<(
        std::collections::VecDeque<Option<T>>,
        Option<std::task::Waker>,
    )>,
>;

struct Feeder<T>(Slot<T>);
impl<T> Feeder<T> {
    fn send(&self, item: Option<T>) {
        let waker = {
            let mut slot = self.0.lock().unwrap();
            slot.0.push_back(item);
            slot.1.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

struct Fed<T>(Slot<T>);
impl<T> Stream for Fed<T> {
    type Item = T;
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let mut slot = self.0.lock().unwrap();
        match slot.0.pop_front() {
            Some(item) => Poll::Ready(item),
            None => {
                slot.1 = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

#[test]
fn a_consumer_that_does_not_poll_back_pressures_the_graph() {
    let (system, mat) = stream_system("interop-back-pressure");
    let as_stream = Sink::as_stream().with_attributes(
        weir_streams::Attributes::new()
            .with_input_buffer(16)
            .unwrap(),
    );
    let (mut up, out) = TestSource::probe::<u32>()
        .to_mat(as_stream, Keep::both)
        .run(&mat);
    let mut out = out;
    // The graph fills the buffer on its own; then nobody polls.
    let waker = futures_util::task::noop_waker();
    let mut cx = Context::from_waker(&waker);
    for i in 0..16 {
        up.expect_request();
        up.send_next(i);
    }
    up.expect_no_signal(QUIET); // the 16-element buffer is full: no more requests
    // Room is given back half a buffer at a time, as elements are read.
    for i in 0..7 {
        assert!(matches!(
            Pin::new(&mut out).poll_next(&mut cx),
            Poll::Ready(Some(Ok(x))) if x == i
        ));
    }
    up.expect_no_signal(QUIET);
    assert!(matches!(
        Pin::new(&mut out).poll_next(&mut cx),
        Poll::Ready(Some(Ok(7)))
    ));
    up.expect_request(); // room again
    shutdown(&system);
}

/// A futures::Sink that records, can be held not-ready, and can fail.
struct Recorder {
    state: Arc<std::sync::Mutex<RecorderState>>,
}

#[derive(Default)]
struct RecorderState {
    items: Vec<u32>,
    flushes: usize,
    closed: bool,
    ready: bool,
    fail_on: Option<u32>,
    waker: Option<std::task::Waker>,
}

#[derive(Debug)]
struct Refused(u32);
impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "refused {}", self.0)
    }
}
impl std::error::Error for Refused {}

impl futures_sink::Sink<u32> for Recorder {
    type Error = Refused;
    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Refused>> {
        let mut state = self.state.lock().unwrap();
        if state.ready {
            Poll::Ready(Ok(()))
        } else {
            state.waker = Some(cx.waker().clone());
            Poll::Pending
        }
    }
    fn start_send(self: Pin<&mut Self>, item: u32) -> Result<(), Refused> {
        let mut state = self.state.lock().unwrap();
        if state.fail_on == Some(item) {
            return Err(Refused(item));
        }
        state.items.push(item);
        Ok(())
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Result<(), Refused>> {
        self.state.lock().unwrap().flushes += 1;
        Poll::Ready(Ok(()))
    }
    fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Result<(), Refused>> {
        self.state.lock().unwrap().closed = true;
        Poll::Ready(Ok(()))
    }
}

fn recorder(ready: bool, fail_on: Option<u32>) -> (Recorder, Arc<std::sync::Mutex<RecorderState>>) {
    let state = Arc::new(std::sync::Mutex::new(RecorderState {
        ready,
        fail_on,
        ..RecorderState::default()
    }));
    (
        Recorder {
            state: Arc::clone(&state),
        },
        state,
    )
}

#[test]
fn a_futures_sink_receives_elements_on_readiness_and_is_flushed_and_closed() {
    use weir_interop::SinkFromSink;
    let (system, mat) = stream_system("interop-from-sink");
    let (sink, state) = recorder(true, None);
    let done = Source::range(0u32..1000).run_with(Sink::from_sink(sink), &mat);
    assert_eq!(done.wait(), Ok(()));
    let state = state.lock().unwrap();
    assert_eq!(state.items, (0..1000).collect::<Vec<_>>());
    assert!(state.closed, "closed on completion");
    assert!(
        state.flushes >= 1 && state.flushes <= 1000,
        "flushed per island run, not only per element"
    );
    drop(state);

    // Back-pressure: a sink that is not ready gets no element, and upstream no request.
    let (sink, state) = recorder(false, None);
    let (mut up, done) = TestSource::probe::<u32>()
        .to_mat(Sink::from_sink(sink), Keep::both)
        .run(&mat);
    up.expect_no_signal(QUIET);
    let waker = {
        let mut state = state.lock().unwrap();
        state.ready = true;
        state.waker.take()
    };
    waker.expect("the stage waits on the sink's waker").wake();
    up.expect_request();
    up.send_next(7);
    up.send_complete();
    assert_eq!(done.wait(), Ok(()));
    assert_eq!(state.lock().unwrap().items, vec![7]);
    shutdown(&system);
}

#[test]
fn a_failing_futures_sink_fails_the_stream_and_upstream_failures_reach_it() {
    use weir_interop::SinkFromSink;
    let (system, mat) = stream_system("interop-from-sink-errors");
    let (sink, _) = recorder(true, Some(3));
    let (mut up, done) = TestSource::probe::<u32>()
        .to_mat(Sink::from_sink(sink), Keep::both)
        .run(&mat);
    for i in 1..=3 {
        up.expect_request();
        up.send_next(i);
    }
    let error = done.wait().unwrap_err();
    assert!(error.to_string().contains("refused 3"), "{error}");
    assert_eq!(error.stage(), Some("from_sink"));
    up.expect_cancellation();

    let (sink, state) = recorder(true, None);
    let (mut up, done) = TestSource::probe::<u32>()
        .to_mat(Sink::from_sink(sink), Keep::both)
        .run(&mat);
    up.expect_request();
    up.send_error(StreamError::msg("upstream"));
    assert!(done.wait().unwrap_err().to_string().ends_with("upstream"));
    assert!(
        !state.lock().unwrap().closed,
        "a failed stream does not close the sink as if it had ended well"
    );
    shutdown(&system);
}

#[test]
fn the_queue_sink_face_holds_one_element_while_full_and_reports_closed() {
    use futures_sink::Sink as _;
    use weir_interop::{QueueSink, QueueSinkError};
    let (system, mat) = stream_system("interop-queue-sink");
    let (queue, mut down) = Source::queue(1)
        .unwrap()
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    let mut sink = QueueSink::new(queue.clone());
    let waker = futures_util::task::noop_waker();
    let mut cx = Context::from_waker(&waker);
    let mut ready = |sink: &mut QueueSink<u32>| Pin::new(sink).poll_ready(&mut cx);
    assert!(matches!(ready(&mut sink), Poll::Ready(Ok(()))));
    assert_eq!(Pin::new(&mut sink).start_send(1), Ok(()));
    assert!(
        matches!(ready(&mut sink), Poll::Ready(Ok(()))),
        "1 is queued"
    );
    assert_eq!(
        Pin::new(&mut sink).start_send(2),
        Ok(()),
        "the queue is full: 2 waits in the sink"
    );
    assert!(ready(&mut sink).is_pending(), "no room: not ready");
    assert_eq!(
        Pin::new(&mut sink).start_send(3),
        Err(QueueSinkError::Full(3)),
        "one element waits at most"
    );
    assert!(
        format!("{queue:?}").contains("waiting_sends: 1"),
        "polled again and again, the waiting element keeps one place in line: {queue:?}"
    );
    down.request(1);
    assert_eq!(down.expect_next(), 1);
    assert!(
        eventually(PATIENCE, || matches!(ready(&mut sink), Poll::Ready(Ok(())))),
        "room made: 2 is queued"
    );
    queue.complete();
    assert_eq!(
        Pin::new(&mut sink).start_send(4),
        Err(QueueSinkError::Closed(Some(4)))
    );
    down.request(2);
    assert_eq!(down.expect_next(), 2);
    down.expect_complete();
    shutdown(&system);
}

#[test]
fn crossbeam_channels_in_and_out_without_blocking_the_island() {
    use weir_interop::{SinkToSender, SourceFromReceiver};
    let (system, mat) = stream_system("interop-channels");
    // In: elements that trickle in from another thread, then the sender leaves.
    let (tx, rx) = crossbeam_channel::bounded::<u32>(4);
    let done = Source::from_receiver(rx).run_with(Sink::collect(), &mat);
    let producer = std::thread::spawn(move || {
        for i in 0..200 {
            tx.send(i).unwrap();
            if i % 50 == 0 {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        }
    });
    producer.join().unwrap();
    assert_eq!(done.wait(), Ok((0..200).collect::<Vec<_>>()));

    // Out: a bounded channel and a slow receiver; upstream waits for room.
    let (tx, rx) = crossbeam_channel::bounded::<u32>(1);
    let (mut up, done) = TestSource::probe::<u32>()
        .to_mat(Sink::to_sender(tx), Keep::both)
        .run(&mat);
    up.expect_request();
    up.send_next(1); // fills the channel
    up.expect_request();
    up.send_next(2); // waits for room
    up.expect_no_signal(QUIET);
    assert_eq!(rx.recv().unwrap(), 1);
    up.expect_request(); // room made: the pending element went, the next is asked for
    up.send_complete();
    assert_eq!(rx.recv().unwrap(), 2);
    assert_eq!(done.wait(), Ok(()));

    // Every receiver gone: the stream fails.
    let (tx, rx) = crossbeam_channel::bounded::<u32>(1);
    drop(rx);
    let failed = Source::range(0u32..3)
        .run_with(Sink::to_sender(tx), &mat)
        .wait()
        .unwrap_err();
    assert!(failed.to_string().contains("receiver"), "{failed}");
    assert_eq!(failed.stage(), Some("to_sender"));
    shutdown(&system);
}

#[test]
fn a_fused_graph_runs_inside_the_consumers_poll_lazily_and_bounded_by_the_buffer() {
    let (system, mat) = stream_system("interop-inline");
    let (stream, polls, dropped) = counted(futures_util::stream::iter(0u32..1_000));
    let as_stream = Sink::as_stream().with_attributes(
        weir_streams::Attributes::new()
            .with_input_buffer(16)
            .unwrap(),
    );
    let here = std::thread::current().id();
    let mut out = Source::from_stream(stream)
        .map(move |x| {
            assert_eq!(
                std::thread::current().id(),
                here,
                "runs in the consumer's poll"
            );
            x * 2
        })
        .run_with(as_stream, &mat);
    std::thread::sleep(QUIET);
    assert_eq!(
        polls.load(Ordering::SeqCst),
        0,
        "nothing runs before the first poll"
    );
    let first = futures_executor::block_on(out.next());
    assert!(matches!(first, Some(Ok(0))), "{first:?}");
    assert_eq!(
        polls.load(Ordering::SeqCst),
        16,
        "one buffer's worth is taken in, no more"
    );
    drop(out);
    assert!(
        dropped.load(Ordering::SeqCst),
        "dropping the output drops the input stream at once"
    );
    shutdown(&system);
}

#[test]
fn a_panic_in_a_fused_graph_reaches_the_consumer_as_one_error_naming_the_stages() {
    let (system, mat) = stream_system("interop-inline-panic");
    let out = Source::from_stream(futures_util::stream::iter(0u32..10))
        .map(|x| if x == 3 { panic!("map broke") } else { x })
        .run_with(Sink::as_stream(), &mat);
    let items: Vec<_> = futures_executor::block_on(out.collect());
    assert_eq!(
        items.len(),
        4,
        "three elements, one error, then the end: {items:?}"
    );
    let error = items[3].as_ref().unwrap_err();
    assert_eq!(error.stage(), Some("from_stream.map.as_stream"));
    shutdown(&system);
}

/// An input buffer is a bound, not a size: `as_stream` with a huge one
/// (fused and on islands) reserves what every buffer does and works; it
/// asked the allocator for all of it (`1 << 40` aborted the process).
#[test]
fn as_stream_with_a_huge_input_buffer_works() {
    let (system, mat) = stream_system("interop-huge-buffer");
    for size in [usize::MAX, 1 << 40] {
        let as_stream = || {
            Sink::as_stream().with_attributes(
                weir_streams::Attributes::new()
                    .with_input_buffer(size)
                    .unwrap(),
            )
        };
        let fused = Source::range(0u32..5).run_with(as_stream(), &mat);
        let islands = Source::range(0u32..5)
            .async_boundary()
            .run_with(as_stream(), &mat);
        for out in [fused, islands] {
            let got: Vec<u32> = futures_executor::block_on(out.map(|x| x.unwrap()).collect());
            assert_eq!(got, [0, 1, 2, 3, 4], "input buffer {size}");
        }
    }
    shutdown(&system);
}

/// A caller that skips `poll_ready` gets `Full` while an element waits,
/// even once room has appeared: offering at once would put the new
/// element ahead of the waiting one.
#[test]
fn the_queue_sink_never_reorders_elements() {
    use futures_sink::Sink as _;
    use weir_interop::{QueueSink, QueueSinkError};
    let (system, mat) = stream_system("interop-queue-sink-order");
    let (queue, mut down) = Source::queue(1)
        .unwrap()
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    let mut sink = QueueSink::new(queue.clone());
    assert_eq!(Pin::new(&mut sink).start_send(1), Ok(()));
    assert_eq!(
        Pin::new(&mut sink).start_send(2),
        Ok(()),
        "2 waits in the sink"
    );
    down.request(1);
    assert_eq!(down.expect_next(), 1);
    // Room for one now; 2 still waits in the sink until it is polled.
    assert_eq!(
        Pin::new(&mut sink).start_send(3),
        Err(QueueSinkError::Full(3))
    );
    let waker = futures_util::task::noop_waker();
    let mut cx = Context::from_waker(&waker);
    assert!(eventually(PATIENCE, || matches!(
        Pin::new(&mut sink).poll_flush(&mut cx),
        Poll::Ready(Ok(()))
    )));
    assert_eq!(Pin::new(&mut sink).start_send(3), Ok(()));
    down.request(1);
    assert_eq!(down.expect_next(), 2);
    assert!(eventually(PATIENCE, || matches!(
        Pin::new(&mut sink).poll_flush(&mut cx),
        Poll::Ready(Ok(()))
    )));
    down.request(1);
    assert_eq!(down.expect_next(), 3);
    shutdown(&system);
}
