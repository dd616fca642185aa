//! The gated-tell workload of the `actor_instrument` bench with a no-op
//! hook, in a loop, for a profiler:
//! `perf record target/release/examples/profile_instrument [none|noop]`.

use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use weir_actor::{Actor, ActorSystem, Context, Instrumentation, Props};

struct NoOp;
impl Instrumentation for NoOp {}

enum Work {
    Gate,
    Add(u64),
    Done(SyncSender<u64>),
}

struct Worker {
    sum: u64,
    gate: Arc<Mutex<Receiver<()>>>,
}

impl Actor for Worker {
    type Msg = Work;
    fn receive(&mut self, _: &mut Context<Self>, msg: Work) {
        match msg {
            Work::Gate => self.gate.lock().unwrap().recv().unwrap(),
            Work::Add(n) => self.sum = self.sum.wrapping_add(n),
            Work::Done(reply) => reply.send(self.sum).unwrap(),
        }
    }
}

fn main() {
    let hooked = std::env::args().nth(1).as_deref() == Some("noop");
    let mut builder = ActorSystem::builder().name("profile").threads(1);
    if hooked {
        builder = builder.instrumentation(Arc::new(NoOp));
    }
    let system = builder.build().expect("valid settings");
    let (open, gate) = sync_channel(1);
    let gate = Arc::new(Mutex::new(gate));
    let worker = system
        .spawn(
            Props::new(move || Worker {
                sum: 0,
                gate: gate.clone(),
            })
            .with_throughput(1000),
            "worker",
        )
        .expect("spawned");
    let (done_tx, done_rx) = sync_channel(1);
    let mut elapsed = std::time::Duration::ZERO;
    for _ in 0..200 {
        worker.tell(Work::Gate);
        for i in 0..10_000 {
            worker.tell(Work::Add(std::hint::black_box(i)));
        }
        worker.tell(Work::Done(done_tx.clone()));
        let start = Instant::now();
        open.send(()).expect("worker waits");
        std::hint::black_box(done_rx.recv().expect("worker replies"));
        elapsed += start.elapsed();
    }
    println!("{:.2} ns/msg", elapsed.as_nanos() as f64 / 200.0 / 10_001.0);
    system.terminate().wait().expect("outside the system");
}
