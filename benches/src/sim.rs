//! `weir-bench sim` (feature `sim`): how many steps per second the
//! deterministic simulation (`weir_actor::sim`) takes, on an actor
//! scenario and a stream scenario, so a sweep's cost can be estimated
//! (seeds x steps per seed / steps per second).

use std::time::{Duration, Instant};

use weir_actor::sim::Simulation;
use weir_actor::{Actor, ActorRef, Context, Props};
use weir_streams::prelude::*;

/// A hit of a rally: hits left, and who to return it to.
struct Hit(u64, ActorRef<Hit>);

/// A ping-pong rally: one step per hit at throughput 1.
struct Rally;

impl Actor for Rally {
    type Msg = Hit;
    fn receive(&mut self, ctx: &mut Context<Self>, Hit(left, back): Hit) {
        if left > 0 {
            back.tell(Hit(left - 1, ctx.myself()));
        }
    }
}

/// One row: the scenario's name, steps taken, wall time.
#[derive(Debug, Clone)]
pub struct Row {
    /// What ran.
    pub name: &'static str,
    /// Steps the simulation took.
    pub steps: u64,
    /// How long they took.
    pub elapsed: Duration,
}

impl Row {
    /// Steps per second.
    pub fn rate(&self) -> f64 {
        self.steps as f64 / self.elapsed.as_secs_f64()
    }
}

/// `pairs` rallies of `hits` hits each, at throughput 1 (every message a
/// step of its own): the simulator's own cost per step, plus an actor turn.
pub fn actors(pairs: u64, hits: u64, seed: u64) -> Row {
    let sim = Simulation::builder(seed)
        .system(|s| s.throughput(1))
        .build()
        .expect("a simulation");
    let players: Vec<_> = (0..pairs * 2)
        .map(|i| {
            sim.system()
                .spawn(Props::new(|| Rally), &format!("p{i}"))
                .expect("a fresh name")
        })
        .collect();
    let started = Instant::now();
    for pair in players.chunks(2) {
        pair[0].tell(Hit(hits, pair[1].clone()));
    }
    sim.run_until_quiet().expect("the rallies end");
    let row = Row {
        name: "actors: ping-pong rallies, throughput 1",
        steps: sim.trace().steps(),
        elapsed: started.elapsed(),
    };
    sim.shutdown().expect("terminates");
    row
}

/// A stream of `elements` through three islands into a fold.
pub fn streams(elements: u64, seed: u64) -> Row {
    let sim = Simulation::new(seed).expect("a simulation");
    let mat = Materializer::new(sim.system());
    let started = Instant::now();
    let done = Source::from_iter(0..elements)
        .map(|x| x + 1)
        .async_boundary()
        .filter(|x| x % 3 != 0)
        .async_boundary()
        .run_with(Sink::fold(0u64, |a, x| a.wrapping_add(x)), &mat);
    sim.run_until(|| done.is_completed()).expect("completes");
    let row = Row {
        name: "streams: three islands, fold",
        steps: sim.trace().steps(),
        elapsed: started.elapsed(),
    };
    drop(done);
    sim.shutdown().expect("terminates");
    row
}

/// Run both scenarios `runs` times and print the best of each.
pub fn report(pairs: u64, hits: u64, elements: u64, runs: usize) {
    println!("sim: steps per second of the deterministic simulation (best of {runs})");
    println!(
        "{:<44} {:>12} {:>10} {:>14}",
        "scenario", "steps", "ms", "steps/s"
    );
    let best = |make: &dyn Fn(u64) -> Row| {
        (0..runs.max(1) as u64)
            .map(make)
            .max_by(|a, b| a.rate().total_cmp(&b.rate()))
            .expect("one run at least")
    };
    for row in [
        best(&|seed| actors(pairs, hits, seed)),
        best(&|seed| streams(elements, seed)),
    ] {
        println!(
            "{:<44} {:>12} {:>10.1} {:>14.0}",
            row.name,
            row.steps,
            row.elapsed.as_secs_f64() * 1e3,
            row.rate()
        );
    }
}
