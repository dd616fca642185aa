//! `Source::cycle`: the elements of a fresh iterator from a factory, over
//! and over (Pekko's `Source.cycle`). An iterator source, so simple
//! operators after it fuse into it.

use std::sync::Arc;
use std::task::{Context, Poll};

use crate::blueprint::Source;
use crate::error::{ErrorKind, StreamError};
use crate::fusion::{BoxChunks, PollChunks};

impl<T: Send + 'static> Source<T, ()> {
    /// The elements of the iterator `make` returns, then those of the
    /// next one it returns, for ever (until cancelled), as Pekko's
    /// `Source.cycle`. `make` is first called on the first pull of each
    /// run, and again each time the iterator runs out.
    ///
    /// # Errors
    ///
    /// The stream fails with [`ErrorKind::EmptyCycle`] when `make`
    /// returns an empty iterator (there would be nothing to repeat, and
    /// asking again would spin for ever), on its first call or a later one.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// use weir_streams::ErrorKind;
    ///
    /// let system = weir_actor::ActorSystem::new("cycle").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let abc = Source::cycle(|| ["a", "b", "c"]).take(5);
    /// assert_eq!(abc.run_with(Sink::collect(), &materializer).wait(), Ok(vec!["a", "b", "c", "a", "b"]));
    ///
    /// let nothing = Source::cycle(Vec::<u8>::new).run_with(Sink::collect(), &materializer);
    /// assert!(matches!(nothing.wait().unwrap_err().kind(), ErrorKind::EmptyCycle));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn cycle<I, F>(make: F) -> Self
    where
        I: IntoIterator<Item = T>,
        I::IntoIter: Send + 'static,
        F: FnMut() -> I + Clone + Send + Sync + 'static,
    {
        Self::from_iter_factory(
            "cycle",
            Arc::new(move || {
                let mut make = make.clone();
                let mut current: Option<I::IntoIter> = None;
                Box::new(PollChunks(move |_: &mut Context<'_>| {
                    if let Some(element) = current.as_mut().and_then(Iterator::next) {
                        return Poll::Ready(Some(Ok(element)));
                    }
                    let mut fresh = make().into_iter();
                    Poll::Ready(Some(match fresh.next() {
                        Some(element) => {
                            current = Some(fresh);
                            Ok(element)
                        }
                        None => Err(StreamError::from_kind(ErrorKind::EmptyCycle)),
                    }))
                })) as BoxChunks<T>
            }),
        )
    }
}
