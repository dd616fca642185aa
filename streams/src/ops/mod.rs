//! Operators: the [`FlowOps`] trait that `Source` and `Flow` share, and
//! the sources and sinks.

mod batch;
mod buffer;
mod errors;
mod flatten;
mod delay;
mod grouped;
mod grouped_within;
mod intersperse;
mod limit;
#[cfg(feature = "tracing")]
mod log;
mod map_async;
mod map_concat;
mod recover;
mod restart;
mod restart_flow;
mod restart_sink;
mod scan;
mod simple;
mod sinks;
mod sources;
mod sub_source;
mod substreams;
mod throttle;
mod tick;
mod timeout;
mod util;
mod watch;

use std::collections::VecDeque;
use std::future::Future;
use std::time::Duration;

pub use delay::DelayOverflowStrategy;
#[cfg(feature = "tracing")]
pub use log::LogLevels;
pub use substreams::{SubFlow, SubstreamCancelStrategy};
pub use restart::{RestartSettings, RestartSource, Restarts};
pub use restart_flow::RestartFlow;
pub use restart_sink::RestartSink;
pub use throttle::ThrottleMode;
pub use tick::TickHandle;
pub use watch::{FlowMonitor, MonitorState};
use util::{logic_flow, ports};

use crate::overflow::upfront_capacity;
use crate::{ArgumentError, Flow, OverflowStrategy, Source, StreamError, TimeoutKind};

fn at_least_one(n: usize, argument: &'static str) -> Result<(), ArgumentError> {
    if n == 0 {
        Err(ArgumentError::Zero { argument })
    } else {
        Ok(())
    }
}

/// The operators every `Source` and `Flow` has. Each returns a new
/// blueprint; nothing runs until the graph is materialized.
///
/// Closures are cloned once per materialization, so each run has its own
/// state (`FnMut` state lives as long as one run).
pub trait FlowOps: Sized {
    /// The element type this blueprint emits.
    type Out: Send + 'static;
    /// The same kind of blueprint, emitting `U`.
    type Repr<U: Send + 'static>;

    /// Append `flow` (keeping this blueprint's materialized value).
    fn via_flow<U: Send + 'static, M: 'static>(self, flow: Flow<Self::Out, U, M>) -> Self::Repr<U>;

    /// Transform every element with `f`.
    fn map<U, F>(self, f: F) -> Self::Repr<U>
    where
        U: Send + 'static,
        F: FnMut(Self::Out) -> U + Clone + Send + Sync + 'static,
    {
        self.via_flow(simple::map(f))
    }

    /// Keep the elements for which `p` is true.
    fn filter<F>(self, p: F) -> Self::Repr<Self::Out>
    where
        F: FnMut(&Self::Out) -> bool + Clone + Send + Sync + 'static,
    {
        self.via_flow(simple::filter(p))
    }

    /// Transform with `f`, keeping the `Some`s.
    fn filter_map<U, F>(self, f: F) -> Self::Repr<U>
    where
        U: Send + 'static,
        F: FnMut(Self::Out) -> Option<U> + Clone + Send + Sync + 'static,
    {
        self.via_flow(simple::filter_map(f))
    }

    /// Call `f` with a reference to every element, passing it on.
    fn inspect<F>(self, f: F) -> Self::Repr<Self::Out>
    where
        F: FnMut(&Self::Out) + Clone + Send + Sync + 'static,
    {
        self.via_flow(simple::inspect(f))
    }

    /// The first `n` elements, then complete (and cancel upstream).
    fn take(self, n: u64) -> Self::Repr<Self::Out> {
        if n == 0 {
            return self.via_flow(logic_flow("take", || errors::TakeNone::<Self::Out> {
                shape: ports(),
            }));
        }
        self.via_flow(simple::take(n))
    }

    /// Elements while `p` holds; complete at the first that fails it.
    fn take_while<F>(self, p: F) -> Self::Repr<Self::Out>
    where
        F: FnMut(&Self::Out) -> bool + Clone + Send + Sync + 'static,
    {
        self.via_flow(simple::take_while(p))
    }

    /// Drop the first `n` elements.
    fn skip(self, n: u64) -> Self::Repr<Self::Out> {
        self.via_flow(simple::skip(n))
    }

    /// Drop elements while `p` holds, then pass everything on.
    fn skip_while<F>(self, p: F) -> Self::Repr<Self::Out>
    where
        F: FnMut(&Self::Out) -> bool + Clone + Send + Sync + 'static,
    {
        self.via_flow(simple::skip_while(p))
    }

    /// Emit `zero`, then the accumulation of each element with `f`.
    fn scan<A, F>(self, zero: A, f: F) -> Self::Repr<A>
    where
        A: Clone + Send + Sync + 'static,
        F: FnMut(A, Self::Out) -> A + Clone + Send + Sync + 'static,
    {
        self.via_flow(logic_flow("scan", move || scan::Scan {
            shape: ports(),
            acc: zero.clone(),
            f: f.clone(),
            zero_sent: false,
        }))
    }

    /// Fold every element into `zero` with `f`; emit the result when upstream completes.
    fn fold<A, F>(self, zero: A, f: F) -> Self::Repr<A>
    where
        A: Clone + Send + Sync + 'static,
        F: FnMut(A, Self::Out) -> A + Clone + Send + Sync + 'static,
    {
        self.via_flow(logic_flow("fold", move || {
            let mut f = f.clone();
            scan::fold_logic(Some(zero.clone()), move |acc: Option<A>, x| {
                f(acc.expect("fold starts with zero"), x)
            })
        }))
    }

    /// Combine the elements with `f`, the first being the start; emit the
    /// result when upstream completes; fail with `ErrorKind::EmptyStream` if there is none.
    fn reduce<F>(self, f: F) -> Self::Repr<Self::Out>
    where
        F: FnMut(Self::Out, Self::Out) -> Self::Out + Clone + Send + Sync + 'static,
    {
        self.via_flow(logic_flow("reduce", move || {
            let mut f = f.clone();
            scan::fold_logic(None, move |acc: Option<Self::Out>, x| match acc {
                Some(acc) => f(acc, x),
                None => x,
            })
        }))
    }

    /// Vectors of `size` elements; the last may be shorter. Each group
    /// grows as elements arrive, so a huge `size` costs only what arrives.
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` when `size` is 0.
    fn grouped(self, size: usize) -> Result<Self::Repr<Vec<Self::Out>>, ArgumentError> {
        at_least_one(size, "size")?;
        Ok(self.via_flow(logic_flow(
            "grouped",
            move || grouped::Grouped::<Self::Out> {
                shape: ports(),
                size,
                buf: Vec::with_capacity(upfront_capacity(size)),
            },
        )))
    }

    /// Windows of `size` elements, each starting `step` after the previous
    /// (a huge `size` costs only what arrives).
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` when `size` or `step` is 0.
    fn sliding(self, size: usize, step: usize) -> Result<Self::Repr<Vec<Self::Out>>, ArgumentError>
    where
        Self::Out: Clone,
    {
        at_least_one(size, "size")?;
        at_least_one(step, "step")?;
        Ok(self.via_flow(logic_flow(
            "sliding",
            move || grouped::Sliding::<Self::Out> {
                shape: ports(),
                size,
                step,
                buf: VecDeque::with_capacity(upfront_capacity(size)),
                to_skip: 0,
                fresh: false,
            },
        )))
    }

    /// `inject` between every two elements.
    fn intersperse(self, inject: Self::Out) -> Self::Repr<Self::Out>
    where
        Self::Out: Clone + Sync,
    {
        self.intersperse_with(None, inject, None)
    }

    /// `start` first (even for an empty stream), `inject` between
    /// elements, `end` last.
    fn intersperse_with(
        self,
        start: Option<Self::Out>,
        inject: Self::Out,
        end: Option<Self::Out>,
    ) -> Self::Repr<Self::Out>
    where
        Self::Out: Clone + Sync,
    {
        self.via_flow(logic_flow("intersperse", move || {
            intersperse::Intersperse::<Self::Out> {
                shape: ports(),
                start: start.clone(),
                inject: inject.clone(),
                end: end.clone(),
                seen_first: false,
            }
        }))
    }

    /// Each element becomes the elements of `f(element)`, emitted on demand.
    fn map_concat<I, F>(self, f: F) -> Self::Repr<I::Item>
    where
        I: IntoIterator + 'static,
        I::Item: Send + 'static,
        I::IntoIter: Send,
        F: FnMut(Self::Out) -> I + Clone + Send + Sync + 'static,
    {
        self.via_flow(logic_flow("map_concat", move || map_concat::MapConcat::<
            Self::Out,
            I,
            F,
        > {
            shape: ports(),
            f: f.clone(),
            current: None,
            upstream_done: false,
        }))
    }

    /// Each element becomes a source, whose elements are emitted one
    /// source after another, in order: the next inner source starts when
    /// the current one completes (Akka's `flatMapConcat`).
    ///
    /// Inner sources run inside this stage, not on actors of their own:
    /// an iterator-like source (an iterator or poll-function source with
    /// simple operators) is asked for one element per demand, any other
    /// source without async boundaries runs as a sub-island driven by this
    /// stage; only an inner source with its own async boundary runs as a
    /// separate stream. Inner materialized values are dropped. A failing
    /// inner source fails the stream; cancelling downstream cancels the
    /// running inner source.
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("flat-map-concat").unwrap();
    /// let mat = Materializer::new(&system);
    /// let out = Source::range(1u32..=3)
    ///     .flat_map_concat(|n| Source::range(0..n))
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(out.wait(), Ok(vec![0, 0, 1, 0, 1, 2]));
    /// system.terminate().wait().unwrap();
    /// ```
    fn flat_map_concat<U, M, F>(self, f: F) -> Self::Repr<U>
    where
        U: Send + 'static,
        M: 'static,
        F: FnMut(Self::Out) -> Source<U, M> + Clone + Send + Sync + 'static,
    {
        self.via_flow(flatten::concat_flow(f))
    }

    /// Each element becomes a source; up to `breadth` of them run at once
    /// and their elements are emitted as they come (Akka's
    /// `flatMapMerge`). Inner sources run as for
    /// [`flat_map_concat`](Self::flat_map_concat).
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` when `breadth` is 0.
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("flat-map-merge").unwrap();
    /// let mat = Materializer::new(&system);
    /// let out = Source::range(0u32..4)
    ///     .flat_map_merge(2, |n| Source::range(n * 10..n * 10 + 3))
    ///     .unwrap()
    ///     .run_with(Sink::collect(), &mat);
    /// let mut all = out.wait().unwrap();
    /// all.sort_unstable();
    /// assert_eq!(all, vec![0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32]);
    /// system.terminate().wait().unwrap();
    /// ```
    fn flat_map_merge<U, M, F>(self, breadth: usize, f: F) -> Result<Self::Repr<U>, ArgumentError>
    where
        U: Send + 'static,
        M: 'static,
        F: FnMut(Self::Out) -> Source<U, M> + Clone + Send + Sync + 'static,
    {
        at_least_one(breadth, "breadth")?;
        Ok(self.via_flow(logic_flow("flat_map_merge", move || {
            flatten::Flatten::new(f.clone(), flatten::Mode::Merge(breadth))
        })))
    }

    /// Each element becomes a source whose elements are emitted until the
    /// next element arrives: that cancels it and its successor takes over.
    /// Upstream is pulled eagerly; the stream completes when upstream and
    /// the last inner source have.
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("switch-map").unwrap();
    /// let mat = Materializer::new(&system);
    /// // The last element's source always runs to its end.
    /// let out = Source::range(1u32..=3)
    ///     .switch_map(|n| Source::repeat(n).take(2))
    ///     .run_with(Sink::collect(), &mat);
    /// assert!(out.wait().unwrap().ends_with(&[3, 3]));
    /// system.terminate().wait().unwrap();
    /// ```
    fn switch_map<U, M, F>(self, f: F) -> Self::Repr<U>
    where
        U: Send + 'static,
        M: 'static,
        F: FnMut(Self::Out) -> Source<U, M> + Clone + Send + Sync + 'static,
    {
        self.via_flow(logic_flow("switch_map", move || {
            flatten::Flatten::new(f.clone(), flatten::Mode::Switch)
        }))
    }

    /// The elements of each inner source, one source after another
    /// (`flat_map_concat` of the identity).
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("flatten").unwrap();
    /// let mat = Materializer::new(&system);
    /// let sources = Source::from_iter(vec![Source::single(1u8), Source::empty(), Source::range(2u8..4)]);
    /// assert_eq!(sources.flatten().run_with(Sink::collect(), &mat).wait(), Ok(vec![1, 2, 3]));
    /// system.terminate().wait().unwrap();
    /// ```
    fn flatten<U, M>(self) -> Self::Repr<U>
    where
        U: Send + 'static,
        M: 'static,
        Self: FlowOps<Out = Source<U, M>>,
    {
        self.flat_map_concat(|source| source)
    }

    /// Split the stream into one substream per key (`key(&element)`),
    /// each in the order its elements came; close the [`SubFlow`] with
    /// `merge_substreams`, `concat_substreams` or `to`. A new key while
    /// `max_substreams` substreams are open fails the stream with
    /// [`ErrorKind::TooManySubstreams`](crate::ErrorKind::TooManySubstreams).
    /// Elements for a key whose substream cancelled are dropped (see
    /// [`group_by_recreating`](Self::group_by_recreating)). A substream
    /// that does not take its element holds back every other one (and
    /// upstream), as in Akka.
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` when `max_substreams` is 0.
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("group-by").unwrap();
    /// let mat = Materializer::new(&system);
    /// let firsts = Source::from_iter(vec!["apple", "avocado", "banana", "blueberry", "cherry"])
    ///     .group_by(8, |w| w.as_bytes()[0])
    ///     .unwrap()
    ///     .take(1)
    ///     .merge_substreams()
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(firsts.wait(), Ok(vec!["apple", "banana", "cherry"]));
    /// system.terminate().wait().unwrap();
    /// ```
    fn group_by<K, F>(self, max_substreams: usize, key: F) -> Result<SubFlow<Self, Self::Out, Self::Out>, ArgumentError>
    where
        K: std::hash::Hash + Eq + Clone + Send + 'static,
        F: FnMut(&Self::Out) -> K + Clone + Send + Sync + 'static,
    {
        at_least_one(max_substreams, "max_substreams")?;
        Ok(SubFlow::new(self, std::sync::Arc::new(move || {
            Box::new(substreams::GroupBy::new(key.clone(), max_substreams, false))
        })))
    }

    /// [`group_by`](Self::group_by), where an element whose key's
    /// substream has completed or cancelled opens a new substream for it
    /// (Akka's `allowClosedSubstreamRecreation = true`).
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` when `max_substreams` is 0.
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("group-by-recreating").unwrap();
    /// let mat = Materializer::new(&system);
    /// // Each substream takes one element and completes; the next element
    /// // of its key opens a new one.
    /// let out = Source::from_iter(vec![1u8, 1, 2, 1])
    ///     .group_by_recreating(2, |x| *x)
    ///     .unwrap()
    ///     .take(1)
    ///     .merge_substreams()
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(out.wait(), Ok(vec![1, 1, 2, 1]));
    /// system.terminate().wait().unwrap();
    /// ```
    fn group_by_recreating<K, F>(
        self,
        max_substreams: usize,
        key: F,
    ) -> Result<SubFlow<Self, Self::Out, Self::Out>, ArgumentError>
    where
        K: std::hash::Hash + Eq + Clone + Send + 'static,
        F: FnMut(&Self::Out) -> K + Clone + Send + Sync + 'static,
    {
        at_least_one(max_substreams, "max_substreams")?;
        Ok(SubFlow::new(self, std::sync::Arc::new(move || {
            Box::new(substreams::GroupBy::new(key.clone(), max_substreams, true))
        })))
    }

    /// A new substream at each element for which `p` holds (the first
    /// element always opens the first one); a substream that cancels has
    /// the rest of its elements dropped
    /// ([`SubstreamCancelStrategy::Drain`]).
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("split-when").unwrap();
    /// let mat = Materializer::new(&system);
    /// let lines = Source::from_iter("ab\ncd\n\ne".chars())
    ///     .split_when(|c| *c == '\n')
    ///     .filter(|c| *c != '\n')
    ///     .fold(String::new(), |mut s, c| { s.push(c); s })
    ///     .concat_substreams()
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(lines.wait(), Ok(vec!["ab".to_owned(), "cd".into(), "".into(), "e".into()]));
    /// system.terminate().wait().unwrap();
    /// ```
    fn split_when<F>(self, p: F) -> SubFlow<Self, Self::Out, Self::Out>
    where
        F: FnMut(&Self::Out) -> bool + Clone + Send + Sync + 'static,
    {
        self.split_when_with(SubstreamCancelStrategy::Drain, p)
    }

    /// [`split_when`](Self::split_when) with the given cancel strategy.
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// use weir_streams::SubstreamCancelStrategy;
    ///
    /// let system = weir_actor::ActorSystem::new("split-when-with").unwrap();
    /// let mat = Materializer::new(&system);
    /// // The first substream cancels after one element: upstream is cancelled.
    /// let out = Source::range(0u32..10)
    ///     .split_when_with(SubstreamCancelStrategy::Propagate, |x| *x == 5)
    ///     .take(1)
    ///     .concat_substreams()
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(out.wait(), Ok(vec![0]));
    /// system.terminate().wait().unwrap();
    /// ```
    fn split_when_with<F>(self, strategy: SubstreamCancelStrategy, p: F) -> SubFlow<Self, Self::Out, Self::Out>
    where
        F: FnMut(&Self::Out) -> bool + Clone + Send + Sync + 'static,
    {
        SubFlow::new(self, std::sync::Arc::new(move || Box::new(substreams::SplitWhen::new(p.clone(), strategy))))
    }

    /// A substream ends after each element for which `p` holds (the next
    /// element opens a new one); a substream that cancels has the rest of
    /// its elements dropped ([`SubstreamCancelStrategy::Drain`]).
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("split-after").unwrap();
    /// let mat = Materializer::new(&system);
    /// let out = Source::range(1u32..=7)
    ///     .split_after(|x| x % 3 == 0)
    ///     .grouped(10)
    ///     .unwrap()
    ///     .concat_substreams()
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(out.wait(), Ok(vec![vec![1, 2, 3], vec![4, 5, 6], vec![7]]));
    /// system.terminate().wait().unwrap();
    /// ```
    fn split_after<F>(self, p: F) -> SubFlow<Self, Self::Out, Self::Out>
    where
        F: FnMut(&Self::Out) -> bool + Clone + Send + Sync + 'static,
    {
        self.split_after_with(SubstreamCancelStrategy::Drain, p)
    }

    /// [`split_after`](Self::split_after) with the given cancel strategy.
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// use weir_streams::SubstreamCancelStrategy;
    ///
    /// let system = weir_actor::ActorSystem::new("split-after-with").unwrap();
    /// let mat = Materializer::new(&system);
    /// // The first substream takes one element and cancels: drained up to
    /// // its split point, then the next substream goes on.
    /// let out = Source::range(1u32..=6)
    ///     .split_after_with(SubstreamCancelStrategy::Drain, |x| x % 3 == 0)
    ///     .take(1)
    ///     .concat_substreams()
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(out.wait(), Ok(vec![1, 4]));
    /// system.terminate().wait().unwrap();
    /// ```
    fn split_after_with<F>(self, strategy: SubstreamCancelStrategy, p: F) -> SubFlow<Self, Self::Out, Self::Out>
    where
        F: FnMut(&Self::Out) -> bool + Clone + Send + Sync + 'static,
    {
        SubFlow::new(self, std::sync::Arc::new(move || Box::new(substreams::SplitAfter::new(p.clone(), strategy))))
    }

    /// The first `n` elements (fewer if upstream completes first) with
    /// the rest of the stream as a source, emitted as one pair; then this
    /// stream completes. The tail source can run anywhere, once (a second
    /// run fails); until it runs, upstream is not pulled past the prefix.
    /// An upstream failure before the prefix is full fails this stream;
    /// after it, the tail.
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("prefix-and-tail").unwrap();
    /// let mat = Materializer::new(&system);
    /// let (prefix, tail) = Source::range(1u32..=5)
    ///     .prefix_and_tail(2)
    ///     .run_with(Sink::head(), &mat)
    ///     .wait()
    ///     .unwrap();
    /// assert_eq!(prefix, vec![1, 2]);
    /// assert_eq!(tail.run_with(Sink::collect(), &mat).wait(), Ok(vec![3, 4, 5]));
    /// system.terminate().wait().unwrap();
    /// ```
    #[allow(clippy::type_complexity)] // the pair is the operator's point
    fn prefix_and_tail(self, n: usize) -> Self::Repr<(Vec<Self::Out>, Source<Self::Out>)> {
        self.via_flow(logic_flow("prefix_and_tail", move || substreams::PrefixAndTail::<Self::Out>::new(n)))
    }

    /// The first `n` elements (fewer if upstream completes first) choose
    /// a flow, `f(prefix)`, that the rest of the stream then runs through
    /// (the prefix is not emitted).
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("flat-map-prefix").unwrap();
    /// let mat = Materializer::new(&system);
    /// // A header line says how to scale the rest.
    /// let out = Source::from_iter(vec![10u32, 1, 2, 3])
    ///     .flat_map_prefix(1, |header| {
    ///         let factor = header.first().copied().unwrap_or(1);
    ///         Flow::<u32>::new().map(move |x| x * factor)
    ///     })
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(out.wait(), Ok(vec![10, 20, 30]));
    /// system.terminate().wait().unwrap();
    /// ```
    fn flat_map_prefix<U, M, F>(self, n: usize, f: F) -> Self::Repr<U>
    where
        U: Send + 'static,
        M: 'static,
        F: FnMut(Vec<Self::Out>) -> Flow<Self::Out, U, M> + Clone + Send + Sync + 'static,
    {
        let mut f = f;
        let flow = Flow::<Self::Out>::new()
            .prefix_and_tail(n)
            .flat_map_concat(move |(prefix, tail): (Vec<Self::Out>, Source<Self::Out>)| tail.via(f(prefix)));
        self.via_flow(flow)
    }

    /// Replace an upstream failure with `f(error)`.
    fn map_error<F>(self, f: F) -> Self::Repr<Self::Out>
    where
        F: FnMut(StreamError) -> StreamError + Clone + Send + Sync + 'static,
    {
        self.via_flow(logic_flow("map_error", move || errors::MapError::<
            Self::Out,
            F,
        > {
            shape: ports(),
            f: f.clone(),
        }))
    }

    /// On an upstream failure, emit `f(&error)` and complete if it is
    /// `Some`; else fail with the error.
    fn recover<F>(self, f: F) -> Self::Repr<Self::Out>
    where
        F: FnMut(&StreamError) -> Option<Self::Out> + Clone + Send + Sync + 'static,
    {
        self.via_flow(logic_flow("recover", move || errors::Recover::<
            Self::Out,
            F,
        > {
            shape: ports(),
            f: f.clone(),
        }))
    }

    /// Hold up to `size` elements when downstream is slower, applying
    /// `strategy` when full. What the strategy drops is gone (it is the
    /// strategy's purpose); `size` is a bound, reserved as elements arrive.
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` when `size` is 0.
    fn buffer(
        self,
        size: usize,
        strategy: OverflowStrategy,
    ) -> Result<Self::Repr<Self::Out>, ArgumentError> {
        at_least_one(size, "size")?;
        Ok(
            self.via_flow(logic_flow("buffer", move || buffer::Buffer::<Self::Out> {
                shape: ports(),
                buf: VecDeque::with_capacity(upfront_capacity(size)),
                capacity: size,
                strategy,
                upstream_done: false,
            })),
        )
    }

    /// Run `f` on each element, at most `parallelism` futures at a time,
    /// emitting results in input order. An `Err` fails the stream.
    ///
    /// `parallelism` is a bound, not an allocation: `usize::MAX` means
    /// "no bound" and costs no more than the futures actually in flight.
    ///
    /// # Where the futures run
    ///
    /// The futures are polled inside the stage, on its island's thread,
    /// woken by their wakers: no async runtime is entered. A future that
    /// needs a tokio reactor (`tokio::time::sleep`, tokio sockets, ...)
    /// panics there ("there is no reactor running"), and the stream fails
    /// with `ErrorKind::Panicked` naming this stage. Spawn such work on
    /// tokio and return its `JoinHandle`, which any executor can poll;
    /// take the `tokio::runtime::Handle` where the runtime is (Weir has no
    /// tokio dependency, so it cannot hand you one):
    ///
    /// ```text
    /// let tokio = tokio::runtime::Handle::current(); // on the runtime
    /// source.map_async(8, move |id| {
    ///     let job = tokio.spawn(fetch(id)); // runs on tokio, with its reactor
    ///     async move { job.await.map_err(|e| StreamError::msg(e.to_string())) }
    /// })
    /// ```
    ///
    /// A future that only waits on wakers (channels, `std` futures, the
    /// `futures` crate's combinators) needs nothing of the kind.
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` when `parallelism` is 0.
    fn map_async<U, F, Fut>(self, parallelism: usize, f: F) -> Result<Self::Repr<U>, ArgumentError>
    where
        U: Send + 'static,
        F: FnMut(Self::Out) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Result<U, StreamError>> + Send + 'static,
    {
        at_least_one(parallelism, "parallelism")?;
        Ok(self.via_flow(logic_flow("map_async", move || {
            map_async::MapAsync::new(parallelism, f.clone(), true)
        })))
    }

    /// [`map_async`](Self::map_async), emitting results as they finish
    /// (the same bound and the same rule for futures that need a
    /// runtime's reactor).
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` when `parallelism` is 0.
    fn map_async_unordered<U, F, Fut>(
        self,
        parallelism: usize,
        f: F,
    ) -> Result<Self::Repr<U>, ArgumentError>
    where
        U: Send + 'static,
        F: FnMut(Self::Out) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Result<U, StreamError>> + Send + 'static,
    {
        at_least_one(parallelism, "parallelism")?;
        Ok(self.via_flow(logic_flow("map_async_unordered", move || {
            map_async::MapAsync::new(parallelism, f.clone(), false)
        })))
    }

    // Time and rate: throttle.rs, grouped_within.rs, delay.rs, timeout.rs.
    // Each reads the system's clock, so a test clock drives it.

    /// At most `elements` per `per`, in bursts of up to `maximum_burst`:
    /// a token bucket that starts full (see [`ThrottleMode`]).
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` for a zero `elements` or `per`;
    /// `ArgumentError::Invalid` for a zero burst in enforcing mode.
    fn throttle(self, elements: u32, per: Duration, maximum_burst: u32, mode: ThrottleMode) -> Result<Self::Repr<Self::Out>, ArgumentError> {
        self.throttle_with_cost(elements, per, maximum_burst, |_| 1, mode)
    }

    /// [`throttle`](Self::throttle) where each element costs `cost_fn(&element)`
    /// of the `cost` allowed per `per`.
    ///
    /// # Errors
    ///
    /// As [`throttle`](Self::throttle).
    fn throttle_with_cost<C>(self, cost: u32, per: Duration, maximum_burst: u32, cost_fn: C, mode: ThrottleMode) -> Result<Self::Repr<Self::Out>, ArgumentError>
    where
        C: FnMut(&Self::Out) -> u32 + Clone + Send + Sync + 'static,
    {
        Ok(self.via_flow(throttle::throttle(cost, per, maximum_burst, cost_fn, mode)?))
    }

    /// Groups of up to `n` elements, each emitted when full or when `within`
    /// has passed since the last group, whichever comes first; never empty.
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` for a zero `n` or `within`.
    fn grouped_within(self, n: usize, within: Duration) -> Result<Self::Repr<Vec<Self::Out>>, ArgumentError> {
        at_least_one(n, "n")?;
        self.grouped_weighted_within(n as u64, within, |_| 1)
    }

    /// [`grouped_within`](Self::grouped_within) by weight: a group closes when
    /// the next element would take it past `max_weight` (an element heavier
    /// than that travels alone).
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` for a zero `max_weight` or `within`.
    fn grouped_weighted_within<W>(self, max_weight: u64, within: Duration, weight_fn: W) -> Result<Self::Repr<Vec<Self::Out>>, ArgumentError>
    where
        W: FnMut(&Self::Out) -> u64 + Clone + Send + Sync + 'static,
    {
        Ok(self.via_flow(grouped_within::grouped_weighted_within(max_weight, within, weight_fn)?))
    }

    /// Each element `by` after it arrived, buffering up to the
    /// `input_buffer` attribute (see [`DelayOverflowStrategy`]).
    fn delay(self, by: Duration, strategy: DelayOverflowStrategy) -> Self::Repr<Self::Out> {
        self.delay_with(move |_| by, strategy)
    }

    /// [`delay`](Self::delay) by `delay_of(&element)` (cloned per run, so
    /// it may keep state), in order: an element never overtakes another.
    fn delay_with<D>(self, delay_of: D, strategy: DelayOverflowStrategy) -> Self::Repr<Self::Out>
    where
        D: FnMut(&Self::Out) -> Duration + Clone + Send + Sync + 'static,
    {
        self.via_flow(delay::delay_with(delay_of, strategy))
    }

    /// Ask upstream for nothing until `by` has passed since the start.
    fn initial_delay(self, by: Duration) -> Self::Repr<Self::Out> {
        self.via_flow(delay::windowed(by, delay::Window::InitialDelay))
    }

    /// Pass elements for `d` from the start, then complete.
    fn take_within(self, d: Duration) -> Self::Repr<Self::Out> {
        self.via_flow(delay::windowed(d, delay::Window::TakeWithin))
    }

    /// Drop the elements that arrive within `d` from the start.
    fn drop_within(self, d: Duration) -> Self::Repr<Self::Out> {
        self.via_flow(delay::windowed(d, delay::Window::DropWithin))
    }

    /// Fail with `TimeoutKind::Initial` unless the first element passes within `d`.
    fn initial_timeout(self, d: Duration) -> Self::Repr<Self::Out> {
        self.via_flow(timeout::timeout(TimeoutKind::Initial, d))
    }

    /// Fail with `TimeoutKind::Completion` unless the stream completes within `d`.
    fn completion_timeout(self, d: Duration) -> Self::Repr<Self::Out> {
        self.via_flow(timeout::timeout(TimeoutKind::Completion, d))
    }

    /// Fail with `TimeoutKind::Idle` when no element passes for `d`.
    fn idle_timeout(self, d: Duration) -> Self::Repr<Self::Out> {
        self.via_flow(timeout::timeout(TimeoutKind::Idle, d))
    }

    /// Fail with `TimeoutKind::Backpressure` when downstream does not ask
    /// for the next element within `d` of the last one.
    fn backpressure_timeout(self, d: Duration) -> Self::Repr<Self::Out> {
        self.via_flow(timeout::timeout(TimeoutKind::Backpressure, d))
    }

    /// When downstream asks and nothing has gone to it for `after`, send
    /// `inject()`.
    fn keep_alive<F>(self, after: Duration, inject: F) -> Self::Repr<Self::Out>
    where
        F: FnMut() -> Self::Out + Clone + Send + Sync + 'static,
    {
        self.via_flow(timeout::keep_alive(after, inject))
    }

    // Rate decoupling, limits: batch.rs, limit.rs.

    /// While downstream is slower, fold elements into batches: `seed` starts
    /// one, `aggregate` adds to it, up to `max` elements (then back-pressure).
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` when `max` is 0.
    fn batch<S, W, A>(self, max: u64, seed: W, aggregate: A) -> Result<Self::Repr<S>, ArgumentError>
    where
        S: Send + 'static,
        W: FnMut(Self::Out) -> S + Clone + Send + Sync + 'static,
        A: FnMut(S, Self::Out) -> S + Clone + Send + Sync + 'static,
    {
        self.batch_weighted(max, |_| 1, seed, aggregate)
    }

    /// [`batch`](Self::batch) where each element weighs `cost_fn(&element)`.
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` when `max` is 0.
    fn batch_weighted<S, C, W, A>(self, max: u64, cost_fn: C, seed: W, aggregate: A) -> Result<Self::Repr<S>, ArgumentError>
    where
        S: Send + 'static,
        C: FnMut(&Self::Out) -> u64 + Clone + Send + Sync + 'static,
        W: FnMut(Self::Out) -> S + Clone + Send + Sync + 'static,
        A: FnMut(S, Self::Out) -> S + Clone + Send + Sync + 'static,
    {
        Ok(self.via_flow(batch::batch_weighted(max, cost_fn, seed, aggregate)?))
    }

    /// While downstream is slower, fold elements without limit (never
    /// back-pressures upstream).
    fn conflate_with_seed<S, W, A>(self, seed: W, aggregate: A) -> Self::Repr<S>
    where
        S: Send + 'static,
        W: FnMut(Self::Out) -> S + Clone + Send + Sync + 'static,
        A: FnMut(S, Self::Out) -> S + Clone + Send + Sync + 'static,
    {
        self.via_flow(batch::batch_weighted(u64::MAX, |_| 0, seed, aggregate).expect("a non-zero max"))
    }

    /// [`conflate_with_seed`](Self::conflate_with_seed) starting from the element itself.
    fn conflate<A>(self, aggregate: A) -> Self::Repr<Self::Out>
    where
        A: FnMut(Self::Out, Self::Out) -> Self::Out + Clone + Send + Sync + 'static,
    {
        self.conflate_with_seed(|x| x, aggregate)
    }

    /// While downstream is faster, emit further elements from
    /// `extrapolate(element)` until the next element arrives (the first is
    /// always emitted; an empty iterator emits nothing).
    fn expand<U, I, F>(self, extrapolate: F) -> Self::Repr<U>
    where
        U: Send + 'static,
        F: FnMut(Self::Out) -> I + Clone + Send + Sync + 'static,
        I: IntoIterator<Item = U>,
        I::IntoIter: Send + 'static,
    {
        self.via_flow(batch::expand(extrapolate))
    }

    /// Each element, then, while downstream is faster, `extrapolate(&element)`.
    fn extrapolate<I, F>(self, mut extrapolate: F) -> Self::Repr<Self::Out>
    where
        Self::Out: Clone,
        F: FnMut(&Self::Out) -> I + Clone + Send + Sync + 'static,
        I: IntoIterator<Item = Self::Out>,
        I::IntoIter: Send + 'static,
    {
        self.expand(move |x: Self::Out| std::iter::once(x.clone()).chain(extrapolate(&x)))
    }

    /// Fail with `ErrorKind::LimitExceeded` once more than `max` elements pass.
    fn limit(self, max: u64) -> Self::Repr<Self::Out> {
        self.limit_weighted(max, |_| 1)
    }

    /// Fail with `ErrorKind::LimitExceeded` once the elements' total
    /// `cost_fn` passes `max`.
    fn limit_weighted<C>(self, max: u64, cost_fn: C) -> Self::Repr<Self::Out>
    where
        C: FnMut(&Self::Out) -> u64 + Clone + Send + Sync + 'static,
    {
        self.via_flow(limit::limit_weighted(max, cost_fn))
    }

    /// On an upstream failure, continue with `f(&error)` (when it gives a
    /// source), again when that fails, up to `attempts` times in all
    /// (`u64::MAX`: no limit); otherwise fail as upstream did.
    fn recover_with_retries<F>(self, attempts: u64, f: F) -> Self::Repr<Self::Out>
    where
        F: FnMut(&StreamError) -> Option<Source<Self::Out>> + Clone + Send + Sync + 'static,
    {
        self.via_flow(recover::recover_with_retries(attempts, f))
    }

    /// Emit a `tracing` event (target `weir.stream`, field `stream = name`)
    /// per element, at completion or cancel, and at failure, at the
    /// default [`LogLevels`] (feature `tracing`).
    #[cfg(feature = "tracing")]
    fn log(self, name: &'static str) -> Self::Repr<Self::Out>
    where
        Self::Out: std::fmt::Debug,
    {
        self.log_with_levels(name, LogLevels::default())
    }

    /// [`log`](Self::log) at the given levels (feature `tracing`).
    #[cfg(feature = "tracing")]
    fn log_with_levels(self, name: &'static str, levels: LogLevels) -> Self::Repr<Self::Out>
    where
        Self::Out: std::fmt::Debug,
    {
        self.via_flow(log::log(name, levels))
    }
}

impl<Out: Send + 'static, Mat: 'static> FlowOps for Source<Out, Mat> {
    type Out = Out;
    type Repr<U: Send + 'static> = Source<U, Mat>;

    fn via_flow<U: Send + 'static, M: 'static>(self, flow: Flow<Out, U, M>) -> Source<U, Mat> {
        self.via(flow)
    }
}

impl<In: Send + 'static, Out: Send + 'static, Mat: 'static> FlowOps for Flow<In, Out, Mat> {
    type Out = Out;
    type Repr<U: Send + 'static> = Flow<In, U, Mat>;

    fn via_flow<U: Send + 'static, M: 'static>(self, flow: Flow<Out, U, M>) -> Flow<In, U, Mat> {
        self.via(flow)
    }
}
