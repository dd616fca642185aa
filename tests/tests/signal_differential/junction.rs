//! The model of the junctions of two inputs or more (see `model.rs` for
//! the rules; `wide.rs` for the forms of three inputs and the eager
//! merges).

use std::collections::VecDeque;

use super::model::{BoxNode, Node, Poll, World, zipped};
use super::script::{Join, Sig};

/// A junction of two inputs or more.
pub(crate) struct Junction {
    pub(crate) join: Join,
    pub(crate) ins: Vec<BoxNode>,
    /// The element each input holds (eager junctions).
    pub(crate) held: Vec<Option<u64>>,
    /// Inputs that completed.
    pub(crate) done: Vec<bool>,
    /// interleave: the input whose turn it is, and how many of its
    /// segment it has given.
    pub(crate) turn: usize,
    pub(crate) count: usize,
    /// merge: the inputs holding an element, in the order they got it.
    pub(crate) ready: VecDeque<usize>,
    /// merge_sorted: it has been pulled, or an input has ended (from then
    /// on it pulls an input as soon as it lacks an element).
    pub(crate) started: bool,
    /// or_else: the primary has emitted.
    pub(crate) emitted: bool,
    /// How it ended, once it has.
    pub(crate) closed: Option<Sig>,
    /// interleave: the first input to complete completes it.
    pub(crate) eager_close: bool,
    /// merge (`eager_complete`): the first input to complete stops it;
    /// what it holds goes out first. Set once an input has completed.
    pub(crate) eager_complete: bool,
    pub(crate) draining: bool,
    /// `MergePreferred`: input 0, when it holds an element, goes first
    /// (the others in the order they got theirs).
    pub(crate) preferred: bool,
}

impl Junction {
    /// `ins` joined by `join` (in the model, the variants of a junction
    /// that behave alike are one).
    pub(crate) fn new(join: Join, mut ins: Vec<BoxNode>) -> Self {
        let n = ins.len();
        let model = join.modelled_as();
        if join == Join::ConcatLazy {
            let b = ins.pop().expect("two inputs");
            ins.push(Box::new(Lazy {
                up: b,
                pulled: false,
            }));
        }
        if join == Join::Prepend {
            ins.reverse();
        }
        Junction {
            join: model,
            ins,
            held: vec![None; n],
            done: vec![false; n],
            turn: 0,
            count: 0,
            ready: VecDeque::new(),
            started: false,
            emitted: false,
            closed: None,
            eager_close: join == Join::InterleaveEager,
            eager_complete: matches!(join, Join::Wide(w) if w.eager_complete()),
            draining: false,
            preferred: matches!(
                join,
                Join::MergePreferred | Join::Wide(super::wide::Wide::MergePreferredEager)
            ),
        }
    }
}

impl Junction {
    /// The input after `i` (round the inputs) that has not completed; `i`
    /// if there is none.
    fn next_after(&self, i: usize) -> usize {
        let n = self.ins.len();
        (1..n)
            .map(|k| (i + k) % n)
            .find(|k| !self.done[*k])
            .unwrap_or(i)
    }

    fn eager(&self) -> bool {
        self.join == Join::Merge || (self.join == Join::MergeSorted && self.started)
    }

    /// Holds one element per input (pulled ahead or on demand).
    fn holds(&self) -> bool {
        matches!(self.join, Join::Merge | Join::Zip | Join::MergeSorted)
    }

    fn close(&mut self, w: &mut World, end: Sig) -> Poll {
        if self.closed.is_none() {
            self.closed = Some(end.clone());
            for input in &mut self.ins {
                input.cancel(w);
            }
        }
        Poll::End(end)
    }

    fn fill(&mut self, w: &mut World) -> Option<Sig> {
        if self.draining {
            return None;
        }
        for i in 0..self.ins.len() {
            if self.held[i].is_none() && !self.done[i] {
                match self.ins[i].pull(w) {
                    Poll::Next(x) => {
                        self.held[i] = Some(x);
                        self.ready.push_back(i);
                    }
                    Poll::End(Sig::Complete) => self.done[i] = true,
                    Poll::End(e) => return Some(e),
                    Poll::Pending => {}
                }
            }
        }
        None
    }
}

/// An input that was cancelled: ended, whatever its source does after.
struct Cut;

impl Node for Cut {
    fn pull(&mut self, _: &mut World) -> Poll {
        Poll::End(Sig::Complete)
    }
    fn end(&mut self, _: &mut World) -> Option<Sig> {
        Some(Sig::Complete)
    }
    fn pump(&mut self, _: &mut World) {}
    fn cancel(&mut self, _: &mut World) {}
}

/// `concat_lazy`'s second input: started by the first pull (so its end,
/// even an empty source's, shows only then).
struct Lazy {
    up: BoxNode,
    pulled: bool,
}

impl Node for Lazy {
    fn pull(&mut self, w: &mut World) -> Poll {
        self.pulled = true;
        self.up.pull(w)
    }
    fn end(&mut self, w: &mut World) -> Option<Sig> {
        self.pulled.then(|| self.up.end(w)).flatten()
    }
    fn pump(&mut self, w: &mut World) {
        if self.pulled {
            self.up.pump(w);
        }
    }
    fn cancel(&mut self, w: &mut World) {
        self.up.cancel(w);
    }
}

/// `or_else`: the primary's elements (the secondary cancelled at the
/// first), or, if it ends empty, the secondary's; a failure of the
/// secondary before it is needed shows only then.
impl Junction {
    fn or_else_pull(&mut self, w: &mut World) -> Poll {
        loop {
            let i = self.turn;
            match self.ins[i].pull(w) {
                Poll::Next(x) => {
                    if i == 0 && !self.emitted {
                        self.ins[1].cancel(w);
                    }
                    self.emitted = true;
                    return Poll::Next(x);
                }
                Poll::End(Sig::Complete) if i == 0 && !self.emitted => self.turn = 1,
                Poll::End(e) => return self.close(w, e),
                Poll::Pending => return Poll::Pending,
            }
        }
    }

    fn or_else_end(&mut self, w: &mut World) -> Option<Sig> {
        if self.turn == 0 {
            match self.ins[0].end(w)? {
                Sig::Complete if !self.emitted => self.turn = 1,
                e => {
                    self.close(w, e.clone());
                    return Some(e);
                }
            }
        }
        let e = self.ins[1].end(w)?;
        self.close(w, e.clone());
        Some(e)
    }
}

impl Node for Junction {
    fn pull(&mut self, w: &mut World) -> Poll {
        if let Some(end) = &self.closed {
            return Poll::End(end.clone());
        }
        self.started = true;
        if let Some(e) = self.end(w) {
            return self.close(w, e);
        }
        if self.holds() {
            if let Some(e) = self.fill(w) {
                return self.close(w, e);
            }
            let out = match self.join {
                Join::Merge => {
                    let first = self.ready.iter().position(|&i| i == 0);
                    let at = first.filter(|_| self.preferred).unwrap_or(0);
                    self.ready.remove(at).and_then(|i| self.held[i].take())
                }
                Join::Zip if self.held.iter().all(Option::is_some) => {
                    let row = self.held.iter_mut().map(|h| h.take().expect("held"));
                    Some(row.fold(0, zipped))
                }
                Join::Zip => None,
                _ => match self.held[..] {
                    [Some(a), Some(b)] => {
                        let i = usize::from(b < a);
                        self.held[i].take()
                    }
                    [Some(_), None] if self.done[1] => self.held[0].take(),
                    [None, Some(_)] if self.done[0] => self.held[1].take(),
                    _ => None,
                },
            };
            if let Some(x) = out {
                self.pump(w);
                return Poll::Next(x);
            }
            return match self.end(w) {
                Some(e) => self.close(w, e),
                None => Poll::Pending,
            };
        }
        if self.join == Join::OrElse {
            return self.or_else_pull(w);
        }
        loop {
            let i = match self.join {
                Join::Concat | Join::Prepend => self.done.iter().position(|d| !d).unwrap_or(0),
                _ => self.turn,
            };
            if self.done[i] {
                return Poll::End(Sig::Complete);
            }
            match self.ins[i].pull(w) {
                Poll::Next(x) => {
                    let segment = match self.join {
                        Join::Interleave => 1,
                        Join::Interleave2 => 2,
                        _ => usize::MAX,
                    };
                    self.count += 1;
                    if self.count == segment {
                        self.count = 0;
                        self.turn = self.next_after(i);
                    }
                    return Poll::Next(x);
                }
                Poll::Pending => return Poll::Pending,
                Poll::End(Sig::Complete) => {
                    self.done[i] = true;
                    if self.eager_close {
                        // The other input is cancelled.
                        return self.close(w, Sig::Complete);
                    }
                    if self.done.iter().all(|d| *d) {
                        return Poll::End(Sig::Complete);
                    }
                    self.turn = self.next_after(i);
                    self.count = 0;
                }
                Poll::End(e) => return self.close(w, e),
            }
        }
    }

    fn end(&mut self, w: &mut World) -> Option<Sig> {
        if let Some(end) = &self.closed {
            return Some(end.clone());
        }
        if self.join == Join::OrElse {
            return self.or_else_end(w);
        }
        let mut ends: Vec<Option<Sig>> = self.ins.iter_mut().map(|i| i.end(w)).collect();
        if !self.started && ends.iter().any(Option::is_some) {
            // merge_sorted: an input's end is its first event; it pulls
            // (unless that end is a failure, which it passes on first).
            self.started = true;
            let failed = ends.iter().flatten().any(|e| *e != Sig::Complete);
            if self.eager() && !failed {
                if let Some(e) = self.fill(w) {
                    self.close(w, e.clone());
                    return Some(e);
                }
                ends = self.ins.iter_mut().map(|i| i.end(w)).collect();
            }
        }
        for (i, e) in ends.iter().enumerate() {
            match e {
                // A zip ends when an input ends with nothing held.
                Some(Sig::Complete) if self.join == Join::Zip && self.held[i].is_none() => {
                    self.close(w, Sig::Complete);
                    return Some(Sig::Complete);
                }
                Some(Sig::Complete) | None => {}
                Some(e) => {
                    self.close(w, e.clone());
                    return Some(e.clone());
                }
            }
        }
        if self.eager_complete && ends.iter().any(Option::is_some) && !self.draining {
            // It takes nothing more: the inputs holding nothing are
            // cancelled, the others once what they hold went out.
            // (What they send after that does not reach it.)
            self.draining = true;
            for (input, held) in self.ins.iter_mut().zip(&self.held) {
                if held.is_none() {
                    std::mem::replace(input, Box::new(Cut)).cancel(w);
                }
            }
        }
        let finished = |i: usize| ends[i].is_some() && self.held[i].is_none();
        let mut inputs = 0..self.ins.len();
        let end = match self.join {
            _ if self.draining => self.held.iter().all(Option::is_none),
            // Zip ends when an input has ended with nothing held.
            Join::Zip => inputs.any(finished),
            _ if self.eager_close => inputs.any(finished),
            _ => inputs.all(finished),
        };
        if end {
            self.close(w, Sig::Complete);
            return Some(Sig::Complete);
        }
        None
    }

    fn pump(&mut self, w: &mut World) {
        for input in &mut self.ins {
            input.pump(w);
        }
        if self.eager() && self.closed.is_none() {
            // A failure found here shows in `end`.
            let _ = self.fill(w);
        }
    }

    fn cancel(&mut self, w: &mut World) {
        self.close(w, Sig::Complete);
    }
}
