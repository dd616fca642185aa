//! Sources: iterator-backed ones (they fuse with simple operators),
//! `failed` and `lazy`.

use std::sync::Arc;
use std::task::{Context, Poll};

use crate::blueprint::Source;
use crate::error::StreamError;
use crate::fusion::{BoxChunks, PollChunks, leaf};
use crate::stage::{
    GraphStage, GraphStageLogic, MatContext, SourceShape, StageContext, StageResult,
};

impl<T: Send + 'static> Source<T, ()> {
    /// The elements of `iter`, cloned afresh for each run.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("from-iter").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let words = Source::from_iter(vec!["a", "b"]);
    /// assert_eq!(words.run_with(Sink::collect(), &materializer).wait(), Ok(vec!["a", "b"]));
    /// system.terminate().wait().unwrap();
    /// ```
    #[allow(clippy::should_implement_trait)] // a blueprint, not a collection: it cannot implement FromIterator
    pub fn from_iter<I>(iter: I) -> Self
    where
        I: IntoIterator<Item = T> + Clone + Send + Sync + 'static,
        I::IntoIter: Send + 'static,
    {
        Self::from_iter_factory(
            "from_iter",
            Arc::new(move || leaf(iter.clone().into_iter())),
        )
    }

    /// Elements from a poll function that `make` builds afresh for each
    /// run: `Ready(Some(Ok(x)))` emits `x`, `Ready(Some(Err(e)))` fails
    /// the stream, `Ready(None)` completes it, and `Pending` waits until
    /// the context's waker is woken, then polls again. It is polled only
    /// while downstream has demand, and dropped when the source ends or is
    /// cancelled.
    ///
    /// Like an iterator source, simple operators after it fuse into it and
    /// a folding sink drives it in one loop; a sink that can pull (such as
    /// `weir-interop`'s `Sink::as_stream`) runs it without any actor. This
    /// is the bridge for async sources: `weir-interop`'s
    /// `Source::from_stream` is built on it.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::task::Poll;
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("poll-fn").unwrap();
    /// let materializer = Materializer::new(&system);
    /// // Every other poll has nothing ready yet (and wakes itself).
    /// let counter = Source::from_poll_fn(|| {
    ///     let (mut next, mut ready) = (0u32, false);
    ///     move |cx: &mut std::task::Context<'_>| {
    ///         ready = !ready;
    ///         if !ready {
    ///             cx.waker().wake_by_ref();
    ///             return Poll::Pending;
    ///         }
    ///         next += 1;
    ///         Poll::Ready((next <= 3).then_some(Ok(next)))
    ///     }
    /// });
    /// let done = counter.map(|x| x * 10).run_with(Sink::collect(), &materializer);
    /// assert_eq!(done.wait(), Ok(vec![10, 20, 30]));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn from_poll_fn<F, M>(make: M) -> Self
    where
        M: Fn() -> F + Send + Sync + 'static,
        F: FnMut(&mut Context<'_>) -> Poll<Option<Result<T, StreamError>>> + Send + 'static,
    {
        Self::from_iter_factory(
            "from_poll_fn",
            Arc::new(move || Box::new(PollChunks(make())) as BoxChunks<T>),
        )
    }

    /// No elements: completes at once.
    pub fn empty() -> Self {
        Self::from_iter_factory("empty", Arc::new(|| leaf(std::iter::empty())))
    }

    /// One element, then complete.
    pub fn single(element: T) -> Self
    where
        T: Clone + Sync,
    {
        Self::from_iter_factory(
            "single",
            Arc::new(move || leaf(std::iter::once(element.clone()))),
        )
    }

    /// The same element for ever (until cancelled).
    pub fn repeat(element: T) -> Self
    where
        T: Clone + Sync,
    {
        Self::from_iter_factory(
            "repeat",
            Arc::new(move || leaf(std::iter::repeat(element.clone()))),
        )
    }

    /// Elements from a state: `f(state)` gives `Some((next_state,
    /// element))`, or `None` to complete. Runs only on demand.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("unfold").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let fib = Source::unfold((0u64, 1u64), |(a, b)| Some(((b, a + b), a))).take(7);
    /// assert_eq!(fib.run_with(Sink::collect(), &materializer).wait(), Ok(vec![0, 1, 1, 2, 3, 5, 8]));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn unfold<S, F>(initial: S, f: F) -> Self
    where
        S: Clone + Send + Sync + 'static,
        F: FnMut(S) -> Option<(S, T)> + Clone + Send + Sync + 'static,
    {
        Self::from_iter_factory(
            "unfold",
            Arc::new(move || {
                let mut state = Some(initial.clone());
                let mut f = f.clone();
                leaf(std::iter::from_fn(move || {
                    let (next, element) = f(state.take()?)?;
                    state = Some(next);
                    Some(element)
                })) as BoxChunks<T>
            }),
        )
    }

    /// The elements of the iterator `make` returns, called on the first
    /// pull of each run (not when the stream is materialized).
    pub fn lazy<I, F>(make: F) -> Self
    where
        I: IntoIterator<Item = T>,
        I::IntoIter: Send + 'static,
        F: Fn() -> I + Clone + Send + Sync + 'static,
    {
        Self::from_iter_factory(
            "lazy",
            Arc::new(move || {
                let make = make.clone();
                let mut iter: Option<I::IntoIter> = None;
                leaf(std::iter::from_fn(move || {
                    iter.get_or_insert_with(|| make().into_iter()).next()
                })) as BoxChunks<T>
            }),
        )
    }

    /// Fail at once with `error` (no elements).
    pub fn failed(error: StreamError) -> Self {
        Self::from_failed(error)
    }
}

impl<T> Source<T, ()>
where
    T: Send + 'static,
    std::ops::Range<T>: Iterator<Item = T>,
{
    /// The integers of `range`: `Source::range(0..10)` or `Source::range(1..=10)`.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("range").unwrap();
    /// let materializer = Materializer::new(&system);
    /// assert_eq!(Source::range(1u8..=3).run_with(Sink::collect(), &materializer).wait(), Ok(vec![1, 2, 3]));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn range<R>(range: R) -> Self
    where
        R: IntoIterator<Item = T> + Clone + Send + Sync + 'static,
        R::IntoIter: Send + 'static,
    {
        Self::from_iter_factory("range", Arc::new(move || leaf(range.clone().into_iter())))
    }
}

struct FailedLogic<T> {
    error: StreamError,
    _shape: SourceShape<T>,
}

impl<T: Send + 'static> GraphStage for FailedSource<T> {
    type Shape = SourceShape<T>;
    type Mat = ();
    fn name(&self) -> &'static str {
        "failed"
    }
    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        let logic = FailedLogic::<T> {
            error: self.error.clone(),
            _shape: SourceShape::new(),
        };
        (Box::new(logic), ())
    }
}

struct FailedSource<T> {
    error: StreamError,
    _out: std::marker::PhantomData<fn() -> T>,
}

impl<T: Send + 'static> GraphStageLogic for FailedLogic<T> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let out = SourceShape::<T>::new().out;
        ctx.fail(out, self.error.clone());
        Ok(())
    }
}

impl<T: Send + 'static> Source<T, ()> {
    fn from_failed(error: StreamError) -> Self {
        Source::from_graph(FailedSource::<T> {
            error,
            _out: std::marker::PhantomData,
        })
    }
}
