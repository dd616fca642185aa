//! Actor core benchmarks: one actor counting tells, and a two-actor ping-pong.
//!
//! `cargo bench -p weir-benches --bench actor_tell` prints an allocation
//! report (heap allocations per message once warm, from a counting global
//! allocator) and then the criterion timings (messages per second), for the
//! default unbounded mailbox and for a bounded one (`send().await`, which
//! waits for room). The allocation report also covers `try_tell` retried
//! while full (with a `yield_now`: its time is the operating system's
//! scheduler, so it is not timed).

use std::hint::black_box;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group};
use weir_actor::{Actor, ActorRef, ActorSystem, Context, MailboxOverflow, Props};
use weir_benches::CountingAlloc;
use weir_benches::ping_pong::PingPong;

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc::new();

const TELLS: u64 = 1_000_000;
const HITS: u64 = 200_000;
/// The bounded mailbox's capacity: large enough that the sender rarely
/// waits, small enough to be full now and then.
const BOUND: usize = 1024;

enum CountMsg {
    Inc(u64),
    /// Reply with the count so far; arrives after every earlier `Inc`.
    Flush(SyncSender<u64>),
}

#[derive(Default)]
struct Counter {
    sum: u64,
}

impl Actor for Counter {
    type Msg = CountMsg;
    fn receive(&mut self, _: &mut Context<Self>, msg: CountMsg) {
        match msg {
            CountMsg::Inc(n) => self.sum = self.sum.wrapping_add(n),
            CountMsg::Flush(reply) => reply.send(self.sum).unwrap(),
        }
    }
}

struct Tell {
    counter: ActorRef<CountMsg>,
    flushed: (SyncSender<u64>, Receiver<u64>),
}

fn tell_setup(system: &ActorSystem) -> Tell {
    Tell {
        counter: system
            .spawn(Props::new(Counter::default), "counter")
            .unwrap(),
        flushed: sync_channel(1),
    }
}

fn bounded_setup(system: &ActorSystem) -> Tell {
    Tell {
        counter: system
            .spawn(
                Props::new(Counter::default).with_bounded_mailbox(BOUND, MailboxOverflow::DropNew),
                "bounded",
            )
            .unwrap(),
        flushed: sync_channel(1),
    }
}

/// As `tell_round`, into a bounded mailbox: `try_tell`, retried while full,
/// so nothing is dropped.
fn bounded_round(t: &Tell) {
    let offer = |mut msg| {
        while let Err(full) = t.counter.try_tell(msg) {
            msg = full.into_inner();
            std::thread::yield_now();
        }
    };
    for i in 0..TELLS {
        offer(CountMsg::Inc(black_box(i)));
    }
    offer(CountMsg::Flush(t.flushed.0.clone()));
    black_box(t.flushed.1.recv().unwrap());
}

/// As `bounded_round`, with `send().await` (waits for room) on a blocking
/// executor.
fn bounded_send_round(t: &Tell) {
    futures_executor::block_on(async {
        for i in 0..TELLS {
            t.counter.send(CountMsg::Inc(black_box(i))).await;
        }
        t.counter.send(CountMsg::Flush(t.flushed.0.clone())).await;
    });
    black_box(t.flushed.1.recv().unwrap());
}

/// One sender thread tells `TELLS` messages, then waits until all are
/// processed. The flush channel is reused, so a round allocates nothing of
/// its own.
fn tell_round(t: &Tell) {
    for i in 0..TELLS {
        t.counter.tell(CountMsg::Inc(black_box(i)));
    }
    t.counter.tell(CountMsg::Flush(t.flushed.0.clone()));
    black_box(t.flushed.1.recv().unwrap());
}

/// Allocations per message once warm, measured over one full round.
fn allocations_per_message(warm_rounds: usize, messages: u64, mut round: impl FnMut()) -> f64 {
    for _ in 0..warm_rounds {
        round();
    }
    let before = ALLOC.allocations();
    round();
    (ALLOC.allocations() - before) as f64 / messages as f64
}

fn allocation_report() {
    let system = ActorSystem::new("allocs").unwrap();
    let t = tell_setup(&system);
    let tell = allocations_per_message(3, TELLS, || tell_round(&t));
    let b = bounded_setup(&system);
    let bounded = allocations_per_message(3, TELLS, || bounded_round(&b));
    let sent = allocations_per_message(3, TELLS, || bounded_send_round(&b));
    let pp = PingPong::new(&system);
    let pong = allocations_per_message(3, HITS + 1, || pp.play(HITS));
    system.terminate().wait().unwrap();
    println!("allocation report (counting global allocator, after 3 warm-up rounds):");
    println!("  tell      : {tell:.6} allocations per message over {TELLS} messages");
    println!(
        "  bounded   : {bounded:.6} allocations per message over {TELLS} messages (capacity {BOUND}, try_tell)"
    );
    println!(
        "  bounded   : {sent:.6} allocations per message over {TELLS} messages (capacity {BOUND}, send)"
    );
    println!(
        "  ping-pong : {pong:.6} allocations per message over {} messages",
        HITS + 1
    );
}

fn bench_tell(c: &mut Criterion) {
    let system = ActorSystem::new("tell").unwrap();
    let t = tell_setup(&system);
    let mut group = c.benchmark_group("actor_tell");
    group.throughput(Throughput::Elements(TELLS));
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(10));
    group.bench_function("weir/one_actor_1M_tells", |b| b.iter(|| tell_round(&t)));
    let bounded = bounded_setup(&system);
    group.bench_function("weir/one_actor_1M_sends_bounded_1024", |b| {
        b.iter(|| bounded_send_round(&bounded))
    });
    group.finish();
    system.terminate().wait().unwrap();
}

fn bench_ping_pong(c: &mut Criterion) {
    let system = ActorSystem::new("pingpong").unwrap();
    let pp = PingPong::new(&system);
    let mut group = c.benchmark_group("actor_ping_pong");
    group.throughput(Throughput::Elements(HITS + 1));
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(10));
    group.bench_function("weir/two_actors_200k_hits", |b| b.iter(|| pp.play(HITS)));
    group.finish();
    system.terminate().wait().unwrap();
}

criterion_group!(benches, bench_tell, bench_ping_pong);

fn main() {
    allocation_report();
    benches();
    Criterion::default().configure_from_args().final_summary();
}
