//! [`Ahead`]: an input of a fused merge that keeps its next element made.
//!
//! The merge stage asks each input for an element as it starts and again
//! as soon as that input's element has gone out, so it learns that an
//! input ended (a filter rejected the rest of its source) or failed
//! without waiting for downstream to ask. A fused merge that made
//! elements only on demand saw it on the next request: a subscriber that
//! asked for exactly the elements there were got the completion one
//! request later than unfused. Each input of a fused merge is therefore
//! an `Ahead`: it makes its next element when the merge starts
//! ([`Chunks::prime`]) and after each fill it serves, as the stage's pull
//! would.

use std::task::Context;

use super::super::iter::{BoxChunks, Chunks, Fill};
use crate::tuning::FAN_IN_FILL_ROUNDS;

/// A source with its next element made ahead (see the module docs).
pub(super) struct Ahead<T> {
    source: BoxChunks<T>,
    /// The element made ahead, if any.
    next: Option<T>,
    /// The source has ended (after `next`, if one is held).
    ended: bool,
    /// For sources that make one element only through `fill`.
    spare: Vec<T>,
}

impl<T> Ahead<T> {
    pub(super) fn new(source: BoxChunks<T>) -> Self {
        Self {
            source,
            next: None,
            ended: false,
            spare: Vec::new(),
        }
    }
}

impl<T: Send> Ahead<T> {
    /// Whether the source has ended (an element made ahead may be held).
    pub(super) fn source_ended(&self) -> bool {
        self.ended || self.source.is_exhausted()
    }

    /// The element made ahead, if any, without making another (what an
    /// eager merge that has ended still emits, as its stage does).
    pub(super) fn take_held(&mut self) -> Option<T> {
        self.next.take()
    }

    /// Whether an element made ahead is held.
    pub(super) fn holds(&self) -> bool {
        self.next.is_some()
    }

    /// Make the next element if none is held (as the stage's pull of this
    /// input does); a failure is reported (at once, as the stage fails on
    /// an input's failure). Operators that drop elements are asked again,
    /// a bounded number of rounds.
    fn top_up(&mut self, cx: &mut Context<'_>) -> Option<Fill> {
        for _ in 0..FAN_IN_FILL_ROUNDS {
            if self.next.is_some() || self.ended {
                return None;
            }
            let (element, fill) = self.source.next_one(cx, &mut self.spare);
            self.next = element;
            match fill {
                Fill::More => {}
                Fill::Exhausted => self.ended = true,
                // The source's waker runs the merge's driver again.
                Fill::Pending => return None,
                failed @ Fill::Failed(_) => return Some(failed),
            }
        }
        None
    }
}

impl<T: Send> Chunks<T> for Ahead<T> {
    fn fill(&mut self, cx: &mut Context<'_>, out: &mut Vec<T>, max: usize) -> Fill {
        let start = out.len();
        out.extend(self.next.take());
        let want = max - (out.len() - start);
        if want > 0 && !self.ended {
            match self.source.fill(cx, out, want) {
                Fill::More => {}
                Fill::Exhausted => self.ended = true,
                other => return other,
            }
        }
        if let Some(failed) = self.top_up(cx) {
            return failed;
        }
        if self.is_exhausted() {
            Fill::Exhausted
        } else {
            Fill::More
        }
    }

    fn prime(&mut self, cx: &mut Context<'_>) -> Option<Fill> {
        self.top_up(cx)
    }

    fn is_exhausted(&self) -> bool {
        self.next.is_none() && (self.ended || self.source.is_exhausted())
    }

    fn at_least(&self) -> usize {
        let rest = if self.ended {
            0
        } else {
            self.source.at_least()
        };
        usize::from(self.next.is_some()).saturating_add(rest)
    }
}
