//! Running a source from inside a stage: the source runs as its own
//! stream into a bridge sink that pulls one element per demand of the
//! stage that started it, and hands elements, completion and failure back
//! through that stage's async callback, tagged with the run they come from
//! (used by `RestartSource` and `recover_with_retries`).

use crate::blueprint::{Keep, Sink, Source};
use crate::error::StreamError;
use crate::materializer::Materializer;
use crate::stage::{
    AsyncCallback, GraphStage, GraphStageLogic, InPort, MatContext, SinkShape, StageContext,
    StageResult,
};

/// What the bridge sink of run `run` reports.
pub(crate) enum FromInner<T> {
    Element(u64, T),
    /// Completed (`None`) or failed.
    Ended(u64, Option<StreamError>),
}

/// What the outer stage tells the running bridge sink.
pub(crate) enum ToInner {
    Pull,
    Cancel,
}

/// Run `source` into a bridge reporting to `events` as run `run`; the
/// returned callback asks it for one element (`Pull`) or cancels it.
pub(crate) fn run<T: Send + 'static>(
    source: Source<T>,
    run: u64,
    events: AsyncCallback<FromInner<T>>,
    ctx: &mut StageContext<'_>,
) -> AsyncCallback<ToInner> {
    let materializer = Materializer::new(ctx.system());
    source
        .to_mat(sink(run, events), Keep::right)
        .run(&materializer)
}

/// The bridge sink alone, for a graph that ends in it.
pub(crate) fn sink<T: Send + 'static>(
    run: u64,
    events: AsyncCallback<FromInner<T>>,
) -> Sink<T, AsyncCallback<ToInner>> {
    Sink::from_graph(Bridge { run, events })
}

/// The sink the wrapped source runs into.
struct Bridge<T> {
    run: u64,
    events: AsyncCallback<FromInner<T>>,
}

struct BridgeLogic<T> {
    shape: SinkShape<T>,
    run: u64,
    events: AsyncCallback<FromInner<T>>,
    reported: bool,
}

impl<T: Send + 'static> GraphStage for Bridge<T> {
    type Shape = SinkShape<T>;
    type Mat = AsyncCallback<ToInner>;

    fn name(&self) -> &'static str {
        "restart_bridge"
    }

    fn create_logic(
        &self,
        cx: &mut MatContext<'_>,
    ) -> (Box<dyn GraphStageLogic>, AsyncCallback<ToInner>) {
        let control = cx.async_callback(|this: &mut BridgeLogic<T>, command: ToInner, ctx| {
            let inlet = this.shape.inlet;
            match command {
                ToInner::Pull if !ctx.has_been_pulled(inlet) && !ctx.is_closed(inlet) => {
                    ctx.pull(inlet)?
                }
                ToInner::Pull => {}
                ToInner::Cancel => {
                    this.reported = true; // the outer stage asked: nothing to report
                    ctx.complete_stage();
                }
            }
            Ok(())
        });
        let logic = BridgeLogic {
            shape: SinkShape::new(),
            run: self.run,
            events: self.events.clone(),
            reported: false,
        };
        (Box::new(logic), control)
    }
}

impl<T: Send + 'static> BridgeLogic<T> {
    fn report_end(&mut self, error: Option<StreamError>) {
        if !std::mem::replace(&mut self.reported, true) {
            self.events.invoke(FromInner::Ended(self.run, error));
        }
    }
}

impl<T: Send + 'static> GraphStageLogic for BridgeLogic<T> {
    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        self.events.invoke(FromInner::Element(self.run, element));
        Ok(())
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.report_end(None);
        ctx.complete_stage();
        Ok(())
    }

    fn on_upstream_failure(
        &mut self,
        _: InPort,
        error: StreamError,
        ctx: &mut StageContext<'_>,
    ) -> StageResult {
        self.report_end(Some(error));
        ctx.complete_stage();
        Ok(())
    }

    fn on_failure(&mut self, error: &StreamError) {
        self.report_end(Some(error.clone()));
    }
}
