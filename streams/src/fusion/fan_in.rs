//! Fan-in junctions over fused sources: when every input of a merge, zip,
//! concat or interleave is a batch iterator ([`Chunks`]), the junction is
//! one too (the planner's fan-in rule, `crate::plan::fan_in`). Each form
//! keeps its junction's documented behaviour:
//!
//! - **merge** serves its inputs in turn, one element each (as
//!   `futures::stream::select` does), skipping an input with nothing
//!   ready; it ends when all inputs have (or, eager, when the first has);
//!   a merge preferring input 0 takes from it whenever it has elements.
//! - **zip** pairs one element of each input and ends with the shorter
//!   input; it asks both inputs for as many elements as both are sure to
//!   make ([`Chunks::at_least`]) and one at a time beyond that, so it
//!   makes no more elements than the stage would.
//! - **concat** drains its inputs one after another.
//! - **interleave** takes `segment_size` elements of each input in turn;
//!   once an input ends, the others go on (or all end, eager).
//!
//! A failure of any input fails the junction after the elements made
//! before it; a pending input is skipped when another can go on.

use std::sync::Arc;
use std::task::Context;

use super::iter::{BoxChunks, Chunks, Fill, IterFactory};
use super::nodes::{FusedIter, IterNode};

/// A junction that can run fused iterator inputs as one fused iterator.
pub(crate) trait FanInNode: Send + Sync {
    /// The junction over `inputs` (one per inlet, in port order).
    fn fuse(&self, inputs: &[Arc<dyn IterNode>]) -> Arc<dyn IterNode>;
}

/// What a junction stage offers the planner's fan-in rule (see
/// [`GraphStage::fused_fan_in`](crate::stage::GraphStage::fused_fan_in)).
#[doc(hidden)]
pub struct FusedFanIn(pub(crate) Arc<dyn FanInNode>);

impl FusedFanIn {
    pub(crate) fn new(node: impl FanInNode + 'static) -> Self {
        Self(Arc::new(node))
    }
}

impl std::fmt::Debug for FusedFanIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FusedFanIn")
    }
}

/// The typed factories of `inputs`, all of elements `T`.
fn factories<T: Send + 'static>(inputs: &[Arc<dyn IterNode>]) -> Vec<IterFactory<T>> {
    inputs.iter().map(|i| FusedIter::<T>::of(&**i)).collect()
}

/// A uniform junction of `T`s: which one, and its settings.
#[derive(Clone, Copy)]
pub(crate) enum Uniform {
    Merge { eager: bool, preferred: bool },
    Concat,
    Interleave { segment: usize, eager: bool },
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
    fn fuse(&self, inputs: &[Arc<dyn IterNode>]) -> Arc<dyn IterNode> {
        let inputs = factories::<T>(inputs);
        let kind = self.kind;
        let factory: IterFactory<T> = Arc::new(move || {
            let sources: Vec<BoxChunks<T>> = inputs.iter().map(|f| f()).collect();
            match kind {
                Uniform::Merge { eager, preferred } => Box::new(MergeChunks::new(sources, eager, preferred)),
                Uniform::Concat => Box::new(ConcatChunks { sources, at: 0 }),
                Uniform::Interleave { segment, eager } => Box::new(InterleaveChunks {
                    done: vec![false; sources.len()],
                    sources,
                    segment,
                    eager,
                    at: 0,
                    taken: 0,
                }),
            }
        });
        Arc::new(FusedIter(factory))
    }
}

/// Rounds of asking its inputs one fill may take when they make fewer
/// elements than asked (a filter inside): bounded, so that inputs that
/// reject everything still let the fill return (and the island yield).
const ROUNDS: usize = 8;

/// Inputs served in turn, one element each per turn.
struct MergeChunks<T> {
    sources: Vec<BoxChunks<T>>,
    /// Each input's elements of this round, reversed (popped in order).
    scratch: Vec<Vec<T>>,
    done: Vec<bool>,
    /// Inputs with nothing ready in this fill.
    pending: Vec<bool>,
    eager: bool,
    preferred: bool,
    /// The input whose turn comes next.
    turn: usize,
}

impl<T: Send> MergeChunks<T> {
    fn new(sources: Vec<BoxChunks<T>>, eager: bool, preferred: bool) -> Self {
        let n = sources.len();
        Self {
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

impl<T: Send> Chunks<T> for MergeChunks<T> {
    fn fill(&mut self, cx: &mut Context<'_>, out: &mut Vec<T>, max: usize) -> Fill {
        let n = self.sources.len();
        let start = out.len();
        self.pending.iter_mut().for_each(|p| *p = false);
        for _ in 0..ROUNDS {
            let want = max - (out.len() - start);
            if want == 0 {
                return Fill::More;
            }
            let ready = (0..n).filter(|&i| !self.done[i] && !self.pending[i]).count();
            if ready == 0 {
                return if self.done.iter().all(|d| *d) {
                    Fill::Exhausted
                } else {
                    Fill::Pending
                };
            }
            let end = self.round(cx, want, ready);
            self.interleave(out);
            if let Some(end) = end {
                return end;
            }
        }
        Fill::More
    }

    fn is_exhausted(&self) -> bool {
        let ended = |i: usize| self.done[i] || self.sources[i].is_exhausted();
        if self.eager {
            (0..self.sources.len()).any(ended)
        } else {
            (0..self.sources.len()).all(ended)
        }
    }

    fn at_least(&self) -> usize {
        if self.eager {
            return 0;
        }
        self.sources.iter().map(|s| s.at_least()).fold(0, usize::saturating_add)
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
        for _ in 0..ROUNDS {
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
        self.sources[self.at.min(self.sources.len())..].iter().all(|s| s.is_exhausted())
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
        for _ in 0..ROUNDS {
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
        let ended = |i: usize| self.done[i] || self.sources[i].is_exhausted();
        if self.eager {
            (0..self.sources.len()).any(ended)
        } else {
            (0..self.sources.len()).all(ended)
        }
    }
}

/// The [`FanInNode`] of a zip of `A`s and `B`s into `O`s by `F`.
pub(crate) struct ZipFanIn<A, B, O, F> {
    pub(crate) f: F,
    pub(crate) _t: std::marker::PhantomData<fn(A, B) -> O>,
}

impl<A, B, O, F> FanInNode for ZipFanIn<A, B, O, F>
where
    A: Send + 'static,
    B: Send + 'static,
    O: Send + 'static,
    F: FnMut(A, B) -> O + Clone + Send + Sync + 'static,
{
    fn fuse(&self, inputs: &[Arc<dyn IterNode>]) -> Arc<dyn IterNode> {
        let (a, b) = (FusedIter::<A>::of(&*inputs[0]), FusedIter::<B>::of(&*inputs[1]));
        let f = self.f.clone();
        let factory: IterFactory<O> = Arc::new(move || {
            Box::new(ZipChunks {
                a: a(),
                b: b(),
                sa: Vec::new(),
                sb: Vec::new(),
                a_done: false,
                ended: false,
                f: f.clone(),
            })
        });
        Arc::new(FusedIter(factory))
    }
}

/// One element of each input, combined.
struct ZipChunks<A, B, F> {
    a: BoxChunks<A>,
    b: BoxChunks<B>,
    /// Elements made and not yet paired (one side waits for the other).
    sa: Vec<A>,
    sb: Vec<B>,
    /// Input `a` ended: pair what it made, then end.
    a_done: bool,
    /// The zip ended.
    ended: bool,
    f: F,
}

impl<A: Send, B: Send, O, F: FnMut(A, B) -> O + Send> ZipChunks<A, B, F> {
    /// Pair at most `limit` elements of each side into `out`.
    fn pair(&mut self, out: &mut Vec<O>, limit: usize) {
        let n = self.sa.len().min(self.sb.len()).min(limit);
        out.extend(self.sa.drain(..n).zip(self.sb.drain(..n)).map(|(a, b)| (self.f)(a, b)));
    }

    fn end(&mut self) -> Fill {
        self.ended = true;
        self.sa.clear();
        self.sb.clear();
        Fill::Exhausted
    }
}

impl<A: Send, B: Send, O, F: FnMut(A, B) -> O + Send> Chunks<O> for ZipChunks<A, B, F> {
    fn fill(&mut self, cx: &mut Context<'_>, out: &mut Vec<O>, max: usize) -> Fill {
        let start = out.len();
        for _ in 0..ROUNDS {
            let want = max - (out.len() - start);
            if self.ended || (self.a_done && self.sa.is_empty()) {
                return self.end();
            }
            if want == 0 {
                return Fill::More;
            }
            // As many as both inputs are sure to make, else one at a time.
            let sure = self.a.at_least().min(self.b.at_least());
            let k = want.min(sure.max(1));
            // A pending `a` still lets what it made find partners.
            let mut waiting = None;
            if !self.a_done && self.sa.len() < k {
                let more = k - self.sa.len();
                match self.a.fill(cx, &mut self.sa, more) {
                    Fill::More => {}
                    Fill::Exhausted => self.a_done = true,
                    Fill::Pending => waiting = Some(Fill::Pending),
                    failed @ Fill::Failed(_) => return failed,
                }
            }
            // Input `b` is asked only for partners of elements of `a`.
            let partners = self.sa.len().min(want);
            if self.sb.len() < partners {
                let more = partners - self.sb.len();
                let fill = self.b.fill(cx, &mut self.sb, more);
                self.pair(out, want);
                match fill {
                    Fill::More => {}
                    Fill::Exhausted => return self.end(),
                    other => return other,
                }
            } else {
                self.pair(out, want);
            }
            if let Some(waiting) = waiting {
                return waiting;
            }
        }
        Fill::More
    }

    fn is_exhausted(&self) -> bool {
        self.ended
            || (self.sa.is_empty() && (self.a_done || self.a.is_exhausted()))
            || (self.sb.is_empty() && self.b.is_exhausted())
    }

    fn at_least(&self) -> usize {
        (self.sa.len() + self.a.at_least()).min(self.sb.len() + self.b.at_least())
    }
}
