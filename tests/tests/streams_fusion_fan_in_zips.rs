//! The planner's fan-in rule for `or_else`, `zip_n`/`zip_with_n` and `ZipWith3`: which inputs are asked for what, completion, failure and cancellation, each run fused and unfused.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::Poll;

use weir_streams::StreamError;
use weir_streams::graph::{GraphBuilder, ZipWith3};
use weir_streams::prelude::*;
use weir_tests::{shutdown, stream_system};

fn both(name: &str) -> (weir_actor::ActorSystem, [Materializer; 2]) {
    let (system, fused) = stream_system(name);
    let unfused = Materializer::builder(&system).fusion(false).build();
    (system, [fused, unfused])
}

/// `source` with a count of the elements it made.
fn counted(source: Source<u64>) -> (Source<u64>, Arc<AtomicU64>) {
    let made = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&made);
    let source = source.inspect(move |_| {
        counter.fetch_add(1, Ordering::Relaxed);
    });
    (source, made)
}

/// Three inputs zipped by a `ZipWith3` into their sum.
fn zip_with3(a: Source<u64>, b: Source<u64>, c: Source<u64>) -> Source<u64> {
    let mut g = GraphBuilder::new();
    let zip = g.add(ZipWith3::new(|a: u64, b: u64, c: u64| a + b + c));
    let (a, b, c) = (g.source(a), g.source(b), g.source(c));
    g.connect(a, zip.in0()).unwrap();
    g.connect(b, zip.in1()).unwrap();
    g.connect(c, zip.in2()).unwrap();
    g.build_source(zip.out(), |_| ()).unwrap()
}

/// A three-way zip stops at the shortest input, wherever it is, and
/// makes at most one element of each longer input that it drops (a few
/// more through a filter, which hides how many will come).
#[test]
fn a_three_way_zip_stops_at_the_shortest_input_without_running_ahead() {
    let (system, mats) = both("zip3-short");
    for (run, mat) in mats.iter().enumerate() {
        for shortest in 0..3 {
            for filtered in [false, true] {
                for typed in [false, true] {
                    let mut counts = Vec::new();
                    let mut inputs: Vec<Source<u64>> = (0..3)
                        .map(|i| {
                            if i == shortest {
                                return Source::from_iter(0u64..3);
                            }
                            let (longer, made) = counted(Source::from_iter(0u64..));
                            counts.push(made);
                            if filtered {
                                longer.filter(|x| x % 2 == 0).map(|x| x / 2)
                            } else {
                                longer
                            }
                        })
                        .collect();
                    let c = inputs.pop().unwrap();
                    let b = inputs.pop().unwrap();
                    let a = inputs.pop().unwrap();
                    let zipped = if typed {
                        zip_with3(a, b, c)
                    } else {
                        Source::zip_with_n([a, b, c], |[a, b, c]| a + b + c)
                    };
                    let got = zipped.run_with(Sink::collect(), mat).wait();
                    assert_eq!(got, Ok(vec![0, 3, 6]), "run {run}, shortest {shortest}");
                    let limit = if filtered { 7 } else { 4 };
                    for made in counts {
                        let made = made.load(Ordering::Relaxed);
                        assert!(
                            made <= limit,
                            "run {run} (shortest {shortest}, filtered {filtered}, typed {typed}): made {made}"
                        );
                    }
                }
            }
        }
    }
    shutdown(&system);
}

/// Sized inputs are zipped in batches with nothing made in vain.
#[test]
fn a_zip_n_of_sized_inputs_makes_only_what_it_zips() {
    let (system, mats) = both("zip-n-sized");
    for mat in &mats {
        let (longer, made) = counted(Source::range(0u64..10_000));
        let sources = [Source::range(0u64..5000), longer, Source::range(0u64..1000)];
        let sum = Source::zip_n(sources)
            .map(|[a, b, c]| a + b + c)
            .run_with(Sink::fold(0u64, |a, x| a + x), mat)
            .wait();
        assert_eq!(sum, Ok(3 * 999 * 1000 / 2));
        assert!(made.load(Ordering::Relaxed) <= 1001, "made {made:?}");
    }
    shutdown(&system);
}

/// `or_else` drains its primary and asks the secondary for nothing; an
/// empty primary hands over to the secondary, through a filter too.
#[test]
fn or_else_asks_the_secondary_only_when_the_primary_is_empty() {
    let (system, mats) = both("or-else");
    for (run, mat) in mats.iter().enumerate() {
        let (secondary, made) = counted(Source::from_iter(100u64..));
        let got = Source::range(0u64..5)
            .or_else(secondary)
            .run_with(Sink::collect(), mat);
        assert_eq!(got.wait(), Ok(vec![0, 1, 2, 3, 4]), "run {run}");
        assert_eq!(
            made.load(Ordering::Relaxed),
            0,
            "run {run}: the secondary was asked"
        );

        let (secondary, made) = counted(Source::range(100u64..103));
        let empty = Source::range(0u64..50).filter(|x| *x > 1000);
        let got = empty
            .or_else(secondary)
            .map(|x| x + 1)
            .run_with(Sink::collect(), mat);
        assert_eq!(got.wait(), Ok(vec![101, 102, 103]), "run {run}");
        assert_eq!(made.load(Ordering::Relaxed), 3, "run {run}");

        // Into a fold, and a primary that knows at once it is empty.
        let sum = Source::from_iter(Vec::<u64>::new())
            .or_else(Source::range(1u64..=10))
            .run_with(Sink::fold(0u64, |a, x| a + x), mat)
            .wait();
        assert_eq!(sum, Ok(55), "run {run}");
    }
    shutdown(&system);
}

/// A source failing after three elements.
fn failing() -> Source<u64> {
    Source::from_poll_fn(|| {
        let mut n = 0u64;
        move |_: &mut std::task::Context<'_>| {
            n += 1;
            if n > 3 {
                Poll::Ready(Some(Err(StreamError::msg("input broke"))))
            } else {
                Poll::Ready(Some(Ok(n)))
            }
        }
    })
}

/// A failing input fails a zip after the rows made before it; a failing
/// secondary of `or_else` matters only when the primary is empty.
#[test]
fn failures_of_zip_inputs_and_of_the_or_else_secondary() {
    let (system, mats) = both("zips-failure");
    for (run, mat) in mats.iter().enumerate() {
        for at in 0..3 {
            let inputs = (0..3).map(|i| {
                if i == at {
                    failing()
                } else {
                    Source::range(1u64..100)
                }
            });
            let [a, b, c]: [Source<u64>; 3] = inputs
                .collect::<Vec<_>>()
                .try_into()
                .unwrap_or_else(|_| unreachable!());
            let mut probe =
                zip_with3(a, b, c).run_with(weir_streams::testkit::TestSink::probe(), mat);
            probe.request(10);
            assert_eq!(
                probe.expect_next_n(3),
                vec![3, 6, 9],
                "run {run}, failing input {at}"
            );
            let error = probe.expect_error();
            assert!(error.to_string().contains("input broke"), "{error}");
        }
        let primary_used = Source::range(0u64..3).or_else(failing().filter(|_| false));
        assert_eq!(
            primary_used.run_with(Sink::collect(), mat).wait(),
            Ok(vec![0, 1, 2])
        );
        let secondary_used = Source::from_iter(Vec::<u64>::new()).or_else(failing());
        let error = secondary_used
            .run_with(Sink::collect(), mat)
            .wait()
            .expect_err("the secondary failed");
        assert!(
            error.to_string().contains("input broke"),
            "run {run}: {error}"
        );
    }
    shutdown(&system);
}

fn endless(x: u64) -> Source<u64> {
    Source::from_iter(std::iter::repeat(x))
}

/// Cancelling downstream stops endless inputs of the fused zips and
/// `or_else`.
#[test]
fn cancelling_downstream_stops_the_inputs_of_zips_and_or_else() {
    let (system, mats) = both("zips-cancel");
    for mat in &mats {
        let zipped = Source::zip_with_n([endless(1), endless(2), endless(3)], |xs| {
            xs.iter().sum::<u64>()
        })
        .take(5);
        assert_eq!(zipped.run_with(Sink::collect(), mat).wait(), Ok(vec![6; 5]));
        let typed = zip_with3(endless(1), endless(2), endless(4)).take(4);
        assert_eq!(typed.run_with(Sink::collect(), mat).wait(), Ok(vec![7; 4]));
        let flow = Flow::<u64>::new().zip_with_n([endless(10)], |[a, b]| a * b);
        assert_eq!(
            endless(3).via(flow).run_with(Sink::head(), mat).wait(),
            Ok(30)
        );
        let either = endless(1).or_else(endless(2)).take(3);
        assert_eq!(either.run_with(Sink::collect(), mat).wait(), Ok(vec![1; 3]));
    }
    shutdown(&system);
}
