//! The splitting stage fused with an iterator source before it (the
//! planner's split rule): the stage has no inlet and takes one element
//! from the source's batch iterator wherever it would pull one, so the
//! source makes exactly the elements it would make through a port, in
//! the same order, with no interpreter event per element. A budget of
//! elements per actor turn keeps a long run sharing its thread; a source
//! with nothing ready wakes the stage through its waker.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::task::{Context, Waker};

use super::splitters::Route;
use super::stage::Substreams;
use crate::error::StreamError;
use crate::fusion::{BoxChunks, Fill, FusedIter, IterFactory, IterNode, SplitNode};
use crate::stage::{
    AsyncCallback, Attributes, ErasedStage, GraphStageLogic, MatContext, SlotKind, StageContext,
    StageResult,
};

/// Elements routed per actor turn (as a fused source-to-sink loop).
const BUDGET: usize = 32_768;

/// Makes the splitting stage's logic for each run.
pub(crate) type MakeSplit<T, U> = Arc<dyn Fn(&Attributes) -> Substreams<T, U> + Send + Sync>;

/// The fused source a splitting stage pulls itself.
pub(crate) struct Pump<T> {
    chunks: BoxChunks<T>,
    spare: Vec<T>,
    /// Runs the loop again: after a budget, or when the source wakes.
    resume: Option<(AsyncCallback<()>, Waker)>,
    /// In the loop now: a request made inside it is answered by it.
    running: bool,
    /// The source ended, or the stage cancelled it: nothing more to take.
    pub(crate) done: bool,
}

impl<T: Send + 'static> Pump<T> {
    fn new(chunks: BoxChunks<T>) -> Self {
        Self {
            chunks,
            spare: Vec::with_capacity(1),
            resume: None,
            running: false,
            done: false,
        }
    }
}

impl<T: Send + 'static, U: Send + 'static> Substreams<T, U> {
    /// Make the resume callback and the source's waker (in `pre_start`).
    /// A source known to be empty ends upstream at once, as an iterator
    /// source stage completes without waiting for a pull.
    pub(crate) fn start_pump(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let Some(pump) = self.input.as_deref_mut() else {
            return Ok(());
        };
        let resume = ctx.async_callback(|this: &mut Self, (), ctx| this.pump(ctx));
        let waker = resume.waker(());
        pump.resume = Some((resume, waker));
        if pump.chunks.is_exhausted() {
            pump.done = true;
            return self.upstream_finished(ctx);
        }
        Ok(())
    }

    /// Take and route elements while they can move (the fused form of a
    /// pull); a no-op inside the loop itself.
    pub(crate) fn pump(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let Some(pump) = self.input.as_deref_mut() else {
            return Ok(());
        };
        if pump.running || pump.done {
            return Ok(());
        }
        pump.running = true;
        let result = self.pump_loop(ctx);
        if let Some(pump) = self.input.as_deref_mut() {
            pump.running = false;
        }
        result
    }

    fn pump_loop(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        for _ in 0..BUDGET {
            if self.pending.is_some() || self.upstream_done {
                return Ok(());
            }
            let pump = self.input.as_deref_mut().expect("pumping");
            let Some((_, waker)) = &pump.resume else {
                return Ok(());
            };
            if pump.done {
                return Ok(());
            }
            let mut cx = Context::from_waker(waker);
            let (chunks, spare) = (&mut pump.chunks, &mut pump.spare);
            let (element, fill) =
                match catch_unwind(AssertUnwindSafe(|| chunks.next_one(&mut cx, spare))) {
                    Ok(next) => next,
                    Err(payload) => {
                        let name: Arc<str> = ctx.stage_name().into();
                        let error = StreamError::panicked(&*payload).in_stage(&name);
                        (None, Fill::Failed(error))
                    }
                };
            if matches!(fill, Fill::Exhausted | Fill::Failed(_)) {
                pump.done = true;
            }
            // The element made before an end comes first.
            if let Some(element) = element {
                match self.route(&element)? {
                    Route::To(id) => self.push_to(id, element, ctx)?,
                    route => {
                        self.pending = Some((element, route));
                        self.drive(ctx)?;
                    }
                }
            }
            match fill {
                Fill::More => {}
                Fill::Pending => return Ok(()), // the waker runs the loop again
                Fill::Exhausted => return self.upstream_finished(ctx),
                Fill::Failed(error) => return self.upstream_failed(error, ctx),
            }
        }
        if let Some((resume, _)) = self.input.as_deref().and_then(|p| p.resume.as_ref()) {
            resume.invoke(());
        }
        Ok(())
    }
}

/// The splitting stage's [`SplitNode`]: it makes the same logic.
pub(crate) struct SplitFuse<T, U> {
    pub(crate) make: MakeSplit<T, U>,
}

impl<T: Send + 'static, U: Send + 'static> SplitNode for SplitFuse<T, U> {
    fn after_iter(&self, iter: &dyn IterNode) -> Arc<dyn ErasedStage> {
        Arc::new(IterSplitStage {
            source: FusedIter::<T>::of(iter),
            make: Arc::clone(&self.make),
        })
    }
}

/// The splitting stage with no inlet, pulling a fused source.
struct IterSplitStage<T, U> {
    source: IterFactory<T>,
    make: MakeSplit<T, U>,
}

impl<T: Send + 'static, U: Send + 'static> ErasedStage for IterSplitStage<T, U> {
    fn name(&self) -> &'static str {
        "substreams"
    }
    fn initial_attributes(&self) -> Attributes {
        Attributes::new()
    }
    fn ports(&self) -> (u16, u16) {
        (0, 1)
    }
    fn outlet_slot(&self, _: u16) -> SlotKind {
        SlotKind::of::<U>()
    }
    fn create(
        &self,
        cx: &mut MatContext<'_>,
        mats: &mut Vec<Box<dyn Any + Send>>,
    ) -> Box<dyn GraphStageLogic> {
        mats.push(Box::new(()));
        let mut logic = (self.make)(cx.attributes());
        logic.input = Some(Box::new(Pump::new((self.source)())));
        Box::new(logic)
    }
}
