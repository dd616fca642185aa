//! The gated-tell workload: a batch of tells queued behind a gate, then
//! timed while one actor works through them, so the figure is the cost of
//! dequeuing and handling a message (the senders' side is not timed).

use std::hint::black_box;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use weir_actor::{Actor, ActorRef, ActorSystem, Context, Props};

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

/// One actor (throughput 1000) that waits at a gate before each batch.
#[derive(Debug)]
pub struct GatedTell {
    worker: ActorRef<Work>,
    open: SyncSender<()>,
    done: (SyncSender<u64>, Receiver<u64>),
}

impl std::fmt::Debug for Work {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Work")
    }
}

impl GatedTell {
    /// Spawn the worker (named `worker`) in `system`.
    pub fn new(system: &ActorSystem) -> Self {
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
            .expect("a fresh system has no actor named worker");
        Self {
            worker,
            open,
            done: sync_channel(1),
        }
    }

    /// Queue `batch` additions behind the gate, open it, and time until
    /// the last is handled: ns per message.
    pub fn run(&self, batch: u64) -> f64 {
        self.worker.tell(Work::Gate);
        for i in 0..batch {
            self.worker.tell(Work::Add(black_box(i)));
        }
        self.worker.tell(Work::Done(self.done.0.clone()));
        let start = Instant::now();
        self.open.send(()).expect("the worker waits at the gate");
        black_box(self.done.1.recv().expect("the worker replies"));
        start.elapsed().as_nanos() as f64 / (batch + 1) as f64
    }
}
