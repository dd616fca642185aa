//! The fused forms of the uniform junctions: merge, concat, interleave
//! and or-else.

use std::sync::Arc;
use std::task::Context;

use super::super::iter::{BoxChunks, Chunks, Fill, IterFactory};
use super::super::nodes::{FusedIter, IterNode};
use super::ahead::Ahead;
use super::node::{EndsWithLast, FanInNode, FusedFanIn, factories};
use super::or_else::OrElseChunks;
use crate::tuning::FAN_IN_FILL_ROUNDS;

/// A uniform junction of `T`s: which one, and its settings.
#[derive(Clone, Copy)]
pub(crate) enum Uniform {
    Merge {
        eager: bool,
        preferred: bool,
    },
    Concat,
    /// The first input, or the second if the first ends empty.
    OrElse,
    Interleave {
        segment: usize,
        eager: bool,
    },
}

/// The [`FanInNode`] of a uniform junction of `T`s.
pub(crate) struct UniformFanIn<T> {
    pub(crate) kind: Uniform,
    pub(crate) _t: std::marker::PhantomData<fn(T)>,
}

impl<T: Send + 'static> UniformFanIn<T> {
    pub(crate) fn hint(kind: Uniform) -> FusedFanIn {
        FusedFanIn::new(Self {
            kind,
            _t: std::marker::PhantomData,
        })
    }
}

impl<T: Send + 'static> FanInNode for UniformFanIn<T> {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn splices(&self, inner: &dyn FanInNode) -> bool {
        let Some(inner) = inner.as_any().downcast_ref::<Self>() else {
            return false;
        };
        // Concat is associative; merges that serve their inputs alike
        // (no preferred input) and end alike are too, up to the order of
        // turns, which a merge leaves open.
        match (self.kind, inner.kind) {
            (Uniform::Concat, Uniform::Concat) => true,
            (
                Uniform::Merge {
                    eager,
                    preferred: false,
                },
                Uniform::Merge {
                    eager: inner_eager,
                    preferred: false,
                },
            ) => eager == inner_eager,
            _ => false,
        }
    }

    fn fuse(&self, inputs: &[Arc<dyn IterNode>]) -> Arc<dyn IterNode> {
        let inputs = factories::<T>(inputs);
        let kind = self.kind;
        let factory: IterFactory<T> = Arc::new(move || {
            let sources: Vec<BoxChunks<T>> = inputs.iter().map(|f| f()).collect();
            match kind {
                Uniform::Merge { eager, preferred } => {
                    let sources = sources.into_iter().map(Ahead::new).collect();
                    Box::new(EndsWithLast(MergeChunks::new(sources, eager, preferred)))
                }
                Uniform::Concat => Box::new(EndsWithLast(ConcatChunks { sources, at: 0 })),
                Uniform::OrElse => Box::new(EndsWithLast(OrElseChunks::new(sources))),
                Uniform::Interleave { segment, eager } => {
                    Box::new(EndsWithLast(InterleaveChunks {
                        done: vec![false; sources.len()],
                        sources,
                        segment,
                        eager,
                        at: 0,
                        taken: 0,
                    }))
                }
            }
        });
        Arc::new(FusedIter(factory))
    }
}

/// Inputs served in turn, one element each per turn.
struct MergeChunks<T> {
    sources: Vec<Ahead<T>>,
    /// Each input's elements of this round, reversed (popped in order).
    scratch: Vec<Vec<T>>,
    done: Vec<bool>,
    /// Inputs with nothing ready in this fill.
    pending: Vec<bool>,
    eager: bool,
    preferred: bool,
    /// The input whose turn comes next.
    turn: usize,
    /// Each input has been asked for its first element (as the stage
    /// asks every input as it starts).
    primed: bool,
}

impl<T: Send> MergeChunks<T> {
    fn new(sources: Vec<Ahead<T>>, eager: bool, preferred: bool) -> Self {
        let n = sources.len();
        Self {
            primed: false,
            scratch: (0..n).map(|_| Vec::new()).collect(),
            done: vec![false; n],
            pending: vec![false; n],
            sources,
            eager,
            preferred,
            turn: 0,
        }
    }

    /// Move what the inputs made into `out`, one of each in turn.
    fn interleave(&mut self, out: &mut Vec<T>) {
        let n = self.sources.len();
        for s in &mut self.scratch {
            s.reverse();
        }
        let mut last = None;
        let rounds = self.scratch.iter().map(Vec::len).max().unwrap_or(0);
        out.reserve(self.scratch.iter().map(Vec::len).sum());
        for _ in 0..rounds {
            for i in (self.turn..n).chain(0..self.turn) {
                if let Some(x) = self.scratch[i].pop() {
                    out.push(x);
                    last = Some(i);
                }
            }
        }
        // The next turn goes to the input after the last one served.
        if let Some(last) = last.filter(|_| !self.preferred) {
            self.turn = (last + 1) % n;
        }
    }

    /// One round: each input ready gets its share of `want`, in turn.
    fn round(&mut self, cx: &mut Context<'_>, want: usize, ready: usize) -> Option<Fill> {
        let n = self.sources.len();
        let mut r = 0;
        for k in 0..n {
            let i = (self.turn + k) % n;
            if self.done[i] || self.pending[i] {
                continue;
            }
            // A preferred input 0 is asked for everything; otherwise the
            // inputs share what is wanted, earlier turns taking the rest.
            let share = if self.preferred {
                if r == 0 { want } else { 0 }
            } else {
                want / ready + usize::from(r < want % ready)
            };
            r += 1;
            if share == 0 {
                continue;
            }
            match self.sources[i].fill(cx, &mut self.scratch[i], share) {
                Fill::More => {}
                Fill::Exhausted => {
                    self.done[i] = true;
                    if self.eager {
                        // The rest is what the other inputs hold.
                        return Some(Fill::Exhausted);
                    }
                }
                Fill::Pending => self.pending[i] = true,
                Fill::Failed(error) => return Some(Fill::Failed(error)),
            }
        }
        None
    }
}

impl<T: Send> MergeChunks<T> {
    /// An eager merge whose first input has ended: it asks no input
    /// again.
    fn ended_eagerly(&self) -> bool {
        self.eager
            && (0..self.sources.len()).any(|i| self.done[i] || self.sources[i].source_ended())
    }

    /// After an eager end, what the inputs hold, in turn, up to `max`
    /// (the stage emits the elements it holds before completing).
    fn drain_held(&mut self, out: &mut Vec<T>, max: usize) -> Fill {
        let n = self.sources.len();
        let mut left = max;
        for i in (self.turn..n).chain(0..self.turn) {
            if left == 0 {
                break;
            }
            if let Some(x) = self.sources[i].take_held() {
                out.push(x);
                left -= 1;
            }
        }
        if self.sources.iter().any(Ahead::holds) {
            Fill::More
        } else {
            Fill::Exhausted
        }
    }
}

impl<T: Send> Chunks<T> for MergeChunks<T> {
    fn fill(&mut self, cx: &mut Context<'_>, out: &mut Vec<T>, max: usize) -> Fill {
        let n = self.sources.len();
        let start = out.len();
        if let Some(failed) = self.prime(cx) {
            return failed;
        }
        if self.ended_eagerly() {
            return self.drain_held(out, max);
        }
        self.pending.iter_mut().for_each(|p| *p = false);
        for _ in 0..FAN_IN_FILL_ROUNDS {
            let want = max - (out.len() - start);
            if want == 0 {
                return Fill::More;
            }
            let ready = (0..n)
                .filter(|&i| !self.done[i] && !self.pending[i])
                .count();
            if ready == 0 {
                return if self.done.iter().all(|d| *d) {
                    Fill::Exhausted
                } else {
                    Fill::Pending
                };
            }
            let end = self.round(cx, want, ready);
            self.interleave(out);
            match end {
                Some(Fill::Exhausted) => {
                    let want = max - (out.len() - start);
                    return if want == 0 {
                        Fill::More
                    } else {
                        self.drain_held(out, want)
                    };
                }
                Some(end) => return end,
                None => {}
            }
        }
        Fill::More
    }

    fn prime(&mut self, cx: &mut Context<'_>) -> Option<Fill> {
        if std::mem::replace(&mut self.primed, true) {
            return None;
        }
        self.sources.iter_mut().find_map(|source| source.prime(cx))
    }

    fn is_exhausted(&self) -> bool {
        if self.eager {
            return self.ended_eagerly() && !self.sources.iter().any(Ahead::holds);
        }
        inputs_ended(&self.done, |i| self.sources[i].is_exhausted(), false)
    }

    fn at_least(&self) -> usize {
        if self.eager {
            return 0;
        }
        self.sources
            .iter()
            .map(|s| s.at_least())
            .fold(0, usize::saturating_add)
    }
}

/// Inputs one after another.
struct ConcatChunks<T> {
    sources: Vec<BoxChunks<T>>,
    at: usize,
}

impl<T: Send> Chunks<T> for ConcatChunks<T> {
    fn fill(&mut self, cx: &mut Context<'_>, out: &mut Vec<T>, max: usize) -> Fill {
        let start = out.len();
        for _ in 0..FAN_IN_FILL_ROUNDS {
            let Some(source) = self.sources.get_mut(self.at) else {
                return Fill::Exhausted;
            };
            let want = max - (out.len() - start);
            if want == 0 {
                return Fill::More;
            }
            match source.fill(cx, out, want) {
                Fill::Exhausted => self.at += 1,
                Fill::More => {}
                other => return other,
            }
        }
        if self.at == self.sources.len() {
            Fill::Exhausted
        } else {
            Fill::More
        }
    }

    fn is_exhausted(&self) -> bool {
        self.sources[self.at.min(self.sources.len())..]
            .iter()
            .all(|s| s.is_exhausted())
    }

    fn at_least(&self) -> usize {
        self.sources[self.at.min(self.sources.len())..]
            .iter()
            .map(|s| s.at_least())
            .fold(0, usize::saturating_add)
    }
}

/// `segment` elements of each input in turn.
struct InterleaveChunks<T> {
    sources: Vec<BoxChunks<T>>,
    done: Vec<bool>,
    segment: usize,
    eager: bool,
    at: usize,
    /// Elements of the current segment taken so far.
    taken: usize,
}

impl<T: Send> InterleaveChunks<T> {
    /// The turn passes to the next input still running; `false` if none is.
    fn next_turn(&mut self) -> bool {
        let n = self.sources.len();
        self.taken = 0;
        for step in 1..=n {
            let candidate = (self.at + step) % n;
            if !self.done[candidate] {
                self.at = candidate;
                return true;
            }
        }
        false
    }
}

impl<T: Send> Chunks<T> for InterleaveChunks<T> {
    fn fill(&mut self, cx: &mut Context<'_>, out: &mut Vec<T>, max: usize) -> Fill {
        let start = out.len();
        if self.sources.is_empty() {
            return Fill::Exhausted;
        }
        for _ in 0..FAN_IN_FILL_ROUNDS {
            let want = (max - (out.len() - start)).min(self.segment - self.taken);
            if want == 0 {
                return Fill::More;
            }
            let before = out.len();
            let fill = self.sources[self.at].fill(cx, out, want);
            self.taken += out.len() - before;
            match fill {
                Fill::Exhausted => {
                    self.done[self.at] = true;
                    if self.eager || !self.next_turn() {
                        return Fill::Exhausted;
                    }
                }
                Fill::More => {
                    if self.taken == self.segment && !self.next_turn() {
                        return Fill::Exhausted;
                    }
                }
                other => return other,
            }
        }
        Fill::More
    }

    fn is_exhausted(&self) -> bool {
        inputs_ended(&self.done, |i| self.sources[i].is_exhausted(), self.eager)
    }
}

/// Whether a merge or interleave of `done.len()` inputs has ended: one
/// input ended (`eager`) or all of them did; `exhausted(i)` says whether
/// input `i` knows it has nothing left.
fn inputs_ended(done: &[bool], exhausted: impl Fn(usize) -> bool, eager: bool) -> bool {
    let ended = |i: usize| done[i] || exhausted(i);
    if eager {
        (0..done.len()).any(ended)
    } else {
        (0..done.len()).all(ended)
    }
}
