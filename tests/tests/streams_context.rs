//! `SourceWithContext` / `FlowWithContext`: each operator keeps one
//! context per element (a dropped element drops its context), and
//! demand, completion, failure and cancellation pass through as in the
//! plain operators. Each test runs fused and unfused.

use std::time::Duration;

use weir_streams::prelude::*;
use weir_streams::testkit::{SinkProbe, SourceProbe, TestSink, TestSource};
use weir_streams::{
    ArgumentError, Attributes, ContextOps, FlowWithContext, SourceWithContext, SupervisionStrategy,
};
use weir_tests::{shutdown, stream_system};

fn materializers(system: &weir_actor::ActorSystem) -> [Materializer; 2] {
    [
        Materializer::new(system),
        Materializer::builder(system).fusion(false).build(),
    ]
}

/// Messages `(offset, body)`, the offset as context.
fn messages() -> SourceWithContext<&'static str, u64> {
    Source::from_iter(vec![(1u64, "a"), (2, "skip"), (3, "bc"), (4, "")])
        .as_source_with_context(|(offset, _)| *offset)
        .map(|(_, body)| body)
}

fn collect<T: Send + Sync + 'static, C: Send + Sync + 'static>(
    source: SourceWithContext<T, C>,
    mat: &Materializer,
) -> Vec<(T, C)> {
    source.run_with(Sink::collect(), mat).wait().unwrap()
}

#[test]
fn map_filter_and_filter_map_keep_each_context_with_its_element() {
    let (system, _) = stream_system("context-linear");
    for mat in &materializers(&system) {
        let got = collect(messages().filter(|b| *b != "skip").map(str::len), mat);
        assert_eq!(got, vec![(1, 1), (2, 3), (0, 4)]);
        let got = collect(messages().filter_not(|b| b.is_empty()), mat);
        assert_eq!(got, vec![("a", 1), ("skip", 2), ("bc", 3)]);
        let got = collect(
            messages().filter_map(|b| b.chars().next().filter(|c| *c != 's')),
            mat,
        );
        assert_eq!(got, vec![('a', 1), ('b', 3)]);
        let got = collect(messages().map_context(|offset| offset * 10), mat);
        assert_eq!(got, vec![("a", 10), ("skip", 20), ("bc", 30), ("", 40)]);
    }
    shutdown(&system);
}

#[test]
fn map_concat_repeats_the_context_and_grouped_gathers_contexts() {
    let (system, _) = stream_system("context-concat");
    for mat in &materializers(&system) {
        let got = collect(
            messages().map_concat(|b: &str| b.chars().collect::<Vec<_>>()),
            mat,
        );
        let chars = ['a', 's', 'k', 'i', 'p', 'b', 'c'];
        let offsets = [1, 2, 2, 2, 2, 3, 3];
        assert_eq!(got, chars.into_iter().zip(offsets).collect::<Vec<_>>());
        let got = collect(messages().grouped(3).unwrap(), mat);
        assert_eq!(
            got,
            vec![
                (vec!["a", "skip", "bc"], vec![1, 2, 3]),
                (vec![""], vec![4])
            ]
        );
    }
    assert!(matches!(
        messages().grouped(0).map(|_| ()),
        Err(ArgumentError::Zero { .. })
    ));
    shutdown(&system);
}

#[test]
fn map_async_and_map_async_partitioned_keep_order_and_contexts() {
    let (system, _) = stream_system("context-async");
    for mat in &materializers(&system) {
        let got = collect(
            messages()
                .map_async(3, |b| async move { Ok::<_, StreamError>(b.len()) })
                .unwrap(),
            mat,
        );
        assert_eq!(got, vec![(1, 1), (4, 2), (2, 3), (0, 4)]);
        let got = collect(
            messages()
                .map_async_partitioned(
                    2,
                    |b| b.len() % 2,
                    |b, p| async move { Ok::<_, StreamError>((b, p)) },
                )
                .unwrap(),
            mat,
        );
        assert_eq!(
            got,
            vec![
                (("a", 1), 1),
                (("skip", 0), 2),
                (("bc", 0), 3),
                (("", 0), 4)
            ]
        );
    }
    assert!(messages().map_async(0, |b| async move { Ok(b) }).is_err());
    shutdown(&system);
}

/// A failed future fails the stream; under a resuming strategy its
/// element is dropped with its context.
#[test]
fn a_failed_future_fails_or_under_resume_drops_its_context() {
    let (system, _) = stream_system("context-async-fail");
    for mat in &materializers(&system) {
        let failing = messages().map_async(2, |b| async move {
            if b == "skip" {
                Err(StreamError::msg("bad body"))
            } else {
                Ok(b.len())
            }
        });
        let result = failing.unwrap().run_with(Sink::collect(), mat).wait();
        assert!(result.is_err(), "{result:?}");
        let resume = Attributes::new().with_supervision_strategy(SupervisionStrategy::resuming());
        let got = collect(
            messages()
                .map(|b| {
                    assert!(b != "skip", "a panic in user code");
                    b.len()
                })
                .with_attributes(resume),
            mat,
        );
        assert_eq!(got, vec![(1, 1), (2, 3), (0, 4)]);
    }
    shutdown(&system);
}

type Probes<T, C> = (SourceProbe<(T, C)>, SinkProbe<(u32, C)>);

fn probed(mat: &Materializer) -> Probes<u32, &'static str> {
    SourceWithContext::from_tuples(TestSource::probe::<(u32, &'static str)>())
        .filter(|x| x % 2 == 1)
        .map(|x| x * 10)
        .as_source()
        .to_mat(TestSink::probe(), Keep::both)
        .run(mat)
}

/// Demand passes through one to one; a filtered element is replaced by
/// a pull upstream; completion comes after the last element.
#[test]
fn demand_and_completion_pass_through() {
    let (system, _) = stream_system("context-demand");
    for mat in &materializers(&system) {
        let (mut up, mut down) = probed(mat);
        down.request(1);
        assert_eq!(up.expect_request(), 1);
        up.send_next((2, "even"));
        assert_eq!(up.expect_request(), 1, "the dropped element is replaced");
        up.send_next((3, "odd"));
        assert_eq!(down.expect_next(), (30, "odd"));
        up.expect_no_signal(Duration::from_millis(30));
        up.send_complete();
        down.expect_complete();
    }
    shutdown(&system);
}

#[test]
fn failure_goes_down_and_cancellation_goes_up() {
    let (system, _) = stream_system("context-ends");
    for mat in &materializers(&system) {
        let (mut up, mut down) = probed(mat);
        down.request(2);
        up.expect_request();
        up.send_next((1, "one"));
        assert_eq!(down.expect_next(), (10, "one"));
        up.send_error(StreamError::msg("upstream broke"));
        let error = down.expect_error();
        assert!(error.to_string().contains("upstream broke"), "{error}");

        let (mut up, mut down) = probed(mat);
        down.request(1);
        up.expect_request();
        down.cancel();
        up.expect_cancellation();
    }
    shutdown(&system);
}

/// A `FlowWithContext` built once is reused by `via`; `via_mat` keeps both
/// materialized values; a plain flow joins through
/// `as_flow_with_context`.
#[test]
fn flows_with_context_compose() {
    let (system, _) = stream_system("context-flows");
    for mat in &materializers(&system) {
        let lengths = FlowWithContext::<&'static str, u64>::new()
            .filter(|b| !b.is_empty())
            .map(str::len);
        let got = collect(messages().via(lengths.clone()), mat);
        assert_eq!(got, vec![(1, 1), (4, 2), (2, 3)]);

        let counted = FlowWithContext::from_tuples(
            Flow::<(usize, u64)>::new().map_materialized_value(|()| "flow mat"),
        );
        let (mats, out) = messages()
            .map_materialized_value(|()| "source mat")
            .via_mat(lengths.via_mat(counted, Keep::right), Keep::both)
            .to_mat(Sink::collect(), Keep::both)
            .run(mat);
        assert_eq!(mats, ("source mat", "flow mat"));
        assert_eq!(out.wait().unwrap().len(), 3);

        // A service keyed by its own ids: the id is the output's context.
        let service = Flow::<(u64, &'static str)>::new().map(|(id, b)| (id, b.to_uppercase()));
        let keyed = service.as_flow_with_context(|b, id| (id, b), |out: &(u64, String)| out.0);
        let got = collect(messages().via(keyed).map(|(_, b)| b), mat);
        assert_eq!(got[2], ("BC".to_owned(), 3));
    }
    shutdown(&system);
}
