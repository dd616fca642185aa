//! The fused form of every zip junction ([`Zip`](crate::graph::Zip),
//! [`ZipWith`](crate::graph::ZipWith), [`ZipN`](crate::graph::ZipN),
//! [`ZipWithN`](crate::graph::ZipWithN),
//! [`ZipWith3`](crate::graph::ZipWith3) ..
//! [`ZipWith5`](crate::graph::ZipWith5)): one element of each input
//! makes a row, which the junction's function turns into its output.
//!
//! Each input is a [`Lane`]: its fused source and the elements it made
//! that wait for partners. A fill asks the first lane for as many
//! elements as every input is sure to make ([`Chunks::at_least`]), or one
//! beyond that, and each later lane only for partners of the elements of
//! the lanes before it, so the zip makes at most one element per input
//! that it then drops, as the stage (which asks every input once per
//! row). It ends, dropping what waits, as soon as an input ends with no
//! element waiting (the stage completes then too), and fails with the
//! first input that fails, after the rows made before the failure.

use std::sync::Arc;
use std::task::Context;

use super::super::iter::{BoxChunks, Chunks, Fill, IterFactory};
use super::super::nodes::{FusedIter, IterNode};
use super::node::{EndsWithLast, FanInNode, FusedFanIn, factories};
use crate::tuning::FAN_IN_FILL_ROUNDS;

/// One input of a fused zip: its source and the elements it made that
/// wait for partners.
pub(crate) struct Lane<T> {
    source: BoxChunks<T>,
    waiting: Vec<T>,
    /// The source ended.
    done: bool,
}

impl<T> Lane<T> {
    fn new(source: BoxChunks<T>) -> Self {
        Self {
            source,
            waiting: Vec::new(),
            done: false,
        }
    }
}

/// A lane as the zip's loop sees it, whatever its element type.
pub(crate) trait LaneOps: Send {
    /// How many elements wait for partners.
    fn waiting(&self) -> usize;
    /// Whether the source ended.
    fn done(&self) -> bool;
    /// Ask the source for elements until `target` wait (it may make fewer).
    fn fill_to(&mut self, cx: &mut Context<'_>, target: usize) -> Fill;
    /// How many rows this lane is sure to take part in.
    fn at_least(&self) -> usize;
    /// Whether this lane is known to take part in no more rows.
    fn is_exhausted(&self) -> bool;
    /// Drop what waits.
    fn clear(&mut self);
}

impl<T: Send> LaneOps for Lane<T> {
    fn waiting(&self) -> usize {
        self.waiting.len()
    }

    fn done(&self) -> bool {
        self.done
    }

    fn fill_to(&mut self, cx: &mut Context<'_>, target: usize) -> Fill {
        let more = target - self.waiting.len();
        let fill = self.source.fill(cx, &mut self.waiting, more);
        if matches!(fill, Fill::Exhausted) {
            self.done = true;
        }
        fill
    }

    fn at_least(&self) -> usize {
        let more = if self.done { 0 } else { self.source.at_least() };
        self.waiting.len().saturating_add(more)
    }

    fn is_exhausted(&self) -> bool {
        self.waiting.is_empty() && (self.done || self.source.is_exhausted())
    }

    fn clear(&mut self) {
        self.waiting.clear();
    }
}

/// The lanes of a zip, typed by the row one element of each makes.
pub(crate) trait Lanes: Send {
    type Row;
    /// How many lanes.
    fn width(&self) -> usize;
    fn lane(&mut self, i: usize) -> &mut dyn LaneOps;
    fn lane_ref(&self, i: usize) -> &dyn LaneOps;
    /// Take `n` rows (every lane has at least `n` waiting), each through
    /// `f` into `out`.
    fn rows<O>(&mut self, n: usize, out: &mut Vec<O>, f: &mut impl FnMut(Self::Row) -> O);
}

/// The `N` lanes of a zip of one element type, on the heap: a zip of
/// thousands of inputs keeps no per-input array on a thread's stack
/// (only each row, the `[T; N]` its function takes).
pub(crate) struct ArrayLanes<T, const N: usize>(Vec<Lane<T>>);

impl<T: Send, const N: usize> Lanes for ArrayLanes<T, N> {
    type Row = [T; N];

    fn width(&self) -> usize {
        N
    }

    fn lane(&mut self, i: usize) -> &mut dyn LaneOps {
        &mut self.0[i]
    }

    fn lane_ref(&self, i: usize) -> &dyn LaneOps {
        &self.0[i]
    }

    fn rows<O>(&mut self, n: usize, out: &mut Vec<O>, f: &mut impl FnMut([T; N]) -> O) {
        let mut drains: Vec<_> = self
            .0
            .iter_mut()
            .map(|lane| lane.waiting.drain(..n))
            .collect();
        out.reserve(n);
        for _ in 0..n {
            let row = std::array::from_fn(|i| drains[i].next().expect("n waiting"));
            out.push(f(row));
        }
    }
}

/// The row types of fused zips: a tuple of the inputs' element types, or
/// an array.
pub(crate) trait FusedRow: Sized + Send + 'static {
    type Lanes: Lanes<Row = Self> + 'static;
    /// Makes fresh lanes over the fused sources of `inputs` (in port
    /// order), once per run.
    fn lanes(inputs: &[Arc<dyn IterNode>]) -> Arc<dyn Fn() -> Self::Lanes + Send + Sync>;
}

impl<T: Send + 'static, const N: usize> FusedRow for [T; N] {
    type Lanes = ArrayLanes<T, N>;

    fn lanes(inputs: &[Arc<dyn IterNode>]) -> Arc<dyn Fn() -> Self::Lanes + Send + Sync> {
        let sources = factories::<T>(inputs);
        Arc::new(move || ArrayLanes(sources.iter().map(|source| Lane::new(source())).collect()))
    }
}

/// `Lanes` and `FusedRow` for a tuple of element types.
macro_rules! tuple_lanes {
    ($width:literal: $($t:ident = $i:tt),+) => {
        impl<$($t: Send),+> Lanes for ($(Lane<$t>,)+) {
            type Row = ($($t,)+);

            fn width(&self) -> usize {
                $width
            }

            fn lane(&mut self, i: usize) -> &mut dyn LaneOps {
                match i {
                    $($i => &mut self.$i,)+
                    _ => unreachable!("a zip of {} inputs", $width),
                }
            }

            fn lane_ref(&self, i: usize) -> &dyn LaneOps {
                match i {
                    $($i => &self.$i,)+
                    _ => unreachable!("a zip of {} inputs", $width),
                }
            }

            fn rows<O>(&mut self, n: usize, out: &mut Vec<O>, f: &mut impl FnMut(Self::Row) -> O) {
                let mut drains = ($(self.$i.waiting.drain(..n),)+);
                out.reserve(n);
                for _ in 0..n {
                    out.push(f(($(drains.$i.next().expect("n waiting"),)+)));
                }
            }
        }

        impl<$($t: Send + 'static),+> FusedRow for ($($t,)+) {
            type Lanes = ($(Lane<$t>,)+);

            fn lanes(inputs: &[Arc<dyn IterNode>]) -> Arc<dyn Fn() -> Self::Lanes + Send + Sync> {
                let sources = ($(FusedIter::<$t>::of(&*inputs[$i]),)+);
                Arc::new(move || ($(Lane::new((sources.$i)()),)+))
            }
        }
    };
}

tuple_lanes!(2: A = 0, B = 1);
tuple_lanes!(3: A = 0, B = 1, C = 2);
tuple_lanes!(4: A = 0, B = 1, C = 2, D = 3);
tuple_lanes!(5: A = 0, B = 1, C = 2, D = 3, E = 4);

/// The [`FanInNode`] of a zip of rows `R` into `O`s by `f`.
pub(crate) struct ZipFanIn<R, O, F> {
    f: F,
    _t: std::marker::PhantomData<fn(R) -> O>,
}

impl<R, O, F> ZipFanIn<R, O, F>
where
    R: FusedRow,
    O: Send + 'static,
    F: FnMut(R) -> O + Clone + Send + Sync + 'static,
{
    pub(crate) fn hint(f: F) -> FusedFanIn {
        FusedFanIn::new(Self {
            f,
            _t: std::marker::PhantomData,
        })
    }
}

impl<R, O, F> FanInNode for ZipFanIn<R, O, F>
where
    R: FusedRow,
    O: Send + 'static,
    F: FnMut(R) -> O + Clone + Send + Sync + 'static,
{
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn fuse(&self, inputs: &[Arc<dyn IterNode>]) -> Arc<dyn IterNode> {
        let lanes = R::lanes(inputs);
        let f = self.f.clone();
        let factory: IterFactory<O> = Arc::new(move || {
            Box::new(EndsWithLast(ZipChunks {
                lanes: lanes(),
                ended: false,
                f: f.clone(),
            }))
        });
        Arc::new(FusedIter(factory))
    }
}

/// One element of each lane, combined.
struct ZipChunks<L, F> {
    lanes: L,
    /// The zip ended.
    ended: bool,
    f: F,
}

impl<L: Lanes, F> ZipChunks<L, F> {
    fn end(&mut self) -> Fill {
        self.ended = true;
        for i in 0..self.lanes.width() {
            self.lanes.lane(i).clear();
        }
        Fill::Exhausted
    }

    /// Whether an input ended with nothing waiting (so no row can be made).
    fn short(&self) -> bool {
        (0..self.lanes.width()).any(|i| {
            let lane = self.lanes.lane_ref(i);
            lane.done() && lane.waiting() == 0
        })
    }
}

impl<L: Lanes, O, F: FnMut(L::Row) -> O + Send> Chunks<O> for ZipChunks<L, F> {
    fn fill(&mut self, cx: &mut Context<'_>, out: &mut Vec<O>, max: usize) -> Fill {
        let start = out.len();
        let width = self.lanes.width();
        if self.ended || width == 0 || self.short() {
            return self.end();
        }
        for _ in 0..FAN_IN_FILL_ROUNDS {
            let want = max - (out.len() - start);
            if want == 0 {
                return Fill::More;
            }
            // As many as every input is sure to make, else one at a time.
            let sure = (0..width)
                .map(|i| self.lanes.lane_ref(i).at_least())
                .min()
                .unwrap_or(0);
            let mut target = want.min(sure.max(1));
            // A pending or failed lane still lets what the lanes before it
            // made find partners; the first failure wins over a pending.
            let mut stop = None;
            for i in 0..width {
                let lane = self.lanes.lane(i);
                if !lane.done() && lane.waiting() < target {
                    match lane.fill_to(cx, target) {
                        Fill::More | Fill::Exhausted => {}
                        Fill::Pending => {
                            stop.get_or_insert(Fill::Pending);
                        }
                        failed @ Fill::Failed(_) => {
                            if !matches!(stop, Some(Fill::Failed(_))) {
                                stop = Some(failed);
                            }
                        }
                    }
                }
                // Later lanes are asked only for partners of these.
                target = target.min(lane.waiting());
            }
            let rows = (0..width)
                .map(|i| self.lanes.lane_ref(i).waiting())
                .min()
                .unwrap_or(0)
                .min(want);
            self.lanes.rows(rows, out, &mut self.f);
            match stop {
                Some(failed @ Fill::Failed(_)) => return failed,
                _ if self.short() => return self.end(),
                Some(pending) => return pending,
                None => {}
            }
        }
        Fill::More
    }

    fn is_exhausted(&self) -> bool {
        let width = self.lanes.width();
        self.ended || width == 0 || (0..width).any(|i| self.lanes.lane_ref(i).is_exhausted())
    }

    fn at_least(&self) -> usize {
        if self.ended {
            return 0;
        }
        (0..self.lanes.width())
            .map(|i| self.lanes.lane_ref(i).at_least())
            .min()
            .unwrap_or(0)
    }
}
