//! More linear operators: their script form ([`More`], one `Op::More`
//! variant), their model (a [`Node`] each, built by [`node`]) and how a
//! run builds them ([`apply`]).
//!
//! The rules these models add to `model.rs`'s:
//! - `inspect` and `log` pass every signal on unchanged (no node);
//! - `intersperse_with` emits its start on the first pull without
//!   pulling upstream (for an empty stream too), its end after upstream
//!   completes; a failure goes at once;
//! - `sliding(n, step)` emits a window of `n` every `step` elements, and
//!   at completion the partial window if an element came since the last;
//! - `map_async(p)` / `map_async_unordered(p)` with ready futures: the
//!   demand rule is that no element is taken (no future started) before
//!   the first downstream pull; from then on, while the sink still asks,
//!   each result goes straight on (downstream pulls again at once), and
//!   once it does not the stage pulls without demand until it holds `p`
//!   results (with ready futures the unordered form emits in input order
//!   too); a failure upstream goes at once, dropping what it holds;
//!   once started, while it has room it has a pull out (it pulls again
//!   right after taking an element), so what the stage before it offers
//!   goes straight to it before that stage would hold it;
//! - `batch` / `conflate` before a `map_async` (see [`AsyncAfter`]):
//!   pulled for a sum, the stage pushes it and pulls upstream at once,
//!   and `map_async`'s next pull (made when it takes the sum) comes
//!   behind that pull, so what upstream has ready arrives first: right
//!   after a `map_async` the element upstream has ready joins the sum the
//!   held element started (the stage's outlet is pulled already, so the
//!   sum goes on with it); with `map`s between, the stage's outlet is not
//!   pulled yet, and it aggregates what upstream has ready until full. An
//!   element that comes with upstream's end (an iterator's last) waits
//!   behind that end, so it does not join. (Pekko's interpreter gives the
//!   first rule too; it runs the pulls a pull sets off before the push,
//!   so it would aggregate the same way before a plain `map`, where
//!   Weir's, which chases the push, has the sink's next pull first: the
//!   model follows Weir there, as before.)
//! - `recover_with_retries(a)` switches on a failure (if `a > 0`) to a
//!   fallback of two elements, emitted on demand, then completes;
//! - `limit_weighted(max, cost)` fails (cancelling upstream) on the
//!   element that takes the total cost past `max`;
//! - `buffer(n, drop strategy)` pulls at materialization (after the
//!   stages behind it made their first pulls) and after every element,
//!   whatever the demand; while the sink asks, or downstream waits on an
//!   empty buffer, an element goes straight on; the others go into the
//!   buffer, where the strategy makes room (or `Fail` fails the stream,
//!   cancelling upstream); a failure upstream goes at once, a completion
//!   after the buffered elements;
//! - on the test clock: `idle_timeout(k)` fails when `k` ticks pass with
//!   no element taken from upstream; `backpressure_timeout(k)` when an
//!   element (or the start) waits `k` ticks for downstream's next pull;
//!   `keep_alive(k)` pulls ahead holding one element and, when pulled
//!   with nothing held `k` ticks after the last element it sent, sends
//!   [`INJECT`] (at once, or when the clock gets there). All cancel
//!   upstream when they fail; a stream that ended first is not failed.
//!
//! The "while the sink asks" rule (`World::demand`) holds for the
//! operators after these that pass pulls on one for one; an operator that
//! emits without pulling (`map_concat`'s copies) after a dropping buffer
//! or a `map_async` fed several elements in one step is where it could
//! part from a run (not seen in the surveys).

use std::collections::VecDeque;

use weir_streams::prelude::*;

use super::model::{BoxNode, Node, Poll, SEP, World, map};
use super::script::{RECOVERED, Sig, TICK};

#[path = "linear_more_batch_async.rs"]
mod batch_async;
pub(crate) use batch_async::{AsyncAfter, async_after};

/// `intersperse_with`'s start and end elements.
pub(crate) const START: u64 = 1001;
pub(crate) const END: u64 = 1002;

/// The element `keep_alive` injects.
pub(crate) const INJECT: u64 = 1003;

/// The second element of `recover_with_retries`' fallback.
pub(crate) const RETRIED: u64 = 998;

/// The dropping strategies of `buffer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Drop {
    Head,
    Tail,
    Buffer,
    New,
    Fail,
}

/// The operators of this module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum More {
    Inspect,
    Log,
    IntersperseWith {
        start: bool,
        end: bool,
    },
    /// `sliding(n, step)`, each window as [`window`].
    Sliding(usize, usize),
    /// With ready futures of `map(2)`.
    MapAsync(usize),
    MapAsyncUnordered(usize),
    /// `recover_with_retries(attempts)` into `[RECOVERED, RETRIED]`.
    RecoverWithRetries(u64),
    /// `limit_weighted(max, x % 3)`.
    LimitWeighted(u64),
    Buffer(usize, Drop),
    /// `batch(max, x, sum)`, `conflate(sum)` (sums `% 1000`).
    Batch(u64),
    Conflate,
    /// `flat_map_merge(1, ..)` into `r` copies (an iterator source each):
    /// with one inner source at a time, `flat_map_concat`'s model.
    FlatMapMerge1(usize),
    /// The time operators, with a duration of so many [`TICK`]s.
    IdleTimeout(u32),
    BackpressureTimeout(u32),
    /// `delay(k, Backpressure)` (its buffer the default 16).
    Delay(u32),
    /// `keep_alive(k, || INJECT)`.
    KeepAlive(u32),
}

impl More {
    /// The operator of `model.rs` whose model this one shares.
    pub(crate) fn modelled_as(self) -> Option<super::script::Op> {
        match self {
            More::FlatMapMerge1(r) => Some(super::script::Op::FlatMapConcat(r)),
            _ => None,
        }
    }

    /// A time operator (see `Op::timed`).
    pub(crate) fn timed(self) -> bool {
        matches!(
            self,
            More::IdleTimeout(_)
                | More::BackpressureTimeout(_)
                | More::KeepAlive(_)
                | More::Delay(_)
        )
    }

    /// A `buffer` that drops (or fails) when full, `batch`, `conflate`:
    /// what they make of a burst depends on the demand as it arrives.
    pub(crate) fn drops(self) -> bool {
        matches!(self, More::Buffer(..) | More::Batch(_) | More::Conflate)
    }

    /// A `recover_with_retries` that can switch to its fallback.
    pub(crate) fn runs_inner_stream(self) -> bool {
        matches!(self, More::RecoverWithRetries(1..))
    }
}

/// Cases the model does not state (see the coverage table):
/// - into a fan-out, an operator that lets elements pass straight on
///   while the sink asks (`map_async`, a dropping buffer, `batch`,
///   `conflate`): the model knows the demand of one sink only;
/// - two of the dropping buffers, `batch`, `conflate`, `delay`,
///   `keep_alive` (all pull at materialization) in a case: at
///   materialization every stage's first pull goes out before an element
///   moves, and the model has the later one pull first only when it is
///   an ordinary eager stage;
/// - a back-pressured `buffer` after a dropping one (the same race);
/// - `batch` or `conflate` with a `map_async` after it past other stages
///   than `map` (whether the stage's outlet is pulled when upstream
///   answers follows each stage's order of push and pull), and `conflate`
///   after `map`s (it aggregates what upstream has ready for as long as
///   the interpreter chases the pulls, a limit of its own).
pub(crate) fn not_modelled(case: &super::script::Case) -> bool {
    use super::script::Op;
    let passes_on = |o: &&Op| matches!(o, Op::More(m) if m.drops() || matches!(m, More::MapAsync(_) | More::MapAsyncUnordered(_)));
    let drops = case
        .ops
        .iter()
        .filter(|o| matches!(o, Op::More(m) if m.drops() || matches!(m, More::Delay(_) | More::KeepAlive(_))))
        .count();
    // (The same for `buffer` with back-pressure when a stage before it
    // fails mid-flow: into a fan-out, how many elements it handed on
    // before that failure follows the outputs' demand.)
    let fails_midway = case
        .ops
        .iter()
        .position(|o| matches!(o, Op::Limit(_) | Op::More(More::LimitWeighted(_))));
    let buffer_after_failure =
        fails_midway.is_some_and(|at| case.ops[at..].iter().any(|o| matches!(o, Op::Buffer(_))));
    // A back-pressured `buffer` after one of them also pulls at
    // materialization; whether its pull reaches the dropping stage before
    // the source's elements pour into it is the order of the first pulls
    // (the survey found cases both ways).
    let buffer_after_drop = case
        .ops
        .iter()
        .position(|o| matches!(o, Op::More(m) if m.drops()))
        .is_some_and(|at| case.ops[at..].iter().any(|o| matches!(o, Op::Buffer(_))));
    (case.fan_out.is_some() && (buffer_after_failure || case.ops.iter().any(|o| passes_on(&o))))
        || drops > 1
        || buffer_after_drop
        || batch_async::not_modelled(case)
}

/// A window of `sliding` as one element.
pub(crate) fn window(w: &[u64]) -> u64 {
    w.iter().fold(7, |a, x| (a * 31 + x) % 1000)
}

fn cost(x: u64) -> u64 {
    x % 3
}

/// The strategy for the random cases (`script.rs`'s `op`).
pub(crate) fn more() -> impl proptest::strategy::Strategy<Value = More> {
    use proptest::prelude::*;
    let drop = prop_oneof![
        Just(Drop::Head),
        Just(Drop::Tail),
        Just(Drop::Buffer),
        Just(Drop::New),
        Just(Drop::Fail),
    ];
    prop_oneof![
        Just(More::Inspect),
        Just(More::Log),
        (any::<bool>(), any::<bool>())
            .prop_map(|(start, end)| More::IntersperseWith { start, end }),
        (1usize..4, 1usize..4).prop_map(|(n, step)| More::Sliding(n, step)),
        (1usize..4).prop_map(More::MapAsync),
        (1usize..4).prop_map(More::MapAsyncUnordered),
        (0u64..3).prop_map(More::RecoverWithRetries),
        (0u64..6).prop_map(More::LimitWeighted),
        ((1usize..3), drop).prop_map(|(n, d)| More::Buffer(n, d)),
        (1u64..4).prop_map(More::Batch),
        Just(More::Conflate),
        (0usize..3).prop_map(More::FlatMapMerge1),
        (1u32..4).prop_map(More::IdleTimeout),
        (1u32..4).prop_map(More::BackpressureTimeout),
        (1u32..4).prop_map(More::KeepAlive),
        (1u32..4).prop_map(More::Delay),
    ]
}

/// The operator as a run builds it.
pub(crate) fn apply(s: Source<u64>, op: More) -> Source<u64> {
    match op {
        More::Inspect => s.inspect(|_| {}),
        More::Log => s.log("signal-differential"),
        More::IntersperseWith { start, end } => {
            s.intersperse_with(start.then_some(START), SEP, end.then_some(END))
        }
        More::Sliding(n, step) => s
            .sliding(n, step)
            .expect("n and step are at least 1")
            .map(|w: Vec<u64>| window(&w)),
        More::MapAsync(p) => s
            .map_async(p, |x| std::future::ready(Ok(map(2)(x))))
            .expect("p is at least 1"),
        More::MapAsyncUnordered(p) => s
            .map_async_unordered(p, |x| std::future::ready(Ok(map(2)(x))))
            .expect("p is at least 1"),
        More::RecoverWithRetries(a) => {
            s.recover_with_retries(a, |_| Some(Source::from_iter([RECOVERED, RETRIED])))
        }
        More::LimitWeighted(max) => s.limit_weighted(max, |x| cost(*x)),
        More::Buffer(n, d) => {
            let strategy = match d {
                Drop::Head => OverflowStrategy::DropHead,
                Drop::Tail => OverflowStrategy::DropTail,
                Drop::Buffer => OverflowStrategy::DropBuffer,
                Drop::New => OverflowStrategy::DropNew,
                Drop::Fail => OverflowStrategy::Fail,
            };
            s.buffer(n, strategy).expect("n is at least 1")
        }
        More::Batch(max) => s
            .batch(max, |x| x, |a, x| (a + x) % 1000)
            .expect("max is at least 1"),
        More::Conflate => s.conflate(|a, x| (a + x) % 1000),
        More::FlatMapMerge1(r) => s
            .flat_map_merge(1, move |x| Source::from_iter(std::iter::repeat_n(x, r)))
            .expect("breadth 1"),
        More::IdleTimeout(k) => s.idle_timeout(TICK * k),
        More::BackpressureTimeout(k) => s.backpressure_timeout(TICK * k),
        More::KeepAlive(k) => s.keep_alive(TICK * k, || INJECT),
        More::Delay(k) => s.delay(TICK * k, weir_streams::DelayOverflowStrategy::Backpressure),
    }
}

/// The model of `op` over `up`, with `after` what comes after it.
pub(crate) fn node(op: More, up: BoxNode, after: AsyncAfter) -> BoxNode {
    if let More::Inspect | More::Log = op {
        // Pass-through: no signal of its own.
        return up;
    }
    Box::new(Extra {
        op,
        up,
        after,
        closed: false,
        ended: None,
        held: VecDeque::new(),
        direct: None,
        wanted: false,
        started: false,
        start_pending: matches!(op, More::IntersperseWith { start: true, .. }),
        end_pending: matches!(op, More::IntersperseWith { end: true, .. }),
        count: 0,
        to_skip: 0,
        fresh: false,
        recovering: false,
        agg: None,
        pending: None,
        dues: VecDeque::new(),
        last: 0,
        waiting: matches!(op, More::BackpressureTimeout(_)),
        next: match op {
            More::KeepAlive(k) => k,
            _ => 0,
        },
    })
}

struct Extra {
    op: More,
    up: BoxNode,
    /// `batch` / `conflate`: a `map_async` after it.
    after: AsyncAfter,
    /// Cancelled by downstream.
    closed: bool,
    /// Failed on its own (`limit_weighted`, `buffer` with `Fail`).
    ended: Option<Sig>,
    /// What the stage holds to emit (a buffer, results, a window, a
    /// separator's element, the fallback's elements).
    held: VecDeque<u64>,
    /// `buffer`: an element that went straight to a waiting downstream.
    direct: Option<u64>,
    /// `buffer`: downstream waits on an empty buffer.
    wanted: bool,
    /// `map_async`: pulled once; `intersperse_with`: an element passed.
    started: bool,
    start_pending: bool,
    end_pending: bool,
    count: u64,
    to_skip: usize,
    fresh: bool,
    recovering: bool,
    /// `batch` / `conflate`: the sum so far, and (`batch`, full) the
    /// element that starts the next.
    agg: Option<u64>,
    pending: Option<u64>,
    /// `delay`: the tick each held element is due at.
    dues: VecDeque<u32>,
    /// The idle and back-pressure timeouts: the tick of the last element.
    last: u32,
    /// `backpressure_timeout`: an element (or the start) waits for a pull.
    waiting: bool,
    /// `keep_alive`: the tick from which an element is injected.
    next: u32,
}

impl Extra {
    /// The idle / back-pressure timeout, once due (checked on every signal
    /// and when the clock moves: the stage's timer): fails, cancelling
    /// upstream, unless the stream ended first.
    fn timer(&mut self, w: &mut World) -> Option<Poll> {
        let end = match self.op {
            More::IdleTimeout(k) if w.now >= self.last + k => "timeout:Idle",
            More::BackpressureTimeout(k) if self.waiting && w.now >= self.last + k => {
                "timeout:Backpressure"
            }
            _ => return None,
        };
        if self.ended.is_some() || self.closed || self.up.end(w).is_some() {
            return None;
        }
        Some(self.fail(Sig::Error(end.to_owned()), w))
    }

    fn fail(&mut self, end: Sig, w: &mut World) -> Poll {
        self.ended = Some(end.clone());
        self.closed = true;
        self.up.cancel(w);
        Poll::End(end)
    }

    fn offer(&mut self, x: u64, w: &mut World) {
        let More::Buffer(n, d) = self.op else {
            unreachable!("only a buffer offers")
        };
        if self.wanted && self.held.is_empty() && self.direct.is_none() {
            self.wanted = false;
            self.direct = Some(x);
            return;
        }
        if self.held.len() < n {
            self.held.push_back(x);
            return;
        }
        match d {
            Drop::Head => {
                self.held.pop_front();
            }
            Drop::Tail => {
                self.held.pop_back();
            }
            Drop::Buffer => self.held.clear(),
            Drop::New => return,
            Drop::Fail => {
                self.fail(Sig::Error(format!("BufferOverflow {{ capacity: {n} }}")), w);
                return;
            }
        }
        self.held.push_back(x);
    }

    /// `batch` / `conflate` take an element: straight on to a waiting
    /// downstream, else into the sum (or, `batch` full, held as the next).
    fn absorb(&mut self, x: u64) {
        let max = match self.op {
            More::Batch(max) => max,
            _ => u64::MAX,
        };
        if self.wanted && self.agg.is_none() && self.direct.is_none() {
            self.wanted = false;
            self.direct = Some(x);
        } else if let Some(a) = self.agg {
            if self.count < max {
                self.agg = Some((a + x) % 1000);
                self.count += 1;
            } else {
                self.pending = Some(x);
            }
        } else {
            self.agg = Some(x);
            self.count = 1;
        }
    }

    /// `map_async` started: pull while it holds fewer than `room` (the
    /// results held), whatever the sink asks.
    fn take_ahead(&mut self, room: usize, w: &mut World) {
        while !self.closed && self.held.len() < room && self.up.end(w).is_none() {
            match self.up.pull(w) {
                Poll::Next(x) => match self.op {
                    More::Buffer(..) => self.offer(x, w),
                    More::KeepAlive(_) => self.held.push_back(x),
                    _ => self.held.push_back(map(2)(x)),
                },
                _ => break,
            }
        }
    }

    fn window_out(&mut self) -> u64 {
        let More::Sliding(n, step) = self.op else {
            unreachable!("only sliding has windows")
        };
        let out = window(self.held.make_contiguous());
        self.fresh = false;
        self.held.drain(..step.min(n).min(self.held.len()));
        self.to_skip = step.saturating_sub(n);
        out
    }
}

impl Node for Extra {
    fn pull(&mut self, w: &mut World) -> Poll {
        if let Some(end) = &self.ended {
            return Poll::End(end.clone());
        }
        if self.closed {
            return Poll::End(Sig::Complete);
        }
        if let Some(end) = self.timer(w) {
            return end;
        }
        if let More::RecoverWithRetries(a) = self.op {
            if self.recovering {
                return self
                    .held
                    .pop_front()
                    .map_or(Poll::End(Sig::Complete), Poll::Next);
            }
            return match self.up.pull(w) {
                Poll::End(Sig::Error(_)) if a > 0 => {
                    self.recovering = true;
                    self.held = VecDeque::from([RETRIED]);
                    Poll::Next(RECOVERED)
                }
                other => other,
            };
        }
        // A failure upstream goes before what the stage holds.
        if let Some(Sig::Error(e)) = self.up.end(w) {
            return Poll::End(Sig::Error(e));
        }
        match self.op {
            More::IntersperseWith { .. } if self.start_pending => {
                self.start_pending = false;
                return Poll::Next(START);
            }
            More::MapAsync(_) | More::MapAsyncUnordered(_) => self.started = true,
            // Only an element whose time has come; it pulls ahead (pump).
            More::Delay(_) => {
                if self.dues.front().is_some_and(|due| *due <= w.now) {
                    self.dues.pop_front();
                    return Poll::Next(self.held.pop_front().expect("one per due"));
                }
                if self.held.is_empty()
                    && let Some(end) = self.up.end(w)
                {
                    return Poll::End(end);
                }
                return Poll::Pending;
            }
            // Downstream pulled: no longer waiting on it.
            More::BackpressureTimeout(_) => self.waiting = false,
            More::KeepAlive(k) => {
                // What it holds, else an injected element once due.
                if let Some(x) = self.held.pop_front() {
                    self.next = w.now + k;
                    return Poll::Next(x);
                }
                if w.now >= self.next {
                    self.next = w.now + k;
                    return Poll::Next(INJECT);
                }
            }
            More::Buffer(..) => {
                if let Some(x) = self.direct.take().or_else(|| self.held.pop_front()) {
                    return Poll::Next(x);
                }
            }
            More::Batch(_) | More::Conflate => {
                if let Some(x) = self.direct.take() {
                    return Poll::Next(x);
                }
                if let Some(a) = self.agg.take() {
                    // The held element starts the next sum.
                    if let Some(x) = self.pending.take() {
                        self.agg = Some(x);
                        self.count = 1;
                    }
                    self.refill(w);
                    return Poll::Next(a);
                }
            }
            _ => {}
        }
        if !matches!(self.op, More::Sliding(..) | More::Buffer(..))
            && let Some(x) = self.held.pop_front()
        {
            return Poll::Next(x);
        }
        loop {
            let x = match self.up.pull(w) {
                Poll::Next(x) => x,
                Poll::Pending => {
                    self.wanted = true;
                    return Poll::Pending;
                }
                Poll::End(Sig::Complete) => {
                    return match self.op {
                        More::IntersperseWith { .. } if self.end_pending => {
                            self.end_pending = false;
                            Poll::Next(END)
                        }
                        More::Sliding(..) if self.fresh && !self.held.is_empty() => {
                            let out = window(self.held.make_contiguous());
                            self.held.clear();
                            self.fresh = false;
                            Poll::Next(out)
                        }
                        _ => Poll::End(Sig::Complete),
                    };
                }
                Poll::End(e) => return Poll::End(e),
            };
            match self.op {
                More::IntersperseWith { .. } => {
                    if self.started {
                        self.held.push_back(x);
                        return Poll::Next(SEP);
                    }
                    self.started = true;
                    return Poll::Next(x);
                }
                More::Sliding(n, _) => {
                    if self.to_skip > 0 {
                        self.to_skip -= 1;
                        continue;
                    }
                    self.held.push_back(x);
                    self.fresh = true;
                    if self.held.len() == n {
                        return Poll::Next(self.window_out());
                    }
                }
                More::MapAsync(_) | More::MapAsyncUnordered(_) => return Poll::Next(map(2)(x)),
                More::LimitWeighted(max) => {
                    self.count += cost(x);
                    if self.count > max {
                        return self.fail(Sig::Error(format!("limit:{max}")), w);
                    }
                    return Poll::Next(x);
                }
                More::Buffer(..) | More::Batch(_) | More::Conflate => {
                    self.wanted = false;
                    return Poll::Next(x);
                }
                More::IdleTimeout(_) => {
                    self.last = w.now;
                    return Poll::Next(x);
                }
                More::BackpressureTimeout(_) => {
                    self.last = w.now;
                    self.waiting = true;
                    return Poll::Next(x);
                }
                More::KeepAlive(k) => {
                    self.next = w.now + k;
                    return Poll::Next(x);
                }
                More::Inspect
                | More::Log
                | More::RecoverWithRetries(_)
                | More::FlatMapMerge1(_)
                | More::Delay(_) => {
                    unreachable!("handled above")
                }
            }
        }
    }

    fn end(&mut self, w: &mut World) -> Option<Sig> {
        if let Some(end) = &self.ended {
            return Some(end.clone());
        }
        if self.closed {
            return Some(Sig::Complete);
        }
        if let Some(Poll::End(end)) = self.timer(w) {
            return Some(end);
        }
        if let More::RecoverWithRetries(a) = self.op {
            if self.recovering {
                return self.held.is_empty().then_some(Sig::Complete);
            }
            return match self.up.end(w)? {
                Sig::Error(_) if a > 0 => None,
                end => Some(end),
            };
        }
        let up = self.up.end(w)?;
        if up != Sig::Complete {
            return Some(up);
        }
        let holds = match self.op {
            More::IntersperseWith { .. } => {
                self.start_pending || self.end_pending || !self.held.is_empty()
            }
            More::Sliding(..) => self.fresh && !self.held.is_empty(),
            More::Buffer(..) => self.direct.is_some() || !self.held.is_empty(),
            More::Batch(_) | More::Conflate => {
                self.direct.is_some() || self.agg.is_some() || self.pending.is_some()
            }
            _ => !self.held.is_empty(),
        };
        (!holds).then_some(Sig::Complete)
    }

    fn pump(&mut self, w: &mut World) {
        // A started `map_async` has a pull out while it has room: what the
        // stage before it offers goes to it before that stage's own work.
        if let More::MapAsync(p) | More::MapAsyncUnordered(p) = self.op
            && self.started
            && w.demand == 0
        {
            self.take_ahead(p, w);
        }
        self.up.pump(w);
        let room = match self.op {
            // (As a dropping buffer, below: while the sink asks, results
            // go straight on, so a failure that comes mid-flow drops only
            // what downstream did not ask for.)
            More::MapAsync(p) | More::MapAsyncUnordered(p) if self.started && w.demand == 0 => p,
            // At materialization every stage's first pull goes out before
            // an element moves: the stages after this one pull first (an
            // eager one takes elements straight through), then this one.
            // While the sink asks, downstream pulls again as soon as it
            // has an element, so what arrives goes straight on (the pulls
            // take it); once it does not, the buffer takes it.
            More::Buffer(..) if w.started && w.demand == 0 => usize::MAX,
            More::Buffer(..) => return,
            // As a dropping buffer; a full `batch` pulls no more.
            More::Batch(_) | More::Conflate if w.started && w.demand == 0 => {
                while !self.closed && self.pending.is_none() && self.up.end(w).is_none() {
                    match self.up.pull(w) {
                        Poll::Next(x) => self.absorb(x),
                        _ => break,
                    }
                }
                return;
            }
            // Pulls at materialization and while it has room, each element
            // due `k` ticks after it came.
            More::Delay(k) => {
                while !self.closed && self.held.len() < 16 && self.up.end(w).is_none() {
                    match self.up.pull(w) {
                        Poll::Next(x) => {
                            self.held.push_back(x);
                            self.dues.push_back(w.now + k);
                        }
                        _ => break,
                    }
                }
                return;
            }
            // Pulls at materialization and after each element, holding one.
            More::KeepAlive(_) => 1,
            _ => return,
        };
        self.take_ahead(room, w);
    }

    fn cancel(&mut self, w: &mut World) {
        self.closed = true;
        self.up.cancel(w);
    }
}
