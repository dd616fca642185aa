//! [`Balance`]: each element to one of `N` outputs, whichever asks first.

use std::collections::VecDeque;

use crate::stage::{
    GraphStage, GraphStageLogic, InPort, MatContext, OutPort, StageContext, StageResult,
    UniformFanOutShape,
};

/// Emits each element to one of its `N` outputs: the one that asked
/// first (outputs that asked wait in order), so work spreads over parallel
/// workers at their own speeds. With
/// [`wait_for_all_downstreams`](Self::wait_for_all_downstreams) nothing is
/// asked of upstream until every output has asked once. An output that
/// cancels is left out; upstream is cancelled when all have. An element
/// asked for by an output that cancelled before it came goes to the next
/// output that asks (it is never dropped). With
/// [`eager_cancel`](Self::eager_cancel) the first output to cancel cancels
/// upstream and completes the others. Completion (after such an element
/// is out) and failure reach every output.
///
/// # Examples
///
/// ```
/// use weir_streams::graph::{Balance, GraphBuilder, Merge};
/// use weir_streams::prelude::*;
///
/// # fn main() -> Result<(), weir_streams::GraphError> {
/// let system = weir_actor::ActorSystem::new("balance").unwrap();
/// let mat = Materializer::new(&system);
/// let mut b = GraphBuilder::new();
/// let balance = b.add(Balance::<u64, 2>::new());
/// let merge = b.add(Merge::<u64, 2>::new());
/// let (inlet, out) = (balance.inlet(), merge.out());
/// for (to, from) in balance.outs().into_iter().zip(merge.ins()) {
///     let worker = b.flow(Flow::new().map(|x: u64| x * 2).async_boundary());
///     b.connect(to, worker.0)?;
///     b.connect(worker.1, from)?;
/// }
/// let workers = b.build_flow(inlet, out, |_| ())?;
/// let sum = Source::range(1u64..=100).via(workers).run_with(Sink::fold(0, |a, x| a + x), &mat);
/// assert_eq!(sum.wait(), Ok(10_100));
/// system.terminate().wait().unwrap();
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Balance<T, const N: usize> {
    wait_for_all: bool,
    eager_cancel: bool,
    _t: std::marker::PhantomData<fn(T)>,
}

impl<T, const N: usize> Balance<T, N> {
    /// A balance that starts as soon as one output asks.
    pub const fn new() -> Self {
        Self {
            wait_for_all: false,
            eager_cancel: false,
            _t: std::marker::PhantomData,
        }
    }

    /// A balance that starts once every output has asked.
    pub const fn wait_for_all_downstreams(mut self) -> Self {
        self.wait_for_all = true;
        self
    }

    /// A balance whose first output to cancel cancels upstream (with that
    /// output's cause) and completes the other outputs (Pekko's
    /// `Balance(n, eagerCancel = true)`); without it, upstream is
    /// cancelled once every output has cancelled. An element held for an
    /// output that cancelled is dropped with the stream.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::graph::{Balance, GraphBuilder};
    /// use weir_streams::prelude::*;
    ///
    /// # fn main() -> Result<(), weir_streams::GraphError> {
    /// let system = weir_actor::ActorSystem::new("balance-eager").unwrap();
    /// let mat = Materializer::new(&system);
    /// let mut b = GraphBuilder::new();
    /// let balance = b.add(Balance::<u64, 2>::new().eager_cancel());
    /// let [one, two] = balance.outs();
    /// let (taken, first) = b.sink_mat(Sink::head());
    /// let (rest, second) = b.sink_mat(Sink::collect());
    /// let source = b.source(Source::repeat(1u64));
    /// b.connect(source, balance.inlet())?;
    /// b.connect(one, taken)?;
    /// b.connect(two, rest)?;
    /// // The head sink cancels after one element: the endless source stops.
    /// let (first, rest) = b.build(move |m| (m.take(&first), m.take(&second)))?.run(&mat);
    /// assert_eq!(first.wait(), Ok(1));
    /// assert!(rest.wait().is_ok());
    /// system.terminate().wait().unwrap();
    /// # Ok(())
    /// # }
    /// ```
    pub const fn eager_cancel(mut self) -> Self {
        self.eager_cancel = true;
        self
    }
}

impl<T, const N: usize> Default for Balance<T, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Send + 'static, const N: usize> GraphStage for Balance<T, N> {
    type Shape = UniformFanOutShape<T, N>;
    type Mat = ();

    fn name(&self) -> &'static str {
        "balance"
    }

    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        let logic = BalanceLogic::<T, N> {
            shape: UniformFanOutShape::new(),
            waiting: VecDeque::with_capacity(N),
            held: None,
            asked: [false; N],
            started: !self.wait_for_all,
            running: if self.eager_cancel { 1 } else { N },
        };
        (Box::new(logic), ())
    }
}

struct BalanceLogic<T, const N: usize> {
    shape: UniformFanOutShape<T, N>,
    /// Outputs that asked and got nothing yet, in order.
    waiting: VecDeque<u16>,
    /// An element that came when no output waited (the one that asked for
    /// it cancelled meanwhile): the next output to ask gets it.
    held: Option<T>,
    /// Outputs that have asked at least once (for `wait_for_all`).
    asked: [bool; N],
    started: bool,
    /// Outputs still running (1 when eager: the first cancel stops it).
    running: usize,
}

impl<T: Send + 'static, const N: usize> BalanceLogic<T, N> {
    fn pull_if_wanted(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let inlet = self.shape.inlet;
        if self.started
            && !self.waiting.is_empty()
            && !ctx.has_been_pulled(inlet)
            && !ctx.is_closed(inlet)
        {
            ctx.pull(inlet)?;
        }
        Ok(())
    }
}

impl<T: Send + 'static, const N: usize> GraphStageLogic for BalanceLogic<T, N> {
    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        // An output that cancelled after asking is skipped.
        while let Some(port) = self.waiting.pop_front() {
            let out = self.shape.outs[usize::from(port)];
            if ctx.is_available(out) {
                ctx.push(out, element)?;
                return self.pull_if_wanted(ctx);
            }
        }
        // Whoever asked for it has cancelled: keep it for the next asker.
        self.held = Some(element);
        Ok(())
    }

    fn on_pull(&mut self, port: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.asked[usize::from(port.0)] = true;
        if let Some(element) = self.held.take() {
            ctx.push(self.shape.outs[usize::from(port.0)], element)?;
            if ctx.is_closed(self.shape.inlet) {
                ctx.complete_stage();
            }
            return Ok(());
        }
        self.waiting.push_back(port.0);
        if !self.started && self.asked.iter().all(|a| *a) {
            self.started = true;
        }
        self.pull_if_wanted(ctx)
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        // A held element goes out first (on the next pull).
        if self.held.is_none() {
            ctx.complete_stage();
        }
        Ok(())
    }

    fn on_downstream_finish(&mut self, port: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.running -= 1;
        self.waiting.retain(|p| *p != port.0);
        self.asked[usize::from(port.0)] = true;
        if self.running == 0 {
            // The last cause (or the first, when eager) goes upstream.
            let cause = ctx.cancellation(port);
            ctx.cancel_stage(cause);
            return Ok(());
        }
        if !self.started && self.asked.iter().all(|a| *a) {
            self.started = true;
        }
        self.pull_if_wanted(ctx)
    }
}
