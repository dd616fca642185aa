//! [`StatefulOps`]: operators that carry a state from element to element
//! (scan_async.rs, stateful_map.rs), and the sinks built on them.

use std::future::Future;

use super::scan_async::{Emit, ScanAsync};
use super::stateful_map::StatefulMap;
use super::util::{logic_flow, ports};
use super::{AsyncOps, FlowOps};
use crate::blueprint::{Flow, Keep, Sink};
use crate::completion::Completion;
use crate::error::{ArgumentError, StreamError};

/// Operators that carry a state from one element to the next: an
/// accumulator threaded through futures (`scan_async`, `fold_async`) and a
/// state or resource made per run with an end that always runs
/// (`stateful_map`, `map_with_resource`). Every [`FlowOps`] type has them
/// (they are in the prelude).
pub trait StatefulOps: FlowOps {
    /// Like `scan`, with a future per element: emits `zero` first, then
    /// each accumulator `f(acc, element)`'s future gives. One future runs
    /// at a time, and the next element is pulled only once downstream
    /// has taken the last accumulator (as Pekko's `scanAsync`). A
    /// future's `Err` fails the stream.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("scan-async").unwrap();
    /// let mat = Materializer::new(&system);
    /// let sums = Source::range(1u32..=3)
    ///     .scan_async(0, |acc, x| async move { Ok(acc + x) })
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(sums.wait(), Ok(vec![0, 1, 3, 6]));
    /// system.terminate().wait().unwrap();
    /// ```
    fn scan_async<A, F, Fut>(self, zero: A, f: F) -> Self::Repr<A>
    where
        A: Clone + Send + Sync + 'static,
        F: FnMut(A, Self::Out) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Result<A, StreamError>> + Send + 'static,
    {
        self.via_flow(logic_flow("scan_async", move || {
            ScanAsync::new(zero.clone(), f.clone(), Emit::Each)
        }))
    }

    /// Like `fold`, with a future per element: emits only the last
    /// accumulator, when upstream completes (`zero` for an empty stream).
    /// One future runs at a time. A future's `Err` fails the stream.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("fold-async").unwrap();
    /// let mat = Materializer::new(&system);
    /// let total = Source::range(1u32..=4)
    ///     .fold_async(0, |acc, x| async move { Ok(acc + x) })
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(total.wait(), Ok(vec![10]));
    /// system.terminate().wait().unwrap();
    /// ```
    fn fold_async<A, F, Fut>(self, zero: A, f: F) -> Self::Repr<A>
    where
        A: Clone + Send + Sync + 'static,
        F: FnMut(A, Self::Out) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Result<A, StreamError>> + Send + 'static,
    {
        self.via_flow(logic_flow("fold_async", move || {
            ScanAsync::new(zero.clone(), f.clone(), Emit::Last)
        }))
    }

    /// Map each element with a state that `create` makes for each run
    /// (Pekko's `statefulMap`): `f(&mut state, element)` gives the output.
    /// `on_end(state)` runs exactly once however the stage stops: when
    /// upstream completes its element (if `Some`) is emitted before the
    /// completion; on upstream failure, downstream cancellation or a panic
    /// in `f` it still runs, and its element is dropped.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("stateful-map").unwrap();
    /// let mat = Materializer::new(&system);
    /// // Pairs of neighbours, and the last element alone at the end.
    /// let pairs = Source::from_iter(vec![1, 2, 3])
    ///     .stateful_map(
    ///         || None::<i32>,
    ///         |prev, x| std::mem::replace(prev, Some(x)).map(|p| (p, x)),
    ///         |prev| Some(prev.map(|p| (p, p))),
    ///     )
    ///     .filter_map(|pair| pair)
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(pairs.wait(), Ok(vec![(1, 2), (2, 3), (3, 3)]));
    /// system.terminate().wait().unwrap();
    /// ```
    fn stateful_map<S, U, C, F, E>(self, create: C, f: F, on_end: E) -> Self::Repr<U>
    where
        S: Send + 'static,
        U: Send + 'static,
        C: Fn() -> S + Send + Sync + 'static,
        F: FnMut(&mut S, Self::Out) -> U + Clone + Send + Sync + 'static,
        E: FnOnce(S) -> Option<U> + Clone + Send + Sync + 'static,
    {
        self.via_flow(logic_flow("stateful_map", move || StatefulMap {
            shape: ports(),
            state: Some(create()),
            f: f.clone(),
            on_end: Some(on_end.clone()),
        }))
    }

    /// Map each element with a resource that `open` makes for each run
    /// (Pekko's `mapWithResource`): a connection, a file, a buffer.
    /// `close(resource)` runs exactly once however the stage stops; when
    /// upstream completes, the element it gives (if any) is emitted before
    /// the completion. The same stage as
    /// [`stateful_map`](Self::stateful_map), named for resources.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::io::Write;
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("with-resource").unwrap();
    /// let mat = Materializer::new(&system);
    /// let sizes = Source::from_iter(vec!["a", "bcd"])
    ///     .map_with_resource(
    ///         Vec::<u8>::new,
    ///         |buf, s| {
    ///             buf.write_all(s.as_bytes()).unwrap();
    ///             buf.len()
    ///         },
    ///         |buf| Some(buf.len() * 100),
    ///     )
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(sizes.wait(), Ok(vec![1, 4, 400]));
    /// system.terminate().wait().unwrap();
    /// ```
    fn map_with_resource<R, U, C, F, E>(self, open: C, f: F, close: E) -> Self::Repr<U>
    where
        R: Send + 'static,
        U: Send + 'static,
        C: Fn() -> R + Send + Sync + 'static,
        F: FnMut(&mut R, Self::Out) -> U + Clone + Send + Sync + 'static,
        E: FnOnce(R) -> Option<U> + Clone + Send + Sync + 'static,
    {
        self.via_flow(logic_flow("map_with_resource", move || StatefulMap {
            shape: ports(),
            state: Some(open()),
            f: f.clone(),
            on_end: Some(close.clone()),
        }))
    }
}

impl<B: FlowOps> StatefulOps for B {}

impl<T: Send + 'static> Sink<T, Completion<()>> {
    /// Run `f`'s future for every element, at most `parallelism` at a
    /// time (Pekko's `foreachAsync`); completes when upstream has and
    /// every future has finished. A future's `Err` fails the stream (and
    /// the completion).
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` when `parallelism` is 0.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("for-each-async").unwrap();
    /// let mat = Materializer::new(&system);
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let log = seen.clone();
    /// let sink = Sink::for_each_async(4, move |x: u32| {
    ///     let log = log.clone();
    ///     async move {
    ///         log.lock().unwrap().push(x);
    ///         Ok(())
    ///     }
    /// })
    /// .unwrap();
    /// assert_eq!(Source::range(1u32..=3).run_with(sink, &mat).wait(), Ok(()));
    /// assert_eq!(seen.lock().unwrap().len(), 3);
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn for_each_async<F, Fut>(parallelism: usize, f: F) -> Result<Self, ArgumentError>
    where
        F: FnMut(T) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Result<(), StreamError>> + Send + 'static,
    {
        Ok(Flow::<T>::new()
            .map_async_unordered(parallelism, f)?
            .to_mat(Sink::ignore(), Keep::right))
    }
}

impl<T: Send + 'static, A: Clone + Send + Sync + 'static> Sink<T, Completion<A>> {
    /// Fold every element into an accumulator through a future per
    /// element (Pekko's `Sink.foldAsync`); completes with the last
    /// accumulator (`zero` for an empty stream). A future's `Err` fails it.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("sink-fold-async").unwrap();
    /// let mat = Materializer::new(&system);
    /// let sink = Sink::fold_async(String::new(), |mut acc, x: u32| async move {
    ///     acc.push_str(&x.to_string());
    ///     Ok(acc)
    /// });
    /// assert_eq!(Source::range(1u32..=3).run_with(sink, &mat).wait(), Ok("123".to_string()));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn fold_async<F, Fut>(zero: A, f: F) -> Self
    where
        F: FnMut(A, T) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Result<A, StreamError>> + Send + 'static,
    {
        Flow::<T>::new()
            .fold_async(zero, f)
            .to_mat(Sink::head(), Keep::right)
    }
}
