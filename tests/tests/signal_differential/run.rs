//! A case as a blueprint, and the trace a run of it shows.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use weir_actor::testkit::TestClock;
use weir_streams::graph::{
    Balance, Broadcast, JunctionOps, MergePreferred, MergePrioritized, Partition,
};
use weir_streams::graph::{
    Concat, GraphBuilder, Interleave, Merge, MergeSorted, Out, UnzipWith, ZipWith,
};
use weir_streams::prelude::*;
use weir_streams::stage::{GraphStage, UniformFanInShape};
use weir_streams::testkit::{
    DownstreamSignal, Received, SinkProbe, SourceProbe, TestSink, TestSource,
};

use super::model::{SEP, map, zipped};
use super::script::{
    BOOM, Case, FanOut, Join, MAPPED, Op, RECOVERED, Sig, Src, Step, StepTrace, TICK, Up,
};

type Slots = Arc<Mutex<Vec<Option<SourceProbe<u64>>>>>;

/// How long a run across boundaries waits for a signal the model expects.
const PATIENCE: Duration = Duration::from_secs(2);

fn source(src: &Src, probe: &mut usize, slots: &Slots) -> Source<u64> {
    match src {
        Src::Iter(items) if items.is_empty() => Source::empty(),
        Src::Iter(items) => Source::from_iter(items.clone()),
        Src::Range(lo, hi) => Source::range(*lo..*hi),
        Src::Failed => Source::failed(StreamError::msg(BOOM)),
        Src::Probe => {
            let i = *probe;
            *probe += 1;
            let slots = slots.clone();
            TestSource::probe::<u64>().map_materialized_value(move |p| {
                slots.lock().expect("slots")[i] = Some(p);
            })
        }
    }
}

fn boundary(source: Source<u64>, boundaries: bool) -> Source<u64> {
    if boundaries {
        source.async_boundary()
    } else {
        source
    }
}

fn apply(s: Source<u64>, op: Op) -> Source<u64> {
    match op {
        Op::Map(k) => s.map(map(k)),
        Op::Filter(m) => s.filter(move |x| x % m != 0),
        Op::Take(n) => s.take(n),
        Op::Skip(n) => s.skip(n),
        Op::TakeWhile(t) => s.take_while(move |x| *x < t),
        Op::SkipWhile(t) => s.skip_while(move |x| *x < t),
        Op::Scan => s.scan(0u64, |a, x| (a + x) % 1000),
        Op::Fold => s.fold(0u64, |a, x| (a + x) % 1000),
        Op::Grouped(n) => s
            .grouped(n)
            .expect("n is at least 1")
            .map(|c: Vec<u64>| c.iter().sum::<u64>() % 1000),
        Op::MapConcat(r) => s.map_concat(move |x| std::iter::repeat_n(x, r)),
        Op::Intersperse => s.intersperse(SEP),
        Op::Buffer(n) => s
            .buffer(n, OverflowStrategy::Backpressure)
            .expect("n is at least 1"),
        Op::Recover => s.recover(|_| Some(RECOVERED)),
        Op::FilterMap(m) => s.filter_map(move |x| (x % m != 0).then(|| map(m)(x))),
        Op::Reduce => s.reduce(|a, x| (a + x) % 1000),
        Op::MapError => s.map_error(|_| StreamError::msg(MAPPED)),
        Op::Limit(n) => s.limit(n),
        Op::TakeWithin(k) => s.take_within(TICK * k),
        Op::DropWithin(k) => s.drop_within(TICK * k),
        Op::InitialDelay(k) => s.initial_delay(TICK * k),
        Op::InitialTimeout(k) => s.initial_timeout(TICK * k),
        Op::CompletionTimeout(k) => s.completion_timeout(TICK * k),
        Op::FlatMapConcat(r) => {
            s.flat_map_concat(move |x| Source::from_iter(std::iter::repeat_n(x, r)))
        }
        Op::More(m) => super::linear_more::apply(s, m),
        Op::Sub(o) => super::substreams::apply(s, o),
        Op::Timed(t) => super::timed_more::apply(s, t),
        Op::Extra(e) => super::linear_extra::apply(s, e),
    }
}

/// `a` and `b` joined by `join` (with a graph builder rather than the
/// fluent `merge` and the like, which drop the materialized value of `b`:
/// a probe's is needed). The fluent forms build the same graph.
fn joined(join: Join, a: Source<u64>, b: Source<u64>) -> Source<u64> {
    if join == Join::ConcatLazy {
        return a.concat_lazy(b);
    }
    let mut g = GraphBuilder::new();
    let (a, ka) = g.source_mat(a);
    let (b, kb) = g.source_mat(b);
    let out = match join {
        Join::Zip => {
            let zip = g.add(ZipWith::new(zipped));
            g.connect(a, zip.in0()).expect("wired");
            g.connect(b, zip.in1()).expect("wired");
            zip.out()
        }
        Join::Merge => uniform(&mut g, Merge::<u64, 2>::new(), a, b),
        Join::Concat => uniform(&mut g, Concat::<u64, 2>::new(), a, b),
        Join::Prepend => uniform(&mut g, Concat::<u64, 2>::new(), b, a),
        Join::OrElse => uniform(&mut g, weir_streams::graph::OrElse::<u64>::new(), a, b),
        Join::MergeSorted => uniform(&mut g, MergeSorted::<u64>::new(), a, b),
        Join::Interleave => uniform(
            &mut g,
            Interleave::<u64, 2>::new(1).expect("1 is a segment size"),
            a,
            b,
        ),
        Join::MergePreferred => uniform(&mut g, MergePreferred::<u64, 2>::new(), a, b),
        Join::MergePrioritized => uniform(
            &mut g,
            MergePrioritized::<u64, 2>::new([1, 3]).expect("priorities above 0"),
            a,
            b,
        ),
        Join::InterleaveEager => uniform(
            &mut g,
            Interleave::<u64, 2>::new(1)
                .expect("1 is a segment size")
                .eager_close(),
            a,
            b,
        ),
        Join::ConcatLazy | Join::Wide(_) => unreachable!("fluent, above; `wide.rs`"),
        Join::Interleave2 => uniform(
            &mut g,
            Interleave::<u64, 2>::new(2).expect("2 is a segment size"),
            a,
            b,
        ),
    };
    g.build_source(out, move |m| {
        m.take(&ka);
        m.take(&kb);
    })
    .expect("wired")
}

fn uniform<S>(g: &mut GraphBuilder, stage: S, a: Out<u64>, b: Out<u64>) -> Out<u64>
where
    S: GraphStage<Shape = UniformFanInShape<u64, 2>>,
{
    let junction = g.add(stage);
    let [i0, i1] = junction.ins();
    g.connect(a, i0).expect("wired");
    g.connect(b, i1).expect("wired");
    junction.out()
}

/// `source` into a fan-out of `kind` to two sink probes (the fluent
/// forms with the second probe as their side sink).
fn fanned(source: Source<u64>, kind: FanOut) -> RunnableGraph<(SinkProbe<u64>, SinkProbe<u64>)> {
    let swap = |(side, main)| (main, side);
    match kind {
        FanOut::AlsoTo => {
            return source
                .also_to_mat(TestSink::probe::<u64>(), Keep::right)
                .to_mat(TestSink::probe(), Keep::both)
                .map_materialized_value(swap);
        }
        FanOut::WireTap => {
            return source
                .wire_tap_mat(TestSink::probe::<u64>(), Keep::right)
                .to_mat(TestSink::probe(), Keep::both)
                .map_materialized_value(swap);
        }
        FanOut::DivertTo => {
            let slot: Arc<Mutex<Option<SinkProbe<u64>>>> = Arc::default();
            let side = {
                let slot = slot.clone();
                TestSink::probe::<u64>().map_materialized_value(move |p| {
                    *slot.lock().expect("slot") = Some(p);
                })
            };
            return source
                .divert_to(side, |x| x % 2 == 1)
                .to_mat(TestSink::probe(), Keep::right)
                .map_materialized_value(move |main| {
                    let side = slot.lock().expect("slot").take();
                    (main, side.expect("the side sink is materialized first"))
                });
        }
        _ => {}
    }
    let mut g = GraphBuilder::new();
    let (out, key) = g.source_mat(source);
    let outs = match kind {
        FanOut::Broadcast => {
            let fan = g.add(Broadcast::<u64, 2>::new());
            g.connect(out, fan.inlet()).expect("wired");
            fan.outs()
        }
        FanOut::Balance | FanOut::BalanceAll | FanOut::BalanceEager => {
            let balance = match kind {
                FanOut::BalanceAll => Balance::<u64, 2>::new().wait_for_all_downstreams(),
                FanOut::BalanceEager => Balance::new().eager_cancel(),
                _ => Balance::new(),
            };
            let fan = g.add(balance);
            g.connect(out, fan.inlet()).expect("wired");
            fan.outs()
        }
        FanOut::Unzip => {
            let fan = g.add(UnzipWith::new(|x: u64| (x, x + 1000)));
            g.connect(out, fan.inlet()).expect("wired");
            [fan.out0(), fan.out1()]
        }
        FanOut::Partition => {
            let fan = g.add(Partition::<u64, 2, _>::new(|x: &u64| {
                usize::try_from(x % 2).expect("0 or 1")
            }));
            g.connect(out, fan.inlet()).expect("wired");
            fan.outs()
        }
        FanOut::AlsoTo | FanOut::WireTap | FanOut::DivertTo => unreachable!("fluent, above"),
    };
    let (in0, k0) = g.sink_mat(TestSink::probe::<u64>());
    let (in1, k1) = g.sink_mat(TestSink::probe::<u64>());
    g.connect(outs[0], in0).expect("wired");
    g.connect(outs[1], in1).expect("wired");
    g.build(move |m| {
        m.take(&key);
        (m.take(&k0), m.take(&k1))
    })
    .expect("wired")
}

/// The case as a source; `boundaries` puts one after every stage.
fn blueprint(case: &Case, boundaries: bool, slots: &Slots) -> Source<u64> {
    let mut probe = 0;
    let mut sources: Vec<Source<u64>> = case
        .sources
        .iter()
        .map(|s| boundary(source(s, &mut probe, slots), boundaries))
        .collect();
    let mut s = match case.join {
        Some(join) if sources.len() > 1 => {
            // Three inputs, or a junction of `wide.rs`: built there.
            let b = (sources.len() == 2 && !matches!(join, Join::Wide(_))).then(|| sources.pop());
            boundary(
                match b.flatten() {
                    Some(b) => joined(join, sources.pop().expect("two"), b),
                    None => super::wide::joined(join, sources),
                },
                boundaries,
            )
        }
        _ => sources.pop().expect("a case has a source"),
    };
    for op in &case.ops {
        s = boundary(apply(s, *op), boundaries);
    }
    s
}

fn sig(received: Received<u64>) -> Sig {
    match received {
        Received::Next(x) => Sig::Next(x),
        Received::Complete => Sig::Complete,
        Received::Error(e) => Sig::Error(match e.kind() {
            weir_streams::ErrorKind::Message(m) => m.clone(),
            weir_streams::ErrorKind::Timeout(kind, _) => format!("timeout:{kind:?}"),
            weir_streams::ErrorKind::LimitExceeded { max } => format!("limit:{max}"),
            other => format!("{other:?}"),
        }),
    }
}

struct Running {
    sink: SinkProbe<u64>,
    /// The second output of a fan-out.
    sink2: Option<SinkProbe<u64>>,
    probes: Vec<SourceProbe<u64>>,
    clock: TestClock,
}

impl Running {
    fn start(case: &Case, boundaries: bool, mat: &Materializer, clock: &TestClock) -> Self {
        let slots: Slots = Arc::new(Mutex::new((0..case.probes()).map(|_| None).collect()));
        let source = blueprint(case, boundaries, &slots);
        let (sink, sink2) = match case.fan_out {
            None => {
                let ((), sink) = source.to_mat(TestSink::probe(), Keep::both).run(mat);
                (sink, None)
            }
            Some(kind) => {
                let (sink, sink2) = fanned(source, kind).run(mat);
                (sink, Some(sink2))
            }
        };
        let probes = std::mem::take(&mut *slots.lock().expect("slots"))
            .into_iter()
            .map(|p| p.expect("every probe is materialized"))
            .collect();
        Running {
            sink,
            sink2,
            probes,
            clock: clock.clone(),
        }
    }

    fn apply(&mut self, step: Step) {
        match step {
            Step::Request(n) => self.sink.request(n),
            Step::Cancel => self.sink.cancel(),
            Step::Request2(n) => self.sink2.as_mut().expect("a fan-out").request(n),
            Step::Cancel2 => self.sink2.as_mut().expect("a fan-out").cancel(),
            Step::Push(i, x) => self.probes[i].send_next(x),
            Step::PushMany(i, x, n) => (x..x + n).for_each(|x| self.probes[i].send_next(x % 1000)),
            Step::Complete(i) => self.probes[i].send_complete(),
            Step::Fail(i) => self.probes[i].send_error(StreamError::msg(BOOM)),
            Step::Tick => {
                // Every timer the stages set so far is armed first.
                self.sink.wait_idle();
                self.clock.advance(TICK);
            }
        }
    }

    fn drain_down(&mut self, into: &mut Vec<Sig>) {
        while let Some(r) = self.sink.try_receive() {
            into.push(sig(r));
        }
    }

    fn drain_up(&mut self) -> Vec<Up> {
        self.probes
            .iter_mut()
            .map(|p| {
                let mut up = Up::default();
                while let Some(s) = p.try_signal() {
                    match s {
                        DownstreamSignal::Request => up.requests += 1,
                        DownstreamSignal::Cancel => up.cancelled = true,
                    }
                }
                up
            })
            .collect()
    }
}

/// The trace of a run in one island (fused, or fusion off): after each
/// step the island is quiescent, so the trace is exact.
pub(crate) fn one_island(case: &Case, mat: &Materializer, clock: &TestClock) -> Vec<StepTrace> {
    let mut run = Running::start(case, false, mat, clock);
    let mut out = Vec::new();
    for step in std::iter::once(None).chain(case.script.iter().copied().map(Some)) {
        if let Some(step) = step {
            run.apply(step);
        }
        // In simulation, every island (a stream an operator runs of its
        // own included) comes to rest first: the quiescence the model
        // assumes, in the seed's order.
        weir_actor::sim::settle();
        // The island is idle when a sink still running says so (a sink
        // that has stopped answers at once).
        run.sink.wait_idle();
        let mut down2 = Vec::new();
        if let Some(sink2) = &mut run.sink2 {
            sink2.wait_idle();
            while let Some(r) = sink2.try_receive() {
                down2.push(sig(r));
            }
        }
        let mut down = Vec::new();
        run.drain_down(&mut down);
        out.push(StepTrace {
            down,
            up: run.drain_up(),
            down2,
        });
    }
    out
}

/// The downstream trace of a run with a boundary after every stage. The
/// islands do not settle together, so after each step the run waits for
/// the elements the model expects there, and for the end if the model
/// expects it and it has not come yet (a signal that comes late is waited
/// for; one that comes early shows up in its place), then takes whatever
/// else has already arrived. What the upstream probes see is not taken:
/// a boundary asks ahead for a batch.
pub(crate) fn boundaries(
    case: &Case,
    mat: &Materializer,
    clock: &TestClock,
    expected: &[StepTrace],
) -> Vec<StepTrace> {
    waiting(case, true, mat, clock, expected)
}

/// The downstream trace of a run (with a boundary after every stage, or
/// in one island) that waits, after each step, for the signals the model
/// expects there (see [`boundaries`]); the upstream probes are not taken.
pub(crate) fn waiting(
    case: &Case,
    boundaries: bool,
    mat: &Materializer,
    clock: &TestClock,
    expected: &[StepTrace],
) -> Vec<StepTrace> {
    let mut run = Running::start(case, boundaries, mat, clock);
    let mut out = Vec::new();
    let (mut ended, mut ended2) = (false, false);
    let steps = std::iter::once(None).chain(case.script.iter().copied().map(Some));
    for (step, want) in steps.zip(expected) {
        if let Some(step) = step {
            run.apply(step);
        }
        // In simulation, every island comes to rest first (as above):
        // what the model expects has then arrived, or will not.
        weir_actor::sim::settle();
        // Each output waits for its own (a fan-out's second too).
        let down = wait_for(&mut run.sink, &want.down, &mut ended);
        let down2 = match &mut run.sink2 {
            Some(sink2) => wait_for(sink2, &want.down2, &mut ended2),
            None => Vec::new(),
        };
        // Drain what the probes saw so it does not pile up.
        run.drain_up();
        out.push(StepTrace {
            down,
            up: want.up.clone(),
            down2,
        });
    }
    out
}

/// What `sink` shows after a step: it waits for the elements in `want`
/// and for the end there if it has not `ended` yet (a signal that comes
/// late is waited for; one that comes early shows up in its place), then
/// takes whatever else has already arrived.
fn wait_for(sink: &mut SinkProbe<u64>, want: &[Sig], ended: &mut bool) -> Vec<Sig> {
    let mut elements = want.iter().filter(|s| matches!(s, Sig::Next(_))).count();
    let mut end = !*ended && want.iter().any(|s| !matches!(s, Sig::Next(_)));
    let mut down = Vec::new();
    while elements > 0 || end {
        let Some(r) = sink.receive_within(PATIENCE) else {
            break;
        };
        let s = sig(r);
        if matches!(s, Sig::Next(_)) {
            elements = elements.saturating_sub(1);
        } else {
            *ended = true;
            end = false;
            elements = 0;
        }
        down.push(s);
    }
    sink.wait_idle();
    while let Some(r) = sink.try_receive() {
        down.push(sig(r));
    }
    *ended |= down.iter().any(|s| !matches!(s, Sig::Next(_)));
    down
}
