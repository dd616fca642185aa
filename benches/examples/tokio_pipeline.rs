//! A tokio program meeting Weir: a timer-driven async producer feeds a
//! Weir flow, an actor receives the results, and the program awaits the
//! stream's completion on tokio.
//!
//! `cargo run --release -p weir-benches --features peers --example tokio_pipeline`

use std::time::Duration;

use weir_actor::{Actor, ActorSystem, Context, Props};
use weir_streams::prelude::*;

/// The actor at the end: prints what the stream computed.
struct Printer;

#[derive(Clone)]
enum Report {
    Reading(u64, f64),
    Done,
    Failed(String),
}

impl Actor for Printer {
    type Msg = Report;

    fn receive(&mut self, _ctx: &mut Context<Self>, msg: Report) {
        match msg {
            Report::Reading(tick, celsius) => println!("tick {tick:>2}: {celsius:.1} °C"),
            Report::Done => println!("the sensor stream completed"),
            Report::Failed(error) => println!("the sensor stream failed: {error}"),
        }
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let system = ActorSystem::new("tokio-pipeline").expect("valid name");
    let materializer = Materializer::new(&system);
    let printer = system
        .spawn(Props::new(|| Printer), "printer")
        .expect("unique name");

    // A Weir flow converts, an actor receives. The source is a queue: the
    // producer below is a tokio task (its timer needs the tokio runtime,
    // so it runs there, not on Weir's threads).
    let (readings, _) = Source::queue(16)
        .expect("a non-zero buffer")
        .map(|(tick, fahrenheit): (u64, f64)| {
            Report::Reading(tick, (fahrenheit - 32.0) * 5.0 / 9.0)
        })
        .to_mat(
            Sink::actor_ref(printer, Report::Done, |e| Report::Failed(e.to_string())),
            Keep::both,
        )
        .run(&materializer);

    // A tokio-driven producer: one Fahrenheit reading every 20 ms, sent with
    // back-pressure (`send` waits while the queue is full).
    let producer = tokio::spawn(async move {
        for tick in 0..10u64 {
            tokio::time::sleep(Duration::from_millis(20)).await;
            readings
                .send((tick, 60.0 + tick as f64 * 1.5))
                .await
                .expect("the stream runs");
        }
        readings.complete();
    });

    // Completions and asks are plain futures: await them on tokio.
    let total = Source::range(1u64..=100)
        .run_with(Sink::fold(0, |a, x| a + x), &materializer)
        .await
        .expect("the stream completes");
    println!("sum of 1..=100, awaited on tokio: {total}");

    producer.await.expect("the producer task runs");
    // Let the printer see the last readings, then stop everything (awaited too).
    tokio::time::sleep(Duration::from_millis(50)).await;
    system.terminate().await;
    println!("system terminated");
}
