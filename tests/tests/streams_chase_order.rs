//! A completion queued behind a chased push never overtakes it, even when the chase limit demotes the push.

use weir_streams::prelude::*;
use weir_streams::stage::{
    FlowShape, GraphStage, GraphStageLogic, InPort, MatContext, OutPort, StageContext, StageResult,
};
use weir_tests::{PATIENCE, shutdown, stream_system};

/// Drops empty vectors, pulling again inside `on_push` (as a framing
/// stage does for a chunk that ends no frame).
struct SkipEmpty;
struct SkipEmptyLogic(FlowShape<Vec<u8>, Vec<u8>>);

impl GraphStage for SkipEmpty {
    type Shape = FlowShape<Vec<u8>, Vec<u8>>;
    type Mat = ();
    fn name(&self) -> &'static str {
        "skip-empty"
    }
    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        (Box::new(SkipEmptyLogic(FlowShape::new())), ())
    }
}

impl GraphStageLogic for SkipEmptyLogic {
    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let x = ctx.grab(self.0.inlet)?;
        if x.is_empty() {
            ctx.pull(self.0.inlet)
        } else {
            ctx.push(self.0.out, x)
        }
    }
    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.pull(self.0.inlet)
    }
}

#[test]
fn the_last_element_after_a_long_push_pull_chain_is_delivered() {
    let (system, m) = stream_system("chase-order");
    for empties in 0..40 {
        let mut input: Vec<Vec<u8>> = vec![Vec::new(); empties];
        input.push(vec![1, 2]);
        for boundary in [false, true] {
            let source = Source::from_iter(input.clone());
            let source = if boundary {
                source.async_boundary()
            } else {
                source
            };
            let out = source
                .via(Flow::from_graph(SkipEmpty))
                .run_with(Sink::collect(), &m)
                .wait_timeout(PATIENCE)
                .expect("the stream ends");
            assert_eq!(
                out,
                Ok(vec![vec![1, 2]]),
                "{empties} empty elements first, boundary {boundary}"
            );
        }
    }
    shutdown(&system);
}
