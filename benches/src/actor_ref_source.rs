//! The `Source::actor_ref` benchmark, after Pekko's ActorRefSourceBenchmark:
//!
//! - `no_buffer`: one producer thread tells N elements into a buffer-0
//!   source whose sink always demands; timed until the stream completed;
//!   reports how many were delivered (the rest found no demand and were
//!   dropped, counted).
//! - `pingpong`: buffer 1; the producer sends one element and waits until
//!   the sink has seen it before sending the next: the round trip.
//!
//! Peers (feature `peers`): a raw crossbeam channel (the ceiling) and
//! tokio's bounded mpsc (1024) drained by a task on a tokio runtime.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use weir_streams::prelude::*;

/// One measured run: elements sent, elements delivered, time taken.
#[derive(Debug, Clone, Copy)]
pub struct Run {
    /// Elements the producer sent.
    pub sent: u64,
    /// Elements the consumer saw.
    pub delivered: u64,
    /// From the first send to the end of consumption.
    pub elapsed: Duration,
}

/// Weir, buffer 0: a producer thread tells `n` elements; the sink counts.
pub fn weir_no_buffer(n: u64, mat: &Materializer) -> Run {
    let (source, done) = Source::<u64, _>::actor_ref(0, OverflowStrategy::DropHead)
        .expect("not Backpressure")
        .to_mat(Sink::fold(0u64, |count, _| count + 1), Keep::both)
        .run(mat);
    let start = Instant::now();
    let producer = {
        let actor = source.actor_ref().clone();
        std::thread::spawn(move || {
            for i in 0..n {
                actor.tell(i);
            }
        })
    };
    producer.join().expect("producer runs");
    source.complete();
    let delivered = done.wait().expect("the stream completes");
    Run {
        sent: n,
        delivered,
        elapsed: start.elapsed(),
    }
}

/// Weir, buffer 1: send one element, wait until the sink saw it, repeat.
pub fn weir_pingpong(n: u64, mat: &Materializer) -> Run {
    let seen = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&seen);
    let (source, done) = Source::<u64, _>::actor_ref(1, OverflowStrategy::DropHead)
        .expect("not Backpressure")
        .to_mat(
            Sink::for_each(move |_| {
                counter.fetch_add(1, Ordering::Release);
            }),
            Keep::both,
        )
        .run(mat);
    let start = Instant::now();
    for i in 0..n {
        source.tell(i);
        while seen.load(Ordering::Acquire) <= i {
            std::hint::spin_loop();
        }
    }
    let elapsed = start.elapsed();
    source.complete();
    done.wait().expect("the stream completes");
    Run {
        sent: n,
        delivered: seen.load(Ordering::Acquire),
        elapsed,
    }
}

/// The ceiling: a crossbeam channel and a consumer thread that counts.
#[cfg(feature = "peers")]
pub fn crossbeam_no_buffer(n: u64) -> Run {
    let (tx, rx) = crossbeam_channel::unbounded::<u64>();
    let start = Instant::now();
    let consumer = std::thread::spawn(move || rx.iter().count() as u64);
    for i in 0..n {
        tx.send(i).expect("the consumer lives");
    }
    drop(tx);
    let delivered = consumer.join().expect("consumer runs");
    Run {
        sent: n,
        delivered,
        elapsed: start.elapsed(),
    }
}

/// The ceiling's round trip.
#[cfg(feature = "peers")]
pub fn crossbeam_pingpong(n: u64) -> Run {
    let (tx, rx) = crossbeam_channel::bounded::<u64>(1);
    let seen = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&seen);
    let consumer = std::thread::spawn(move || {
        for _ in rx.iter() {
            counter.fetch_add(1, Ordering::Release);
        }
    });
    let start = Instant::now();
    for i in 0..n {
        tx.send(i).expect("the consumer lives");
        while seen.load(Ordering::Acquire) <= i {
            std::hint::spin_loop();
        }
    }
    let elapsed = start.elapsed();
    drop(tx);
    consumer.join().expect("consumer runs");
    Run {
        sent: n,
        delivered: seen.load(Ordering::Acquire),
        elapsed,
    }
}

/// tokio: bounded mpsc (1024), a task draining it on a 2-thread runtime.
#[cfg(feature = "peers")]
pub fn tokio_no_buffer(n: u64) -> Run {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .expect("runtime");
    let (tx, mut rx) = tokio::sync::mpsc::channel::<u64>(1024);
    let start = Instant::now();
    let consumer = runtime.spawn(async move {
        let mut count = 0u64;
        while rx.recv().await.is_some() {
            count += 1;
        }
        count
    });
    let producer = std::thread::spawn(move || {
        for i in 0..n {
            tx.blocking_send(i).expect("the consumer lives");
        }
    });
    producer.join().expect("producer runs");
    let delivered = runtime.block_on(consumer).expect("consumer runs");
    Run {
        sent: n,
        delivered,
        elapsed: start.elapsed(),
    }
}

/// tokio's round trip.
#[cfg(feature = "peers")]
pub fn tokio_pingpong(n: u64) -> Run {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .expect("runtime");
    let (tx, mut rx) = tokio::sync::mpsc::channel::<u64>(1024);
    let seen = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&seen);
    let consumer = runtime.spawn(async move {
        while rx.recv().await.is_some() {
            counter.fetch_add(1, Ordering::Release);
        }
    });
    let start = Instant::now();
    for i in 0..n {
        tx.blocking_send(i).expect("the consumer lives");
        while seen.load(Ordering::Acquire) <= i {
            std::hint::spin_loop();
        }
    }
    let elapsed = start.elapsed();
    drop(tx);
    runtime.block_on(consumer).expect("consumer runs");
    Run {
        sent: n,
        delivered: seen.load(Ordering::Acquire),
        elapsed,
    }
}

/// datum-core 0.11: `ActorSource::actor_ref` (a ractor mailbox feeding the
/// stream, unbounded), one producer thread casting `n` elements.
#[cfg(feature = "peers")]
pub fn datum_no_buffer(n: u64) -> Run {
    use datum::{ActorSource, ActorSourceMessage, Keep as DKeep, Sink as DSink};
    let (actor, completion) = ActorSource::actor_ref::<u64>()
        .to_mat(DSink::fold(0u64, |count, _| count + 1), DKeep::both)
        .run()
        .expect("datum materializes");
    let start = Instant::now();
    let producer = std::thread::spawn(move || {
        for i in 0..n {
            actor
                .cast(ActorSourceMessage::Element(i))
                .expect("the source lives");
        }
        actor
            .cast(ActorSourceMessage::Complete)
            .expect("the source lives");
    });
    producer.join().expect("producer runs");
    let delivered = completion.wait().expect("datum completes");
    Run {
        sent: n,
        delivered,
        elapsed: start.elapsed(),
    }
}

/// datum-core's round trip.
#[cfg(feature = "peers")]
pub fn datum_pingpong(n: u64) -> Run {
    use datum::{ActorSource, ActorSourceMessage, Keep as DKeep, Sink as DSink};
    let seen = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&seen);
    let (actor, completion) = ActorSource::actor_ref::<u64>()
        .to_mat(
            DSink::foreach(move |_: u64| {
                counter.fetch_add(1, Ordering::Release);
            }),
            DKeep::both,
        )
        .run()
        .expect("datum materializes");
    let start = Instant::now();
    for i in 0..n {
        actor
            .cast(ActorSourceMessage::Element(i))
            .expect("the source lives");
        while seen.load(Ordering::Acquire) <= i {
            std::hint::spin_loop();
        }
    }
    let elapsed = start.elapsed();
    actor
        .cast(ActorSourceMessage::Complete)
        .expect("the source lives");
    let _ = completion.wait();
    Run {
        sent: n,
        delivered: seen.load(Ordering::Acquire),
        elapsed,
    }
}
