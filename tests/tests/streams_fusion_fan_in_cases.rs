//! Focused cases of the planner's fan-in and flatten rules: fairness,
//! completion, failure of one input, cancellation, inputs with nothing
//! ready, and the fallback of `flat_map_concat` for inner sources that do
//! not fuse. Each runs fused and unfused.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::Poll;
use std::time::Duration;

use weir_streams::graph::{GraphBuilder, Merge};
use weir_streams::prelude::*;
use weir_streams::{DelayOverflowStrategy, StreamError};
use weir_tests::{shutdown, stream_system};

fn both(name: &str) -> (weir_actor::ActorSystem, [Materializer; 2]) {
    let (system, fused) = stream_system(name);
    let unfused = Materializer::builder(&system).fusion(false).build();
    (system, [fused, unfused])
}

fn endless(x: u8) -> Source<u8> {
    Source::from_iter(std::iter::repeat(x))
}

/// Two endless inputs both get through a merge; fused, they take turns
/// one element each (as `futures::stream::select` does).
#[test]
fn a_merge_of_endless_inputs_serves_both() {
    let (system, mats) = both("merge-fair");
    for (i, mat) in mats.iter().enumerate() {
        let got = endless(1)
            .merge(endless(2))
            .take(1000)
            .run_with(Sink::collect(), mat)
            .wait()
            .expect("completes");
        let ones = got.iter().filter(|x| **x == 1).count();
        assert!(
            (100..=900).contains(&ones),
            "run {i}: {ones} of 1000 from input 0"
        );
        if i == 0 {
            assert!(
                got.windows(2).all(|w| w[0] != w[1]),
                "fused: strict turns, got {:?}",
                &got[..20]
            );
        }
    }
    shutdown(&system);
}

/// The same with a probe asking one element at a time.
#[test]
fn a_merge_alternates_under_demand_of_one() {
    let (system, mats) = both("merge-fair-probe");
    let mut probe = endless(1)
        .merge(endless(2))
        .run_with(weir_streams::testkit::TestSink::probe(), &mats[0]);
    let mut got = Vec::new();
    for _ in 0..10 {
        probe.request(1);
        got.push(probe.expect_next());
    }
    probe.cancel();
    assert!(
        got.windows(2).all(|w| w[0] != w[1]),
        "strict turns, got {got:?}"
    );
    shutdown(&system);
}

/// An eager merge completes when its first input does, after all of it.
#[test]
fn an_eager_merge_completes_with_its_first_finished_input() {
    let (system, mats) = both("merge-eager");
    for mat in &mats {
        let mut g = GraphBuilder::new();
        let join = g.add(Merge::<u8, 2>::new().eager_complete());
        let [a, b] = join.ins();
        let short = g.source(Source::from_iter(vec![7u8, 8, 9]));
        let long = g.source(endless(1));
        g.connect(short, a).unwrap();
        g.connect(long, b).unwrap();
        let merged = g.build_source(join.out(), |_| ()).unwrap();
        let got = merged
            .run_with(Sink::collect(), mat)
            .wait()
            .expect("completes");
        let short: Vec<u8> = got.iter().copied().filter(|x| *x != 1).collect();
        assert_eq!(short, vec![7, 8, 9]);
    }
    shutdown(&system);
}

/// A zip stops at the shorter input and makes at most one element of the
/// longer one that it drops, on either side.
#[test]
fn a_zip_stops_at_the_shorter_input_without_running_ahead() {
    let (system, mats) = both("zip-short");
    for (i, mat) in mats.iter().enumerate() {
        for (filtered, longer_first) in [(false, false), (true, false), (false, true), (true, true)]
        {
            let made = Arc::new(AtomicU64::new(0));
            let counter = Arc::clone(&made);
            let longer = Source::from_iter(0u64..).inspect(move |_| {
                counter.fetch_add(1, Ordering::Relaxed);
            });
            // A filter hides how many elements will come: one at a time.
            let longer = if filtered {
                longer.filter(|x| x % 2 == 0)
            } else {
                longer.map(|x| x * 2)
            };
            let shorter = Source::from_iter(0u64..3);
            let got = if longer_first {
                longer
                    .zip(shorter)
                    .map(|(a, b)| (b, a))
                    .run_with(Sink::collect(), mat)
            } else {
                shorter.zip(longer).run_with(Sink::collect(), mat)
            };
            assert_eq!(got.wait(), Ok(vec![(0, 0), (1, 2), (2, 4)]));
            let made = made.load(Ordering::Relaxed);
            let limit = if filtered { 7 } else { 4 };
            assert!(
                made <= limit,
                "run {i} ({filtered}, {longer_first}): made {made} elements of the longer input"
            );
        }
    }
    shutdown(&system);
}

/// Sized inputs are zipped in batches with nothing made in vain.
#[test]
fn a_zip_of_sized_inputs_makes_only_what_it_pairs() {
    let (system, mats) = both("zip-sized");
    for mat in &mats {
        let made = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&made);
        let longer = Source::range(0u64..10_000).inspect(move |_| {
            counter.fetch_add(1, Ordering::Relaxed);
        });
        let sum = longer
            .zip_with(Source::range(0u64..1000), |a, b| a + b)
            .run_with(Sink::fold(0u64, |a, x| a + x), mat)
            .wait();
        assert_eq!(sum, Ok(999 * 1000));
        assert!(made.load(Ordering::Relaxed) <= 1001, "made {made:?}");
    }
    shutdown(&system);
}

/// A failing input fails the junction after the elements before it.
#[test]
fn a_failing_input_fails_merge_zip_and_concat() {
    let (system, mats) = both("fan-in-failure");
    let failing = || {
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
    };
    for mat in &mats {
        let sources = [
            failing().merge(Source::range(100u64..200)),
            failing().zip_with(Source::range(100u64..200), |a, b| a + b),
            failing().concat(Source::range(100u64..200)),
            Source::range(100u64..103).concat(failing()),
        ];
        for source in sources {
            let got = source.run_with(Sink::collect(), mat).wait();
            let error = got.expect_err("an input failed");
            assert!(error.to_string().contains("input broke"), "{error}");
        }
    }
    shutdown(&system);
}

/// Cancelling downstream stops endless inputs of every fused junction.
#[test]
fn cancelling_downstream_stops_every_input() {
    let (system, mats) = both("fan-in-cancel");
    for mat in &mats {
        let zipped = endless(1).zip_with(endless(2), |a, b| a + b).take(5);
        assert_eq!(zipped.run_with(Sink::collect(), mat).wait(), Ok(vec![3; 5]));
        let concat = endless(1).concat(endless(2)).take(5);
        assert_eq!(concat.run_with(Sink::collect(), mat).wait(), Ok(vec![1; 5]));
        let first = endless(1)
            .interleave(endless(2), 2)
            .expect("2 is at least 1");
        assert_eq!(first.run_with(Sink::head(), mat).wait(), Ok(1));
        let mut probe = endless(1)
            .merge(endless(2))
            .run_with(weir_streams::testkit::TestSink::probe(), mat);
        probe.request(3);
        assert_eq!(probe.expect_next_n(3).len(), 3);
        probe.cancel();
    }
    shutdown(&system);
}

/// A poll-function input with nothing ready lets the others go on, and
/// its elements come once it wakes.
#[test]
fn an_input_with_nothing_ready_does_not_hold_the_others() {
    let (system, mats) = both("fan-in-pending");
    let slow = || {
        Source::from_poll_fn(|| {
            let (mut n, mut ready) = (0u64, false);
            move |cx: &mut std::task::Context<'_>| {
                ready = !ready;
                if !ready {
                    cx.waker().wake_by_ref();
                    return Poll::Pending;
                }
                n += 1;
                Poll::Ready((n <= 10).then_some(Ok(n)))
            }
        })
    };
    for mat in &mats {
        let mut merged = slow()
            .merge(Source::range(100u64..110))
            .run_with(Sink::collect(), mat)
            .wait()
            .expect("completes");
        merged.sort_unstable();
        let want: Vec<u64> = (1..=10).chain(100..110).collect();
        assert_eq!(merged, want);
        let zipped = slow()
            .zip(Source::range(100u64..))
            .run_with(Sink::collect(), mat)
            .wait();
        assert_eq!(zipped, Ok((1..=10).zip(100..110).collect::<Vec<_>>()));
        let concat = slow()
            .concat(slow())
            .run_with(Sink::fold(0u64, |a, x| a + x), mat)
            .wait();
        assert_eq!(concat, Ok(110));
    }
    shutdown(&system);
}

/// `flat_map_concat` into a folding sink: fused inner sources are drained
/// in batches; inner sources with a stage that does not fuse, a timer or
/// an async boundary of their own fall back and keep their order.
#[test]
fn flat_map_concat_into_a_fold_keeps_order_for_every_kind_of_inner() {
    let (system, mats) = both("flatten-fold");
    type Inner = fn(u64) -> Source<u64>;
    let inners: [(&str, Inner); 5] = [
        ("fused", |x| Source::range(x * 10..x * 10 + 5)),
        ("merged", |x| {
            Source::range(x * 10..x * 10 + 2).concat(Source::range(x * 10 + 2..x * 10 + 5))
        }),
        ("staged", |x| {
            Source::range(x * 10..x * 10 + 5).scan(0, |_, y| y).skip(1)
        }),
        ("timed", |x| {
            Source::range(x * 10..x * 10 + 5)
                .delay(Duration::ZERO, DelayOverflowStrategy::Backpressure)
        }),
        ("boundary", |x| {
            Source::range(x * 10..x * 10 + 5).async_boundary()
        }),
    ];
    let want: Vec<u64> = (0..20u64).flat_map(|x| x * 10..x * 10 + 5).collect();
    for mat in &mats {
        for (name, inner) in inners {
            let got = Source::range(0u64..20)
                .flat_map_concat(inner)
                .map(|x| x + 1)
                .run_with(Sink::collect(), mat)
                .wait();
            let want: Vec<u64> = want.iter().map(|x| x + 1).collect();
            assert_eq!(got, Ok(want), "{name} inner sources");
        }
    }
    shutdown(&system);
}

/// Failures reach the folding sink; a sink that stops cancels the inner.
#[test]
fn flat_map_concat_into_a_fold_fails_and_stops() {
    let (system, mats) = both("flatten-fold-end");
    for mat in &mats {
        let inner_fails = Source::range(0u64..5)
            .flat_map_concat(|x| {
                if x == 3 {
                    Source::failed(StreamError::msg("inner broke"))
                } else {
                    Source::single(x)
                }
            })
            .run_with(Sink::collect(), mat)
            .wait();
        assert!(
            inner_fails
                .expect_err("fails")
                .to_string()
                .contains("inner broke")
        );
        let outer_fails = Source::from_poll_fn(|| {
            let mut n = 0u64;
            move |_: &mut std::task::Context<'_>| {
                n += 1;
                Poll::Ready(Some(if n > 2 {
                    Err(StreamError::msg("outer broke"))
                } else {
                    Ok(n)
                }))
            }
        })
        .flat_map_concat(|x| Source::range(0..x))
        .run_with(Sink::collect(), mat)
        .wait();
        assert!(
            outer_fails
                .expect_err("fails")
                .to_string()
                .contains("outer broke")
        );
        let panics = Source::range(0u64..5)
            .flat_map_concat(|x| {
                Source::range(0..3).map(move |y| if x == 2 { panic!("inner panic") } else { y })
            })
            .run_with(Sink::fold(0u64, |a, x| a + x), mat)
            .wait();
        assert!(panics.is_err());
        let first = Source::range(0u64..)
            .flat_map_concat(|x| Source::from_iter(x..))
            .run_with(Sink::head(), mat)
            .wait();
        assert_eq!(first, Ok(0));
        let timed_first = Source::range(0u64..)
            .flat_map_concat(|x| {
                Source::from_iter(x..).delay(Duration::ZERO, DelayOverflowStrategy::Backpressure)
            })
            .run_with(Sink::head(), mat)
            .wait();
        assert_eq!(timed_first, Ok(0));
    }
    shutdown(&system);
}

/// Every fan-in completes with its last element: a subscriber that asks
/// for exactly as many elements as come sees the completion without
/// asking again, fused and unfused alike (a fused merge once completed
/// only on the next request).
#[test]
fn every_fan_in_completes_without_a_request_beyond_its_last_element() {
    let (system, mats) = both("fan-in-complete-on-last");
    type Case = (&'static str, usize, fn() -> Source<u32>);
    let cases: [Case; 23] = [
        ("merge empty", 4, || {
            Source::range(1u32..=4).merge(Source::empty())
        }),
        ("empty merge", 4, || {
            Source::empty().merge(Source::range(1u32..=4))
        }),
        ("merge", 4, || {
            Source::range(1u32..=2).merge(Source::range(3..=4))
        }),
        ("merge filtered", 2, || {
            Source::range(1u32..=4)
                .filter(|x| x % 2 == 0)
                .merge(Source::empty())
        }),
        // The merge stage asks an input again as soon as its element has
        // gone out, so it sees the rest of a filtered input rejected.
        ("merge filtered tail", 2, || {
            Source::range(1u32..=5)
                .filter(|x| x % 2 == 0)
                .merge(Source::empty())
        }),
        ("merge filtered all", 0, || {
            Source::range(1u32..=5)
                .filter(|_| false)
                .merge(Source::range(0u32..0))
        }),
        ("merge preferred", 4, || {
            Source::range(1u32..=2).merge_preferred(Source::range(3..=4), true)
        }),
        ("merge prioritized", 4, || {
            Source::range(1u32..=2)
                .merge_prioritized(Source::range(3..=4), 2, 1)
                .expect("priorities are positive")
        }),
        ("merge sorted", 4, || {
            Source::range(1u32..=2).merge_sorted(Source::range(3..=4))
        }),
        ("merge sorted empty", 4, || {
            Source::range(1u32..=4).merge_sorted(Source::empty())
        }),
        ("concat empty", 4, || {
            Source::range(1u32..=4).concat(Source::empty())
        }),
        ("concat", 4, || {
            Source::range(1u32..=2).concat(Source::range(3..=4))
        }),
        ("empty concat", 4, || {
            Source::empty().concat(Source::range(1u32..=4))
        }),
        ("prepend", 4, || {
            Source::range(3u32..=4).prepend(Source::range(1..=2))
        }),
        ("interleave", 4, || {
            Source::range(1u32..=2)
                .interleave(Source::range(3..=4), 1)
                .expect("1 is at least 1")
        }),
        ("interleave uneven", 5, || {
            Source::range(1u32..=4)
                .interleave(Source::single(9), 2)
                .expect("2 is at least 1")
        }),
        ("or else", 4, || {
            Source::range(1u32..=4).or_else(Source::empty())
        }),
        ("empty or else", 4, || {
            Source::empty().or_else(Source::range(1u32..=4))
        }),
        ("zip", 4, || {
            Source::range(1u32..=4).zip_with(Source::range(1u32..=4), |a, b| a + b)
        }),
        ("zip longer", 4, || {
            Source::range(1u32..=4).zip_with(Source::range(1u32..), |a, b| a + b)
        }),
        ("zip n", 4, || {
            Source::zip_with_n([Source::range(1u32..=4), Source::range(1..=5)], |[a, b]| {
                a + b
            })
        }),
        ("combine", 4, || {
            Source::combine(
                Source::range(1u32..=2),
                Source::single(3),
                [Source::single(4)],
            )
        }),
        ("nested", 6, || {
            Source::range(1u32..=2)
                .concat(Source::range(3..=4))
                .merge(Source::range(5..=6).zip_with(Source::range(0..), |a, _| a))
        }),
    ];
    let mut late = Vec::new();
    for (i, mat) in mats.iter().enumerate() {
        for (name, n, source) in cases {
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let mut probe = source()
                    .run_with(weir_streams::testkit::TestSink::probe(), mat)
                    .with_timeout(Duration::from_secs(1));
                if n > 0 {
                    probe.request(n as u64);
                }
                probe.expect_next_n(n);
                probe.expect_complete();
            }));
            if outcome.is_err() {
                late.push((if i == 0 { "fused" } else { "unfused" }, name));
            }
        }
    }
    assert!(
        late.is_empty(),
        "no completion with the last element: {late:?}"
    );
    shutdown(&system);
}

/// Ten thousand sources in one `Source::combine`, or in a chain of ten
/// thousand `concat`s, run fused and unfused: no composition nests a call
/// per source (building, materializing, starting or pulling), which
/// overflowed a thread's stack.
#[test]
fn ten_thousand_sources_combine_and_concat() {
    const N: u32 = 10_000;
    let (system, mats) = both("fan-in-ten-thousand");
    let count = || Sink::fold(0u64, |n, _| n + 1);
    let rest: Vec<Source<u32>> = (2..N).map(Source::single).collect();
    let combined = Source::combine(Source::single(0u32), Source::single(1), rest);
    let chain = (1..N).fold(Source::single(0u32), |all, i| all.concat(Source::single(i)));
    for mat in &mats {
        let got = combined.clone().run_with(count(), mat).wait();
        assert_eq!(got, Ok(u64::from(N)));
    }
    // Fused, the chain is one concat; unfused, each element passes every
    // concat stage after its source, so only the first few are asked for.
    let got = chain.clone().run_with(Sink::collect(), &mats[0]).wait();
    assert_eq!(got, Ok((0..N).collect()));
    let first = chain.take(5).run_with(Sink::collect(), &mats[1]).wait();
    assert_eq!(first, Ok(vec![0, 1, 2, 3, 4]));
    shutdown(&system);
}

/// An eager merge ends when its first input does, after emitting what the
/// others had already made (the stage holds one element per input, asked
/// for ahead): no element an input made is lost, fused or unfused.
#[test]
fn an_eager_merge_emits_every_element_its_inputs_made() {
    let (system, mats) = both("merge-eager-held");
    type Inputs = fn() -> (Source<u32>, Source<u32>);
    let cases: [Inputs; 3] = [
        || (Source::single(7), Source::range(100..)),
        || (Source::range(100..), Source::single(7)),
        || {
            (
                Source::range(0..3),
                Source::range(100..110).filter(|x| x % 2 == 0),
            )
        },
    ];
    for (m, mat) in mats.iter().enumerate() {
        for (i, inputs) in cases.iter().enumerate() {
            let made = Arc::new(AtomicU64::new(0));
            let counted = |source: Source<u32>| {
                let made = Arc::clone(&made);
                source.inspect(move |_| {
                    made.fetch_add(1, Ordering::SeqCst);
                })
            };
            let (first, second) = inputs();
            let mut g = GraphBuilder::new();
            let join = g.add(Merge::<u32, 2>::new().eager_complete());
            let [a, b] = join.ins();
            let (x, y) = (g.source(counted(first)), g.source(counted(second)));
            g.connect(x, a).unwrap();
            g.connect(y, b).unwrap();
            let merged = g.build_source(join.out(), |_| ()).unwrap();
            let got = merged
                .run_with(Sink::collect(), mat)
                .wait()
                .expect("completes");
            let made = made.load(Ordering::SeqCst);
            assert_eq!(got.len() as u64, made, "run {m} case {i}: {got:?}");
        }
    }
    shutdown(&system);
}
