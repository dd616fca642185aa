//! The suspend/resume protocol of async handlers under many seeds, both modes: `run_async` holds every other message until its future is done, `run_async_reentrant` lets them interleave and runs continuations in completion order; with stops and injected panics, every future ends exactly once (done or dropped), never both.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use weir_actor::sim::Simulation;
use weir_actor::{Actor, ActorRef, Context, Props};

#[derive(Debug, Clone, Copy, PartialEq)]
enum Event {
    /// The handler of job `n` ran at this time (ms), its sleep due then.
    Began { n: u64, at: u64, due: u64 },
    /// The continuation of job `n` ran at this time (ms).
    Done { n: u64, at: u64 },
    /// The future of job `n` was dropped unfinished.
    Dropped { n: u64 },
    /// `pre_restart` ran.
    Restart,
    /// `post_stop` ran.
    Stopped,
}

type Log = Arc<Mutex<Vec<Event>>>;

/// The system clock's time since `epoch`, in ms.
fn millis<A: Actor>(ctx: &Context<A>, epoch: Instant) -> u64 {
    let now = ctx.system().scheduler().now();
    now.duration_since(epoch).as_millis() as u64
}

/// Logs `Dropped` unless disarmed by the future's completion.
struct DropGuard {
    log: Log,
    n: u64,
    armed: bool,
}

impl Drop for DropGuard {
    fn drop(&mut self) {
        if self.armed {
            self.log.lock().unwrap().push(Event::Dropped { n: self.n });
        }
    }
}

/// A future that wakes itself and yields `times` times before it is ready.
struct YieldTimes(u64);

impl std::future::Future for YieldTimes {
    type Output = ();
    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        if self.0 == 0 {
            return std::task::Poll::Ready(());
        }
        self.0 -= 1;
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    }
}

/// Handles job `(n, delay_ms)` with a future that yields `n % 3` times,
/// then sleeps `delay_ms` on the system's clock.
struct Sleeper {
    reentrant: bool,
    log: Log,
    epoch: Instant,
}

impl Actor for Sleeper {
    type Msg = (u64, u64);
    fn receive(&mut self, ctx: &mut Context<Self>, (n, delay): (u64, u64)) {
        let at = millis(ctx, self.epoch);
        self.log.lock().unwrap().push(Event::Began {
            n,
            at,
            due: at + delay,
        });
        let guard = DropGuard {
            log: self.log.clone(),
            n,
            armed: true,
        };
        let sleep = ctx.system().sleep(Duration::from_millis(delay));
        let future = async move {
            let mut guard = guard;
            // Some jobs wake themselves first: polled again by the run.
            YieldTimes(n % 3).await;
            let _ = sleep.await;
            guard.armed = false;
        };
        let then = move |me: &mut Sleeper, ctx: &mut Context<Sleeper>, ()| {
            let at = millis(ctx, me.epoch);
            me.log.lock().unwrap().push(Event::Done { n, at });
        };
        if self.reentrant {
            ctx.run_async_reentrant_then(future, then);
        } else {
            ctx.run_async_then(future, then);
        }
    }
    fn pre_restart(&mut self, _: &mut Context<Self>, _: &weir_actor::Failure) {
        self.log.lock().unwrap().push(Event::Restart);
    }
    fn post_stop(&mut self, _: &mut Context<Self>) {
        self.log.lock().unwrap().push(Event::Stopped);
    }
}

/// Sends its jobs to the sleeper on a timer, one per tick, so sends
/// interleave with the sleeper's wakes. The jobs outlive a restart (an
/// injected panic): none is sent twice.
struct Client {
    to: ActorRef<(u64, u64)>,
    jobs: Arc<Mutex<Vec<(u64, u64)>>>,
}

impl Actor for Client {
    type Msg = ();
    fn pre_start(&mut self, ctx: &mut Context<Self>) {
        let _ = ctx
            .timers()
            .start_timer_with_fixed_delay("tick", (), Duration::from_millis(3));
    }
    fn receive(&mut self, ctx: &mut Context<Self>, (): ()) {
        let job = self.jobs.lock().unwrap().pop();
        match job {
            Some(job) => self.to.tell(job),
            None => ctx.stop_self(),
        }
    }
}

const CLIENTS: u64 = 3;
const JOBS: u64 = 8;

/// One seed's run: clients feed a sleeper; for a third of the seeds the
/// sleeper is stopped at a step the seed picks. Returns the log once the
/// system has terminated (every future done or dropped).
fn run(sim: &Simulation, reentrant: bool) -> Vec<Event> {
    let log: Log = Arc::default();
    let system = sim.system();
    let l = log.clone();
    let epoch = sim.clock().now();
    let sleeper = system
        .spawn(
            Props::new(move || Sleeper {
                reentrant,
                log: l.clone(),
                epoch,
            }),
            "sleeper",
        )
        .unwrap();
    let mut x = sim.seed().wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for c in 0..CLIENTS {
        let jobs: Vec<(u64, u64)> = (0..JOBS)
            .map(|j| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (c * JOBS + j, 1 + x % 12)
            })
            .rev()
            .collect();
        let jobs = Arc::new(Mutex::new(jobs));
        let to = sleeper.clone();
        system
            .spawn(
                Props::new(move || Client {
                    to: to.clone(),
                    jobs: jobs.clone(),
                }),
                &format!("client{c}"),
            )
            .unwrap();
    }
    if sim.seed().is_multiple_of(3) {
        for _ in 0..sim.seed() * 17 % 400 {
            sim.step();
        }
        sleeper.stop();
    }
    let _ = sim.run_until_quiet();
    let termination = system.terminate();
    sim.run_until(|| termination.is_completed()).unwrap();
    log.lock().unwrap().clone()
}

/// What holds in both modes: every job that began ends exactly once, done
/// (not before its sleep was due) or dropped, and nothing of it follows;
/// `pre_restart` and `post_stop` run with no future left, and nothing
/// runs after `post_stop`.
fn check_ends(events: &[Event]) {
    let mut began: HashMap<u64, u64> = HashMap::new();
    let mut ended: HashMap<u64, Event> = HashMap::new();
    for (i, event) in events.iter().enumerate() {
        match *event {
            Event::Restart | Event::Stopped => {
                let running = began.keys().filter(|n| !ended.contains_key(n)).count();
                assert_eq!(running, 0, "{event:?} with futures running: {events:?}");
                if *event == Event::Stopped {
                    assert_eq!(i + 1, events.len(), "nothing after post_stop");
                }
            }
            Event::Began { n, due, .. } => {
                assert!(began.insert(n, due).is_none(), "job {n} began twice");
            }
            Event::Done { n, at } => {
                let due = began[&n];
                assert!(at >= due, "job {n} done at {at}, due at {due}");
                assert!(ended.insert(n, *event).is_none(), "job {n} ended twice");
            }
            Event::Dropped { n } => {
                assert!(began.contains_key(&n), "job {n} dropped before it began");
                assert!(ended.insert(n, *event).is_none(), "job {n} ended twice");
            }
        }
    }
    for n in began.keys() {
        assert!(ended.contains_key(n), "job {n} never ended: {events:?}");
    }
}

fn with_panics(seed: u64) -> weir_actor::sim::SimulationBuilder {
    Simulation::builder(seed).panics(0.03)
}

#[test]
fn a_non_reentrant_future_holds_every_other_message_under_many_seeds() {
    let began = AtomicU64::new(0);
    Simulation::sweep_with(40, with_panics, |sim| {
        let events = run(sim, false);
        check_ends(&events);
        // Strictly one job at a time: each ends before the next begins.
        let mut in_flight = None;
        for event in &events {
            match *event {
                Event::Began { n, .. } => {
                    assert_eq!(in_flight, None, "job {n} began while another ran");
                    in_flight = Some(n);
                    began.fetch_add(1, Ordering::Relaxed);
                }
                Event::Done { n, .. } | Event::Dropped { n } => {
                    assert_eq!(in_flight, Some(n), "job {n} ended out of turn");
                    in_flight = None;
                }
                Event::Restart | Event::Stopped => {}
            }
        }
    });
    assert!(began.load(Ordering::Relaxed) > 0);
}

#[test]
fn reentrant_futures_interleave_and_complete_in_order_under_many_seeds() {
    let overlapped = AtomicU64::new(0);
    Simulation::sweep_with(40, with_panics, |sim| {
        let events = run(sim, true);
        check_ends(&events);
        let due: HashMap<u64, u64> = events
            .iter()
            .filter_map(|e| match *e {
                Event::Began { n, due, .. } => Some((n, due)),
                _ => None,
            })
            .collect();
        // Continuations in completion order: the sleeps complete in the
        // order they are due.
        let mut last_due = 0;
        let mut running = 0u64;
        for event in &events {
            match *event {
                Event::Began { .. } => {
                    if running > 0 {
                        overlapped.fetch_add(1, Ordering::Relaxed);
                    }
                    running += 1;
                }
                Event::Done { n, .. } => {
                    assert!(
                        due[&n] >= last_due,
                        "job {n} (due {}) done after one due at {last_due}",
                        due[&n]
                    );
                    last_due = due[&n];
                    running -= 1;
                }
                Event::Dropped { .. } => running -= 1,
                Event::Restart | Event::Stopped => {}
            }
        }
    });
    assert!(
        overlapped.load(Ordering::Relaxed) > 0,
        "messages were handled while futures ran"
    );
}
