//! Time-based operators under load: `throttle` at a rate the consumer keeps
//! up with against a plain interpreted stage, and many idle streams each
//! holding an `idle_timeout` that never fires.

use std::time::Duration;

use weir_streams::prelude::*;
use weir_streams::stage::{
    FlowShape, GraphStage, GraphStageLogic, InPort, MatContext, OutPort, StageContext, StageResult,
};
use weir_streams::{Flow, SourceQueue, ThrottleMode};

fn step(x: u64) -> u64 {
    x.wrapping_mul(3) ^ 5
}

/// `range -> map -> [one interpreted map stage] -> fold`: the baseline a
/// throttle is compared with (a custom stage, so it cannot fuse).
pub fn weir_map_stage(n: u64, mat: &Materializer) -> u64 {
    Source::range(0..n)
        .map(step)
        .via(Flow::from_graph(MapStage))
        .run_with(Sink::fold(0u64, u64::wrapping_add), mat)
        .wait()
        .expect("the pipeline completes")
}

/// `range -> map -> throttle -> fold`, the throttle allowing a billion
/// elements a second in bursts of a million: it never delays, so this
/// measures what it costs per element (a clock read and a token count).
pub fn weir_throttle(n: u64, mat: &Materializer) -> u64 {
    Source::range(0..n)
        .map(|x| step(x) ^ 1) // the same work as the map stage's row
        .throttle(
            1_000_000_000,
            Duration::from_secs(1),
            1_000_000,
            ThrottleMode::Shaping,
        )
        .expect("valid arguments")
        .run_with(Sink::fold(0u64, u64::wrapping_add), mat)
        .wait()
        .expect("the pipeline completes")
}

/// Start `n` streams `queue -> idle_timeout(an hour) -> ignore` that stay
/// idle; the queues keep them open.
pub fn idle_timeout_streams(n: usize, mat: &Materializer) -> Vec<SourceQueue<u8>> {
    (0..n)
        .map(|_| {
            Source::queue(1)
                .expect("a valid buffer")
                .idle_timeout(Duration::from_secs(3600))
                .to(Sink::ignore())
                .run(mat)
        })
        .collect()
}

struct MapStage;
struct MapLogic(FlowShape<u64, u64>);

impl GraphStage for MapStage {
    type Shape = FlowShape<u64, u64>;
    type Mat = ();
    fn name(&self) -> &'static str {
        "map_stage"
    }
    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        (Box::new(MapLogic(FlowShape::new())), ())
    }
}

impl GraphStageLogic for MapLogic {
    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let x = ctx.grab(self.0.inlet)?;
        ctx.push(self.0.out, x ^ 1)
    }
    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.pull(self.0.inlet)
    }
}
