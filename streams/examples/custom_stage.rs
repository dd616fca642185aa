//! A custom stage you can copy: `Dedup`, a flow that drops an element
//! equal to the one before it, with a materialized counter of what it
//! dropped, and a timer that reports the count every 100 ms.
//!
//! Run with `cargo run --example custom_stage -p weir-streams`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use weir_streams::prelude::*;
use weir_streams::stage::{
    FlowShape, GraphStage, GraphStageLogic, InPort, MatContext, OutPort, StageContext, StageResult,
    TimerKey,
};

/// The blueprint part: shared by every run of the blueprint.
#[derive(Debug)]
pub struct Dedup;

/// The running part: one per run.
struct DedupLogic {
    shape: FlowShape<u32, u32>,
    last: Option<u32>,
    dropped: Arc<AtomicU64>,
}

const REPORT: TimerKey = TimerKey(1);

impl GraphStage for Dedup {
    type Shape = FlowShape<u32, u32>;
    /// How many elements this run dropped, readable while it runs.
    type Mat = Arc<AtomicU64>;

    fn name(&self) -> &'static str {
        "dedup"
    }

    fn create_logic(&self, _cx: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, Arc<AtomicU64>) {
        let dropped = Arc::new(AtomicU64::new(0));
        let logic = DedupLogic {
            shape: FlowShape::new(),
            last: None,
            dropped: Arc::clone(&dropped),
        };
        (Box::new(logic), dropped)
    }
}

impl GraphStageLogic for DedupLogic {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.schedule_periodically(
            REPORT,
            Duration::from_millis(100),
            Duration::from_millis(100),
        );
        Ok(())
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        if self.last == Some(element) {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            // Nothing to push: ask for the next element instead.
            return ctx.pull(self.shape.inlet);
        }
        self.last = Some(element);
        ctx.push(self.shape.out, element)
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.pull(self.shape.inlet)
    }

    fn on_timer(&mut self, _: TimerKey, ctx: &mut StageContext<'_>) -> StageResult {
        println!(
            "{}: dropped {} so far",
            ctx.stage_name(),
            self.dropped.load(Ordering::Relaxed)
        );
        Ok(())
    }
}

fn main() {
    let system = weir_actor::ActorSystem::new("custom-stage").expect("valid name");
    let materializer = Materializer::new(&system);
    let (dropped, unique) = Source::from_iter(vec![1u32, 1, 2, 2, 2, 3, 1, 1])
        .via_mat(Flow::from_graph(Dedup), Keep::right)
        .to_mat(Sink::collect(), Keep::both)
        .run(&materializer);
    println!("unique runs: {:?}", unique.wait());
    println!("dropped: {}", dropped.load(Ordering::Relaxed));
    system.terminate().wait().expect("system stops");
}
