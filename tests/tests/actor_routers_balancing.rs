//! Balancing pools: routees share one queue, an idle routee takes the next
//! message, a slow routee holds up nothing else, nothing is lost or
//! handled twice, and what is left when the pool stops is a dead letter.

use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};

use weir_actor::routing::{Pool, Router, Routing};
use weir_actor::{Actor, ActorSystem, Context, DeadLetterReason, Event, Props};
use weir_tests::{PATIENCE, Probe, eventually, shutdown};

/// Job 0 blocks its handler until the gate opens; every job is reported
/// with the routee that handled it.
struct Worker {
    gate: Arc<Mutex<Receiver<()>>>,
    seen: Sender<(u32, String)>,
}

impl Actor for Worker {
    type Msg = u32;
    fn receive(&mut self, ctx: &mut Context<Self>, job: u32) {
        let _ = self.seen.send((job, ctx.path().name().to_owned()));
        if job == 0 {
            let _ = self.gate.lock().unwrap().recv_timeout(PATIENCE);
        }
    }
}

fn pool(
    system: &ActorSystem,
    name: &str,
    size: usize,
    balancing: bool,
) -> (Router<u32>, Sender<()>, Probe<(u32, String)>) {
    let (open, gate) = channel();
    let gate = Arc::new(Mutex::new(gate));
    let seen = Probe::new();
    let tx = seen.sender();
    let props = Props::new(move || Worker {
        gate: gate.clone(),
        seen: tx.clone(),
    });
    let pool = if balancing {
        Pool::balancing(size, props)
    } else {
        Pool::new(size, props).with_routing(Routing::round_robin())
    };
    (pool.spawn(system, name).unwrap(), open, seen)
}

/// A slow job blocks one routee; the jobs sent after it are all taken by
/// the other. (With a round-robin pool, `pool(.., false)`, this fails:
/// half the jobs wait behind the slow one.)
#[test]
fn a_slow_routee_does_not_hold_messages_others_could_take() {
    let system = ActorSystem::new("balancing-slow").unwrap();
    let (router, open, seen) = pool(&system, "workers", 2, true);
    router.tell(0);
    let (_, slow) = seen.expect();
    let quick: Vec<(u32, String)> = {
        for job in 1..=10 {
            router.tell(job);
        }
        seen.expect_n(10)
    };
    assert!(quick.iter().all(|(_, routee)| *routee != slow), "{quick:?}");
    assert_eq!(
        quick.iter().map(|(job, _)| *job).collect::<Vec<_>>(),
        (1..=10).collect::<Vec<_>>(),
        "one free routee takes them in order"
    );
    open.send(()).unwrap();
    shutdown(&system);
}

#[test]
fn several_senders_every_job_handled_exactly_once() {
    let system = ActorSystem::new("balancing-senders").unwrap();
    let (router, _open, seen) = pool(&system, "workers", 3, true);
    let senders: Vec<_> = (0..4u32)
        .map(|s| {
            let router = router.clone();
            std::thread::spawn(move || {
                for i in 0..2_000 {
                    router.tell(1 + s * 10_000 + i);
                }
            })
        })
        .collect();
    for sender in senders {
        sender.join().unwrap();
    }
    let mut jobs: Vec<u32> = seen
        .expect_n(8_000)
        .into_iter()
        .map(|(job, _)| job)
        .collect();
    jobs.sort_unstable();
    jobs.dedup();
    assert_eq!(jobs.len(), 8_000, "lost or duplicated");
    router.resize(1);
    assert!(eventually(PATIENCE, || router.routees().len() == 1));
    for job in 1..=100 {
        router.tell(job);
    }
    assert_eq!(
        seen.expect_n(100).len(),
        100,
        "the remaining routee takes them all"
    );
    shutdown(&system);
}

#[test]
fn what_is_left_when_the_pool_stops_is_a_dead_letter() {
    let system = ActorSystem::new("balancing-stop").unwrap();
    let dropped = Arc::new(Mutex::new(Vec::new()));
    let letters = dropped.clone();
    let subscription = system.event_stream().subscribe(move |event| {
        let Event::DeadLetter(letter) = event else {
            return;
        };
        if let Some(&job) = letter.downcast_ref::<u32>() {
            letters.lock().unwrap().push((job, letter.reason()));
        }
    });
    let (router, open, seen) = pool(&system, "workers", 1, true);
    router.tell(0);
    seen.expect();
    for job in 1..=3 {
        router.tell(job);
    }
    // The last routee stops after job 0 (signals go first): the pool stops.
    router.routees()[0].stop();
    open.send(()).unwrap();
    assert!(eventually(PATIENCE, || dropped.lock().unwrap().len() == 3));
    assert_eq!(
        *dropped.lock().unwrap(),
        [1, 2, 3].map(|job| (job, DeadLetterReason::NoRoutee))
    );
    drop(subscription);
    shutdown(&system);
}
