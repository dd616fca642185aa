//! Deterministic simulation of actor systems: one seed gives one run (the
//! trace test), and actor scenarios (ask and terminate, routers, the
//! backoff supervisor, death watch, the coordinated shutdown) keep their
//! invariants under many seeds.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use weir_actor::backoff::{Backoff, BackoffMsg, BackoffSupervisor};
use weir_actor::routing::{Pool, Routing};
use weir_actor::sim::{SimError, Simulation, seeds};
use weir_actor::{Actor, ActorRef, Context, Props, Terminated, ask};
use weir_streams::prelude::*;

type Log = Arc<Mutex<Vec<u64>>>;

/// A worker that logs what it gets and fails on every fifth message.
struct Worker {
    id: u64,
    seen: u64,
    log: Log,
}

impl Actor for Worker {
    type Msg = u64;
    fn receive(&mut self, ctx: &mut Context<Self>, n: u64) {
        self.seen += 1;
        self.log.lock().unwrap().push(self.id << 32 | n);
        if self.seen.is_multiple_of(5) {
            ctx.fail(std::io::Error::other("every fifth message fails"));
        }
    }
}

/// A parent of `n` children that watch each other in a ring; a tick
/// timer makes it send to all of them; `0` stops them all.
struct Ring {
    n: u64,
    log: Log,
    children: Vec<ActorRef<u64>>,
    ticks: u64,
}

#[derive(Debug, Clone)]
enum RingMsg {
    Tick,
}

struct Member {
    id: u64,
    log: Log,
}

impl Actor for Member {
    type Msg = u64;
    fn receive(&mut self, _: &mut Context<Self>, n: u64) {
        self.log.lock().unwrap().push(1 << 40 | self.id << 20 | n);
    }
    fn on_terminated(&mut self, _: &mut Context<Self>, _: Terminated) {
        self.log.lock().unwrap().push(2 << 40 | self.id);
    }
}

impl Actor for Ring {
    type Msg = RingMsg;
    fn pre_start(&mut self, ctx: &mut Context<Self>) {
        for id in 0..self.n {
            let log = self.log.clone();
            let child = ctx
                .spawn(
                    Props::new(move || Member {
                        id,
                        log: log.clone(),
                    }),
                    &format!("m{id}"),
                )
                .unwrap();
            self.children.push(child);
        }
        for (i, child) in ctx.children().iter().enumerate() {
            if i > 0 {
                ctx.watch(child.clone());
            }
        }
        let _ = ctx.timers().start_timer_with_fixed_delay(
            "tick",
            RingMsg::Tick,
            Duration::from_millis(1),
        );
    }
    fn receive(&mut self, ctx: &mut Context<Self>, msg: RingMsg) {
        match msg {
            RingMsg::Tick => {
                self.ticks += 1;
                for child in &self.children {
                    child.tell(self.ticks);
                }
                if self.ticks == 400 {
                    ctx.stop_all_children();
                }
            }
        }
    }
    fn on_terminated(&mut self, _: &mut Context<Self>, t: Terminated) {
        let _ = t;
        self.log.lock().unwrap().push(3 << 40);
    }
}

/// Actors (a ring with watches and timers, a random router whose routees
/// fail and restart, a backoff supervisor with jitter) and a stream with
/// boundaries, all at once: what one seed does, recorded.
fn busy_scenario(sim: &Simulation) -> Vec<u64> {
    let log: Log = Arc::default();
    let system = sim.system();
    let l = log.clone();
    let _ring = system
        .spawn(
            Props::new(move || Ring {
                n: 12,
                log: l.clone(),
                children: Vec::new(),
                ticks: 0,
            }),
            "ring",
        )
        .unwrap();
    let workers = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let l = log.clone();
    let router = Pool::new(
        4,
        Props::new(move || Worker {
            id: workers.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            seen: 0,
            log: l.clone(),
        }),
    )
    .with_routing(Routing::random())
    .spawn(system, "random")
    .unwrap();
    let l = log.clone();
    let backoff =
        Backoff::new(Duration::from_millis(2), Duration::from_millis(50)).with_random_factor(0.5);
    let supervised = system
        .spawn(
            BackoffSupervisor::props(
                Props::new(move || Worker {
                    id: 99,
                    seen: 0,
                    log: l.clone(),
                }),
                "child",
                backoff,
            ),
            "backoff",
        )
        .unwrap();
    let mat = Materializer::new(system);
    let done = Source::from_iter(0..2_000u64)
        .map(|x| x + 1)
        .async_boundary()
        .merge(Source::from_iter(10_000..10_500u64).async_boundary())
        .async_boundary()
        .fold(0u64, |acc, x| acc.wrapping_mul(31).wrapping_add(x))
        .to_mat(Sink::head(), Keep::right)
        .run(&mat);
    for n in 0..3_000 {
        router.tell(n);
        supervised.tell(BackoffMsg::from(n));
        sim.step();
    }
    let folded = done.wait().unwrap();
    sim.run_for(Duration::from_secs(2)).unwrap();
    let mut out = log.lock().unwrap().clone();
    out.push(folded);
    out
}

/// One seed, one run: two runs of every seed give the same trace step for
/// step (and the same observations), over a scenario of more than 10,000
/// steps; different seeds give different runs.
#[test]
fn two_runs_of_one_seed_give_identical_traces() {
    let run = |seed| {
        // Odd seeds with faults: their draws come from the seed too.
        let faults = if seed % 2 == 1 { 1.0 } else { 0.0 };
        let sim = Simulation::builder(seed)
            .system(|s| s.throughput(1))
            .record_trace(true)
            .early_timers(0.01 * faults, Duration::from_millis(2))
            .late_timers(0.3 * faults, Duration::from_millis(2))
            .build()
            .unwrap();
        let seen = busy_scenario(&sim);
        let trace = sim.trace();
        sim.shutdown().unwrap();
        (trace, seen)
    };
    let mut digests = std::collections::HashSet::new();
    for seed in seeds(8) {
        let (a, seen_a) = run(seed);
        let (b, seen_b) = run(seed);
        assert!(a.steps() >= 10_000, "seed {seed}: only {} steps", a.steps());
        assert_eq!(
            a.first_difference(&b),
            None,
            "seed {seed}: the runs parted at step {:?}",
            a.first_difference(&b)
                .map(|i| (a.entries()[i], b.entries().get(i)))
        );
        assert_eq!(a.digest(), b.digest());
        assert_eq!(seen_a, seen_b, "seed {seed}");
        digests.insert(a.digest());
    }
    if seeds(8).len() > 1 {
        assert!(digests.len() > 1, "every seed ran the same");
    }
}

/// A blocking wait inside a step would wait for itself: an ask's `wait`
/// is refused with a typed error, not a deadlock.
#[test]
fn a_blocking_ask_inside_a_step_is_refused() {
    struct Asker(Arc<Mutex<Option<Result<u64, weir_actor::AskError>>>>);
    struct Answer;
    impl Actor for Answer {
        type Msg = ActorRef<u64>;
        fn receive(&mut self, _: &mut Context<Self>, to: ActorRef<u64>) {
            to.tell(1);
        }
    }
    impl Actor for Asker {
        type Msg = ActorRef<ActorRef<u64>>;
        fn receive(&mut self, _: &mut Context<Self>, other: Self::Msg) {
            *self.0.lock().unwrap() = Some(ask(&other, |r| r, Duration::from_secs(1)).wait());
        }
    }
    let sim = Simulation::new(1).unwrap();
    let answer = sim.system().spawn(Props::new(|| Answer), "answer").unwrap();
    let got = Arc::new(Mutex::new(None));
    let g = got.clone();
    let asker = sim
        .system()
        .spawn(Props::new(move || Asker(g.clone())), "asker")
        .unwrap();
    asker.tell(answer);
    sim.run_until(|| got.lock().unwrap().is_some()).unwrap();
    assert_eq!(
        got.lock().unwrap().clone(),
        Some(Err(weir_actor::AskError::WouldDeadlock))
    );
    // From the test's thread the same wait drives the simulation.
    let other = sim.system().spawn(Props::new(|| Answer), "other").unwrap();
    assert_eq!(ask(&other, |r| r, Duration::from_secs(1)).wait(), Ok(1));
    sim.shutdown().unwrap();
}

/// A simulation that never gets what it waits for says so, with its seed.
#[test]
fn waiting_for_what_never_comes_is_an_error_not_a_hang() {
    let sim = Simulation::new(5).unwrap();
    assert_eq!(
        sim.run_until(|| false),
        Err(SimError::Quiet {
            seed: 5,
            steps: sim.trace().steps()
        })
    );
    assert!(matches!(Simulation::new(6), Err(SimError::AlreadyRunning)));
    sim.shutdown().unwrap();
}

/// `Context::children` lists children in the order they were spawned, not
/// in the random order of the map behind it (which differed between two
/// runs of one seed in one process: a parent walking its children leaked
/// it into the run).
#[test]
fn children_are_listed_in_the_order_they_were_spawned() {
    struct Parent(Arc<Mutex<Vec<String>>>);
    struct Child;
    impl Actor for Child {
        type Msg = ();
        fn receive(&mut self, _: &mut Context<Self>, (): ()) {}
    }
    impl Actor for Parent {
        type Msg = ();
        fn pre_start(&mut self, ctx: &mut Context<Self>) {
            for i in (0..40).rev() {
                ctx.spawn(Props::new(|| Child), &format!("c{i}")).unwrap();
            }
        }
        fn receive(&mut self, ctx: &mut Context<Self>, (): ()) {
            let children = ctx.children();
            *self.0.lock().unwrap() = children
                .iter()
                .map(|c| c.path().name().to_owned())
                .collect();
        }
    }
    let sim = Simulation::new(0).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let parent = sim
        .system()
        .spawn(Props::new(move || Parent(s.clone())), "parent")
        .unwrap();
    parent.tell(());
    sim.run_until(|| !seen.lock().unwrap().is_empty()).unwrap();
    let expected: Vec<String> = (0..40).rev().map(|i| format!("c{i}")).collect();
    assert_eq!(*seen.lock().unwrap(), expected);
    sim.shutdown().unwrap();
}

/// Answers `(n, reply_to)` with `n * n`.
struct Square;

impl Actor for Square {
    type Msg = (u64, ActorRef<u64>);
    fn receive(&mut self, _: &mut Context<Self>, (n, reply_to): Self::Msg) {
        reply_to.tell(n * n);
    }
}

/// Asks racing termination: every ask completes exactly once (answered,
/// or failed by its time-out or by termination), and the system
/// terminates.
#[test]
fn asks_racing_terminate_all_complete() {
    Simulation::sweep(40, |sim| {
        let system = sim.system();
        let squares: Vec<_> = (0..3)
            .map(|i| {
                system
                    .spawn(Props::new(|| Square), &format!("sq{i}"))
                    .unwrap()
            })
            .collect();
        let asks: Vec<_> = (0..60u64)
            .map(|n| {
                let to = &squares[n as usize % 3];
                ask(to, move |r| (n, r), Duration::from_millis(1 + n % 7))
            })
            .collect();
        for _ in 0..sim.seed() * 7 % 200 {
            sim.step();
        }
        let termination = system.terminate();
        sim.run_until(|| termination.is_completed()).unwrap();
        for (n, answer) in asks.into_iter().enumerate() {
            let n = n as u64;
            // Completed already: `wait` returns at once.
            match answer.wait() {
                Ok(square) => assert_eq!(square, n * n),
                Err(e) => assert!(
                    matches!(
                        e,
                        weir_actor::AskError::Timeout(_)
                            | weir_actor::AskError::Terminated
                            | weir_actor::AskError::TargetStopped
                    ),
                    "ask {n}: {e:?}"
                ),
            }
        }
    });
}

/// Every routing strategy, pool and balancing pool: every ask is answered
/// with its own answer.
#[test]
fn routers_answer_every_ask() {
    Simulation::sweep(20, |sim| {
        let system = sim.system();
        let routings: Vec<Routing<(u64, ActorRef<u64>)>> = vec![
            Routing::round_robin(),
            Routing::random(),
            Routing::smallest_mailbox(),
            Routing::consistent_hashing(|(n, _): &(u64, ActorRef<u64>)| *n % 5),
        ];
        let mut routers: Vec<_> = routings
            .into_iter()
            .enumerate()
            .map(|(i, routing)| {
                Pool::new(3, Props::new(|| Square))
                    .with_routing(routing)
                    .spawn(system, &format!("r{i}"))
                    .unwrap()
            })
            .collect();
        routers.push(
            Pool::balancing(3, Props::new(|| Square))
                .spawn(system, "balancing")
                .unwrap(),
        );
        let asks: Vec<_> = (0..100u64)
            .map(|n| {
                let router = &routers[n as usize % routers.len()];
                (n, router.ask(move |r| (n, r), Duration::from_secs(60)))
            })
            .collect();
        for (n, answer) in asks {
            assert_eq!(answer.wait(), Ok(n * n), "ask {n}");
        }
    });
}

/// A backoff supervisor whose child fails now and then: what the child
/// processes it processes once and in order, and the restarts go on
/// (on the simulated clock, with jitter from the seed).
#[test]
fn a_backoff_supervisor_restarts_its_failing_child() {
    Simulation::sweep(30, |sim| {
        let log: Log = Arc::default();
        let l = log.clone();
        let backoff = Backoff::new(Duration::from_millis(5), Duration::from_millis(40))
            .with_random_factor(0.5);
        let supervisor = sim
            .system()
            .spawn(
                BackoffSupervisor::props(
                    Props::new(move || Worker {
                        id: 0,
                        seen: 0,
                        log: l.clone(),
                    }),
                    "child",
                    backoff,
                ),
                "supervisor",
            )
            .unwrap();
        for n in 0..200u64 {
            supervisor.tell(BackoffMsg::from(n));
            if n % 9 == sim.seed() % 9 {
                sim.run_for(Duration::from_millis(20)).unwrap();
            }
        }
        sim.run_for(Duration::from_secs(5)).unwrap();
        let seen: Vec<u64> = log
            .lock()
            .unwrap()
            .iter()
            .map(|x| x & 0xFFFF_FFFF)
            .collect();
        assert!(
            seen.windows(2).all(|w| w[0] < w[1]),
            "in order, once: {seen:?}"
        );
        assert!(
            seen.len() >= 100,
            "the child kept being restarted: {}",
            seen.len()
        );
    });
}

/// The coordinated shutdown with tasks in every phase that take
/// simulated time: each runs once, phases in order, and the system
/// terminates.
#[test]
fn the_coordinated_shutdown_runs_every_task_once_in_phase_order() {
    use weir_actor::shutdown::Phase;
    Simulation::sweep(30, |sim| {
        let system = sim.system();
        let ran: Log = Arc::default();
        for (i, phase) in Phase::ALL.iter().enumerate() {
            for t in 0..3u64 {
                let ran = ran.clone();
                let sys = system.non_owning();
                let delay = Duration::from_millis((sim.seed() + t * 3 + i as u64) % 10);
                system
                    .coordinated_shutdown()
                    .add_task(*phase, format!("t{i}-{t}"), move || async move {
                        let _ = sys.sleep(delay).await;
                        ran.lock().unwrap().push(i as u64);
                    })
                    .unwrap();
            }
        }
        let _ring = system
            .spawn(
                Props::new(|| Ring {
                    n: 5,
                    log: Arc::default(),
                    children: Vec::new(),
                    ticks: 0,
                }),
                "ring",
            )
            .unwrap();
        sim.run_for(Duration::from_millis(sim.seed() % 20)).unwrap();
        let termination = system.terminate();
        sim.run_until(|| termination.is_completed()).unwrap();
        let ran = ran.lock().unwrap().clone();
        assert_eq!(ran.len(), 18, "every task once: {ran:?}");
        assert!(
            ran.windows(2).all(|w| w[0] <= w[1]),
            "phases in order: {ran:?}"
        );
    });
}

/// A `TestProbe` on the simulation's thread drives the simulation while
/// it waits, on simulated time: an expected message arrives, a message
/// due later than the window does not.
#[test]
fn a_test_probe_drives_the_simulation_it_waits_on() {
    use weir_actor::testkit::TestProbe;
    struct Delayed;
    impl Actor for Delayed {
        type Msg = (u64, ActorRef<u64>);
        fn receive(&mut self, ctx: &mut Context<Self>, (n, to): Self::Msg) {
            let _ = ctx
                .system()
                .scheduler()
                .schedule_once(Duration::from_secs(n), &to, n);
        }
    }
    let sim = Simulation::new(3).unwrap();
    let mut probe = TestProbe::<u64>::new(sim.system()).with_timeout(Duration::from_secs(5));
    let delayed = sim
        .system()
        .spawn(Props::new(|| Delayed), "delayed")
        .unwrap();
    delayed.tell((2, probe.actor_ref().clone()));
    assert_eq!(probe.expect_msg(2), 2);
    delayed.tell((32, probe.actor_ref().clone()));
    probe.expect_no_msg(Duration::from_secs(30));
    assert_eq!(
        probe.expect_msg(32),
        32,
        "within 5 more seconds of simulated time"
    );
    let at = sim.clock().elapsed();
    assert!(
        at >= Duration::from_secs(34) && at < Duration::from_secs(35),
        "{at:?}"
    );
    sim.shutdown().unwrap();
}

/// Answers like `Square`, counting its restarts.
struct CountedSquare(Arc<std::sync::atomic::AtomicU64>);

impl Actor for CountedSquare {
    type Msg = (u64, ActorRef<u64>);
    fn receive(&mut self, _: &mut Context<Self>, (n, reply_to): Self::Msg) {
        reply_to.tell(n * n);
    }
    fn post_restart(&mut self, _: &mut Context<Self>, _: &weir_actor::Failure) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Panics injected into user actors at random steps are supervised (the
/// actors restart) and every ask still completes once: answered right or
/// timed out, never lost or hung.
#[test]
fn injected_panics_are_supervised_and_every_ask_completes() {
    let restarts = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let builder = |seed| Simulation::builder(seed).panics(0.05);
    Simulation::sweep_with(30, builder, |sim| {
        let squares: Vec<_> = (0..3)
            .map(|i| {
                let r = restarts.clone();
                sim.system()
                    .spawn(
                        Props::new(move || CountedSquare(r.clone())),
                        &format!("sq{i}"),
                    )
                    .unwrap()
            })
            .collect();
        let asks: Vec<_> = (0..100u64)
            .map(|n| {
                let to = &squares[n as usize % 3];
                ask(to, move |r| (n, r), Duration::from_millis(50))
            })
            .collect();
        for (n, answer) in asks.into_iter().enumerate() {
            let n = n as u64;
            match answer.wait() {
                Ok(square) => assert_eq!(square, n * n),
                Err(e) => assert!(matches!(e, weir_actor::AskError::Timeout(_)), "{e:?}"),
            }
        }
    });
    assert!(
        restarts.load(std::sync::atomic::Ordering::SeqCst) > 0,
        "some panic was injected"
    );
}

/// A panic at a chosen step hits the actor that runs then: the same step
/// of the same seed, every run.
#[test]
fn a_panic_at_a_chosen_step_replays() {
    let run = |step| {
        let restarts = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let sim = Simulation::builder(9)
            .panic_at_step(step)
            .record_trace(true)
            .build()
            .unwrap();
        let r = restarts.clone();
        let square = sim
            .system()
            .spawn(Props::new(move || CountedSquare(r.clone())), "square")
            .unwrap();
        let answers: Vec<_> = (0..30u64)
            .map(|n| ask(&square, move |r| (n, r), Duration::from_millis(50)).wait())
            .collect();
        let trace = sim.trace();
        sim.shutdown().unwrap();
        (
            restarts.load(std::sync::atomic::Ordering::SeqCst),
            answers,
            trace,
        )
    };
    // Each ask is one step of the square's (its reply completes the ask
    // directly): a step among them hits it, a step past the run nothing.
    for (step, hit) in [(10, 1), (11, 1), (1_000, 0)] {
        let (restarts, answers, trace) = run(step);
        let failed = answers.iter().filter(|a| a.is_err()).count() as u64;
        assert_eq!((restarts, failed), (hit, hit), "step {step}: {answers:?}");
        assert_eq!(run(step), (restarts, answers, trace), "step {step} replays");
    }
}

/// Dropping the simulation terminates its system even when the test
/// still holds a clone of it: dropping that clone later must not wait
/// for a termination no thread drives any more.
#[test]
fn dropping_the_simulation_terminates_its_system_whoever_holds_it() {
    let sim = Simulation::new(2).unwrap();
    let system = sim.system().clone();
    system.spawn(Props::new(|| Square), "square").unwrap();
    drop(sim);
    assert!(system.when_terminated().is_completed());
    drop(system);
}

/// `run_for` moves the clock exactly to its end and says how many steps
/// it took; `run_until_quiet` too.
#[test]
fn run_for_and_run_until_quiet_count_their_own_steps() {
    let sim = Simulation::new(4).unwrap();
    let square = sim.system().spawn(Props::new(|| Square), "square").unwrap();
    let probe: Log = Arc::default();
    struct Into(Log);
    impl Actor for Into {
        type Msg = u64;
        fn receive(&mut self, _: &mut Context<Self>, n: u64) {
            self.0.lock().unwrap().push(n);
        }
    }
    let p = probe.clone();
    let into = sim
        .system()
        .spawn(Props::new(move || Into(p.clone())), "into")
        .unwrap();
    sim.run_until_quiet().unwrap();
    let before = sim.trace().steps();
    let _ =
        sim.system()
            .scheduler()
            .schedule_once(Duration::from_secs(10), &square, (3, into.clone()));
    assert_eq!(
        sim.run_for(Duration::from_secs(4)).unwrap(),
        1,
        "one step: the clock's move"
    );
    assert_eq!(sim.clock().elapsed(), Duration::from_secs(4));
    assert!(probe.lock().unwrap().is_empty());
    let taken = sim.run_until_quiet().unwrap();
    assert_eq!(sim.trace().steps() - before, taken + 1);
    assert_eq!(*probe.lock().unwrap(), vec![9]);
    sim.shutdown().unwrap();
}
