//! More time and rate operators on the test clock: their script form
//! ([`Timed`], one `Op::Timed` variant), their model (a [`Node`] each,
//! built by [`node`]) and how a run builds them ([`apply`]).
//!
//! The rules these models add to `model.rs`'s (a duration is so many
//! [`TICK`]s; a timer due at a tick fires at that tick, before anything
//! else happens in it):
//! - `grouped_within(n, d)` / `grouped_weighted_within(max, d, x % 3 + 1)`
//!   pull at materialization and after every element (not while an
//!   element that did not fit waits for the next group). A group closes
//!   when its weight reaches the maximum (an element that does not fit
//!   closes it too and opens the next; one heavier than the maximum joins
//!   a group that weighs nothing) or when its timer fires with elements
//!   collected. The timer fires every `d` from materialization, restarted
//!   at each emitted group; firing with nothing collected does nothing.
//!   A closed group goes at once to a downstream that waits for it, else
//!   on the next pull (and until then it takes what still fits). At
//!   completion what was collected goes, then the held element alone.
//! - `throttle(e, per, burst)` (and with cost `x % 3`) pulls only when
//!   pulled. A token bucket of `burst` tokens, full at materialization,
//!   gets a token every `per / e` on a fixed grid from materialization;
//!   an element that finds its cost in the bucket passes, else
//!   (`Shaping`) it is held until the tokens it lacks have come (taken in
//!   advance: the next element pays that debt too) or (`Enforcing`) the
//!   stream fails with `RateExceeded`, cancelling upstream. Pekko's
//!   `TokenBucket`; a completion waits for a held element.
//! - `delay(k, strategy)` with a buffer of 16 (the default input buffer)
//!   pulls at materialization and while the strategy lets it: a dropping
//!   one always (when full it drops the head, the tail, the whole buffer
//!   or the new element, or `Fail` fails cancelling upstream), `EmitEarly`
//!   while it holds fewer than 16 or downstream waits (then the head goes
//!   early to make room; Pekko's `Delay`). Each element goes `k` ticks
//!   after it arrived, when downstream asks.

use std::collections::VecDeque;

use weir_streams::prelude::*;
use weir_streams::{DelayOverflowStrategy, ThrottleMode};

use super::linear_more::window;
use super::model::{BoxNode, Node, Poll, World};
use super::script::{Case, Op, Sig, TICK};

/// `delay`'s overflow strategies besides back-pressure (in `linear_more`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Overflow {
    EmitEarly,
    DropHead,
    DropTail,
    DropBuffer,
    DropNew,
    Fail,
}

/// The operators of this module (durations in [`TICK`]s).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Timed {
    /// `grouped_within(n, k)`, each group as [`window`].
    GroupedWithin(usize, u32),
    /// `grouped_weighted_within(max, k, x % 3 + 1)`, each group as [`window`].
    GroupedWeightedWithin(u64, u32),
    /// `throttle(elements, per, burst, mode)`; with `cost`,
    /// `throttle_with_cost` of `x % 3`.
    Throttle {
        elements: u32,
        per: u32,
        burst: u32,
        cost: bool,
        enforcing: bool,
    },
    /// `delay(k, strategy)`.
    Delay(u32, Overflow),
}

/// `delay`'s buffer (the default input buffer).
const CAPACITY: usize = 16;

/// How many milliseconds a [`TICK`] is.
const TICK_MS: i64 = 100;

/// Never zero: whether an element of weight zero joins a full group
/// depends on whether downstream's next pull reaches the stage before it
/// does (both follow the group's push in one step: the interpreter's
/// event order, not defined).
fn weight(x: u64) -> u64 {
    x % 3 + 1
}

fn cost(x: u64) -> u64 {
    x % 3
}

/// Cases the model does not state: two of these operators, or one with
/// another time operator (two timers due at one tick fire in an order
/// that is not defined), or with a stage that pulls at materialization
/// and lets elements pass while the sink asks (a `buffer`, `batch`,
/// `conflate`, `map_async`: `linear_more::not_modelled`'s race of first
/// pulls); after `grouped_within`, an operator that does not pass pulls on
/// one for one, or a fan-out.
pub(crate) fn not_modelled(case: &Case) -> bool {
    use super::linear_more::More;
    let mine = case
        .ops
        .iter()
        .filter(|o| matches!(o, Op::Timed(_)))
        .count();
    let others = case.ops.iter().any(|o| match o {
        Op::Timed(_) => false,
        Op::Buffer(_) => true,
        Op::More(m) => {
            // (`recover_with_retries`' fallback runs as a stream of its
            // own: the tick its elements arrive at is not defined.)
            m.timed()
                || m.drops()
                || m.runs_inner_stream()
                || matches!(m, More::MapAsync(_) | More::MapAsyncUnordered(_))
        }
        // A substream's element and a failure of these operators (an
        // enforcing throttle) can land in one step: which reaches the sink
        // first is the substream's hand-over, as `substreams::not_modelled`
        // states for `merge_substreams`.
        Op::Sub(_) => true,
        o => o.timed(),
    });
    // A group's downstream pulls again at once while the sink asks
    // (`World::demand`): so only operators that pass pulls on one for one
    // after `grouped_within` (none that drops an element and pulls again
    // on its own), and no fan-out (the model knows one sink's
    // demand).
    let one_for_one = |o: &Op| {
        matches!(
            o,
            Op::Map(_)
                | Op::Take(_)
                | Op::TakeWhile(_)
                | Op::Recover
                | Op::MapError
                | Op::Limit(_)
                | Op::More(More::Inspect | More::Log | More::LimitWeighted(_))
        )
    };
    let uneven = case
        .ops
        .iter()
        .position(|o| {
            matches!(
                o,
                Op::Timed(Timed::GroupedWithin(..) | Timed::GroupedWeightedWithin(..))
            )
        })
        .is_some_and(|at| case.fan_out.is_some() || !case.ops[at + 1..].iter().all(one_for_one));
    mine > 1 || (mine == 1 && others) || uneven
}

/// A shaping `throttle` whose tokens come between ticks sometimes
/// releases a second held element at the tick of the first release: see
/// the ignored `a_throttle_holds_its_second_element_until_its_own_time`.
/// Not a throttle defect: the test clock's contract. An `advance` fires
/// each due job with the clock at its deadline, but the island handles
/// the timer's message on the pool, concurrently, and reads the clock as
/// it is then (an intermediate deadline or the target): a chain of timers,
/// each set by the reaction to the last, is only defined when the test
/// advances one link at a time (`TestClock` docs). Issue 31's simulation,
/// which runs the pool's work on the advancing thread, makes it exact.
pub(crate) const THROTTLE_TIMER_IN_ADVANCE: super::KnownDefect = super::KnownDefect {
    issue: "a test-clock limit, not a throttle defect: a timer a stage sets while \
            an advance is still firing earlier timers counts from whatever the \
            clock reads when the island handles the first one (an intermediate \
            deadline or the target), so a shaping throttle sometimes releases \
            its next held element a tick early (from run to run)",
    forms: &[super::Form::Fused, super::Form::Unfused],
    applies: |case| {
        case.ops.iter().any(|o| {
            matches!(
                o,
                Op::Timed(Timed::Throttle {
                    elements: 2..,
                    enforcing: false,
                    ..
                })
            )
        })
    },
};

/// The strategy for the random cases (`script.rs`'s `op`).
pub(crate) fn timed() -> impl proptest::strategy::Strategy<Value = Timed> {
    use proptest::prelude::*;
    let overflow = prop_oneof![
        Just(Overflow::EmitEarly),
        Just(Overflow::DropHead),
        Just(Overflow::DropTail),
        Just(Overflow::DropBuffer),
        Just(Overflow::DropNew),
        Just(Overflow::Fail),
    ];
    let throttle = (
        prop_oneof![Just(1u32), Just(2), Just(4)],
        1u32..4,
        0u32..3,
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(elements, per, burst, cost, enforcing)| Timed::Throttle {
            elements,
            per,
            // Enforcing needs a burst of one at least.
            burst: if enforcing { burst.max(1) } else { burst },
            cost,
            enforcing,
        });
    prop_oneof![
        (1usize..4, 1u32..4).prop_map(|(n, k)| Timed::GroupedWithin(n, k)),
        (1u64..6, 1u32..4).prop_map(|(max, k)| Timed::GroupedWeightedWithin(max, k)),
        throttle,
        (1u32..4, overflow).prop_map(|(k, o)| Timed::Delay(k, o)),
    ]
}

/// The operator as a run builds it.
pub(crate) fn apply(s: Source<u64>, op: Timed) -> Source<u64> {
    let groups = |g: Vec<u64>| window(&g);
    match op {
        Timed::GroupedWithin(n, k) => s
            .grouped_within(n, TICK * k)
            .expect("n and the window above zero")
            .map(groups),
        Timed::GroupedWeightedWithin(max, k) => s
            .grouped_weighted_within(max, TICK * k, |x| weight(*x))
            .expect("max and the window above zero")
            .map(groups),
        Timed::Throttle {
            elements,
            per,
            burst,
            cost: weighted,
            enforcing,
        } => {
            let mode = if enforcing {
                ThrottleMode::Enforcing
            } else {
                ThrottleMode::Shaping
            };
            let cost_fn = move |x: &u64| {
                if weighted {
                    u32::try_from(cost(*x)).expect("below 3")
                } else {
                    1
                }
            };
            s.throttle_with_cost(elements, TICK * per, burst, cost_fn, mode)
                .expect("valid arguments")
        }
        Timed::Delay(k, o) => {
            let strategy = match o {
                Overflow::EmitEarly => DelayOverflowStrategy::EmitEarly,
                Overflow::DropHead => DelayOverflowStrategy::DropHead,
                Overflow::DropTail => DelayOverflowStrategy::DropTail,
                Overflow::DropBuffer => DelayOverflowStrategy::DropBuffer,
                Overflow::DropNew => DelayOverflowStrategy::DropNew,
                Overflow::Fail => DelayOverflowStrategy::Fail,
            };
            s.delay(TICK * k, strategy)
        }
    }
}

/// The model of `op` over `up`.
pub(crate) fn node(op: Timed, up: BoxNode) -> BoxNode {
    match op {
        Timed::GroupedWithin(n, k) => Box::new(Grouped::new(up, n as u64, false, k)),
        Timed::GroupedWeightedWithin(max, k) => Box::new(Grouped::new(up, max, true, k)),
        Timed::Throttle {
            elements,
            per,
            burst,
            cost,
            enforcing,
        } => Box::new(Throttle {
            up,
            interval: i64::from(per) * TICK_MS / i64::from(elements),
            capacity: i64::from(burst),
            tokens: i64::from(burst),
            last: 0,
            cost,
            failure: enforcing.then(|| {
                Sig::Error(format!(
                    "RateExceeded {{ cost: {elements}, per: {:?} }}",
                    TICK * per
                ))
            }),
            held: None,
            ended: None,
        }),
        Timed::Delay(k, overflow) => Box::new(Delay {
            up,
            k,
            overflow,
            held: VecDeque::new(),
            ready: None,
            wanted: false,
            closed: false,
            ended: None,
        }),
    }
}

/// `grouped_within`, `grouped_weighted_within`.
struct Grouped {
    up: BoxNode,
    max: u64,
    weighted: bool,
    within: u32,
    group: Vec<u64>,
    weight: u64,
    /// An element that did not fit: it opens the next group.
    pending: Option<(u64, u64)>,
    /// The timer fired with elements collected: the group is closed.
    timed_out: bool,
    /// The tick the timer fires at next.
    deadline: u32,
    /// Downstream waits for a group.
    wanted: bool,
    /// A group pushed to the waiting downstream (its pull takes it).
    ready: Option<u64>,
    closed: bool,
}

impl Grouped {
    fn new(up: BoxNode, max: u64, weighted: bool, within: u32) -> Self {
        Grouped {
            up,
            max,
            weighted,
            within,
            group: Vec::new(),
            weight: 0,
            pending: None,
            timed_out: false,
            deadline: within,
            wanted: false,
            ready: None,
            closed: false,
        }
    }

    fn full(&self) -> bool {
        self.weight >= self.max || self.pending.is_some()
    }

    /// The group goes (the held element opens the next); the timer
    /// restarts.
    fn emit(&mut self, w: &World) -> u64 {
        let out = window(&self.group);
        self.group.clear();
        self.weight = 0;
        self.timed_out = false;
        if let Some((x, weight)) = self.pending.take() {
            self.group.push(x);
            self.weight = weight;
        }
        self.deadline = w.now + self.within;
        out
    }

    /// A closed group goes at once to a waiting downstream.
    fn push_if_wanted(&mut self, w: &World) {
        if self.wanted && self.ready.is_none() && !self.group.is_empty() {
            self.wanted = false;
            self.ready = Some(self.emit(w));
        }
    }

    /// The timer, when due: closes a group with elements collected.
    fn tick(&mut self, w: &World) {
        while !self.closed && w.now >= self.deadline {
            self.deadline += self.within;
            if !self.group.is_empty() {
                self.timed_out = true;
                self.push_if_wanted(w);
            }
        }
    }

    /// Takes what upstream has (unless an element waits for the next
    /// group).
    fn fill(&mut self, w: &mut World) {
        if self.full() {
            self.push_if_wanted(w);
        }
        while !self.closed && self.pending.is_none() && self.up.end(w).is_none() {
            let Poll::Next(x) = self.up.pull(w) else {
                break;
            };
            let weight = if self.weighted { weight(x) } else { 1 };
            if self.weight == 0 || self.weight + weight <= self.max {
                self.group.push(x);
                self.weight += weight;
            } else {
                self.pending = Some((x, weight));
            }
            if self.full() {
                self.push_if_wanted(w);
            }
        }
    }
}

impl Node for Grouped {
    fn pull(&mut self, w: &mut World) -> Poll {
        if self.closed {
            return Poll::End(Sig::Complete);
        }
        self.tick(w);
        // (A group pushed to it is downstream's before a failure comes.)
        let again = w.demand > 1;
        if let Some(g) = self.ready.take() {
            self.wanted = again;
            return Poll::Next(g);
        }
        if let Some(Sig::Error(e)) = self.up.end(w) {
            return Poll::End(Sig::Error(e));
        }
        // A downstream that still asks pulls again right after a group
        // reaches it, before what the stage pulled after pushing the group
        // arrives (as in Pekko: the push goes before the pull).
        self.wanted = false;
        self.fill(w);
        if !self.group.is_empty() && (self.full() || self.timed_out) {
            let g = self.emit(w);
            self.wanted = again;
            return Poll::Next(g);
        }
        if let Some(Sig::Complete) = self.up.end(w) {
            // What was collected, then the held element alone.
            if !self.group.is_empty() {
                let out = window(&self.group);
                self.group.clear();
                return Poll::Next(out);
            }
            if let Some((x, _)) = self.pending.take() {
                return Poll::Next(window(&[x]));
            }
            return Poll::End(Sig::Complete);
        }
        self.wanted = true;
        Poll::Pending
    }

    fn end(&mut self, w: &mut World) -> Option<Sig> {
        if self.closed {
            return Some(Sig::Complete);
        }
        self.tick(w);
        if self.ready.is_some() {
            return None;
        }
        match self.up.end(w)? {
            Sig::Complete => {
                (self.group.is_empty() && self.pending.is_none() && self.ready.is_none())
                    .then_some(Sig::Complete)
            }
            e => Some(e),
        }
    }

    fn pump(&mut self, w: &mut World) {
        self.tick(w);
        self.up.pump(w);
        self.fill(w);
    }

    fn cancel(&mut self, w: &mut World) {
        self.closed = true;
        self.up.cancel(w);
    }
}

/// `throttle`, `throttle_with_cost`: Pekko's token bucket, in ms.
struct Throttle {
    up: BoxNode,
    /// Between two tokens.
    interval: i64,
    capacity: i64,
    tokens: i64,
    /// Tokens are counted up to here (in the future while in debt).
    last: i64,
    cost: bool,
    /// `Enforcing`: the failure of an element that comes too early.
    failure: Option<Sig>,
    /// An element held until the tick (ms) it may pass.
    held: Option<(u64, i64)>,
    ended: Option<Sig>,
}

impl Throttle {
    /// Takes `cost` tokens at `now`: the wait before the element passes.
    fn offer(&mut self, cost: i64, now: i64) -> i64 {
        let elapsed = now - self.last;
        if elapsed >= self.interval {
            let arrived = elapsed / self.interval;
            self.last += arrived * self.interval;
            self.tokens = (self.tokens + arrived).min(self.capacity);
        }
        if cost <= self.tokens {
            self.tokens -= cost;
            return 0;
        }
        let wait = (cost - self.tokens) * self.interval - (now - self.last);
        self.tokens = 0;
        self.last = now + wait;
        wait
    }
}

impl Node for Throttle {
    fn pull(&mut self, w: &mut World) -> Poll {
        if let Some(end) = &self.ended {
            return Poll::End(end.clone());
        }
        if let Some(Sig::Error(e)) = self.up.end(w) {
            return Poll::End(Sig::Error(e));
        }
        let now = i64::from(w.now) * TICK_MS;
        if let Some((x, at)) = self.held {
            if now < at {
                return Poll::Pending;
            }
            self.held = None;
            return Poll::Next(x);
        }
        match self.up.pull(w) {
            Poll::Next(x) => {
                let c = if self.cost { cost(x) } else { 1 };
                let wait = self.offer(i64::try_from(c).expect("small"), now);
                if wait == 0 {
                    return Poll::Next(x);
                }
                if let Some(failure) = self.failure.clone() {
                    self.ended = Some(failure.clone());
                    self.up.cancel(w);
                    return Poll::End(failure);
                }
                self.held = Some((x, now + wait));
                Poll::Pending
            }
            other => other,
        }
    }

    fn end(&mut self, w: &mut World) -> Option<Sig> {
        if let Some(end) = &self.ended {
            return Some(end.clone());
        }
        match self.up.end(w)? {
            Sig::Complete => self.held.is_none().then_some(Sig::Complete),
            e => Some(e),
        }
    }

    fn pump(&mut self, w: &mut World) {
        self.up.pump(w);
    }

    fn cancel(&mut self, w: &mut World) {
        self.ended = Some(Sig::Complete);
        self.up.cancel(w);
    }
}

/// `delay` with the strategies of [`Overflow`].
struct Delay {
    up: BoxNode,
    k: u32,
    overflow: Overflow,
    /// Each element with the tick it is due at.
    held: VecDeque<(u32, u64)>,
    /// `EmitEarly`: the head pushed early to a waiting downstream.
    ready: Option<u64>,
    /// Downstream waits.
    wanted: bool,
    closed: bool,
    /// Failed on its own (`Fail`).
    ended: Option<Sig>,
}

impl Delay {
    fn may_pull(&self) -> bool {
        match self.overflow {
            Overflow::EmitEarly => {
                self.held.len() < CAPACITY || (self.wanted && self.ready.is_none())
            }
            _ => true,
        }
    }

    fn arrive(&mut self, x: u64, w: &mut World) {
        if self.held.len() >= CAPACITY {
            match self.overflow {
                Overflow::DropHead => {
                    self.held.pop_front();
                }
                Overflow::DropTail => {
                    self.held.pop_back();
                }
                Overflow::DropBuffer => self.held.clear(),
                Overflow::DropNew => return,
                Overflow::Fail => {
                    self.ended = Some(Sig::Error(format!(
                        "BufferOverflow {{ capacity: {CAPACITY} }}"
                    )));
                    self.up.cancel(w);
                    return;
                }
                Overflow::EmitEarly => {
                    self.wanted = false;
                    self.ready = self.held.pop_front().map(|(_, x)| x);
                }
            }
        }
        self.held.push_back((w.now + self.k, x));
    }

    fn fill(&mut self, w: &mut World) {
        while !self.closed && self.ended.is_none() && self.may_pull() && self.up.end(w).is_none() {
            match self.up.pull(w) {
                Poll::Next(x) => self.arrive(x, w),
                _ => break,
            }
        }
    }
}

impl Node for Delay {
    fn pull(&mut self, w: &mut World) -> Poll {
        if let Some(end) = &self.ended {
            return Poll::End(end.clone());
        }
        if self.closed {
            return Poll::End(Sig::Complete);
        }
        if let Some(Sig::Error(e)) = self.up.end(w) {
            return Poll::End(Sig::Error(e));
        }
        self.wanted = false;
        if let Some(x) = self.ready.take() {
            return Poll::Next(x);
        }
        if self.held.front().is_some_and(|(due, _)| *due <= w.now) {
            return Poll::Next(self.held.pop_front().expect("a head").1);
        }
        self.wanted = true;
        // (`EmitEarly`, full: downstream waiting lets it pull.)
        self.fill(w);
        if let Some(end) = &self.ended {
            return Poll::End(end.clone());
        }
        if let Some(x) = self.ready.take() {
            return Poll::Next(x);
        }
        if self.held.is_empty()
            && let Some(end) = self.up.end(w)
        {
            return Poll::End(end);
        }
        Poll::Pending
    }

    fn end(&mut self, w: &mut World) -> Option<Sig> {
        if let Some(end) = &self.ended {
            return Some(end.clone());
        }
        if self.closed {
            return Some(Sig::Complete);
        }
        match self.up.end(w)? {
            Sig::Complete => {
                (self.held.is_empty() && self.ready.is_none()).then_some(Sig::Complete)
            }
            e => Some(e),
        }
    }

    fn pump(&mut self, w: &mut World) {
        self.up.pump(w);
        self.fill(w);
    }

    fn cancel(&mut self, w: &mut World) {
        self.closed = true;
        self.up.cancel(w);
    }
}

#[path = "timed_more_tests.rs"]
mod tests;
