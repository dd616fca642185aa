//! Weir's futures on tokio (both flavours): completions, ask, StreamOut, a
//! queue fed by a tokio task; and the interop properties (a million
//! elements round trip in order, back-pressure, cancellation and errors
//! both ways), each through a fused graph (run inside the tokio task) and
//! through islands. Runs with `--features tokio` (tokio stays out of the
//! default test run); CI runs it as its own step.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::Poll;
use std::time::Duration;

use futures_util::{Stream, StreamExt};
use weir_actor::{Actor, ActorRef, ActorSystem, Context, Props, ask};
use weir_interop::{SinkAsStream, SourceFromStream};
use weir_streams::Attributes;
use weir_streams::prelude::*;

struct Doubler;
impl Actor for Doubler {
    type Msg = (u32, ActorRef<u32>);
    fn receive(&mut self, _: &mut Context<Self>, (x, reply_to): (u32, ActorRef<u32>)) {
        reply_to.tell(x * 2);
    }
}

async fn exercise(name: &str) {
    let system = ActorSystem::new(name).expect("valid name");
    let materializer = Materializer::new(&system);

    // A completion, awaited.
    let sum = Source::range(1u64..=1000)
        .run_with(Sink::fold(0, |a, x| a + x), &materializer)
        .await;
    assert_eq!(sum, Ok(500_500));

    // An ask, awaited.
    let doubler = system
        .spawn(Props::new(|| Doubler), "doubler")
        .expect("unique name");
    let answer = ask(&doubler, |reply_to| (21, reply_to), Duration::from_secs(5)).await;
    assert_eq!(answer, Ok(42));

    // A Weir stream read as a Stream by a tokio task; a futures stream in.
    let out = Source::from_stream(futures_util::stream::iter(0u32..10_000))
        .map(|x| x + 1)
        .run_with(Sink::as_stream(), &materializer);
    let consumer = tokio::spawn(async move {
        out.map(|x| x.expect("no failure"))
            .collect::<Vec<_>>()
            .await
    });
    assert_eq!(
        consumer.await.expect("the task runs"),
        (1..=10_000).collect::<Vec<_>>()
    );

    // A tokio task feeding a queue with back-pressure.
    let (queue, done) = Source::queue(4)
        .expect("non-zero")
        .to_mat(Sink::collect(), Keep::both)
        .run(&materializer);
    let producer = tokio::spawn(async move {
        for i in 0..100u32 {
            queue.send(i).await.expect("the stream runs");
        }
        queue.complete();
    });
    producer.await.expect("the task runs");
    assert_eq!(done.await, Ok((0..100).collect::<Vec<_>>()));

    round_trip_back_pressure_cancellation_and_errors(&materializer).await;

    system.terminate().await;
}

/// Counts its polls and says whether it was dropped.
struct Counted<S> {
    inner: S,
    polls: Arc<AtomicUsize>,
    dropped: Arc<AtomicBool>,
}

impl<S: Stream + Unpin> Stream for Counted<S> {
    type Item = S::Item;
    fn poll_next(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> Poll<Option<S::Item>> {
        self.polls.fetch_add(1, Ordering::SeqCst);
        Pin::new(&mut self.inner).poll_next(cx)
    }
}

impl<S> Drop for Counted<S> {
    fn drop(&mut self) {
        self.dropped.store(true, Ordering::SeqCst);
    }
}

type Probe = (Arc<AtomicUsize>, Arc<AtomicBool>);

fn counted<S>(inner: S) -> (Counted<S>, Probe) {
    let (polls, dropped) = (Arc::default(), Arc::default());
    let stream = Counted {
        inner,
        polls: Arc::clone(&polls),
        dropped: Arc::clone(&dropped),
    };
    (stream, (polls, dropped))
}

/// Wait (on tokio's clock) until `cond` holds, at most ten seconds.
async fn eventually(cond: impl Fn() -> bool) -> bool {
    for _ in 0..1000 {
        if cond() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    cond()
}

/// `from_stream -> map -> as_stream`, fused (`islands == false`: it runs
/// inside the consuming task) or with an async boundary after the map.
fn doubled<S>(
    stream: S,
    islands: bool,
    buffer: usize,
    mat: &Materializer,
) -> weir_interop::StreamOut<u64>
where
    S: Stream<Item = u64> + Send + 'static,
{
    let source = Source::from_stream(stream).map(|x: u64| x * 2);
    let source = if islands {
        source.async_boundary()
    } else {
        source
    };
    let sink =
        Sink::as_stream().with_attributes(Attributes::new().with_input_buffer(buffer).unwrap());
    source.run_with(sink, mat)
}

async fn round_trip_back_pressure_cancellation_and_errors(mat: &Materializer) {
    for islands in [false, true] {
        // A million elements there and back, in order, read by a tokio task.
        let out = doubled(
            futures_util::stream::iter(0..1_000_000u64),
            islands,
            256,
            mat,
        );
        let checked = tokio::spawn(async move {
            out.fold((0u64, true), |(n, ordered), x| {
                let x = x.expect("no failure");
                futures_util::future::ready((n + 1, ordered && x == n * 2))
            })
            .await
        });
        assert_eq!(
            checked.await.expect("the task runs"),
            (1_000_000, true),
            "islands: {islands}"
        );

        // Back-pressure: a consumer that stops polling stops the input
        // stream being polled beyond the buffers in between.
        let (stream, (polls, dropped)) = counted(futures_util::stream::iter(0u64..));
        let mut out = doubled(stream, islands, 16, mat);
        assert_eq!(out.next().await.map(|x| x.expect("no failure")), Some(0));
        tokio::time::sleep(Duration::from_millis(100)).await;
        let settled = polls.load(Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(
            polls.load(Ordering::SeqCst),
            settled,
            "islands: {islands}: no polls while nobody reads"
        );
        assert!(
            settled <= 16 + 16 + 1,
            "islands: {islands}: {settled} polls for one element read"
        );

        // Cancellation from the consumer: dropping the output drops the input.
        drop(out);
        assert!(
            eventually(|| dropped.load(Ordering::SeqCst)).await,
            "islands: {islands}"
        );

        // Cancellation from Weir: a `take` ends the output and drops the input.
        let (stream, (_, dropped)) = counted(futures_util::stream::iter(0u64..));
        let source = Source::from_stream(stream).take(3);
        let source = if islands {
            source.async_boundary()
        } else {
            source
        };
        let three: Vec<_> = source.run_with(Sink::as_stream(), mat).collect().await;
        assert_eq!(three, vec![Ok(0), Ok(1), Ok(2)], "islands: {islands}");
        assert!(
            eventually(|| dropped.load(Ordering::SeqCst)).await,
            "islands: {islands}"
        );

        // Errors in: a panicking input stream fails the graph, and out:
        // the consumer gets the failure as one `Err`, then the end.
        let broken = futures_util::stream::iter(0u64..10).map(|x| {
            assert!(x != 3, "input broke");
            x
        });
        let items: Vec<_> = doubled(broken, islands, 256, mat).collect().await;
        assert_eq!(
            items.len(),
            4,
            "islands: {islands}: three elements, one error"
        );
        let error = items[3].as_ref().expect_err("the failure comes last");
        assert!(error.to_string().contains("input broke"), "{error}");
    }

    // An error raised in the graph itself reaches the consumer.
    let failed: Vec<_> = Source::<u64>::failed(StreamError::msg("graph failed"))
        .run_with(Sink::as_stream(), mat)
        .collect()
        .await;
    assert_eq!(failed.len(), 1);
    assert!(
        failed[0]
            .as_ref()
            .unwrap_err()
            .to_string()
            .ends_with("graph failed")
    );
}

#[tokio::test(flavor = "current_thread")]
async fn futures_work_on_a_current_thread_runtime() {
    exercise("tokio-current").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn futures_work_on_a_multi_thread_runtime() {
    exercise("tokio-multi").await;
}

/// Without a tokio context (see the next test), `map_async`'s futures are polled on the island,
/// outside any runtime, so one that needs tokio's reactor fails the stream
/// with `Panicked` naming the stage; the same work spawned on tokio and
/// awaited through its `JoinHandle` runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn map_async_runs_reactor_work_spawned_on_tokio_and_fails_typed_without() {
    let system = ActorSystem::new("tokio-map-async").expect("valid name");
    let materializer = Materializer::new(&system);

    let direct = Source::range(0u64..4)
        .map_async(2, |x| async move {
            tokio::time::sleep(Duration::from_millis(1)).await;
            Ok::<_, weir_streams::StreamError>(x)
        })
        .expect("parallelism is not zero")
        .run_with(Sink::collect(), &materializer)
        .await
        .expect_err("no reactor on the island");
    assert!(
        matches!(direct.kind(), weir_streams::ErrorKind::Panicked(m) if m.contains("reactor")),
        "{direct:?}"
    );
    assert!(
        direct.stage().is_some_and(|s| s.contains("map_async")),
        "{direct:?}"
    );

    let tokio = tokio::runtime::Handle::current();
    let spawned = Source::range(0u64..64)
        .map_async(8, move |x| {
            let job = tokio.spawn(async move {
                tokio::time::sleep(Duration::from_millis(1)).await;
                x * 2
            });
            async move {
                job.await
                    .map_err(|e| weir_streams::StreamError::msg(e.to_string()))
            }
        })
        .expect("parallelism is not zero")
        .run_with(Sink::collect(), &materializer)
        .await;
    assert_eq!(spawned, Ok((0..64).map(|x| x * 2).collect::<Vec<_>>()));
    system.terminate().await;
}

/// An actor that sleeps on tokio's timer through `pipe_to_self`, then
/// answers.
struct TokioSleeper;

enum SleeperMsg {
    Nap(ActorRef<&'static str>),
    Woke(ActorRef<&'static str>),
}

impl Actor for TokioSleeper {
    type Msg = SleeperMsg;
    fn receive(&mut self, ctx: &mut Context<Self>, msg: SleeperMsg) {
        match msg {
            SleeperMsg::Nap(reply) => ctx
                .pipe_to_self(tokio::time::sleep(Duration::from_millis(1)), move |()| {
                    SleeperMsg::Woke(reply)
                }),
            SleeperMsg::Woke(reply) => reply.tell("rested"),
        }
    }
}

/// With `TokioContext::tokio_context`, every future Weir polls on its
/// threads runs inside the runtime's context: tokio's timer and a
/// `TcpStream` work inside `map_async`, `pipe_to_self` and `spawn_task`
/// with no manual spawn (the test above shows the same `map_async`
/// failing without it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_system_in_tokios_context_runs_reactor_futures_without_a_spawn() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use weir_interop::TokioContext;

    let system = ActorSystem::builder()
        .name("tokio-context")
        .tokio_context(tokio::runtime::Handle::current())
        .build()
        .expect("valid settings");
    let materializer = Materializer::new(&system);

    // tokio's timer inside map_async.
    let slept = Source::range(0u64..8)
        .map_async(4, |x| async move {
            tokio::time::sleep(Duration::from_millis(1)).await;
            Ok::<_, weir_streams::StreamError>(x * 2)
        })
        .expect("parallelism is not zero")
        .run_with(Sink::collect(), &materializer)
        .await;
    assert_eq!(slept, Ok((0..8).map(|x| x * 2).collect::<Vec<_>>()));

    // A TCP client inside map_async: an echo server on the test's runtime.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a local port");
    let addr = listener.local_addr().expect("bound");
    let server = tokio::spawn(async move {
        for _ in 0..3 {
            let (mut socket, _) = listener.accept().await.expect("a client");
            let mut byte = [0u8; 1];
            socket.read_exact(&mut byte).await.expect("one byte");
            socket.write_all(&[byte[0] + 1]).await.expect("echoed");
        }
    });
    let echoed = Source::range(1u8..=3)
        .map_async(1, move |x| async move {
            let mut stream = tokio::net::TcpStream::connect(addr)
                .await
                .map_err(|e| weir_streams::StreamError::msg(e.to_string()))?;
            stream.write_all(&[x]).await.expect("sent");
            let mut byte = [0u8; 1];
            stream.read_exact(&mut byte).await.expect("answer");
            Ok::<_, weir_streams::StreamError>(byte[0])
        })
        .expect("parallelism is not zero")
        .run_with(Sink::collect(), &materializer)
        .await;
    assert_eq!(echoed, Ok(vec![2, 3, 4]));
    server.await.expect("the server ends");

    // tokio's timer in an actor's pipe_to_self and in a pool task.
    let sleeper = system
        .spawn(Props::new(|| TokioSleeper), "sleeper")
        .expect("spawned");
    let answer = ask(&sleeper, SleeperMsg::Nap, Duration::from_secs(10)).await;
    assert_eq!(answer, Ok("rested"));
    let (done, finished) = tokio::sync::oneshot::channel();
    system
        .spawn_task(async move {
            tokio::time::sleep(Duration::from_millis(1)).await;
            let _ = done.send(7u8);
        })
        .expect("the system runs");
    assert_eq!(finished.await, Ok(7));

    system.terminate().await;
}
