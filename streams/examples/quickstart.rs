//! Quick start: a small supervised word count, on actors and on a stream.
//!
//! A `Coordinator` spawns a pool of `Counter` children, deals lines out to
//! them, watches them, and collects their counts as messages (a handler
//! never blocks on another actor); `main` asks it for the totals. One line
//! makes a counter panic: its supervisor restarts it and the rest goes on. A
//! stream feeds the lines to the coordinator; a second stream counts the
//! same words with operators across an async boundary.
//!
//! Run with `cargo run --release --example quickstart`; it runs the same on
//! one core (`taskset -c 0 cargo run --release --example quickstart`).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use weir_actor::{Actor, ActorRef, ActorSystem, Context, Props, Terminated, ask};
use weir_streams::prelude::*;

/// Counts the words of the lines it is given.
#[derive(Default)]
struct Counter {
    words: HashMap<String, u64>,
}

enum CounterMsg {
    Line(String),
    /// Send your counts to the coordinator (and start again from zero).
    Report(ActorRef<CoordinatorMsg>),
}

impl Actor for Counter {
    type Msg = CounterMsg;

    fn receive(&mut self, _ctx: &mut Context<Self>, msg: CounterMsg) {
        match msg {
            CounterMsg::Line(line) => {
                if line.contains("panic") {
                    panic!("a counter choked on {line:?}");
                }
                for word in line.split_whitespace() {
                    *self.words.entry(word.to_lowercase()).or_default() += 1;
                }
            }
            CounterMsg::Report(coordinator) => {
                coordinator.tell(CoordinatorMsg::Counts(std::mem::take(&mut self.words)))
            }
        }
    }
}

/// Spawns counters, deals lines to them round-robin, gathers the totals.
struct Coordinator {
    counters: Vec<ActorRef<CounterMsg>>,
    next: usize,
    /// The `Totals` request being answered, if any.
    gathering: Option<Gathering>,
}

/// Counts coming in for a `Totals` request.
struct Gathering {
    reply_to: ActorRef<Vec<(String, u64)>>,
    /// Counters that have yet to report.
    waiting: usize,
    totals: HashMap<String, u64>,
}

enum CoordinatorMsg {
    Line(String),
    Totals(ActorRef<Vec<(String, u64)>>),
    /// A counter's report.
    Counts(HashMap<String, u64>),
}

impl Actor for Coordinator {
    type Msg = CoordinatorMsg;

    fn pre_start(&mut self, ctx: &mut Context<Self>) {
        for i in 0..4 {
            let counter = ctx
                .spawn(Props::new(Counter::default), &format!("counter-{i}"))
                .expect("valid, unique name");
            ctx.watch(&counter);
            self.counters.push(counter);
        }
    }

    fn receive(&mut self, ctx: &mut Context<Self>, msg: CoordinatorMsg) {
        match msg {
            CoordinatorMsg::Line(line) => {
                self.counters[self.next % self.counters.len()].tell(CounterMsg::Line(line));
                self.next += 1;
            }
            CoordinatorMsg::Totals(reply_to) => {
                // Never block a handler waiting for other actors (an `ask`
                // and `wait` here would hold the very thread the counters
                // need: on one core, for ever). Ask them to report back as
                // messages, and answer when the last report is in.
                for counter in &self.counters {
                    counter.tell(CounterMsg::Report(ctx.myself()));
                }
                self.gathering = Some(Gathering {
                    reply_to,
                    waiting: self.counters.len(),
                    totals: HashMap::new(),
                });
            }
            CoordinatorMsg::Counts(counts) => {
                let Some(gathering) = self.gathering.as_mut() else {
                    return;
                };
                for (word, n) in counts {
                    *gathering.totals.entry(word).or_default() += n;
                }
                gathering.waiting -= 1;
                if gathering.waiting == 0
                    && let Some(Gathering {
                        reply_to, totals, ..
                    }) = self.gathering.take()
                {
                    let mut totals: Vec<_> = totals.into_iter().collect();
                    totals.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
                    reply_to.tell(totals);
                }
            }
        }
    }

    fn on_terminated(&mut self, _ctx: &mut Context<Self>, t: Terminated) {
        println!("counter {} stopped", t.actor().path());
    }
}

/// Announces top words by telling them into a stream (`Source::actor_ref`).
struct Announcer {
    stream: weir_streams::ActorRefSource<(String, u64)>,
}

enum AnnouncerMsg {
    Word(String, u64),
    Done,
}

impl Actor for Announcer {
    type Msg = AnnouncerMsg;

    fn receive(&mut self, _ctx: &mut Context<Self>, msg: AnnouncerMsg) {
        match msg {
            AnnouncerMsg::Word(word, n) => self.stream.tell((word, n)),
            AnnouncerMsg::Done => self.stream.complete(),
        }
    }
}

fn main() {
    let system = ActorSystem::new("quickstart").expect("valid system name");
    let coordinator = system
        .spawn(
            Props::new(|| Coordinator {
                counters: Vec::new(),
                next: 0,
                gathering: None,
            }),
            "coordinator",
        )
        .expect("valid, unique name");

    // A caught panic is still reported by the panic hook: say that this
    // one is intended, in one line.
    std::panic::set_hook(Box::new(|info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map_or("(no message)", String::as_str);
        eprintln!("   [the intended panic] {message}: its supervisor restarts the counter");
    }));

    let text = [
        "the quick brown fox jumps over the lazy dog",
        "the dog barks and the fox runs",
        "a quick fox is a happy fox",
    ];
    let started = Instant::now();
    let lines = 300_000;
    println!(
        "1. Actors: a stream feeds {lines} lines to a coordinator, which deals them out to \
         4 supervised counter actors."
    );
    println!(
        "   Line {} makes a counter panic on purpose; its supervisor restarts it with \
         fresh state, so the counts it had are lost.",
        lines / 2
    );
    let materializer = Materializer::new(&system);
    // A stream feeds the actors: one line per element, into the coordinator.
    let feeder = coordinator.clone();
    // Half-way, one line makes a counter panic.
    let fed = Source::range(0..lines)
        .map(move |i| match i {
            i if i == lines / 2 => "this line makes a counter panic".to_owned(),
            i => text[i % text.len()].to_owned(),
        })
        .run_with(
            Sink::for_each(move |line: String| {
                feeder.tell(CoordinatorMsg::Line(line));
            }),
            &materializer,
        );
    fed.wait().expect("the feeding stream completes");
    let totals = ask(
        &coordinator,
        CoordinatorMsg::Totals,
        Duration::from_secs(10),
    )
    .wait()
    .expect("the coordinator answers");
    println!("   counted by the actors in {:?}", started.elapsed());

    // The same count as a stream: split lines into words on one island,
    // count them on another.
    println!(
        "2. Streams: the same lines counted by a two-island stream \
         (map_concat, async boundary, fold)."
    );
    let started = Instant::now();
    let counted = Source::range(0..lines)
        .map(move |i| text[i % text.len()])
        .map_concat(|line| {
            line.split_whitespace()
                .map(str::to_lowercase)
                .collect::<Vec<_>>()
        })
        .async_boundary()
        .run_with(
            Sink::fold(HashMap::<String, u64>::new(), |mut counts, word| {
                *counts.entry(word).or_default() += 1;
                counts
            }),
            &materializer,
        )
        .wait()
        .expect("the counting stream completes");
    let mut counted: Vec<_> = counted.into_iter().collect();
    counted.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    println!("   counted by the stream in {:?}", started.elapsed());

    // Both counts side by side: the actors' are lower, by what the
    // restarted counter had counted before its panic.
    let by_actors: HashMap<&str, u64> = totals.iter().map(|(w, n)| (w.as_str(), *n)).collect();
    println!("   top words    actors (one restart)    stream (every line)");
    for (word, n) in counted.iter().take(5) {
        let actors = by_actors.get(word.as_str()).copied().unwrap_or(0);
        println!("   {word:>9} {actors:>21} {n:>22}");
    }

    // An actor feeding a stream: the announcer tells words into
    // `Source::actor_ref`; the stream formats them.
    let (feed, lines) = Source::actor_ref(16, OverflowStrategy::Fail)
        .expect("Fail is a valid strategy for a tell")
        .map(|(word, n): (String, u64)| format!("{word} x{n}"))
        .to_mat(Sink::collect(), Keep::both)
        .run(&materializer);
    let announcer = system
        .spawn(
            Props::new(move || Announcer {
                stream: feed.clone(),
            }),
            "announcer",
        )
        .expect("valid, unique name");
    for (word, n) in counted.iter().take(3) {
        announcer.tell(AnnouncerMsg::Word(word.clone(), *n));
    }
    announcer.tell(AnnouncerMsg::Done);
    println!(
        "3. An actor tells the top words into a stream (Source::actor_ref): {:?}",
        lines.wait().expect("the stream completes")
    );

    system
        .terminate()
        .wait()
        .expect("called from outside the system");
    println!("system terminated: every actor stopped, every thread joined");
}
