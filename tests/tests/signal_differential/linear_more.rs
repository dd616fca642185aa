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
//! - `map_async(p)` / `map_async_unordered(p)` with ready futures pull
//!   nothing before the first downstream pull, then hold up to `p`
//!   results, pulling without demand while there is room (as a
//!   `buffer(p)` that starts at the first pull; with ready futures the
//!   unordered form emits in input order too);
//! - `recover_with_retries(a)` switches on a failure (if `a > 0`) to a
//!   fallback of two elements, emitted on demand, then completes;
//! - `limit_weighted(max, cost)` fails (cancelling upstream) on the
//!   element that takes the total cost past `max`;
//! - `buffer(n, drop strategy)` pulls at materialization and after every
//!   element, whatever the demand; an element arriving while downstream
//!   waits on an empty buffer goes straight on, the others go into the
//!   buffer, where the strategy makes room (or `Fail` fails the stream,
//!   cancelling upstream); a failure upstream goes at once, a completion
//!   after the buffered elements.

use std::collections::VecDeque;

use weir_streams::prelude::*;

use super::model::{BoxNode, Node, Poll, SEP, World, map};
use super::script::{RECOVERED, Sig};

/// `intersperse_with`'s start and end elements.
pub(crate) const START: u64 = 1001;
pub(crate) const END: u64 = 1002;

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
}

impl More {
    /// A `buffer` that drops (or fails) when full.
    pub(crate) fn drops(self) -> bool {
        matches!(self, More::Buffer(..))
    }

    /// A `recover_with_retries` that can switch to its fallback.
    pub(crate) fn runs_inner_stream(self) -> bool {
        matches!(self, More::RecoverWithRetries(1..))
    }
}

/// Cases the model does not state: a `map_async` after a stage that
/// fails on its own as elements flow (`limit`, `limit_weighted`, a
/// `buffer` with `Fail`). A result that is ready while downstream waits
/// goes straight on (as in Pekko), so how many come out before that
/// failure, which drops the held ones, depends on the demand downstream
/// as each element arrived; the model fills first and drops them all.
pub(crate) fn not_modelled(case: &super::script::Case) -> bool {
    use super::script::Op;
    let fails_midway = |o: &Op| {
        matches!(
            o,
            Op::Limit(_) | Op::More(More::LimitWeighted(_) | More::Buffer(_, Drop::Fail))
        )
    };
    let map_async = |o: &Op| matches!(o, Op::More(More::MapAsync(_) | More::MapAsyncUnordered(_)));
    case.ops
        .iter()
        .position(fails_midway)
        .is_some_and(|at| case.ops[at..].iter().any(map_async))
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
    }
}

/// The model of `op` over `up`.
pub(crate) fn node(op: More, up: BoxNode) -> BoxNode {
    if let More::Inspect | More::Log = op {
        // Pass-through: no signal of its own.
        return up;
    }
    Box::new(Extra {
        op,
        up,
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
    })
}

struct Extra {
    op: More,
    up: BoxNode,
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
}

impl Extra {
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
            More::Buffer(..) => {
                if let Some(x) = self.direct.take().or_else(|| self.held.pop_front()) {
                    return Poll::Next(x);
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
                More::Buffer(..) => {
                    self.wanted = false;
                    return Poll::Next(x);
                }
                More::Inspect | More::Log | More::RecoverWithRetries(_) => {
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
            _ => !self.held.is_empty(),
        };
        (!holds).then_some(Sig::Complete)
    }

    fn pump(&mut self, w: &mut World) {
        self.up.pump(w);
        let room = match self.op {
            More::MapAsync(p) | More::MapAsyncUnordered(p) if self.started => p,
            // At materialization every stage's first pull goes out before
            // an element moves: the stages after this one pull first (an
            // eager one takes elements straight through), then this one.
            More::Buffer(..) if w.started => usize::MAX,
            _ => return,
        };
        while !self.closed && self.held.len() < room && self.up.end(w).is_none() {
            match self.up.pull(w) {
                Poll::Next(x) => match self.op {
                    More::Buffer(..) => self.offer(x, w),
                    _ => self.held.push_back(map(2)(x)),
                },
                _ => break,
            }
        }
    }

    fn cancel(&mut self, w: &mut World) {
        self.closed = true;
        self.up.cancel(w);
    }
}
