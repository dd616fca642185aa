//! Helpers shared by the scan fusion cases, and the names they use.

pub(super) use std::sync::atomic::{AtomicUsize, Ordering};
pub(super) use std::sync::{Arc, Mutex, Once};
pub(super) use std::task::{Context, Poll};
pub(super) use std::time::Duration;

pub(super) use weir_streams::prelude::*;
pub(super) use weir_streams::testkit::TestSink;
pub(super) use weir_streams::{Attributes, ErrorKind, StreamError, SupervisionStrategy};
pub(super) use weir_tests::{shutdown, stream_system};

/// Injected panics (messages say "injected") print nothing.
pub(super) fn quiet_panics() {
    static QUIET: Once = Once::new();
    QUIET.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let payload = info.payload();
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            if !message.contains("injected") {
                default(info);
            }
        }));
    });
}

/// Both materializers of `system`: fused (the default) and unfused.
pub(super) fn both(system: &weir_actor::ActorSystem) -> [(&'static str, Materializer); 2] {
    [
        ("fused", Materializer::new(system)),
        (
            "unfused",
            Materializer::builder(system).fusion(false).build(),
        ),
    ]
}

pub(super) fn add(a: u64, x: u64) -> u64 {
    a + x
}

/// What `scan(seed, add)` makes of `xs`.
pub(super) fn model(seed: u64, xs: impl IntoIterator<Item = u64>) -> Vec<u64> {
    let mut acc = seed;
    let mut out = vec![seed];
    for x in xs {
        acc += x;
        out.push(acc);
    }
    out
}

/// A poll source of 1, 2, 3, ... that counts its polls.
pub(super) fn counting(polls: &Arc<AtomicUsize>) -> Source<u64, ()> {
    let polls = Arc::clone(polls);
    Source::from_poll_fn(move || {
        let polls = Arc::clone(&polls);
        let mut n = 0u64;
        move |_: &mut Context<'_>| {
            polls.fetch_add(1, Ordering::SeqCst);
            n += 1;
            Poll::Ready(Some(Ok(n)))
        }
    })
}

/// A poll source that is never ready.
pub(super) fn never() -> Source<u64, ()> {
    Source::from_poll_fn(|| |_: &mut Context<'_>| Poll::Pending)
}

/// 1, 2, 3, then fails with "source broke".
pub(super) fn failing_after_three() -> Source<u64, ()> {
    Source::from_poll_fn(|| {
        let mut left = 3u64;
        move |_: &mut Context<'_>| {
            if left == 0 {
                return Poll::Ready(Some(Err(StreamError::msg("source broke"))));
            }
            left -= 1;
            Poll::Ready(Some(Ok(4 - left - 1)))
        }
    })
}

pub(super) fn with(strategy: SupervisionStrategy) -> Attributes {
    Attributes::new().with_supervision_strategy(strategy)
}

pub(super) fn adds_but_panics_on_3(a: u64, x: u64) -> u64 {
    assert!(x != 3, "three injected");
    a + x
}

// ---------------------------------------------------------------- at_least
