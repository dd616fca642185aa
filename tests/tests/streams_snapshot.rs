//! Snapshots of running streams: the stages, the connection states and
//! how long each island has waited, for finding where a stream is stuck.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use weir_streams::Driver;
use weir_streams::prelude::*;
use weir_streams::snapshot::{BufferFill, ConnectionState, Side};
use weir_streams::testkit::TestSink;
use weir_streams::{SnapshotError, StreamSnapshot};
use weir_tests::{IslandGate, PATIENCE, clocked_stream_system, shutdown, stream_system};

fn snapshot(materializer: &Materializer) -> Vec<StreamSnapshot> {
    materializer
        .snapshot()
        .wait_timeout(PATIENCE)
        .expect("every island answers")
}

#[test]
fn a_stalled_pipeline_names_the_stage_that_does_not_pull() {
    let (system, materializer, clock) = clocked_stream_system("snapshot-stalled");
    let mut probe = Source::repeat(7u32)
        .map(|x| x + 1)
        .named("plus-one")
        .run_with(TestSink::probe(), &materializer);
    probe.request(3);
    assert_eq!(probe.expect_next_n(3), vec![8, 8, 8]);
    probe.wait_idle();
    clock.advance(Duration::from_secs(5));

    let streams = snapshot(&materializer);
    assert_eq!(streams.len(), 1, "{streams:?}");
    let island = &streams[0].islands[0];
    // The sink was given three and asks for no more: the stream waits
    // for it to pull, and has for the five seconds the clock moved.
    let waiting: Vec<_> = island.waiting().collect();
    assert_eq!(waiting.len(), 1, "{island:?}");
    let (connection, stage) = waiting[0];
    assert_eq!(stage.name, "sink_probe");
    assert_eq!(connection.state, ConnectionState::NotPulled);
    assert_eq!(connection.state.waits_for(), Some(Side::Downstream));
    assert_eq!(island.stages[connection.from].outlets, 1);
    assert_eq!(island.idle_for, Duration::from_secs(5));
    let text = streams[0].to_string();
    assert!(text.contains("waits for `sink_probe` to pull"), "{text}");
    let mermaid = streams[0].to_mermaid();
    assert!(mermaid.contains(r#"["sink_probe"]:::waiting"#), "{mermaid}");
    assert!(mermaid.contains("-->|not pulled|"), "{mermaid}");

    // Answering a snapshot is no progress: the wait goes on counting.
    clock.advance(Duration::from_secs(2));
    let again = snapshot(&materializer);
    assert_eq!(again[0].islands[0].idle_for, Duration::from_secs(7));

    // Asked for more, the sink pulls: the stream now waits upstream of
    // it (or is busy pushing), never on the sink.
    probe.request(1);
    probe.expect_next();
    probe.cancel();
    shutdown(&system);
}

#[test]
fn back_pressure_passed_on_is_not_blamed_on_the_stage_that_passes_it() {
    let (system, _) = stream_system("snapshot-unfused");
    let unfused = Materializer::builder(&system).fusion(false).build();
    let mut probe = Source::repeat(1u32)
        .map(|x| x + 1)
        .named("plus-one")
        .filter(|_| true)
        .named("keep")
        .run_with(TestSink::probe(), &unfused);
    probe.request(2);
    probe.expect_next_n(2);
    probe.wait_idle();
    let streams = unfused.snapshot().wait_timeout(PATIENCE).unwrap();
    let stream = &streams[0];
    // `plus-one` and `keep` have not pulled either, but only because
    // their downstream has not: the probe holds the stream.
    let waiting: Vec<&str> = stream.waiting().map(|(_, s, _)| s.name.as_str()).collect();
    assert_eq!(waiting, ["plus-one", "keep", "sink_probe"], "{stream}");
    let holding: Vec<&str> = stream.holding().map(|(_, s)| s.name.as_str()).collect();
    assert_eq!(holding, ["sink_probe"], "{stream}");
    assert!(
        stream.to_string().contains("held back by: sink_probe"),
        "{stream}"
    );
    let mermaid = stream.to_mermaid();
    assert!(!mermaid.contains(r#"["keep"]:::waiting"#), "{mermaid}");
    probe.cancel();
    shutdown(&system);
}

#[test]
fn a_pipeline_waiting_for_its_source_names_the_source() {
    let (system, materializer) = stream_system("snapshot-source");
    let (queue, done) = Source::<u32, _>::queue(4)
        .unwrap()
        .map(|x| x * 2)
        .to_mat(Sink::ignore(), Keep::both)
        .run(&materializer);
    let streams = snapshot(&materializer);
    let (_, stage, connection) = streams[0].waiting().next().expect("a waiting connection");
    assert_eq!(stage.name, "queue");
    assert_eq!(connection.state, ConnectionState::Pulled);
    assert!(streams[0].to_string().contains("waits for `queue` to push"));
    let holding: Vec<&str> = streams[0].holding().map(|(_, s)| s.name.as_str()).collect();
    assert_eq!(holding, ["queue"], "{}", streams[0]);
    queue.complete();
    done.wait().unwrap();
    shutdown(&system);
}

#[test]
fn a_graph_run_as_one_fused_task_is_listed_with_how_long_it_has_waited() {
    let (system, materializer, clock) = clocked_stream_system("snapshot-fused-task");
    let started = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&started);
    // A source that never gives an element, fused with `map` into a fold:
    // the whole graph is one loop run as one pool task.
    let graph = Source::future(move || {
        flag.store(true, Ordering::SeqCst);
        std::future::pending::<Result<u32, StreamError>>()
    })
    .map(|x| x + 1)
    .to_mat(Sink::fold(0u32, |sum, x| sum + x), Keep::right);
    assert_eq!(graph.describe(&materializer).driver, Driver::PoolTask);
    let done = graph.run(&materializer);
    assert!(weir_tests::eventually(PATIENCE, || started.load(Ordering::SeqCst)));
    clock.advance(Duration::from_secs(5));

    let streams = snapshot(&materializer);
    assert_eq!(streams.len(), 1, "{streams:?}");
    let [island] = &streams[0].islands[..] else {
        panic!("one island: {}", streams[0])
    };
    // The fused loop is one stage, with no ports.
    assert_eq!(island.stages.len(), 1, "{}", streams[0]);
    assert_eq!((island.stages[0].inlets, island.stages[0].outlets), (0, 0));
    assert!(island.connections.is_empty());
    assert_eq!(island.idle_for, Duration::from_secs(5));
    assert!(
        island
            .name
            .starts_with(&format!("stream-{}-0", streams[0].stream)),
        "{}",
        island.name
    );
    // Answering is no progress: the wait goes on counting.
    clock.advance(Duration::from_secs(2));
    assert_eq!(
        snapshot(&materializer)[0].islands[0].idle_for,
        Duration::from_secs(7)
    );
    assert!(streams[0].to_string().contains(&island.stages[0].name));

    materializer.shutdown();
    assert!(done.wait().is_err(), "stopped by the shutdown");
    assert!(weir_tests::eventually(PATIENCE, || {
        materializer.running_islands() == 0
    }));
    assert_eq!(snapshot(&materializer), Vec::new());
    shutdown(&system);
}

#[test]
fn a_busy_fused_task_answers_between_its_turns() {
    let (system, materializer) = stream_system("snapshot-busy-task");
    let graph = Source::repeat(1u64)
        .map(|x| x * 2)
        .to_mat(Sink::fold(0u64, |sum, x| sum.wrapping_add(x)), Keep::right);
    assert_eq!(graph.describe(&materializer).driver, Driver::PoolTask);
    let done = graph.run(&materializer);
    for _ in 0..10 {
        let streams = snapshot(&materializer);
        assert_eq!(streams.len(), 1, "{streams:?}");
        assert_eq!(streams[0].islands.len(), 1);
    }
    materializer.shutdown();
    assert!(done.wait().is_err(), "stopped by the shutdown");
    shutdown(&system);
}

#[test]
fn a_finished_stream_is_not_in_the_snapshot() {
    let (system, materializer) = stream_system("snapshot-finished");
    let done = Source::from_iter(vec![1u32, 2, 3])
        .async_boundary()
        .run_with(Sink::collect(), &materializer);
    assert_eq!(done.wait(), Ok(vec![1, 2, 3]));
    // The islands leave the registry as their tasks end, just after the
    // sink reports.
    assert!(weir_tests::eventually(PATIENCE, || {
        materializer.running_islands() == 0
    }));
    assert_eq!(snapshot(&materializer), Vec::new());
    shutdown(&system);
}

#[test]
fn an_async_boundary_shows_two_islands_joined_by_its_halves() {
    let (system, materializer) = stream_system("snapshot-boundary");
    let mut probe = Source::repeat(1u8)
        .async_boundary()
        .run_with(TestSink::probe(), &materializer);
    probe.request(1);
    probe.expect_next();
    probe.wait_idle();
    let streams = snapshot(&materializer);
    assert_eq!(streams.len(), 1);
    let islands = &streams[0].islands;
    assert_eq!(islands.len(), 2, "{}", streams[0]);
    assert_eq!((islands[0].index, islands[1].index), (0, 1));
    // Upstream ends in the boundary's sink half, downstream starts with
    // its source half.
    assert!(islands[0].stages.iter().any(|s| s.outlets == 0));
    assert!(islands[1].stages.iter().any(|s| s.inlets == 0));
    assert!(
        islands[1]
            .name
            .starts_with(&format!("stream-{}-1", streams[0].stream))
    );
    probe.cancel();
    shutdown(&system);
}

#[test]
fn a_boundary_whose_downstream_does_not_take_shows_its_buffer_full() {
    let (system, materializer) = stream_system("snapshot-buffer");
    let mut probe = Source::repeat(1u8)
        .async_boundary()
        .run_with(TestSink::probe(), &materializer);
    probe.request(1);
    probe.expect_next();
    // Upstream fills the buffer and waits for credit: it has used every
    // place (the one the probe's element left comes back with half the
    // buffer's), and all but that element wait to enter the downstream
    // island.
    // (The source is fused into the upstream half: island 0 is that one
    // stage; island 1 starts with the downstream half.)
    let full = |streams: &[StreamSnapshot]| {
        let [up, down] = &streams[0].islands[..] else {
            return None;
        };
        let (out, into) = (up.stages[0].buffer?, down.stages[0].buffer?);
        (into.len + 1 == into.capacity && out.is_full()).then_some((out, into))
    };
    let mut seen = None;
    assert!(
        weir_tests::eventually(PATIENCE, || {
            seen = full(&snapshot(&materializer));
            seen.is_some()
        }),
        "{}",
        snapshot(&materializer)[0]
    );
    let (out, into) = seen.unwrap();
    assert_eq!(out.capacity, into.capacity);
    let streams = snapshot(&materializer);
    let text = streams[0].to_string();
    assert!(
        text.contains(&format!("async-boundary-in (0 in, 1 out), buffer {into}")),
        "{text}"
    );
    assert!(
        text.contains(&format!("buffer {0}/{0}", out.capacity)),
        "{text}"
    );
    assert!(
        streams[0]
            .to_mermaid()
            .contains(&format!("<br/>buffer {into}"))
    );
    // Stages that are no boundary's half have no buffer.
    assert_eq!(streams[0].islands[1].stages[1].name, "sink_probe");
    assert_eq!(streams[0].islands[1].stages[1].buffer, None);
    probe.cancel();
    shutdown(&system);
}

#[test]
fn a_queue_shows_what_was_offered_and_not_yet_pushed() {
    let (system, materializer) = stream_system("snapshot-queue-fill");
    let (queue, mut probe) = Source::<u32, _>::queue(4)
        .unwrap()
        .to_mat(TestSink::probe(), Keep::both)
        .run(&materializer);
    for i in 0..3 {
        assert_eq!(queue.offer(i), weir_streams::QueueOfferResult::Enqueued);
    }
    let fill = |streams: Vec<StreamSnapshot>| streams[0].islands[0].stages[0].buffer;
    assert_eq!(
        fill(snapshot(&materializer)),
        Some(BufferFill {
            len: 3,
            capacity: 4
        })
    );
    probe.request(1);
    assert_eq!(probe.expect_next(), 0);
    assert_eq!(
        fill(snapshot(&materializer)).map(|b| b.len),
        Some(2),
        "one pushed"
    );
    probe.cancel();
    shutdown(&system);
}

#[test]
fn stage_counters_count_elements_and_waits_when_asked_for() {
    let (system, plain, clock) = clocked_stream_system("snapshot-counters");
    let counting = Materializer::builder(&system)
        .fusion(false)
        .stage_counters(true)
        .build();
    let run = |mat: &Materializer| {
        let mut probe = Source::repeat(1u32)
            .map(|x| x + 1)
            .named("plus-one")
            .run_with(TestSink::probe(), mat);
        probe.request(3);
        assert_eq!(probe.expect_next_n(3), vec![2, 2, 2]);
        probe.wait_idle();
        probe
    };
    let (mut counted, mut uncounted) = (run(&counting), run(&plain));
    clock.advance(Duration::from_secs(5));

    // Off (the default), nothing is counted.
    let streams = snapshot(&plain);
    assert!(
        streams[0].islands[0]
            .stages
            .iter()
            .all(|s| s.counters.is_none())
    );

    let streams = snapshot(&counting);
    let stage = |name: &str| {
        let stages = &streams[0].islands[0].stages;
        let stage = stages.iter().find(|s| s.name == name);
        stage.and_then(|s| s.counters).expect(name)
    };
    let (source, map, sink) = (stage("repeat"), stage("plus-one"), stage("sink_probe"));
    assert_eq!((source.elements_in, source.elements_out), (0, 3));
    assert_eq!((map.elements_in, map.elements_out), (3, 3));
    assert_eq!((sink.elements_in, sink.elements_out), (3, 0));
    // The probe stopped asking: upstream of it everything waited for
    // demand the five seconds the clock moved, and nothing for elements.
    assert_eq!(map.waited_for_demand, Duration::from_secs(5));
    assert_eq!(source.waited_for_demand, Duration::from_secs(5));
    assert_eq!(sink.waited_for_element, Duration::ZERO);
    assert_eq!(map.waited_for_element, Duration::ZERO);
    let text = streams[0].to_string();
    assert!(
        text.contains(
            "plus-one (1 in, 1 out); 3 in, 3 out, waited 5s for demand, 0ns for elements"
        ),
        "{text}"
    );
    assert!(streams[0].to_mermaid().contains("<br/>3 in, 3 out"));

    counted.cancel();
    uncounted.cancel();
    assert!(weir_tests::eventually(PATIENCE, || {
        counting.running_islands() == 0
    }));

    // A source that has nothing: downstream of it everything waits for an
    // element.
    let (queue, mut probe) = Source::<u32, _>::queue(4)
        .unwrap()
        .map(|x| x + 1)
        .named("plus-one")
        .to_mat(TestSink::probe(), Keep::both)
        .run(&counting);
    probe.request(1);
    probe.wait_idle();
    clock.advance(Duration::from_secs(3));
    let streams = snapshot(&counting);
    let stages = &streams[0].islands[0].stages;
    let waits: Vec<(Duration, Duration)> = stages
        .iter()
        .map(|s| s.counters.unwrap())
        .map(|c| (c.waited_for_demand, c.waited_for_element))
        .collect();
    let secs = Duration::from_secs;
    // queue, plus-one, sink_probe
    assert_eq!(
        waits,
        [
            (Duration::ZERO, Duration::ZERO),
            (Duration::ZERO, secs(3)),
            (Duration::ZERO, secs(3))
        ],
        "{}",
        streams[0]
    );
    queue.complete();
    probe.expect_complete();
    shutdown(&system);
}

#[test]
fn a_snapshot_of_many_running_streams_answers_while_they_run() {
    let (system, materializer) = stream_system("snapshot-many");
    let other = Materializer::new(&system);
    let streams: Vec<_> = (0..24)
        .map(|i| {
            let mat = if i % 2 == 0 { &materializer } else { &other };
            Source::repeat(i)
                .map(|x| x + 1)
                .async_boundary()
                .filter(|x| x % 2 == 0)
                .to_mat(Sink::ignore(), Keep::right)
                .run(mat)
        })
        .collect();
    for _ in 0..20 {
        let mine = snapshot(&materializer);
        assert_eq!(mine.len(), 12);
        assert!(mine.iter().all(|s| s.islands.len() == 2));
        let all = materializer
            .system_snapshot()
            .wait_timeout(PATIENCE)
            .expect("every island answers");
        assert_eq!(all.len(), 24);
    }
    materializer.shutdown();
    other.shutdown();
    for done in streams {
        assert!(done.wait().is_err(), "stopped by the shutdown");
    }
    shutdown(&system);
}

#[test]
fn an_island_blocked_in_a_stage_times_out_by_name() {
    let (system, materializer) = stream_system("snapshot-blocked");
    let gate = IslandGate::new();
    let done = Source::repeat(1u32)
        .map(gate.hold_first())
        .async_boundary()
        .run_with(Sink::ignore(), &materializer);
    assert!(gate.entered(PATIENCE));
    let error = materializer
        .snapshot()
        .wait_timeout(Duration::from_millis(50))
        .expect_err("the held island cannot answer");
    let SnapshotError::TimedOut { answered, silent } = &error else {
        panic!("a time-out: {error}")
    };
    // `stream-<n>-<island>[-<stage>]`: the upstream island, number 0, is
    // silent. (On a pool of one worker the held island holds the only
    // worker, and the downstream island cannot answer either.)
    let number = |name: &String| name.split('-').nth(2).map(str::to_owned);
    assert_eq!(
        number(&silent[0]).as_deref(),
        Some("0"),
        "in plan order: {error}"
    );
    assert_eq!(silent.len() + answered.len(), 2, "{error}");
    for stream in answered {
        assert!(stream.islands.iter().all(|i| i.index == 1), "{error}");
    }
    assert!(error.to_string().contains(&silent[0]));
    gate.open();
    materializer.shutdown();
    assert!(done.wait().is_err());
    shutdown(&system);
}

#[test]
fn waiting_bounds_that_are_zero_or_too_long_for_the_clock_are_fine() {
    let (system, materializer) = stream_system("snapshot-bounds");
    assert_eq!(
        materializer.snapshot().wait_timeout(Duration::ZERO),
        Ok(Vec::new())
    );
    let (queue, done) = Source::<u32, _>::queue(1)
        .unwrap()
        .to_mat(Sink::ignore(), Keep::both)
        .run(&materializer);
    let streams = materializer
        .snapshot()
        .wait_timeout(Duration::MAX)
        .expect("answered");
    assert_eq!(streams.len(), 1);
    // Awaited as a future, it completes too.
    let streams = futures_executor::block_on(materializer.snapshot());
    assert_eq!(streams.len(), 1);
    queue.complete();
    done.wait().unwrap();
    shutdown(&system);
}

#[test]
fn a_snapshot_after_the_system_terminated_is_empty() {
    let (system, materializer) = stream_system("snapshot-terminated");
    shutdown(&system);
    assert_eq!(
        materializer.snapshot().wait_timeout(PATIENCE),
        Ok(Vec::new())
    );
}

#[test]
fn snapshot_types_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<weir_streams::PendingSnapshot>();
    send_sync::<StreamSnapshot>();
    send_sync::<SnapshotError>();
}
