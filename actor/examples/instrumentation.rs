//! A small monitoring hook: message counts and latency percentiles per actor
//! type, for every actor of the system (Weir's own included), with no change
//! to the actors.
//!
//! Run with `cargo run --release --example instrumentation`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use weir_actor::{
    Actor, ActorRef, ActorSystem, Context, Instrumentation, MessageInfo, Processed, Props, ask,
};

/// Per actor type: how many messages, processing times and times in mailbox.
#[derive(Default)]
struct Stats {
    by_type: Mutex<BTreeMap<&'static str, Samples>>,
}

#[derive(Default)]
struct Samples {
    processing: Vec<Duration>,
    in_mailbox: Vec<Duration>,
}

impl Instrumentation for Stats {
    fn after_message(&self, info: &MessageInfo<'_>, processed: &Processed) {
        let mut by_type = self.by_type.lock().unwrap();
        let samples = by_type.entry(info.actor_type()).or_default();
        let Some(timing) = processed.timing else {
            return;
        };
        samples.processing.push(timing.elapsed());
        if let Some(at) = info.enqueued_at() {
            samples
                .in_mailbox
                .push(timing.started.saturating_duration_since(at));
        }
    }

    fn wants_enqueue_time(&self) -> bool {
        true
    }

    fn wants_timing(&self) -> bool {
        true
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

impl Stats {
    fn print(&self) {
        println!(
            "{:<44} {:>8} {:>10} {:>10} {:>10} {:>12}",
            "actor type", "messages", "p50", "p90", "p99", "mailbox p50"
        );
        for (actor_type, samples) in self.by_type.lock().unwrap().iter_mut() {
            samples.processing.sort();
            samples.in_mailbox.sort();
            let short = actor_type.rsplit("::").next().unwrap_or(actor_type);
            println!(
                "{short:<44} {:>8} {:>10.1?} {:>10.1?} {:>10.1?} {:>12.1?}",
                samples.processing.len(),
                percentile(&samples.processing, 0.5),
                percentile(&samples.processing, 0.9),
                percentile(&samples.processing, 0.99),
                percentile(&samples.in_mailbox, 0.5),
            );
        }
    }
}

/// Hashes numbers, slowly.
struct Hasher;
impl Actor for Hasher {
    type Msg = (u64, ActorRef<u64>);
    fn receive(&mut self, _: &mut Context<Self>, (n, reply_to): (u64, ActorRef<u64>)) {
        let mut h = n;
        for _ in 0..(n % 2000) {
            h = h.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(7);
        }
        reply_to.tell(h);
    }
}

/// Sums what the hashers send back.
struct Summer {
    sum: u64,
    left: u64,
    done: std::sync::mpsc::Sender<u64>,
}
impl Actor for Summer {
    type Msg = u64;
    fn receive(&mut self, _: &mut Context<Self>, h: u64) {
        self.sum ^= h;
        self.left -= 1;
        if self.left == 0 {
            self.done.send(self.sum).unwrap();
        }
    }
}

fn main() {
    let stats = Arc::new(Stats::default());
    let system = ActorSystem::builder()
        .name("instrumented")
        .instrumentation(stats.clone())
        .build()
        .expect("valid settings");
    let (done, finished) = std::sync::mpsc::channel();
    let jobs = 20_000;
    let summer = system
        .spawn(
            Props::new(move || Summer {
                sum: 0,
                left: jobs,
                done: done.clone(),
            }),
            "summer",
        )
        .expect("valid name");
    let hashers: Vec<_> = (0..4)
        .map(|i| {
            system
                .spawn(Props::new(|| Hasher), &format!("hasher-{i}"))
                .expect("valid name")
        })
        .collect();
    for n in 0..jobs {
        hashers[n as usize % hashers.len()].tell((n, summer.clone()));
    }
    let sum = finished.recv().expect("all jobs summed");
    // One ask, to show the temporary actor in the table.
    let _ = ask(&hashers[0], |r| (7, r), Duration::from_secs(5)).wait();
    system
        .terminate()
        .wait()
        .expect("called from outside the system");
    println!("checksum {sum:#x}; every message of every actor, system actors included:\n");
    stats.print();
}
