//! Sinks: each a [`Consumer`] (so it fuses with iterator sources) that
//! reports through a [`Completion`].

use std::ops::ControlFlow;
use std::task::Context;

use crate::blueprint::Sink;
use crate::completion::{Completer, Completion};
use crate::error::{ErrorKind, StreamError};
use crate::fusion::{Chunks, Consumer, Drained};
use crate::tuning::FOLD_BATCH;

/// A consumer that folds into `acc` with `f` and completes with `finish(acc)`.
struct FoldInto<A, F, R, G> {
    /// Elements to take from a fused source at a time (1 when `f` may stop early).
    batch: usize,
    acc: Option<A>,
    f: F,
    finish: G,
    completer: Completer<R>,
}

impl<T, A, F, R, G> Consumer<T> for FoldInto<A, F, R, G>
where
    A: Send + 'static,
    F: FnMut(A, T) -> ControlFlow<A, A> + Send + 'static,
    R: Send + 'static,
    G: FnMut(A) -> Result<R, StreamError> + Send + 'static,
{
    #[inline]
    fn on_next(&mut self, element: T) -> ControlFlow<()> {
        let acc = self
            .acc
            .take()
            .expect("the accumulator is present until finish");
        match (self.f)(acc, element) {
            ControlFlow::Continue(acc) => {
                self.acc = Some(acc);
                ControlFlow::Continue(())
            }
            ControlFlow::Break(acc) => {
                self.completer.complete((self.finish)(acc));
                ControlFlow::Break(())
            }
        }
    }

    fn batch_size(&self) -> usize {
        self.batch
    }

    /// The fused loop keeps the accumulator in a local, not in `self`,
    /// except while the source runs: a source that panics then leaves it
    /// in place, so what it made before still reaches this sink.
    fn drain_chunks(
        &mut self,
        cx: &mut Context<'_>,
        source: &mut dyn Chunks<T>,
        buf: &mut Vec<T>,
        budget: usize,
    ) -> Drained {
        if self.acc.is_none() {
            return Drained::Stopped;
        }
        if self.batch == 1 {
            return self.drain_one_by_one(cx, source, buf, budget);
        }
        let mut left = budget;
        while left > 0 {
            let fill = source.fill(cx, buf, self.batch.min(left));
            left = left.saturating_sub(buf.len().max(1));
            let mut acc = self.acc.take().expect("checked above and put back below");
            for element in buf.drain(..) {
                match (self.f)(acc, element) {
                    ControlFlow::Continue(next) => acc = next,
                    ControlFlow::Break(last) => {
                        self.completer.complete((self.finish)(last));
                        return Drained::Stopped;
                    }
                }
            }
            self.acc = Some(acc);
            if let Some(end) = Drained::after(fill) {
                return end;
            }
        }
        Drained::Budget
    }

    fn finish(&mut self, outcome: Result<(), StreamError>) {
        let result = match (outcome, self.acc.take()) {
            (Ok(()), Some(acc)) => (self.finish)(acc),
            (Err(error), _) => Err(error),
            (Ok(()), None) => return,
        };
        self.completer.complete(result);
    }
}

fn fold_into<T, A, F, R, G>(name: &'static str, init: A, f: F, finish: G) -> Sink<T, Completion<R>>
where
    T: Send + 'static,
    A: Clone + Send + Sync + 'static,
    F: FnMut(A, T) -> ControlFlow<A, A> + Clone + Send + Sync + 'static,
    R: Send + 'static,
    G: FnMut(A) -> Result<R, StreamError> + Clone + Send + Sync + 'static,
{
    Sink::from_consumer(name, move || {
        let (completer, completion) = Completer::new();
        let consumer = FoldInto {
            batch: FOLD_BATCH,
            acc: Some(init.clone()),
            f: f.clone(),
            finish: finish.clone(),
            completer,
        };
        (consumer, completion)
    })
}

impl<T: Send + 'static> Sink<T, Completion<()>> {
    /// Take every element and drop it; completes when the stream does.
    pub fn ignore() -> Self {
        fold_into("ignore", (), |(), _| ControlFlow::Continue(()), Ok)
    }

    /// Call `f` with every element.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("for-each").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let log = Arc::clone(&seen);
    /// let done = Source::range(1u8..=3).run_with(Sink::for_each(move |x| log.lock().unwrap().push(x)), &materializer);
    /// assert_eq!(done.wait(), Ok(()));
    /// assert_eq!(*seen.lock().unwrap(), vec![1, 2, 3]);
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn for_each<F>(mut f: F) -> Self
    where
        F: FnMut(T) + Clone + Send + Sync + 'static,
    {
        fold_into(
            "for_each",
            (),
            move |(), x| {
                f(x);
                ControlFlow::Continue(())
            },
            Ok,
        )
    }

    /// Cancel at once and complete; takes no element.
    pub fn cancelled() -> Self {
        Sink::from_consumer("cancelled", || {
            let (completer, completion) = Completer::new();
            (Cancelled { completer }, completion)
        })
    }
}

struct Cancelled {
    completer: Completer<()>,
}

impl<T> Consumer<T> for Cancelled {
    fn on_next(&mut self, _: T) -> ControlFlow<()> {
        ControlFlow::Break(())
    }
    fn finish(&mut self, _: Result<(), StreamError>) {
        self.completer.complete(Ok(()));
    }
    fn wants_elements(&self) -> bool {
        false
    }
}

impl<T: Send + 'static> Sink<T, Completion<Vec<T>>> {
    /// Collect every element into a `Vec`.
    pub fn collect() -> Self
    where
        T: Sync,
    {
        Sink::from_consumer("collect", || {
            let (completer, completion) = Completer::new();
            let consumer = FoldInto {
                batch: FOLD_BATCH,
                acc: Some(Vec::new()),
                f: |mut v: Vec<T>, x| {
                    v.push(x);
                    ControlFlow::Continue(v)
                },
                finish: Ok,
                completer,
            };
            (consumer, completion)
        })
    }
}

impl<T: Send + 'static> Sink<T, Completion<T>> {
    /// The first element (then cancel); fails with `ErrorKind::EmptyStream` if there is none.
    pub fn head() -> Self {
        first("head", |x: Option<T>| x.ok_or_else(empty))
    }

    /// The last element; fails with `ErrorKind::EmptyStream` if there is none.
    pub fn last() -> Self {
        last_with("last", |x: Option<T>| x.ok_or_else(empty))
    }

    /// Combine the elements with `f`, the first one being the start;
    /// fails with `ErrorKind::EmptyStream` if there is none.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("reduce").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let max = Source::from_iter([3, 9, 4]).run_with(Sink::reduce(|a: i32, b| a.max(b)), &materializer);
    /// assert_eq!(max.wait(), Ok(9));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn reduce<F>(f: F) -> Self
    where
        F: FnMut(T, T) -> T + Clone + Send + Sync + 'static,
    {
        Sink::from_consumer("reduce", move || {
            let (completer, completion) = Completer::new();
            let mut f = f.clone();
            let consumer = FoldInto {
                batch: FOLD_BATCH,
                acc: Some(None),
                f: move |acc: Option<T>, x| {
                    ControlFlow::Continue(Some(match acc {
                        Some(acc) => f(acc, x),
                        None => x,
                    }))
                },
                finish: |acc: Option<T>| acc.ok_or_else(empty),
                completer,
            };
            (consumer, completion)
        })
    }
}

impl<T: Send + 'static> Sink<T, Completion<Option<T>>> {
    /// The first element, or `None` for an empty stream.
    pub fn head_option() -> Self {
        first("head_option", Ok)
    }

    /// The last element, or `None` for an empty stream.
    pub fn last_option() -> Self {
        last_with("last_option", Ok)
    }
}

impl<T: Send + 'static, A: Clone + Send + Sync + 'static> Sink<T, Completion<A>> {
    /// Fold every element into `init` with `f`; the final value.
    pub fn fold<F>(init: A, mut f: F) -> Self
    where
        F: FnMut(A, T) -> A + Clone + Send + Sync + 'static,
    {
        fold_into(
            "fold",
            init,
            move |acc, x| ControlFlow::Continue(f(acc, x)),
            Ok,
        )
    }
}

impl<T: Send + 'static> Sink<T, Completion<u64>> {
    /// How many elements the stream had (Pekko's `Sink.count`): completes
    /// with the count when the stream completes, with its error when it
    /// fails.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("count").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let n = Source::range(0u32..7).filter(|x| x % 2 == 0).run_with(Sink::count(), &materializer);
    /// assert_eq!(n.wait(), Ok(4));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn count() -> Self {
        fold_into("count", 0u64, |n, _| ControlFlow::Continue(n + 1), Ok)
    }
}

impl<T: Send + 'static> Sink<T, ()> {
    /// Ignore the elements and call `f` once with how the stream ended.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::mpsc;
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("on-complete").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let (tx, rx) = mpsc::channel();
    /// Source::range(0u8..3).run_with(Sink::on_complete(move |r| tx.send(r).unwrap()), &materializer);
    /// assert_eq!(rx.recv().unwrap(), Ok(()));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn on_complete<F>(f: F) -> Self
    where
        F: FnOnce(Result<(), StreamError>) + Clone + Send + Sync + 'static,
    {
        Sink::from_consumer("on_complete", move || {
            (OnComplete { f: Some(f.clone()) }, ())
        })
    }
}

struct OnComplete<F: FnOnce(Result<(), StreamError>)> {
    f: Option<F>,
}

impl<T, F: FnOnce(Result<(), StreamError>) + Send + 'static> Consumer<T> for OnComplete<F> {
    fn on_next(&mut self, _: T) -> ControlFlow<()> {
        ControlFlow::Continue(())
    }
    fn finish(&mut self, outcome: Result<(), StreamError>) {
        if let Some(f) = self.f.take() {
            f(outcome);
        }
    }
}

impl<F: FnOnce(Result<(), StreamError>)> Drop for OnComplete<F> {
    fn drop(&mut self) {
        // Torn down before the stream ended: report it.
        if let Some(f) = self.f.take() {
            f(Err(StreamError::from_kind(ErrorKind::AbruptTermination)));
        }
    }
}

fn empty() -> StreamError {
    StreamError::from_kind(ErrorKind::EmptyStream)
}

fn first<T: Send + 'static, R: Send + 'static>(
    name: &'static str,
    finish: fn(Option<T>) -> Result<R, StreamError>,
) -> Sink<T, Completion<R>> {
    Sink::from_consumer(name, move || {
        let (completer, completion) = Completer::new();
        let consumer = FoldInto {
            // Stops at the first element: make no more than that.
            batch: 1,
            acc: Some(None),
            f: |_, x| ControlFlow::Break(Some(x)),
            finish,
            completer,
        };
        (consumer, completion)
    })
}

fn last_with<T: Send + 'static, R: Send + 'static>(
    name: &'static str,
    finish: fn(Option<T>) -> Result<R, StreamError>,
) -> Sink<T, Completion<R>> {
    Sink::from_consumer(name, move || {
        let (completer, completion) = Completer::new();
        let consumer = FoldInto {
            batch: FOLD_BATCH,
            acc: Some(None),
            f: |_, x| ControlFlow::Continue(Some(x)),
            finish,
            completer,
        };
        (consumer, completion)
    })
}
