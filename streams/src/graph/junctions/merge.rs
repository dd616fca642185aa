//! [`Merge`]: elements of `N` inputs, in arrival order, fairly.

use std::collections::VecDeque;

use crate::stage::{
    GraphStage, GraphStageLogic, InPort, Inlet, MatContext, OutPort, StageContext, StageResult,
    UniformFanInShape,
};

/// Emits the elements of its `N` inputs as they arrive; an input with an
/// element waiting is served before one whose element came later, so no
/// input starves. Completes when every input has (or, with
/// [`eager_complete`](Self::eager_complete), when the first does, after
/// the elements already taken in). Fails when any input fails; cancels
/// every input when downstream cancels. Back-pressure: an input is pulled
/// again only after its element has been emitted. When every input is an
/// iterator source with simple operators, the planner runs the merge
/// fused: the inputs take turns, one element each (as
/// `futures::stream::select`), an input with nothing ready is skipped.
///
/// # Examples
///
/// ```
/// use weir_streams::graph::JunctionOps;
/// use weir_streams::prelude::*;
///
/// let system = weir_actor::ActorSystem::new("merge").unwrap();
/// let mat = Materializer::new(&system);
/// let mut all = Source::range(0u32..3).merge(Source::range(10u32..13)).run_with(Sink::collect(), &mat).wait().unwrap();
/// all.sort();
/// assert_eq!(all, vec![0, 1, 2, 10, 11, 12]);
/// system.terminate().wait().unwrap();
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Merge<T, const N: usize> {
    eager_complete: bool,
    preferred: Option<u16>,
    _t: std::marker::PhantomData<fn(T)>,
}

/// A [`Merge`] that serves its input 0 first whenever it has an element
/// waiting (Akka's `MergePreferred`): the other inputs get a turn only when
/// input 0 has nothing ready. The classic use is a cycle that feeds back
/// into input 0, so what circulates drains before new elements enter.
///
/// ```
/// use weir_streams::graph::{GraphBuilder, MergePreferred};
/// use weir_streams::prelude::*;
///
/// let merge = MergePreferred::<u32, 2>::new();
/// let mut b = GraphBuilder::new();
/// let ports = b.add(merge);
/// let [preferred, other] = ports.ins();
/// # let _ = (preferred, other);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct MergePreferred<T, const N: usize>(Merge<T, N>);

impl<T, const N: usize> MergePreferred<T, N> {
    /// A merge preferring input 0, completing when all inputs have.
    pub const fn new() -> Self {
        let mut merge = Merge::new();
        merge.preferred = Some(0);
        Self(merge)
    }

    /// Complete as soon as one input completes.
    pub const fn eager_complete(self) -> Self {
        Self(self.0.eager_complete())
    }
}

impl<T, const N: usize> Default for MergePreferred<T, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Send + 'static, const N: usize> GraphStage for MergePreferred<T, N> {
    type Shape = UniformFanInShape<T, N>;
    type Mat = ();

    fn name(&self) -> &'static str {
        "merge_preferred"
    }

    fn fused_fan_in(&self) -> Option<crate::fusion::FusedFanIn> {
        self.0.fused_fan_in()
    }

    fn create_logic(&self, cx: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        self.0.create_logic(cx)
    }
}

impl<T, const N: usize> Merge<T, N> {
    /// A merge that completes when all its inputs have.
    pub const fn new() -> Self {
        Self {
            eager_complete: false,
            preferred: None,
            _t: std::marker::PhantomData,
        }
    }

    /// A merge that completes as soon as one input completes.
    pub const fn eager_complete(mut self) -> Self {
        self.eager_complete = true;
        self
    }
}

impl<T, const N: usize> Default for Merge<T, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Send + 'static, const N: usize> GraphStage for Merge<T, N> {
    type Shape = UniformFanInShape<T, N>;
    type Mat = ();

    fn name(&self) -> &'static str {
        "merge"
    }

    /// All inputs fused iterators: served in turn, one element each.
    fn fused_fan_in(&self) -> Option<crate::fusion::FusedFanIn> {
        use crate::fusion::{Uniform, UniformFanIn};
        let kind = Uniform::Merge {
            eager: self.eager_complete,
            preferred: self.preferred == Some(0),
        };
        (self.preferred.is_none() || self.preferred == Some(0))
            .then(|| UniformFanIn::<T>::hint(kind))
    }

    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        let pick = match self.preferred {
            Some(port) => Pick::Preferred(port),
            None => Pick::Arrival,
        };
        (
            Box::new(MergeLogic::<T, N>::new(pick, self.eager_complete)),
            (),
        )
    }
}

/// Which waiting input a merge serves next.
pub(super) enum Pick<const N: usize> {
    /// The one whose element came first.
    Arrival,
    /// This one whenever it has an element waiting, else by arrival.
    Preferred(u16),
    /// By smooth weighted round-robin over the inputs with an element
    /// waiting: each gets `weights[i]` credit per choice, the richest is
    /// served and pays the sum of the weights taken part.
    Weighted { weights: [u32; N], credit: [i64; N] },
}

impl<const N: usize> Pick<N> {
    /// The position in `pending` to serve next (`pending` is not empty).
    fn choose(&mut self, pending: &VecDeque<u16>) -> usize {
        match self {
            Pick::Arrival => 0,
            Pick::Preferred(port) => pending.iter().position(|q| q == port).unwrap_or(0),
            Pick::Weighted { weights, credit } => {
                let mut total = 0i64;
                let mut best = 0;
                for (at, port) in pending.iter().enumerate() {
                    let i = usize::from(*port);
                    credit[i] += i64::from(weights[i]);
                    total += i64::from(weights[i]);
                    if credit[i] > credit[usize::from(pending[best])] {
                        best = at;
                    }
                }
                credit[usize::from(pending[best])] -= total;
                best
            }
        }
    }
}

pub(super) struct MergeLogic<T, const N: usize> {
    shape: UniformFanInShape<T, N>,
    /// Inputs with an element waiting, in arrival order.
    pending: VecDeque<u16>,
    open: usize,
    eager_complete: bool,
    pick: Pick<N>,
    /// No input will be pulled again: complete once `pending` is empty.
    done: bool,
}

impl<T: Send + 'static, const N: usize> MergeLogic<T, N> {
    pub(super) fn new(pick: Pick<N>, eager_complete: bool) -> Self {
        Self {
            shape: UniformFanInShape::new(),
            pending: VecDeque::with_capacity(N),
            open: N,
            eager_complete,
            pick,
            done: false,
        }
    }

    fn inlet(port: u16) -> Inlet<T> {
        Inlet::new(port)
    }

    /// Emit the element of `port` and ask it for the next one.
    fn emit_from(&mut self, port: u16, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(Self::inlet(port))?;
        ctx.push(self.shape.out, element)?;
        if !self.done && !ctx.is_closed(Self::inlet(port)) {
            ctx.pull(Self::inlet(port))?;
        }
        Ok(())
    }

    fn complete_if_drained(&mut self, ctx: &mut StageContext<'_>) {
        if self.done && self.pending.is_empty() {
            ctx.complete_stage();
        }
    }
}

impl<T: Send + 'static, const N: usize> GraphStageLogic for MergeLogic<T, N> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        if N == 0 {
            ctx.complete_stage();
        }
        for inlet in self.shape.ins {
            ctx.pull(inlet)?;
        }
        Ok(())
    }

    fn on_push(&mut self, port: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        // With downstream waiting nothing else is pending (it would have
        // been emitted when downstream asked).
        if ctx.is_available(self.shape.out) {
            self.emit_from(port.0, ctx)
        } else {
            self.pending.push_back(port.0);
            Ok(())
        }
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        let next = if self.pending.is_empty() {
            None
        } else {
            let at = self.pick.choose(&self.pending);
            self.pending.remove(at)
        };
        if let Some(port) = next {
            self.emit_from(port, ctx)?;
        }
        self.complete_if_drained(ctx);
        Ok(())
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.open -= 1;
        if self.eager_complete || self.open == 0 {
            self.done = true;
            // Inputs with an element waiting keep it until it is emitted.
            for inlet in self.shape.ins {
                if !self.pending.contains(&inlet.port().0) {
                    ctx.cancel(inlet);
                }
            }
        }
        self.complete_if_drained(ctx);
        Ok(())
    }
}
