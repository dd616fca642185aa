//! `batch` / `conflate` before a `map_async`: the order of their pulls
//! (the rule in `linear_more.rs`'s module docs), and the cases around it
//! the model does not state.

use super::super::model::{Poll, World};
use super::super::script::{Case, Op};
use super::{Extra, More};

/// What comes after a `batch` / `conflate`, for the order of its pulls
/// (`linear_more.rs`'s module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AsyncAfter {
    /// No `map_async` after it (or one the model does not state).
    No,
    /// A `map_async` right after it (`inspect` and `log` add no stage).
    Next,
    /// A `map_async` after `map`s.
    Behind,
}

/// What comes after the operator at `at` in `ops` (the modelled ones).
pub(crate) fn async_after(ops: &[Op], at: usize) -> AsyncAfter {
    let mut after = AsyncAfter::Next;
    for op in &ops[at + 1..] {
        match op {
            Op::More(More::Inspect | More::Log) => {}
            Op::Map(_) => after = AsyncAfter::Behind,
            Op::More(More::MapAsync(_) | More::MapAsyncUnordered(_)) => return after,
            _ => return AsyncAfter::No,
        }
    }
    AsyncAfter::No
}

/// `batch` or `conflate` with a `map_async` after it past other stages
/// than `map`, or `conflate` after `map`s (see `linear_more::not_modelled`).
pub(super) fn not_modelled(case: &Case) -> bool {
    case.ops.iter().enumerate().any(|(at, o)| {
        let feeds = || {
            case.ops[at..]
                .iter()
                .any(|o| matches!(o, Op::More(More::MapAsync(_) | More::MapAsyncUnordered(_))))
        };
        match o {
            Op::More(More::Batch(_)) => async_after(&case.ops, at) == AsyncAfter::No && feeds(),
            Op::More(More::Conflate) => async_after(&case.ops, at) != AsyncAfter::Next && feeds(),
            _ => false,
        }
    })
}

impl Extra {
    /// `batch` / `conflate` pushed a sum on a pull, and pulled upstream at
    /// once: before a `map_async`'s next pull comes, what upstream has
    /// ready arrives (`linear_more.rs`'s module docs): one element into
    /// the sum the held element started, right after a `map_async`; up to
    /// full after `map`s.
    pub(super) fn refill(&mut self, w: &mut World) {
        let mut left = match self.after {
            AsyncAfter::No => 0,
            AsyncAfter::Next if self.agg.is_some() => 1,
            AsyncAfter::Next => 0,
            AsyncAfter::Behind => usize::MAX,
        };
        while left > 0 && !self.closed && self.pending.is_none() && self.up.end(w).is_none() {
            let Poll::Next(x) = self.up.pull(w) else {
                break;
            };
            if self.up.end(w).is_some() {
                // It came with upstream's end, which the interpreter
                // delivers first: the element waits behind that end, and
                // so behind the pull already made; it goes on alone.
                match self.agg {
                    Some(_) => self.pending = Some(x),
                    None => (self.agg, self.count) = (Some(x), 1),
                }
                break;
            }
            self.absorb(x);
            left -= 1;
        }
    }
}
