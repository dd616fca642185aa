//! Sources from futures and from resources: `Source::future`,
//! `unfold_async`, `unfold_resource` are poll functions (see
//! `Source::from_poll_fn`): polled only on demand, woken by their
//! futures' wakers, fused with the simple operators after them. The lazy
//! sources (`lazy_source`, `lazy_future_source`) flatten the source they
//! build on the first demand.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use super::SubstreamOps;
use crate::blueprint::Source;
use crate::error::StreamError;
use crate::fusion::{BoxChunks, Chunks, Fill, PollChunks};

/// What a poll function gives: an element, the end, a failure, or nothing yet.
type Polled<T> = Poll<Option<Result<T, StreamError>>>;

impl<T: Send + 'static> Source<T, ()> {
    /// The one element `make()`'s future gives, then completion; its
    /// `Err` fails the stream (Pekko's `Source.future`). `make` runs for
    /// each run, on its first pull, so a blueprint can run any number of
    /// times.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("future").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let answer = Source::future(|| async { Ok(42) });
    /// assert_eq!(answer.run_with(Sink::collect(), &materializer).wait(), Ok(vec![42]));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn future<M, Fut>(make: M) -> Self
    where
        M: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<T, StreamError>> + Send + 'static,
    {
        let make = Arc::new(make);
        Source::from_iter_factory(
            "future",
            Arc::new(move || {
                Box::new(FutureChunks {
                    make: make.clone(),
                    running: None,
                    done: false,
                }) as BoxChunks<T>
            }),
        )
    }

    /// The elements of the source `make()` builds, built on the first
    /// demand of each run (Pekko's `Source.lazySource`): a run that is
    /// never pulled builds nothing. The inner source's materialized value
    /// is dropped.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("lazy-source").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let built = Arc::new(AtomicUsize::new(0));
    /// let counter = built.clone();
    /// let lazy = Source::lazy_source(move || {
    ///     counter.fetch_add(1, Ordering::SeqCst);
    ///     Source::range(1u32..=3)
    /// });
    /// assert_eq!(built.load(Ordering::SeqCst), 0, "nothing built yet");
    /// assert_eq!(lazy.run_with(Sink::collect(), &materializer).wait(), Ok(vec![1, 2, 3]));
    /// assert_eq!(built.load(Ordering::SeqCst), 1);
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn lazy_source<M, F>(make: F) -> Self
    where
        M: 'static,
        F: Fn() -> Source<T, M> + Send + Sync + 'static,
    {
        let make = Arc::new(make);
        Source::single(()).flat_map_concat(move |()| make())
    }

    /// The elements of the source that `make()`'s future gives, the
    /// future made on the first demand of each run (Pekko's
    /// `Source.lazyFutureSource`); the future's `Err` fails the stream.
    /// The inner source's materialized value is dropped.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("lazy-future-source").unwrap();
    /// let materializer = Materializer::new(&system);
    /// // A source chosen once something is known (here at once).
    /// let chosen = Source::lazy_future_source(|| async { Ok(Source::from_iter(vec!["a", "b"])) });
    /// assert_eq!(chosen.run_with(Sink::collect(), &materializer).wait(), Ok(vec!["a", "b"]));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn lazy_future_source<M, F, Fut>(make: F) -> Self
    where
        M: 'static,
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Source<T, M>, StreamError>> + Send + 'static,
    {
        Source::future(make).flat_map_concat(|source| source)
    }

    /// Elements from a state through a future per element (Pekko's
    /// `unfoldAsync`): `f(state)`'s future gives `Ok(Some((next_state,
    /// element)))`, `Ok(None)` to complete, or `Err` to fail. One future
    /// at a time, started only on demand.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("unfold-async").unwrap();
    /// let materializer = Materializer::new(&system);
    /// // Pages of a listing, fetched one at a time.
    /// let pages = Source::unfold_async(0u32, |page| async move {
    ///     Ok((page < 3).then(|| (page + 1, format!("page {page}"))))
    /// });
    /// let got = pages.run_with(Sink::collect(), &materializer).wait();
    /// assert_eq!(got, Ok(vec!["page 0".to_string(), "page 1".into(), "page 2".into()]));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn unfold_async<S, F, Fut>(initial: S, f: F) -> Self
    where
        S: Clone + Send + Sync + 'static,
        F: FnMut(S) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Result<Option<(S, T)>, StreamError>> + Send + 'static,
    {
        poll_source("unfold_async", move || {
            let mut f = f.clone();
            let mut state = Some(initial.clone());
            let mut running: Option<Pin<Box<Fut>>> = None;
            move |cx: &mut Context<'_>| -> Polled<T> {
                if running.is_none() {
                    let Some(current) = state.take() else {
                        return Poll::Ready(None);
                    };
                    running = Some(Box::pin(f(current)));
                }
                let future = running.as_mut().expect("set above");
                let step = std::task::ready!(future.as_mut().poll(cx));
                running = None;
                Poll::Ready(match step {
                    Ok(Some((next, element))) => {
                        state = Some(next);
                        Some(Ok(element))
                    }
                    Ok(None) => None,
                    Err(error) => Some(Err(error)),
                })
            }
        })
    }

    /// Elements read from a resource (Pekko's `unfoldResource`): `open()`
    /// makes it on the first pull of each run, `read(&mut resource)` gives
    /// `Ok(Some(element))`, `Ok(None)` at its end, or `Err` to fail, and
    /// `close(resource)` runs exactly once however the stream ends: after
    /// the last element, on a failure from `open`'s resource or `read`,
    /// and when downstream cancels. A `close` that fails fails the stream
    /// if it still can (at the end or with nothing else wrong).
    ///
    /// `read` may block (a file, a blocking client): give the source a
    /// blocking dispatcher with `.with_attributes(Attributes::blocking())`
    /// so it runs apart from the shared pool.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::io::BufRead;
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("unfold-resource").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let lines = Source::unfold_resource(
    ///     || Ok(std::io::Cursor::new("a\nb\n")),
    ///     |text| {
    ///         let mut line = String::new();
    ///         match text.read_line(&mut line) {
    ///             Ok(0) => Ok(None),
    ///             Ok(_) => Ok(Some(line.trim_end().to_string())),
    ///             Err(e) => Err(StreamError::msg(e.to_string())),
    ///         }
    ///     },
    ///     |_| Ok(()),
    /// );
    /// let got = lines.run_with(Sink::collect(), &materializer).wait();
    /// assert_eq!(got, Ok(vec!["a".to_string(), "b".to_string()]));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn unfold_resource<R, O, F, C>(open: O, read: F, close: C) -> Self
    where
        R: Send + 'static,
        O: Fn() -> Result<R, StreamError> + Send + Sync + 'static,
        F: FnMut(&mut R) -> Result<Option<T>, StreamError> + Clone + Send + Sync + 'static,
        C: FnMut(R) -> Result<(), StreamError> + Clone + Send + Sync + 'static,
    {
        let open = Arc::new(open);
        poll_source("unfold_resource", move || {
            let open = open.clone();
            let mut read = read.clone();
            let mut resource = Opened {
                resource: None,
                close: close.clone(),
                ended: false,
            };
            move |_: &mut Context<'_>| -> Polled<T> {
                if resource.ended {
                    return Poll::Ready(None);
                }
                if resource.resource.is_none() {
                    match open() {
                        Ok(opened) => resource.resource = Some(opened),
                        Err(error) => {
                            resource.ended = true;
                            return Poll::Ready(Some(Err(error)));
                        }
                    }
                }
                let open = resource.resource.as_mut().expect("opened above");
                Poll::Ready(match read(open) {
                    Ok(Some(element)) => Some(Ok(element)),
                    Ok(None) => resource.close().err().map(Err),
                    Err(error) => {
                        // The read's failure is the one to report.
                        let _ = resource.close();
                        Some(Err(error))
                    }
                })
            }
        })
    }
}

/// `Source::future`'s one element: it ends the source with it (a sink
/// sees the completion without asking for more, as for `Source::single`).
struct FutureChunks<M, Fut> {
    make: Arc<M>,
    /// Made on the first poll.
    running: Option<Pin<Box<Fut>>>,
    done: bool,
}

impl<T, M, Fut> Chunks<T> for FutureChunks<M, Fut>
where
    M: Fn() -> Fut + Send + Sync,
    Fut: Future<Output = Result<T, StreamError>> + Send,
{
    fn fill(&mut self, cx: &mut Context<'_>, out: &mut Vec<T>, _: usize) -> Fill {
        let (element, fill) = self.next_one(cx, out);
        out.extend(element);
        fill
    }

    fn next_one(&mut self, cx: &mut Context<'_>, _: &mut Vec<T>) -> (Option<T>, Fill) {
        if self.done {
            return (None, Fill::Exhausted);
        }
        let make = &self.make;
        let running = self.running.get_or_insert_with(|| Box::pin(make()));
        match running.as_mut().poll(cx) {
            Poll::Pending => (None, Fill::Pending),
            Poll::Ready(result) => {
                self.running = None;
                self.done = true;
                match result {
                    Ok(element) => (Some(element), Fill::Exhausted),
                    Err(error) => (None, Fill::Failed(error)),
                }
            }
        }
    }

    fn is_exhausted(&self) -> bool {
        self.done
    }
}

/// A resource and its `close`, which runs once: at the end, or when the
/// source is dropped (cancelled, or its stream failed elsewhere).
struct Opened<R, C: FnMut(R) -> Result<(), StreamError>> {
    resource: Option<R>,
    close: C,
    /// Closed or failed: the source gives nothing more.
    ended: bool,
}

impl<R, C: FnMut(R) -> Result<(), StreamError>> Opened<R, C> {
    fn close(&mut self) -> Result<(), StreamError> {
        self.ended = true;
        match self.resource.take() {
            Some(resource) => (self.close)(resource),
            None => Ok(()),
        }
    }
}

impl<R, C: FnMut(R) -> Result<(), StreamError>> Drop for Opened<R, C> {
    fn drop(&mut self) {
        // Cancelled: nobody is left to hear a failing close.
        let _ = self.close();
    }
}

/// A source of the poll function `make()` builds for each run, named `name`.
fn poll_source<T, M, F>(name: &'static str, make: M) -> Source<T>
where
    T: Send + 'static,
    M: Fn() -> F + Send + Sync + 'static,
    F: FnMut(&mut Context<'_>) -> Polled<T> + Send + 'static,
{
    Source::from_iter_factory(
        name,
        Arc::new(move || Box::new(PollChunks(make())) as BoxChunks<T>),
    )
}
