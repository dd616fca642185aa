//! BidiFlow: from_flows, from_functions, from_graph, atop, join, reversed, in a GraphBuilder, and the simple framing protocol as one.

use bytes::Bytes;
use weir_streams::graph::{BidiPorts, GraphBuilder};
use weir_streams::io::Framing;
use weir_streams::prelude::*;
use weir_streams::stage::{
    BidiShape, GraphStage, GraphStageLogic, InPort, MatContext, OutPort, StageContext, StageResult,
};
use weir_streams::testkit::{TestSink, TestSource};
use weir_streams::{BidiFlow, GraphError, StreamError};
use weir_tests::{shutdown, stream_system};

fn collect<T: Send + Sync + 'static>(source: Source<T>, mat: &Materializer) -> Vec<T> {
    source
        .run_with(Sink::collect(), mat)
        .wait()
        .expect("completes")
}

/// Down: x * 10; up: y - 3.
fn scale() -> BidiFlow<u32, u32, u32, u32> {
    BidiFlow::from_functions(|x: u32| x * 10, |y: u32| y - 3)
}

/// Down: x + 1; up: y * 2.
fn shift() -> BidiFlow<u32, u32, u32, u32> {
    BidiFlow::from_functions(|x: u32| x + 1, |y: u32| y * 2)
}

#[test]
fn join_closes_a_layer_with_a_flow_in_both_directions() {
    let (system, mat) = stream_system("bidi-join");
    let got = collect(
        Source::range(1u32..=3).via(scale().join(Flow::new().map(|x: u32| x + 5))),
        &mat,
    );
    assert_eq!(got, vec![12, 22, 32]);
    shutdown(&system);
}

#[test]
fn atop_stacks_layers_top_first_going_down_and_bottom_first_coming_up() {
    let (system, mat) = stream_system("bidi-atop");
    // Down: scale then shift; up: shift then scale.
    let stack = scale().atop(shift());
    let got = collect(Source::range(1u32..=3).via(stack.join(Flow::new())), &mat);
    let want: Vec<u32> = (1..=3).map(|x| ((x * 10 + 1) * 2) - 3).collect();
    assert_eq!(got, want);
    // Stacked the other way round, the order differs.
    let other = collect(
        Source::range(1u32..=3).via(shift().atop(scale()).join(Flow::new())),
        &mat,
    );
    let want: Vec<u32> = (1..=3).map(|x| ((x + 1) * 10 - 3) * 2).collect();
    assert_eq!(other, want);
    shutdown(&system);
}

#[test]
fn reversed_swaps_the_directions_and_flow_join_bidi_closes_the_top() {
    let (system, mat) = stream_system("bidi-reversed");
    let codec = BidiFlow::from_functions(|n: u32| n.to_string(), |s: String| s.len() as u32);
    // Reversed: strings go down as lengths, numbers come up as strings.
    let reversed = codec
        .clone()
        .reversed()
        .join(Flow::new().map(|n: u32| n * 111));
    let got = collect(
        Source::from_iter(["ab".to_owned(), "abc".to_owned()]).via(reversed),
        &mat,
    );
    assert_eq!(got, vec!["222".to_owned(), "333".to_owned()]);
    // A server flow on top of the codec: numbers in at the bottom.
    let server = Flow::<String>::new()
        .map(|s| format!("{s}!"))
        .join_bidi(codec.reversed());
    let got = collect(Source::from_iter([7u32, 12]).via(server), &mat);
    assert_eq!(got, vec![2, 3]);
    shutdown(&system);
}

#[test]
fn materialized_values_combine_and_each_run_is_independent() {
    let (system, mat) = stream_system("bidi-mat");
    let counted = |tag: &'static str| Flow::<u32>::new().map_materialized_value(move |()| tag);
    let layer =
        BidiFlow::from_flows_mat(counted("top"), counted("bottom"), |a, b| format!("{a}+{b}"));
    let stack = layer
        .clone()
        .atop_mat(layer.map_materialized_value(|s| s.len()), |a, n| (a, n));
    let flow = stack.join_mat(
        Flow::<u32>::new().map_materialized_value(|()| 'j'),
        |a, j| (a, j),
    );
    for _ in 0..2 {
        let (mats, got) = Source::range(0u32..3)
            .via_mat(flow.clone(), Keep::right)
            .to_mat(Sink::collect(), Keep::both)
            .run(&mat);
        assert_eq!(mats, (("top+bottom".to_owned(), 10), 'j'));
        assert_eq!(got.wait(), Ok(vec![0, 1, 2]));
    }
    shutdown(&system);
}

#[test]
fn a_bidi_flow_in_a_builder_connects_like_any_ports() {
    let (system, mat) = stream_system("bidi-builder");
    let mut b = GraphBuilder::new();
    let layer = b.bidi(scale());
    let numbers = b.source(Source::range(1u32..=3));
    let (sink, got) = b.sink_mat(Sink::collect());
    let echo = b.flow(Flow::new().map(|x: u32| x + 1));
    b.connect(numbers, layer.in1).unwrap();
    b.connect(layer.out1, echo.0).unwrap();
    b.connect(echo.1, layer.in2).unwrap();
    b.connect(layer.out2, sink).unwrap();
    let graph = b.build(move |m| m.take(&got)).unwrap();
    for _ in 0..2 {
        assert_eq!(graph.run(&mat).wait(), Ok(vec![8, 18, 28]));
    }
    shutdown(&system);
}

#[test]
fn build_bidi_makes_a_layer_from_a_graph_with_four_open_ports() {
    let (system, mat) = stream_system("bidi-build");
    let mut b = GraphBuilder::new();
    let (down_in, down_out) = b.flow(Flow::new().map(|x: u32| x * 3));
    let (up_in, up_out) = b.flow(Flow::new().map(|x: u32| x + 100));
    let ports = BidiPorts {
        in1: down_in,
        out1: down_out,
        in2: up_in,
        out2: up_out,
    };
    let layer: BidiFlow<u32, u32, u32, u32, ()> = b.build_bidi(ports, |_| ()).unwrap();
    let got = collect(Source::range(1u32..=2).via(layer.join(Flow::new())), &mat);
    assert_eq!(got, vec![103, 106]);
    shutdown(&system);
}

#[test]
fn build_bidi_reports_a_port_left_unconnected_or_of_another_builder() {
    let mut b = GraphBuilder::new();
    let (down_in, down_out) = b.flow(Flow::new().map(|x: u32| x * 3));
    let (up_in, up_out) = b.flow(Flow::new().map(|x: u32| x + 100));
    let _stray = b.source(Source::single(1u32));
    let ports = BidiPorts {
        in1: down_in,
        out1: down_out,
        in2: up_in,
        out2: up_out,
    };
    let err = b.build_bidi(ports, |_| ()).unwrap_err();
    assert!(matches!(err, GraphError::Unconnected { .. }), "{err:?}");

    let mut other = GraphBuilder::new();
    let foreign = other.flow(Flow::new().map(|x: u32| x));
    let mut b = GraphBuilder::new();
    let (down_in, down_out) = b.flow(Flow::new().map(|x: u32| x * 3));
    let (_, up_out) = b.flow(Flow::new().map(|x: u32| x + 100));
    let ports = BidiPorts {
        in1: down_in,
        out1: down_out,
        in2: foreign.0,
        out2: up_out,
    };
    let err = b.build_bidi(ports, |_| ()).unwrap_err();
    assert!(matches!(err, GraphError::ForeignPort), "{err:?}");
}

/// A custom stage with a `BidiShape`: passes both directions on, counting
/// nothing, to show that `from_graph` and the interpreter handle it.
struct PassBoth;

struct PassBothLogic {
    shape: BidiShape<u32, u32, String, String>,
}

impl GraphStage for PassBoth {
    type Shape = BidiShape<u32, u32, String, String>;
    type Mat = ();

    fn name(&self) -> &'static str {
        "pass-both"
    }

    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        (
            Box::new(PassBothLogic {
                shape: BidiShape::new(),
            }),
            (),
        )
    }
}

impl GraphStageLogic for PassBothLogic {
    fn on_push(&mut self, port: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        if port == self.shape.in1.port() {
            let x = ctx.grab(self.shape.in1)?;
            ctx.push(self.shape.out1, x)
        } else {
            let s = ctx.grab(self.shape.in2)?;
            ctx.push(self.shape.out2, s)
        }
    }

    fn on_pull(&mut self, port: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        if port == self.shape.out1.port() {
            ctx.pull(self.shape.in1)
        } else {
            ctx.pull(self.shape.in2)
        }
    }

    fn on_upstream_finish(&mut self, port: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        if port == self.shape.in1.port() {
            ctx.complete(self.shape.out1);
        } else {
            ctx.complete(self.shape.out2);
        }
        Ok(())
    }

    fn on_downstream_finish(&mut self, port: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        if port == self.shape.out1.port() {
            ctx.cancel(self.shape.in1);
        } else {
            ctx.cancel(self.shape.in2);
        }
        Ok(())
    }
}

#[test]
fn a_custom_bidi_stage_runs_fused_unfused_and_across_boundaries() {
    let (system, fused) = stream_system("bidi-stage");
    let unfused = Materializer::builder(&system).fusion(false).build();
    let layer = BidiFlow::from_graph(PassBoth).atop(BidiFlow::from_functions(
        |x: u32| x.to_string(),
        |s: String| s,
    ));
    for mat in [&fused, &unfused] {
        for boundary in [false, true] {
            let wire = Flow::<String>::new().map(|s| format!("<{s}>"));
            let wire = if boundary {
                wire.async_boundary()
            } else {
                wire
            };
            let got = collect(Source::range(1u32..=3).via(layer.clone().join(wire)), mat);
            assert_eq!(got, vec!["<1>", "<2>", "<3>"]);
        }
    }
    shutdown(&system);
}

#[test]
fn failure_and_cancellation_cross_a_layer() {
    let (system, mat) = stream_system("bidi-fail");
    let failing = Flow::<u32>::new().map(|x: u32| {
        assert!(x < 20, "wire broke at {x}");
        x
    });
    let (mut up, mut down) = TestSource::probe::<u32>()
        .via(scale().join(failing))
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    down.request(5);
    up.send_next(1);
    assert_eq!(down.expect_next(), 7);
    up.send_next(2);
    assert!(
        down.expect_error().to_string().contains("wire broke"),
        "the panic fails the stream"
    );
    up.expect_cancellation();

    let (mut up, mut down) = TestSource::probe::<u32>()
        .via(shift().join(Flow::new()))
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    down.request(1);
    up.send_next(1);
    assert_eq!(down.expect_next(), 4);
    down.cancel();
    up.expect_cancellation();

    let (mut up, mut down) = TestSource::probe::<u32>()
        .via(shift().join(Flow::new()))
        .to_mat(TestSink::probe(), Keep::both)
        .run(&mat);
    down.request(1);
    up.send_error(StreamError::msg("upstream"));
    assert!(down.expect_error().to_string().contains("upstream"));
    shutdown(&system);
}

#[test]
fn the_simple_framing_protocol_round_trips_over_a_wire_that_cuts_anywhere() {
    let (system, mat) = stream_system("bidi-framing");
    let messages: Vec<Bytes> = (0..50u32)
        .map(|i| Bytes::from(vec![u8::try_from(i).unwrap(); (i as usize * 7) % 23]))
        .collect();
    for cut in [1usize, 3, 1000] {
        let wire = Flow::<Bytes>::new().map_concat(move |b: Bytes| {
            b.chunks(cut)
                .map(Bytes::copy_from_slice)
                .collect::<Vec<_>>()
        });
        let protocol = Framing::simple_framing_protocol(64);
        let got = collect(
            Source::from_iter(messages.clone()).via(protocol.join(wire)),
            &mat,
        );
        assert_eq!(got, messages, "cut every {cut} bytes");
    }
    // Two stacked copies: the inner layer frames the outer one's frames.
    let stacked = Framing::simple_framing_protocol(64).atop(Framing::simple_framing_protocol(128));
    let got = collect(
        Source::from_iter(messages.clone()).via(stacked.join(Flow::new())),
        &mat,
    );
    assert_eq!(got, messages);
    // A message over the maximum fails the stream going down.
    let too_long = Source::single(Bytes::from(vec![0u8; 65]))
        .via(Framing::simple_framing_protocol(64).join(Flow::new()))
        .run_with(Sink::collect(), &mat)
        .wait();
    assert!(too_long.is_err(), "{too_long:?}");
    shutdown(&system);
}

/// `Flow::from_sink_and_source` and its coupled form (Pekko's
/// `fromSinkAndSource` / `fromSinkAndSourceCoupled`), every side a probe;
/// each case runs fused and with fusion off.
mod sink_and_source {
    use weir_streams::StreamError;
    use weir_streams::prelude::*;
    use weir_streams::testkit::{SinkProbe, SourceProbe, TestSink, TestSource};
    use weir_tests::{QUIET, shutdown, stream_system};

    /// The flow's upstream, the inner sink, the inner source, the flow's downstream.
    struct Sides {
        up: SourceProbe<u32>,
        sink: SinkProbe<u32>,
        source: SourceProbe<u8>,
        down: SinkProbe<u8>,
    }

    fn run(coupled: bool, mat: &Materializer) -> Sides {
        let (inner_sink, inner_source) = (TestSink::probe::<u32>(), TestSource::probe::<u8>());
        let flow = if coupled {
            Flow::from_sink_and_source_coupled_mat(inner_sink, inner_source, Keep::both)
        } else {
            Flow::from_sink_and_source_mat(inner_sink, inner_source, Keep::both)
        };
        let ((up, (sink, source)), down) = TestSource::probe::<u32>()
            .via_mat(flow, Keep::both)
            .to_mat(TestSink::probe(), Keep::both)
            .run(mat);
        Sides {
            up,
            sink,
            source,
            down,
        }
    }

    /// Each case on a fresh graph, fused and with fusion off.
    fn each(name: &str, coupled: bool, case: impl Fn(Sides)) {
        let (system, fused) = stream_system(name);
        let unfused = Materializer::builder(&system).fusion(false).build();
        for mat in [&fused, &unfused] {
            case(run(coupled, mat));
        }
        shutdown(&system);
    }

    /// Elements pass each way only as asked for, one request per element.
    #[test]
    fn elements_flow_on_demand_both_ways() {
        for coupled in [false, true] {
            each("sink-and-source-demand", coupled, |mut s| {
                s.up.expect_no_signal(QUIET);
                s.sink.request(2);
                s.up.expect_request();
                s.up.send_next(1);
                assert_eq!(s.sink.expect_next(), 1);
                s.up.expect_request();
                s.up.send_next(2);
                assert_eq!(s.sink.expect_next(), 2);
                s.up.expect_no_signal(QUIET);
                s.source.expect_no_signal(QUIET);
                s.down.request(1);
                s.source.expect_request();
                s.source.send_next(9);
                assert_eq!(s.down.expect_next(), 9);
                s.source.expect_no_signal(QUIET);
                s.down.cancel();
                s.source.expect_cancellation();
            });
        }
    }

    /// Uncoupled, one side's end does not reach the other.
    #[test]
    fn uncoupled_sides_end_on_their_own() {
        each("sink-and-source-apart", false, |mut s| {
            s.up.send_complete();
            s.sink.expect_complete();
            s.source.expect_no_signal(QUIET);
            s.down.request(1);
            s.source.expect_request();
            s.source.send_next(3);
            assert_eq!(s.down.expect_next(), 3);
            s.source.send_complete();
            s.down.expect_complete();
        });
        each("sink-and-source-apart-cancel", false, |mut s| {
            s.down.cancel();
            s.source.expect_cancellation();
            s.up.expect_no_signal(QUIET);
            s.sink.request(1);
            s.up.expect_request();
            s.up.send_next(4);
            assert_eq!(s.sink.expect_next(), 4);
            s.sink.cancel();
            s.up.expect_cancellation();
        });
    }

    #[test]
    fn coupled_upstream_completion_completes_the_sink_and_cancels_the_source() {
        each("coupled-up-complete", true, |mut s| {
            s.up.send_complete();
            s.sink.expect_complete();
            s.source.expect_cancellation();
            s.down.expect_complete();
        });
    }

    #[test]
    fn coupled_upstream_failure_fails_the_sink_and_cancels_the_source() {
        each("coupled-up-fail", true, |mut s| {
            s.up.send_error(StreamError::msg("up"));
            assert!(s.sink.expect_error().to_string().contains("up"));
            s.source.expect_cancellation();
            assert!(s.down.expect_error().to_string().contains("up"));
        });
    }

    #[test]
    fn coupled_downstream_cancel_completes_the_sink_and_cancels_upstream() {
        each("coupled-down-cancel", true, |mut s| {
            s.down.cancel();
            s.source.expect_cancellation();
            s.sink.expect_complete();
            s.up.expect_cancellation();
        });
    }

    #[test]
    fn coupled_source_completion_completes_the_sink_and_cancels_upstream() {
        each("coupled-source-complete", true, |mut s| {
            s.source.send_complete();
            s.down.expect_complete();
            s.sink.expect_complete();
            s.up.expect_cancellation();
        });
    }

    #[test]
    fn coupled_source_failure_fails_the_sink_and_downstream() {
        each("coupled-source-fail", true, |mut s| {
            s.source.send_error(StreamError::msg("source"));
            assert!(s.down.expect_error().to_string().contains("source"));
            assert!(s.sink.expect_error().to_string().contains("source"));
            s.up.expect_cancellation();
        });
    }

    #[test]
    fn coupled_sink_cancel_cancels_upstream_and_the_source() {
        each("coupled-sink-cancel", true, |mut s| {
            s.sink.cancel();
            s.up.expect_cancellation();
            s.source.expect_cancellation();
            s.down.expect_complete();
        });
    }
}

type Probes = (
    weir_streams::testkit::SourceProbe<u32>,
    weir_streams::testkit::SinkProbe<u32>,
    weir_streams::testkit::SourceProbe<u32>,
    weir_streams::testkit::SinkProbe<u32>,
);

/// `bidirectional_idle_timeout` between four probes.
fn idle_between_probes(mat: &Materializer, timeout: std::time::Duration) -> Probes {
    let mut b = GraphBuilder::new();
    let layer = b.bidi(BidiFlow::bidirectional_idle_timeout(timeout));
    let (up1, k1) = b.source_mat(TestSource::probe::<u32>());
    let (down1, k2) = b.sink_mat(TestSink::probe::<u32>());
    let (up2, k3) = b.source_mat(TestSource::probe::<u32>());
    let (down2, k4) = b.sink_mat(TestSink::probe::<u32>());
    b.connect(up1, layer.in1).unwrap();
    b.connect(layer.out1, down1).unwrap();
    b.connect(up2, layer.in2).unwrap();
    b.connect(layer.out2, down2).unwrap();
    b.build(move |m| (m.take(&k1), m.take(&k2), m.take(&k3), m.take(&k4)))
        .unwrap()
        .run(mat)
}

/// Traffic in either direction keeps it alive; quiet in both for the
/// timeout fails both directions (on the test clock); each direction
/// completes on its own.
#[test]
fn bidirectional_idle_timeout_fails_only_when_both_directions_are_quiet() {
    use std::time::Duration;
    use weir_streams::{ErrorKind, TimeoutKind};
    let (system, clock) = weir_tests::clocked_system("bidi-idle");
    let mat = Materializer::new(&system);
    let ms = Duration::from_millis;
    let (mut up1, mut down1, mut up2, mut down2) = idle_between_probes(&mat, ms(100));
    down1.request(10);
    down2.request(10);
    up1.expect_request();
    up2.expect_request();
    for step in 0..4 {
        clock.advance(ms(60));
        // Only the second direction talks: enough to stay alive.
        up2.send_next(step);
        assert_eq!(down2.expect_next(), step);
    }
    up2.send_complete();
    down2.expect_complete();
    down1.wait_idle();
    clock.advance(ms(99));
    down1.expect_no_message(Duration::from_millis(30));
    clock.advance(ms(1));
    let error = down1.expect_error();
    assert!(
        matches!(error.kind(), ErrorKind::Timeout(TimeoutKind::Idle, d) if *d == ms(100)),
        "{error:?}"
    );
    up1.expect_cancellation();

    // Cancelling one direction leaves the other running.
    let (mut up1, mut down1, mut up2, mut down2) = idle_between_probes(&mat, ms(100));
    down1.request(1);
    down2.request(1);
    up1.expect_request();
    down2.cancel();
    up2.expect_cancellation();
    up1.send_next(5);
    assert_eq!(down1.expect_next(), 5);
    up1.send_complete();
    down1.expect_complete();
    shutdown(&system);
}
