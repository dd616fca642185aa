//! Sizes are limits, not allocations: huge `grouped`, `sliding`, `buffer`, `map_async` sizes work on small inputs.

use weir_streams::Materializer;
use weir_streams::prelude::*;
use weir_tests::{shutdown, stream_system};

fn collect<T: Send + Sync + 'static>(
    source: Source<T>,
    mat: &Materializer,
) -> Result<Vec<T>, StreamError> {
    source.run_with(Sink::collect(), mat).wait()
}

/// Sizes that once reached the allocator as they were: `usize::MAX` (a
/// capacity-overflow panic) and `1 << 40` (an allocation failure that aborts).
const HUGE: [usize; 2] = [usize::MAX, 1 << 40];

#[test]
fn grouped_with_a_huge_size_emits_one_short_group() {
    let (system, mat) = stream_system("huge-grouped");
    for size in HUGE {
        let groups = collect(Source::range(0u32..5).grouped(size).unwrap(), &mat);
        assert_eq!(groups, Ok(vec![vec![0, 1, 2, 3, 4]]), "grouped({size})");
    }
    shutdown(&system);
}

#[test]
fn sliding_with_a_huge_size_emits_one_short_window() {
    let (system, mat) = stream_system("huge-sliding");
    for size in HUGE {
        let windows = collect(Source::range(0u32..5).sliding(size, 1).unwrap(), &mat);
        assert_eq!(windows, Ok(vec![vec![0, 1, 2, 3, 4]]), "sliding({size}, 1)");
        let windows = collect(Source::range(0u32..5).sliding(2, size).unwrap(), &mat);
        assert_eq!(windows, Ok(vec![vec![0, 1]]), "sliding(2, {size})");
    }
    shutdown(&system);
}

#[test]
fn buffer_with_a_huge_size_holds_everything() {
    let (system, mat) = stream_system("huge-buffer");
    for size in HUGE {
        for strategy in [
            OverflowStrategy::Backpressure,
            OverflowStrategy::DropHead,
            OverflowStrategy::Fail,
        ] {
            let out = collect(
                Source::range(0u32..2000).buffer(size, strategy).unwrap(),
                &mat,
            );
            assert_eq!(out, Ok((0..2000).collect()), "buffer({size}, {strategy:?})");
        }
    }
    shutdown(&system);
}

#[test]
fn map_async_with_a_huge_parallelism_runs_every_future() {
    let (system, mat) = stream_system("huge-map-async");
    for parallelism in HUGE {
        let ordered = collect(
            Source::range(0u32..2000)
                .map_async(parallelism, |x| async move { Ok(x * 2) })
                .unwrap(),
            &mat,
        );
        assert_eq!(
            ordered,
            Ok((0..2000).map(|x| x * 2).collect()),
            "map_async({parallelism})"
        );
        let mut unordered = collect(
            Source::range(0u32..2000)
                .map_async_unordered(parallelism, |x| async move { Ok(x * 2) })
                .unwrap(),
            &mat,
        )
        .unwrap();
        unordered.sort_unstable();
        assert_eq!(unordered, (0..2000).map(|x| x * 2).collect::<Vec<_>>());
    }
    shutdown(&system);
}

#[test]
fn actor_ref_source_with_a_huge_buffer_holds_what_it_is_told() {
    let (system, mat) = stream_system("huge-actor-ref");
    for size in HUGE {
        // Not a folding sink, so the buffer is in play: elements told
        // before downstream pulls wait in it.
        let (source, probe) = Source::actor_ref(size, OverflowStrategy::DropHead)
            .unwrap()
            .to_mat(weir_streams::testkit::TestSink::probe(), Keep::both)
            .run(&mat);
        let mut probe = probe;
        (0..3000u32).for_each(|x| source.tell(x));
        source.complete();
        probe.request(3000);
        let got: Vec<u32> = (0..3000).map(|_| probe.expect_next()).collect();
        assert_eq!(got, (0..3000).collect::<Vec<_>>());
        probe.expect_complete();
        assert_eq!(source.dropped(), 0);
    }
    shutdown(&system);
}
