//! The graph builder: typed ports, GraphError for open, doubled and foreign ports, nested graphs and their materialized values.

use weir_streams::GraphError;
use weir_streams::graph::{Broadcast, GraphBuilder, Merge, Zip};
use weir_streams::prelude::*;
use weir_tests::{shutdown, stream_system};

#[test]
fn a_port_left_open_is_a_typed_error() {
    let mut b = GraphBuilder::new();
    let source = b.source(Source::range(0u32..3));
    let broadcast = b.add(Broadcast::<u32, 2>::new());
    let sink = b.sink(Sink::ignore());
    b.connect(source, broadcast.inlet()).unwrap();
    b.connect(broadcast.outs()[0], sink).unwrap();
    let error = b.build(|_| ()).unwrap_err();
    assert_eq!(
        error,
        GraphError::Unconnected {
            stage: "broadcast".into(),
            side: "outlet",
            port: 1
        }
    );
    assert_eq!(
        error.to_string(),
        "outlet 1 of stage `broadcast` is not connected"
    );
}

#[test]
fn a_port_connected_twice_is_a_typed_error() {
    let mut b = GraphBuilder::new();
    let source = b.source(Source::range(0u32..3));
    let first = b.sink(Sink::ignore());
    let second = b.sink(Sink::ignore());
    b.connect(source, first).unwrap();
    let error = b.connect(source, second).unwrap_err();
    assert!(
        matches!(
            error,
            GraphError::AlreadyConnected {
                side: "outlet",
                port: 0,
                ..
            }
        ),
        "{error}"
    );
}

#[test]
fn a_port_of_another_builder_is_a_typed_error() {
    let mut b = GraphBuilder::new();
    let mut other = GraphBuilder::new();
    let source = other.source(Source::range(0u32..3));
    let sink = b.sink(Sink::ignore());
    assert_eq!(b.connect(source, sink), Err(GraphError::ForeignPort));
}

#[test]
fn an_open_port_asked_for_that_is_connected_is_a_typed_error() {
    let mut b = GraphBuilder::new();
    let source = b.source(Source::range(0u32..3));
    let sink = b.sink(Sink::ignore());
    b.connect(source, sink).unwrap();
    let error = b.build_source(source, |_| ()).unwrap_err();
    assert!(
        matches!(error, GraphError::AlreadyConnected { side: "outlet", .. }),
        "{error}"
    );
}

#[test]
fn built_sources_flows_and_sinks_compose_with_linear_blueprints() {
    let (system, mat) = stream_system("builder-compose");
    // A source of pairs from two nested sources, keeping both values.
    let mut b = GraphBuilder::new();
    let (left, lk) = b.source_mat(Source::range(1u32..=3).map_materialized_value(|()| "left"));
    let (right, rk) = b.source_mat(Source::range(10u32..=12).map_materialized_value(|()| "right"));
    let zip = b.add(Zip::<u32, u32>::new());
    b.connect(left, zip.in0()).unwrap();
    b.connect(right, zip.in1()).unwrap();
    let pairs = b
        .build_source(zip.out(), move |m| (m.take(&lk), m.take(&rk)))
        .unwrap();
    // A flow that doubles each element twice, merging the copies.
    let mut b = GraphBuilder::new();
    let split = b.add(Broadcast::<u32, 2>::new());
    let join = b.add(Merge::<u32, 2>::new());
    let [s0, s1] = split.outs();
    let [j0, j1] = join.ins();
    let (twice_in, twice_out) = b.flow(Flow::new().map(|x: u32| x * 2));
    let (same_in, same_out) = b.flow(Flow::<u32>::new());
    b.connect(s0, twice_in).unwrap();
    b.connect(s1, same_in).unwrap();
    b.connect(twice_out, j0).unwrap();
    b.connect(same_out, j1).unwrap();
    let both = b.build_flow(split.inlet(), join.out(), |_| ()).unwrap();
    // A sink built around a fold.
    let mut b = GraphBuilder::new();
    let (flow_in, flow_out) = b.flow(Flow::new().map(|x: u32| u64::from(x)));
    let (sum, sk) = b.sink_mat(Sink::fold(0u64, |a, x| a + x));
    b.connect(flow_out, sum).unwrap();
    let total = b.build_sink(flow_in, move |m| m.take(&sk)).unwrap();

    let graph = pairs
        .map(|(a, b)| a + b)
        .via(both)
        .to_mat(total, Keep::both);
    for _ in 0..2 {
        let (names, sum) = graph.run(&mat);
        assert_eq!(names, ("left", "right"));
        // (11 + 13 + 15) * 3
        assert_eq!(sum.wait(), Ok(117));
    }
    shutdown(&system);
}

#[test]
fn a_graph_with_islands_runs_fused_and_unfused_alike() {
    let (system, fused) = stream_system("builder-islands");
    let unfused = Materializer::builder(&system).fusion(false).build();
    let build = || {
        let mut b = GraphBuilder::new();
        let source = b.source(Source::range(0u64..1000).map(|x| x + 1).async_boundary());
        let split = b.add(Broadcast::<u64, 2>::new());
        let (evens, ek) = b.sink_mat(
            Flow::new()
                .filter(|x: &u64| x.is_multiple_of(2))
                .async_boundary()
                .to_mat(Sink::fold(0u64, |a, x| a + x), Keep::right),
        );
        let (all, ak) = b.sink_mat(Sink::fold(0u64, |n, _| n + 1));
        let [o0, o1] = split.outs();
        b.connect(source, split.inlet()).unwrap();
        b.connect(o0, evens).unwrap();
        b.connect(o1, all).unwrap();
        b.build(move |m| (m.take(&ek), m.take(&ak))).unwrap()
    };
    for mat in [&fused, &unfused] {
        let (evens, all) = build().run(mat);
        assert_eq!(evens.wait(), Ok((1..=1000u64).filter(|x| x % 2 == 0).sum()));
        assert_eq!(all.wait(), Ok(1000));
    }
    shutdown(&system);
}

/// A custom fan-in stage written only with the public stage API: emits
/// the sum of one element of each input.
struct AddPairs;

struct AddPairsLogic {
    shape: weir_streams::stage::FanInShape2<u32, u32, u32>,
}

impl weir_streams::stage::GraphStage for AddPairs {
    type Shape = weir_streams::stage::FanInShape2<u32, u32, u32>;
    type Mat = ();

    fn name(&self) -> &'static str {
        "add_pairs"
    }

    fn create_logic(
        &self,
        _: &mut weir_streams::stage::MatContext<'_>,
    ) -> (Box<dyn weir_streams::stage::GraphStageLogic>, ()) {
        let shape = weir_streams::stage::FanInShape2::new();
        (Box::new(AddPairsLogic { shape }), ())
    }
}

impl weir_streams::stage::GraphStageLogic for AddPairsLogic {
    fn on_push(
        &mut self,
        _: weir_streams::stage::InPort,
        ctx: &mut weir_streams::stage::StageContext<'_>,
    ) -> weir_streams::stage::StageResult {
        let (a, b) = (self.shape.in0, self.shape.in1);
        if ctx.is_available(a) && ctx.is_available(b) {
            let sum = ctx.grab(a)? + ctx.grab(b)?;
            ctx.push(self.shape.out, sum)?;
            if ctx.is_closed(a) || ctx.is_closed(b) {
                ctx.complete_stage();
            }
        }
        Ok(())
    }

    /// An input that ends with its element still waiting ends the stage
    /// once that element is paired.
    fn on_upstream_finish(
        &mut self,
        port: weir_streams::stage::InPort,
        ctx: &mut weir_streams::stage::StageContext<'_>,
    ) -> weir_streams::stage::StageResult {
        let waiting = if port == self.shape.in0.port() {
            ctx.is_available(self.shape.in0)
        } else {
            ctx.is_available(self.shape.in1)
        };
        if !waiting {
            ctx.complete_stage();
        }
        Ok(())
    }

    fn on_pull(
        &mut self,
        _: weir_streams::stage::OutPort,
        ctx: &mut weir_streams::stage::StageContext<'_>,
    ) -> weir_streams::stage::StageResult {
        ctx.pull(self.shape.in0)?;
        ctx.pull(self.shape.in1)
    }
}

#[test]
fn a_custom_multi_port_stage_runs_through_the_public_api() {
    let (system, mat) = stream_system("custom-fan-in");
    let mut b = GraphBuilder::new();
    let left = b.source(Source::range(1u32..=3));
    let right = b.source(Source::range(10u32..=12));
    let add = b.add(AddPairs);
    let (sink, done) = b.sink_mat(Sink::collect());
    b.connect(left, add.in0()).unwrap();
    b.connect(right, add.in1()).unwrap();
    b.connect(add.out(), sink).unwrap();
    let graph = b.build(move |m| m.take(&done)).unwrap();
    assert_eq!(graph.run(&mat).wait(), Ok(vec![11, 13, 15]));
    shutdown(&system);
}
