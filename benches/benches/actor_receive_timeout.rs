//! The cost of a receive timeout per message, in the shape of Pekko's
//! ReceiveTimeoutBenchmark: one worker thread, throughput 1000, an actor with
//! a 100 ms receive timeout processing batches of 10,000 influencing
//! messages and then one non-influencing "done"; and the same actor without a
//! receive timeout, in the same run.
//!
//! Each batch is queued while the actor is held at a gate, then timed from
//! opening the gate to the "done" reply: this measures what the actor does
//! per message, without the sender racing the actor for the mailbox (that
//! race makes the cost bimodal, 30 to 300 ns per message depending on whether
//! the worker parks between messages, and drowns a difference of a few
//! percent).
//!
//! `cargo bench -p weir-benches --bench actor_receive_timeout` prints bytes
//! and allocations per message (counting global allocator), interleaved
//! medians and their ratio, then criterion times per batch.

use std::hint::black_box;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group};
use weir_actor::{Actor, ActorRef, ActorSystem, Context, Props};
use weir_benches::CountingAlloc;

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc::new();

const BATCH: u64 = 10_000;

#[derive(Clone)]
enum Msg {
    /// Wait until the bench opens the gate (does not influence the timeout).
    Gate,
    Work(u64),
    Timeout,
    /// Does not influence the timeout; answers when everything before it is done.
    Done(SyncSender<u64>),
}

struct TimeoutActor {
    with_timeout: bool,
    sum: u64,
    gate: Arc<Mutex<Receiver<()>>>,
}

impl Actor for TimeoutActor {
    type Msg = Msg;
    fn pre_start(&mut self, ctx: &mut Context<Self>) {
        if self.with_timeout {
            ctx.set_receive_timeout(Duration::from_millis(100), Msg::Timeout)
                .unwrap();
        }
    }
    fn receive(&mut self, _: &mut Context<Self>, msg: Msg) {
        match msg {
            Msg::Gate => self.gate.lock().unwrap().recv().unwrap(),
            Msg::Work(n) => self.sum = self.sum.wrapping_add(n),
            Msg::Timeout => {}
            Msg::Done(reply) => reply.send(self.sum).unwrap(),
        }
    }
    fn influences_receive_timeout(&self, msg: &Msg) -> bool {
        !matches!(msg, Msg::Done(_) | Msg::Gate)
    }
}

struct Setup {
    system: ActorSystem,
    actor: ActorRef<Msg>,
    open: SyncSender<()>,
    done: (SyncSender<u64>, Receiver<u64>),
}

fn setup(name: &str, with_timeout: bool) -> Setup {
    let system = ActorSystem::builder()
        .name(name)
        .threads(1)
        .throughput(1000)
        .build()
        .unwrap();
    let (open, gate) = sync_channel(1);
    let gate = Arc::new(Mutex::new(gate));
    let actor = system
        .spawn(
            Props::new(move || TimeoutActor {
                with_timeout,
                sum: 0,
                gate: gate.clone(),
            }),
            "actor",
        )
        .unwrap();
    Setup {
        system,
        actor,
        open,
        done: sync_channel(1),
    }
}

/// Queue a batch behind the gate, open it, and return the time until done.
fn batch(s: &Setup) -> Duration {
    s.actor.tell(Msg::Gate);
    for i in 0..BATCH {
        s.actor.tell(Msg::Work(black_box(i)));
    }
    s.actor.tell(Msg::Done(s.done.0.clone()));
    let start = Instant::now();
    s.open.send(()).unwrap();
    black_box(s.done.1.recv().unwrap());
    start.elapsed()
}

fn allocation_report(with: &Setup, without: &Setup) {
    println!(
        "allocation report (counting global allocator, 100 batches of {BATCH} after 100 warm-up batches):"
    );
    for (name, s) in [
        ("with receive timeout", with),
        ("without receive timeout", without),
    ] {
        for _ in 0..100 {
            batch(s);
        }
        let (allocs, bytes) = (ALLOC.allocations(), ALLOC.bytes());
        for _ in 0..100 {
            batch(s);
        }
        let messages = 100.0 * (BATCH + 2) as f64;
        println!(
            "  {name:<24} {:.4} bytes/message, {:.6} allocations/message",
            (ALLOC.bytes() - bytes) as f64 / messages,
            (ALLOC.allocations() - allocs) as f64 / messages
        );
    }
}

/// Median ns per message of each, timed in alternating rounds so that both
/// see the same machine conditions.
fn interleaved_report(with: &Setup, without: &Setup) {
    const ROUNDS: usize = 101;
    let mut times = [Vec::new(), Vec::new()];
    for round in 0..ROUNDS {
        let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
        for which in order {
            let s = [with, without][which];
            let elapsed: Duration = (0..3).map(|_| batch(s)).sum();
            times[which].push(elapsed.as_nanos() as f64 / (3 * (BATCH + 1)) as f64);
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (w, wo) = (median(&mut times[0]), median(&mut times[1]));
    println!("interleaved medians over {ROUNDS} rounds of 3 gated batches:");
    println!("  with receive timeout     {w:.2} ns/message");
    println!("  without receive timeout  {wo:.2} ns/message");
    println!("  ratio with/without       {:.3}", w / wo);
}

fn bench_receive_timeout(c: &mut Criterion) {
    let with = setup("with", true);
    let without = setup("without", false);
    allocation_report(&with, &without);
    interleaved_report(&with, &without);
    let mut group = c.benchmark_group("actor_receive_timeout");
    group.throughput(Throughput::Elements(BATCH + 1));
    group
        .sample_size(30)
        .measurement_time(Duration::from_secs(5));
    group.bench_function("with_100ms_receive_timeout", |b| {
        b.iter_custom(|n| (0..n).map(|_| batch(&with)).sum())
    });
    group.bench_function("without_receive_timeout", |b| {
        b.iter_custom(|n| (0..n).map(|_| batch(&without)).sum())
    });
    group.finish();
    with.system.terminate().wait().unwrap();
    without.system.terminate().wait().unwrap();
}

criterion_group!(benches, bench_receive_timeout);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
