//! The reference model: each operator as a plain-Rust pull machine over
//! the one-element-at-a-time protocol, driven by the script, giving the
//! trace a correct run shows.
//!
//! The rules it encodes (Akka's, which Weir follows):
//! - the sink pulls one element at a time while it has demand;
//! - a stage signals completion as soon as it knows it has nothing more
//!   to emit (no extra demand needed); a failure goes downstream at once,
//!   dropping what the stage holds (except `recover`, which emits its
//!   element on the next pull, then completes);
//! - a stage that finishes early (`take`, `take_while`, a `zip` whose
//!   input ended, a junction that failed) cancels its other inputs;
//! - `buffer` and the eager junctions (`merge`, `zip`, `merge_sorted`)
//!   pull their inputs without demand, holding one element per input;
//! - a probe source sees a request each time it is pulled while it holds
//!   no queued element.

use std::collections::VecDeque;

use super::fan_out::Outputs;
use super::script::{BOOM, Case, MAPPED, Op, RECOVERED, Sig, Step, StepTrace, Up};

/// The element `intersperse` puts between two others.
pub(crate) const SEP: u64 = 1000;

pub(crate) fn map(k: u64) -> impl Fn(u64) -> u64 + Clone + Send + Sync + 'static {
    move |x| (x * k + 1) % 1000
}

pub(crate) fn zipped(a: u64, b: u64) -> u64 {
    a * 1000 + b
}

pub(crate) enum Poll {
    Next(u64),
    End(Sig),
    Pending,
}

#[derive(Default)]
pub(crate) struct Probe {
    pub(crate) queue: VecDeque<u64>,
    pub(crate) completed: bool,
    pub(crate) failed: bool,
    pub(crate) waiting: bool,
    pub(crate) requests: u64,
    pub(crate) cancelled: bool,
    /// Cancelled after it completed with elements queued.
    pub(crate) maybe_cancelled: bool,
}

impl Probe {
    pub(crate) fn terminated(&self) -> bool {
        self.failed || self.cancelled || (self.completed && self.queue.is_empty())
    }
}

/// The probe sources, and whether materialization is over.
pub(crate) struct World {
    pub(crate) probes: Vec<Probe>,
    /// Materialization is over: the stages' first pulls (a buffer's, a
    /// junction's) go out before an iterator source that is empty or
    /// failed (`Source::empty`, `Source::failed`) reports its end.
    pub(crate) started: bool,
    /// The test clock, in ticks since materialization.
    pub(crate) now: u32,
    /// What the sink still asks for (one output only; 0 into a fan-out).
    pub(crate) demand: u64,
}

pub(crate) trait Node {
    /// Downstream pulls one element.
    fn pull(&mut self, w: &mut World) -> Poll;
    /// The end this node signals without being pulled, once known.
    fn end(&mut self, w: &mut World) -> Option<Sig>;
    /// Work done without demand (eager pulls).
    fn pump(&mut self, w: &mut World);
    /// Downstream cancels.
    fn cancel(&mut self, w: &mut World);
}

pub(crate) type BoxNode = Box<dyn Node>;

pub(crate) fn error() -> Sig {
    Sig::Error(BOOM.to_owned())
}

/// `reduce`'s failure on an empty stream.
fn empty_stream() -> Sig {
    Sig::Error("EmptyStream".to_owned())
}

/// A linear operator over one upstream node.
struct Linear {
    op: Op,
    up: BoxNode,
    /// take/take_while: finished early (upstream cancelled).
    closed: bool,
    count: u64,
    acc: u64,
    started: bool,
    held: Vec<u64>,
    buffer: VecDeque<u64>,
    /// A time operator's timer (or `limit`) ended the stream with this.
    timed_out: Option<Sig>,
    /// `buffer`: downstream's pulls have reached it (once they have, while
    /// the sink asks they take what arrives).
    reached: bool,
}

impl Linear {
    fn close(&mut self, w: &mut World) -> Poll {
        if !self.closed {
            self.closed = true;
            self.up.cancel(w);
        }
        Poll::End(Sig::Complete)
    }
}

impl Linear {
    /// A time operator's timer, once due (set at materialization, `k`
    /// ticks on): `take_within` completes, the timeouts fail unless the
    /// stream ended or (`initial_timeout`) an element passed; both cancel
    /// upstream.
    fn timer(&mut self, w: &mut World) -> Option<Sig> {
        if let Some(end) = &self.timed_out {
            return Some(end.clone());
        }
        let end = match self.op {
            Op::TakeWithin(k) if w.now >= k && !self.closed => Sig::Complete,
            Op::InitialTimeout(k) if w.now >= k && !self.started && !self.closed => {
                Sig::Error("timeout:Initial".to_owned())
            }
            Op::CompletionTimeout(k) if w.now >= k && !self.closed => {
                Sig::Error("timeout:Completion".to_owned())
            }
            _ => return None,
        };
        if self.up.end(w).is_some() {
            // The stream ended first.
            return None;
        }
        self.closed = true;
        self.up.cancel(w);
        self.timed_out = Some(end.clone());
        Some(end)
    }
}

impl Node for Linear {
    fn pull(&mut self, w: &mut World) -> Poll {
        if let Some(end) = self.timer(w) {
            return Poll::End(end);
        }
        if self.closed {
            return Poll::End(Sig::Complete);
        }
        self.reached = true;
        if !matches!(self.op, Op::Recover) {
            // A failure upstream goes before what the stage holds.
            if let Some(Sig::Error(e)) = self.up.end(w) {
                let e = if let Op::MapError = self.op {
                    MAPPED.to_owned()
                } else {
                    e
                };
                return Poll::End(Sig::Error(e));
            }
        }
        loop {
            // What this operator holds goes out before it pulls again.
            match self.op {
                Op::Take(n) if self.count >= n => return self.close(w),
                // Upstream is not pulled before the delay is over.
                Op::InitialDelay(k) if w.now < k => {
                    // (An upstream that has ended passes that on at once.)
                    return self.up.end(w).map_or(Poll::Pending, Poll::End);
                }
                Op::Scan if !self.started => {
                    self.started = true;
                    return Poll::Next(0);
                }
                Op::MapConcat(_) | Op::Intersperse if !self.held.is_empty() => {
                    return Poll::Next(self.held.remove(0));
                }
                Op::FlatMapConcat(_) if !self.started => self.started = true,
                Op::FlatMapConcat(_) if !self.held.is_empty() => {
                    let x = self.held.remove(0);
                    self.pump(w);
                    return Poll::Next(x);
                }
                Op::Buffer(_) => {
                    // Refilled after the element went on (by then a stage
                    // downstream may have finished and cancelled).
                    if let Some(x) = self.buffer.pop_front() {
                        return Poll::Next(x);
                    }
                }
                _ => {}
            }
            let x = match self.up.pull(w) {
                Poll::Next(x) => x,
                Poll::Pending => return Poll::Pending,
                Poll::End(Sig::Complete) => {
                    return match self.op {
                        Op::Fold if !self.started => {
                            self.started = true;
                            Poll::Next(self.acc)
                        }
                        Op::Reduce if self.count > 0 && !self.started => {
                            self.started = true;
                            Poll::Next(self.acc)
                        }
                        Op::Reduce if self.count == 0 => Poll::End(empty_stream()),
                        Op::Grouped(_) if !self.held.is_empty() => {
                            let sum = self.held.drain(..).sum::<u64>() % 1000;
                            Poll::Next(sum)
                        }
                        _ => Poll::End(Sig::Complete),
                    };
                }
                Poll::End(e) => {
                    return match self.op {
                        Op::Recover => {
                            self.closed = true;
                            Poll::Next(RECOVERED)
                        }
                        Op::MapError => Poll::End(Sig::Error(MAPPED.to_owned())),
                        _ => Poll::End(e),
                    };
                }
            };
            match self.op {
                Op::Map(k) => return Poll::Next(map(k)(x)),
                Op::Filter(m) if x % m != 0 => return Poll::Next(x),
                Op::Filter(_) => {}
                Op::Take(n) => {
                    self.count += 1;
                    if self.count == n {
                        self.closed = true;
                        self.up.cancel(w);
                    }
                    return Poll::Next(x);
                }
                Op::Skip(n) if self.count < n => self.count += 1,
                Op::Skip(_) => return Poll::Next(x),
                Op::TakeWhile(t) if x < t => return Poll::Next(x),
                Op::TakeWhile(_) => return self.close(w),
                Op::SkipWhile(t) if !self.started && x < t => {}
                Op::SkipWhile(_) => {
                    self.started = true;
                    return Poll::Next(x);
                }
                Op::Scan => {
                    self.acc = (self.acc + x) % 1000;
                    return Poll::Next(self.acc);
                }
                Op::Fold => self.acc = (self.acc + x) % 1000,
                Op::Grouped(n) => {
                    self.held.push(x);
                    if self.held.len() == n {
                        return Poll::Next(self.held.drain(..).sum::<u64>() % 1000);
                    }
                }
                Op::FlatMapConcat(r) => {
                    self.held = vec![x; r];
                    if !self.held.is_empty() {
                        let x = self.held.remove(0);
                        self.pump(w);
                        return Poll::Next(x);
                    }
                }
                Op::MapConcat(r) => {
                    if r > 0 {
                        self.held = vec![x; r - 1];
                        return Poll::Next(x);
                    }
                }
                Op::Intersperse => {
                    if self.started {
                        self.held.push(x);
                        return Poll::Next(SEP);
                    }
                    self.started = true;
                    return Poll::Next(x);
                }
                Op::Buffer(_) | Op::Recover | Op::MapError => return Poll::Next(x),
                Op::TakeWithin(_) | Op::InitialDelay(_) | Op::CompletionTimeout(_) => {
                    return Poll::Next(x);
                }
                // Dropped (and pulled again) until the time is over.
                Op::DropWithin(k) if w.now < k => {}
                Op::DropWithin(_) => return Poll::Next(x),
                Op::InitialTimeout(_) => {
                    self.started = true;
                    return Poll::Next(x);
                }
                Op::Limit(n) => {
                    self.count += 1;
                    if self.count > n {
                        // Fails, cancelling upstream.
                        let end = Sig::Error(format!("limit:{n}"));
                        self.closed = true;
                        self.up.cancel(w);
                        self.timed_out = Some(end.clone());
                        return Poll::End(end);
                    }
                    return Poll::Next(x);
                }
                Op::FilterMap(m) if x % m != 0 => return Poll::Next(map(m)(x)),
                Op::FilterMap(_) => {}
                Op::More(_) | Op::Sub(_) | Op::Timed(_) | Op::Extra(_) => {
                    unreachable!("built by their modules")
                }
                Op::Reduce => {
                    // The first element as it is, then `f(acc, x)`.
                    self.acc = if self.count == 0 {
                        x
                    } else {
                        (self.acc + x) % 1000
                    };
                    self.count += 1;
                }
            }
        }
    }

    fn end(&mut self, w: &mut World) -> Option<Sig> {
        if let Some(end) = self.timer(w) {
            return Some(end);
        }
        if self.closed {
            return Some(Sig::Complete);
        }
        match self.op {
            Op::Take(n) if self.count >= n => {
                self.close(w);
                return Some(Sig::Complete);
            }
            Op::Recover => {
                return match self.up.end(w) {
                    Some(Sig::Complete) => Some(Sig::Complete),
                    _ => None,
                };
            }
            _ => {}
        }
        let up = self.up.end(w)?;
        if up != Sig::Complete {
            // A failure goes at once, dropping what the stage holds.
            if let Op::MapError = self.op {
                return Some(Sig::Error(MAPPED.to_owned()));
            }
            return Some(up);
        }
        if let (Op::Reduce, 0) = (self.op, self.count) {
            return Some(empty_stream());
        }
        let holds = match self.op {
            Op::Scan => !self.started,
            Op::Fold => !self.started,
            Op::Reduce => self.count > 0 && !self.started,
            Op::Grouped(_) | Op::MapConcat(_) | Op::FlatMapConcat(_) | Op::Intersperse => {
                !self.held.is_empty()
            }
            Op::Buffer(_) => !self.buffer.is_empty(),
            _ => false,
        };
        (!holds).then_some(Sig::Complete)
    }

    fn pump(&mut self, w: &mut World) {
        self.up.pump(w);
        if let Op::FlatMapConcat(r) = self.op {
            // Once pulled, with no inner source running it pulls the next
            // outer element, demand or not.
            while self.started && !self.closed && self.held.is_empty() && self.up.end(w).is_none() {
                match self.up.pull(w) {
                    Poll::Next(x) => self.held = vec![x; r],
                    _ => break,
                }
            }
        }
        // While the sink asks and its pulls reach it, what arrives goes
        // straight on (they take it, as Pekko's buffer pushes to a waiting
        // downstream); else (no demand, or a stage after it has held the
        // pulls back so far, as `initial_delay` before its time) it is
        // buffered.
        if let Op::Buffer(n) = self.op
            && (w.demand == 0 || !self.reached)
        {
            while !self.closed && self.buffer.len() < n && self.up.end(w).is_none() {
                match self.up.pull(w) {
                    Poll::Next(x) => self.buffer.push_back(x),
                    _ => break,
                }
            }
        }
    }

    fn cancel(&mut self, w: &mut World) {
        self.closed = true;
        self.up.cancel(w);
    }
}

fn graph(case: &Case) -> BoxNode {
    use super::junction::Junction;
    use super::sources::source;
    let mut probe = 0;
    let mut sources: Vec<BoxNode> = case.sources.iter().map(|s| source(s, &mut probe)).collect();
    let mut node = match case.join {
        Some(join) if sources.len() > 1 => Box::new(Junction::new(join, sources)) as BoxNode,
        _ => sources.pop().expect("a case has a source"),
    };
    let ops = super::linear_extra::as_modelled(case).ops;
    for (at, op) in ops.iter().enumerate() {
        let op = match op {
            Op::Extra(e) => {
                node = super::linear_extra::node(*e, node);
                continue;
            }
            Op::Sub(o) => {
                node = super::substreams::node(*o, node);
                continue;
            }
            Op::Timed(t) => {
                node = super::timed_more::node(*t, node);
                continue;
            }
            Op::More(m) => match m.modelled_as() {
                Some(op) => op,
                None => {
                    let after = super::linear_more::async_after(&ops, at);
                    node = super::linear_more::node(*m, node, after);
                    continue;
                }
            },
            op => *op,
        };
        node = Box::new(Linear {
            op,
            up: node,
            closed: false,
            count: 0,
            acc: 0,
            started: false,
            held: Vec::new(),
            buffer: VecDeque::new(),
            timed_out: None,
            reached: false,
        });
    }
    node
}

/// The trace a correct run of `case` shows: one entry after
/// materialization, then one per step.
pub(crate) fn trace(case: &Case) -> Vec<StepTrace> {
    let mut w = World {
        probes: (0..case.probes()).map(|_| Probe::default()).collect(),
        started: false,
        now: 0,
        demand: 0,
    };
    let mut root = graph(case);
    let mut demand = 0u64;
    let mut done = false;
    let mut fan_out = case.fan_out.map(Outputs::new);
    let mut seen: Vec<Up> = vec![Up::default(); w.probes.len()];
    let mut out = Vec::new();
    for step in std::iter::once(None).chain(case.script.iter().map(Some)) {
        let mut down = Vec::new();
        let mut downs = [Vec::new(), Vec::new()];
        // A `PushMany` is its elements sent one by one: the probe's
        // callbacks run one at a time, the stream settling after each.
        let many: Vec<Step> = match step {
            Some(Step::PushMany(i, x, n)) => {
                (*x..x + n).map(|x| Step::Push(*i, x % 1000)).collect()
            }
            _ => Vec::new(),
        };
        let parts: Vec<Option<&Step>> = if many.is_empty() {
            vec![step]
        } else {
            many.iter().map(Some).collect()
        };
        for step in parts {
            match step {
                None => {
                    // The first pulls, then the failures of `Source::failed`.
                    root.pump(&mut w);
                    w.started = true;
                }
                Some(Step::Request(n)) => match &mut fan_out {
                    Some(outputs) => outputs.request(0, *n),
                    None => demand += n,
                },
                Some(Step::Request2(n)) => {
                    if let Some(outputs) = &mut fan_out {
                        outputs.request(1, *n);
                    }
                }
                Some(Step::Cancel) => match &mut fan_out {
                    Some(outputs) => outputs.cancel(0, &mut root, &mut w),
                    None => {
                        if !done {
                            root.cancel(&mut w);
                            done = true;
                        }
                    }
                },
                Some(Step::Cancel2) => {
                    if let Some(outputs) = &mut fan_out {
                        outputs.cancel(1, &mut root, &mut w);
                    }
                }
                Some(Step::Push(i, x)) => {
                    if !w.probes[*i].terminated() {
                        w.probes[*i].queue.push_back(*x);
                    }
                }
                Some(Step::PushMany(..)) => unreachable!("split above"),
                Some(Step::Complete(i)) => w.probes[*i].completed = true,
                Some(Step::Tick) => w.now += 1,
                Some(Step::Fail(i)) => {
                    w.probes[*i].failed = true;
                    w.probes[*i].queue.clear();
                }
            }
            if let Some(outputs) = &mut fan_out {
                outputs.settle(&mut root, &mut w, &mut downs);
                down.append(&mut downs[0]);
            }
            while !done && fan_out.is_none() {
                // Eager pulls ripple one stage per pass: run a pass per stage.
                w.demand = demand;
                for _ in 0..=case.ops.len() + 1 {
                    root.pump(&mut w);
                }
                if let Some(end) = root.end(&mut w) {
                    down.push(end);
                    done = true;
                    break;
                }
                if demand == 0 {
                    break;
                }
                match root.pull(&mut w) {
                    Poll::Next(x) => {
                        down.push(Sig::Next(x));
                        demand -= 1;
                    }
                    Poll::End(end) => {
                        down.push(end);
                        done = true;
                    }
                    Poll::Pending => break,
                }
            }
        }
        let up = w
            .probes
            .iter()
            .zip(&mut seen)
            .map(|(p, seen)| {
                let step = Up {
                    requests: p.requests - seen.requests,
                    cancelled: p.cancelled && !seen.cancelled,
                    maybe_cancelled: p.maybe_cancelled && !seen.cancelled,
                };
                *seen = Up {
                    requests: p.requests,
                    cancelled: p.cancelled,
                    maybe_cancelled: p.maybe_cancelled,
                };
                step
            })
            .collect();
        let [_, down2] = downs;
        out.push(StepTrace { down, up, down2 });
    }
    out
}
