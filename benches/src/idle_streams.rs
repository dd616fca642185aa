//! Many idle streams for `weir-bench idle`: what one stream costs in
//! resident memory while no element moves.

use std::any::Any;
use std::time::Duration;

use weir_streams::OverflowStrategy;
use weir_streams::prelude::*;

/// Which idle stream to start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `queue(1) -> idle_timeout(an hour) -> ignore`.
    IdleTimeout,
    /// `actor_ref(16, drop head) -> ignore`.
    ActorRef,
    /// `queue(16) -> ignore`.
    Queue,
}

impl Kind {
    /// The row's label.
    pub fn label(self) -> &'static str {
        match self {
            Kind::IdleTimeout => "queue + idle_timeout",
            Kind::ActorRef => "actor_ref",
            Kind::Queue => "queue",
        }
    }
}

/// Start `n` idle streams of `kind`; they stay open while the returned
/// handles live.
pub fn start(kind: Kind, n: usize, mat: &Materializer) -> Vec<Box<dyn Any>> {
    (0..n)
        .map(|_| -> Box<dyn Any> {
            match kind {
                Kind::IdleTimeout => Box::new(
                    Source::queue(1)
                        .expect("a valid buffer")
                        .idle_timeout(Duration::from_secs(3600))
                        .to(Sink::<u8, _>::ignore())
                        .run(mat),
                ),
                Kind::ActorRef => Box::new(
                    Source::<u64, _>::actor_ref(16, OverflowStrategy::DropHead)
                        .expect("a valid buffer")
                        .to(Sink::ignore())
                        .run(mat),
                ),
                Kind::Queue => Box::new(
                    Source::<u64, _>::queue(16)
                        .expect("a valid buffer")
                        .to(Sink::ignore())
                        .run(mat),
                ),
            }
        })
        .collect()
}
