//! Weir's futures on tokio (both flavours): completions, ask, StreamOut, a queue fed by a tokio task. Runs with `--features peers` (tokio stays out of the default test run).

use std::time::Duration;

use futures_util::StreamExt;
use weir_actor::{Actor, ActorRef, ActorSystem, Context, Props, ask};
use weir_interop::{SinkAsStream, SourceFromStream};
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

    system.terminate().await;
}

#[tokio::test(flavor = "current_thread")]
async fn futures_work_on_a_current_thread_runtime() {
    exercise("tokio-current").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn futures_work_on_a_multi_thread_runtime() {
    exercise("tokio-multi").await;
}
