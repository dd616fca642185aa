//! Sinks: results, empty streams, failures, cancellation — fused with an
//! iterator source and as ordinary stages behind a probe.

use std::sync::mpsc;

use weir_streams::ErrorKind;
use weir_streams::prelude::*;
use weir_streams::testkit::TestSource;
use weir_tests::{PATIENCE, shutdown, stream_system};

/// Run `sink` behind a probe: send `elements`, then end with `failure` or completion.
fn behind_probe<T: Send + 'static, M: 'static>(
    sink: Sink<T, M>,
    elements: Vec<T>,
    failure: Option<StreamError>,
    mat: &Materializer,
) -> M {
    let (mut up, m) = TestSource::probe::<T>().to_mat(sink, Keep::both).run(mat);
    for element in elements {
        up.expect_request();
        up.send_next(element);
    }
    match failure {
        Some(error) => up.send_error(error),
        None => up.send_complete(),
    }
    m
}

#[test]
fn folding_sinks_give_their_result_fused_and_unfused() {
    let (system, mat) = stream_system("sinks");
    let src = || Source::range(1u32..=4);
    assert_eq!(src().run_with(Sink::ignore(), &mat).wait(), Ok(()));
    assert_eq!(
        src().run_with(Sink::fold(0, |a, x| a + x), &mat).wait(),
        Ok(10)
    );
    assert_eq!(
        src().run_with(Sink::collect(), &mat).wait(),
        Ok(vec![1, 2, 3, 4])
    );
    assert_eq!(src().run_with(Sink::head(), &mat).wait(), Ok(1));
    assert_eq!(
        src().run_with(Sink::head_option(), &mat).wait(),
        Ok(Some(1))
    );
    assert_eq!(src().run_with(Sink::last(), &mat).wait(), Ok(4));
    assert_eq!(
        src().run_with(Sink::last_option(), &mat).wait(),
        Ok(Some(4))
    );
    assert_eq!(
        src().run_with(Sink::reduce(|a, x| a * x), &mat).wait(),
        Ok(24)
    );

    assert_eq!(
        behind_probe(Sink::fold(0, |a, x| a + x), vec![1u32, 2], None, &mat).wait(),
        Ok(3)
    );
    assert_eq!(
        behind_probe(Sink::collect(), vec![1u32, 2], None, &mat).wait(),
        Ok(vec![1, 2])
    );
    assert_eq!(
        behind_probe(Sink::last(), vec![1u32, 2], None, &mat).wait(),
        Ok(2)
    );
    assert_eq!(
        behind_probe(Sink::ignore(), vec![1u32], None, &mat).wait(),
        Ok(())
    );
    shutdown(&system);
}

#[test]
fn head_takes_one_element_and_cancels_upstream() {
    let (system, mat) = stream_system("head");
    let (mut up, head) = TestSource::probe::<u32>()
        .to_mat(Sink::head(), Keep::both)
        .run(&mat);
    up.expect_request();
    up.send_next(9);
    assert_eq!(head.wait(), Ok(9));
    up.expect_cancellation();
    // Fused with an endless source, head still ends the run.
    assert_eq!(
        Source::repeat(5u8).run_with(Sink::head(), &mat).wait(),
        Ok(5)
    );
    shutdown(&system);
}

#[test]
fn empty_streams() {
    let (system, mat) = stream_system("empty-sinks");
    let empty = || Source::<u32>::empty();
    assert!(matches!(
        empty()
            .run_with(Sink::head(), &mat)
            .wait()
            .unwrap_err()
            .kind(),
        ErrorKind::EmptyStream
    ));
    assert!(matches!(
        empty()
            .run_with(Sink::last(), &mat)
            .wait()
            .unwrap_err()
            .kind(),
        ErrorKind::EmptyStream
    ));
    assert!(matches!(
        empty()
            .run_with(Sink::reduce(|a, b| a + b), &mat)
            .wait()
            .unwrap_err()
            .kind(),
        ErrorKind::EmptyStream
    ));
    assert_eq!(empty().run_with(Sink::head_option(), &mat).wait(), Ok(None));
    assert_eq!(empty().run_with(Sink::last_option(), &mat).wait(), Ok(None));
    assert_eq!(
        empty().run_with(Sink::fold(7, |a, x| a + x), &mat).wait(),
        Ok(7)
    );
    assert_eq!(empty().run_with(Sink::collect(), &mat).wait(), Ok(vec![]));
    shutdown(&system);
}

#[test]
fn every_sink_reports_an_upstream_failure() {
    let (system, mat) = stream_system("sink-failures");
    let err = || Some(StreamError::msg("broken"));
    let check =
        |r: Result<String, StreamError>| assert!(r.unwrap_err().to_string().ends_with("broken"));
    check(
        behind_probe(Sink::ignore(), vec![1u32], err(), &mat)
            .wait()
            .map(|_| String::new()),
    );
    check(
        behind_probe(Sink::fold(0, |a, x| a + x), vec![1u32], err(), &mat)
            .wait()
            .map(|_| String::new()),
    );
    check(
        behind_probe(Sink::collect(), vec![1u32], err(), &mat)
            .wait()
            .map(|_| String::new()),
    );
    check(
        behind_probe(Sink::head(), vec![], err(), &mat)
            .wait()
            .map(|_: u32| String::new()),
    );
    check(
        behind_probe(Sink::last_option(), vec![1u32], err(), &mat)
            .wait()
            .map(|_| String::new()),
    );
    check(
        behind_probe(Sink::for_each(|_: u32| {}), vec![1], err(), &mat)
            .wait()
            .map(|_| String::new()),
    );
    let (tx, rx) = mpsc::channel();
    behind_probe(
        Sink::on_complete(move |r| tx.send(r).unwrap()),
        vec![1u32],
        err(),
        &mat,
    );
    assert!(
        rx.recv_timeout(PATIENCE)
            .unwrap()
            .unwrap_err()
            .to_string()
            .ends_with("broken")
    );
    shutdown(&system);
}

#[test]
fn for_each_on_complete_and_cancelled() {
    let (system, mat) = stream_system("side-effect-sinks");
    let (tx, rx) = mpsc::channel();
    let done = Source::range(0u8..3).run_with(Sink::for_each(move |x| tx.send(x).unwrap()), &mat);
    assert_eq!(done.wait(), Ok(()));
    assert_eq!(rx.try_iter().collect::<Vec<_>>(), vec![0, 1, 2]);

    let (tx, rx) = mpsc::channel();
    Source::range(0u8..3).run_with(Sink::on_complete(move |r| tx.send(r).unwrap()), &mat);
    assert_eq!(rx.recv_timeout(PATIENCE).unwrap(), Ok(()));

    let (mut up, done) = TestSource::probe::<u8>()
        .to_mat(Sink::cancelled(), Keep::both)
        .run(&mat);
    up.expect_cancellation();
    assert_eq!(done.wait(), Ok(()));
    shutdown(&system);
}

#[test]
fn on_complete_hears_of_an_abrupt_end() {
    let (system, mat) = stream_system("abrupt-on-complete");
    let (tx, rx) = mpsc::channel();
    let _up = TestSource::probe::<u8>()
        .to_mat(Sink::on_complete(move |r| tx.send(r).unwrap()), Keep::left)
        .run(&mat);
    shutdown(&system);
    let outcome = rx.recv_timeout(PATIENCE).unwrap();
    assert!(matches!(
        outcome.unwrap_err().kind(),
        ErrorKind::AbruptTermination
    ));
}

/// `Sink::count` (Pekko's `Sink.count`): the number of elements on
/// completion, the error on failure, 0 for an empty stream; it asks for
/// one element at a time behind a probe and fuses with an iterator source.
#[test]
fn count_counts_to_completion_and_reports_failure() {
    let (system, mat) = stream_system("sink-count");
    let unfused = Materializer::builder(&system).fusion(false).build();
    for mat in [&mat, &unfused] {
        assert_eq!(
            Source::range(0u32..1000)
                .run_with(Sink::count(), mat)
                .wait(),
            Ok(1000)
        );
        assert_eq!(
            Source::<u8>::empty().run_with(Sink::count(), mat).wait(),
            Ok(0)
        );
        assert_eq!(
            behind_probe(Sink::count(), vec![5u8, 6, 7], None, mat).wait(),
            Ok(3)
        );
        let failed = behind_probe(Sink::count(), vec![5u8], Some(StreamError::msg("up")), mat);
        assert!(failed.wait().unwrap_err().to_string().contains("up"));

        // Back-pressure: a request per element, none ahead; the count only at completion.
        let (mut up, count) = TestSource::probe::<u8>()
            .to_mat(Sink::count(), Keep::both)
            .run(mat);
        up.expect_request();
        up.send_next(1);
        up.expect_request();
        up.expect_no_signal(weir_tests::QUIET);
        assert!(!count.is_completed(), "no count before completion");
        up.send_complete();
        assert_eq!(count.wait_timeout(PATIENCE).ok(), Some(Ok(1)));
    }
    shutdown(&system);
}
