//! A stuck pipeline, and the snapshot that shows where it waits.
//!
//! A writer at the end of the pipeline takes three elements and then
//! stops asking for more (as a sink whose own consumer went quiet would).
//! Nothing fails and nothing completes: the stream just stops moving.
//! `Materializer::snapshot` asks every running island for its stages and
//! connections, and each connection says which side it waits for: here
//! `keep` has not pulled because `writer` has not, and `writer` is the
//! stage that holds the stream back (`StreamSnapshot::holding`). The
//! async boundary's buffer shows full on its downstream side, and with
//! per-stage counters on (`MaterializerBuilder::stage_counters`) each
//! stage tells how many elements it passed and how long it waited.
//!
//! Run with `cargo run --example stuck_pipeline -p weir-streams`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use weir_streams::prelude::*;
use weir_streams::stage::{
    GraphStage, GraphStageLogic, InPort, MatContext, SinkShape, StageContext, StageResult,
};

/// A sink that pulls `limit` elements and then never pulls again.
#[derive(Debug)]
struct StallAfter {
    limit: u64,
}

struct StallLogic {
    shape: SinkShape<u64>,
    left: u64,
    taken: Arc<AtomicU64>,
}

impl GraphStage for StallAfter {
    type Shape = SinkShape<u64>;
    /// How many elements it took.
    type Mat = Arc<AtomicU64>;

    fn name(&self) -> &'static str {
        "writer"
    }

    fn create_logic(&self, _cx: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, Arc<AtomicU64>) {
        let taken = Arc::new(AtomicU64::new(0));
        let logic = StallLogic {
            shape: SinkShape::new(),
            left: self.limit,
            taken: Arc::clone(&taken),
        };
        (Box::new(logic), taken)
    }
}

impl GraphStageLogic for StallLogic {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.pull(self.shape.inlet)
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.grab(self.shape.inlet)?;
        self.taken.fetch_add(1, Ordering::Relaxed);
        self.left -= 1;
        if self.left > 0 {
            ctx.pull(self.shape.inlet)?;
        }
        // The bug this example finds: after `limit` elements, no pull.
        Ok(())
    }
}

fn main() {
    let system = weir_actor::ActorSystem::new("stuck-pipeline").expect("valid name");
    let materializer = Materializer::builder(&system).stage_counters(true).build();
    let taken = Source::from_iter(1u64..)
        .map(|line| line * 10)
        .named("parse")
        .async_boundary()
        .filter(|x| x % 3 != 0)
        .named("keep")
        .to_mat(Sink::from_graph(StallAfter { limit: 3 }), Keep::right)
        .run(&materializer);

    // Let it get stuck: it takes three elements, then stands still.
    while taken.load(Ordering::Relaxed) < 3 {
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(100));

    let streams = materializer
        .snapshot()
        .wait_timeout(Duration::from_secs(5))
        .expect("every island answers");
    for stream in &streams {
        println!("{stream}");
        for (island, stage, connection) in stream.waiting() {
            let (from, to) = (
                &island.stages[connection.from].name,
                &island.stages[connection.to].name,
            );
            println!(
                "island {}: {from} -> {to} is {}: it waits for `{}` (idle for {:?})",
                island.index, connection.state, stage.name, island.idle_for
            );
        }
        for island in &stream.islands {
            for stage in &island.stages {
                if let Some(buffer) = stage.buffer.filter(|b| b.is_full()) {
                    println!(
                        "island {}: `{}` has a full buffer ({buffer})",
                        island.index, stage.name
                    );
                }
            }
        }
        for (island, stage) in stream.holding() {
            println!(
                "=> island {} is held back by `{}`",
                island.index, stage.name
            );
        }
        println!("\nAs Mermaid:\n{}", stream.to_mermaid());
    }
    let holding: Vec<&str> = streams
        .iter()
        .flat_map(|s| s.holding())
        .map(|(_, stage)| stage.name.as_str())
        .collect();
    assert_eq!(holding, ["writer"], "the snapshot points at the writer");

    materializer.shutdown();
    system.terminate().wait().expect("system stops");
}
