//! The model's sources: a scripted probe and an iterator (see `model.rs`).

use super::model::{BoxNode, Node, Poll, World, error};
use super::script::{Sig, Src};

struct ProbeSrc(usize);

impl Node for ProbeSrc {
    fn pull(&mut self, w: &mut World) -> Poll {
        let p = &mut w.probes[self.0];
        if p.failed {
            return Poll::End(error());
        }
        if let Some(x) = p.queue.pop_front() {
            p.waiting = false;
            return Poll::Next(x);
        }
        if p.completed {
            return Poll::End(Sig::Complete);
        }
        if !p.waiting {
            p.waiting = true;
            p.requests += 1;
        }
        Poll::Pending
    }
    fn end(&mut self, w: &mut World) -> Option<Sig> {
        let p = &w.probes[self.0];
        if p.failed {
            Some(error())
        } else if p.completed && p.queue.is_empty() {
            Some(Sig::Complete)
        } else {
            None
        }
    }
    fn pump(&mut self, _: &mut World) {}
    fn cancel(&mut self, w: &mut World) {
        let p = &mut w.probes[self.0];
        if !p.terminated() {
            p.cancelled = true;
            p.maybe_cancelled = p.completed;
        }
    }
}

struct IterSrc {
    items: Vec<u64>,
    at: usize,
    failed: bool,
}

impl Node for IterSrc {
    fn pull(&mut self, w: &mut World) -> Poll {
        if let Some(x) = self.items.get(self.at) {
            self.at += 1;
            return Poll::Next(*x);
        }
        self.end(w).map_or(Poll::Pending, Poll::End)
    }
    fn end(&mut self, w: &mut World) -> Option<Sig> {
        if !w.started && self.items.is_empty() {
            // An empty (or failed) source ends after the first pulls went
            // out; one with elements ends with its last.
            None
        } else if self.failed {
            Some(error())
        } else if self.at == self.items.len() {
            Some(Sig::Complete)
        } else {
            None
        }
    }
    fn pump(&mut self, _: &mut World) {}
    fn cancel(&mut self, _: &mut World) {}
}

pub(crate) fn source(src: &Src, probe: &mut usize) -> BoxNode {
    let iter = |items: Vec<u64>, failed| {
        Box::new(IterSrc {
            items,
            at: 0,
            failed,
        }) as BoxNode
    };
    match src {
        Src::Iter(items) => iter(items.clone(), false),
        Src::Range(lo, hi) => iter((*lo..*hi).collect(), false),
        Src::Failed => iter(Vec::new(), true),
        Src::Probe => {
            *probe += 1;
            Box::new(ProbeSrc(*probe - 1))
        }
    }
}
