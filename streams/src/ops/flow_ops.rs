//! [`FlowOps`]: the element-wise operators every `Source` and `Flow`
//! has, and the one method (`via_flow`) the other operator traits
//! ([`SubstreamOps`](super::SubstreamOps), [`TimeOps`](super::TimeOps),
//! [`RateOps`](super::RateOps)) are built on.

use std::collections::VecDeque;

#[cfg(feature = "tracing")]
use super::log;
use super::util::{at_least_one, logic_flow, ports};
use super::{errors, grouped, intersperse, map_concat, scan, simple};
use crate::blueprint::{Flow, Source};
use crate::error::ArgumentError;
use crate::overflow::upfront_capacity;
#[cfg(feature = "tracing")]
use crate::stage::LogLevels;

/// The operators every `Source` and `Flow` has. Each returns a new
/// blueprint; nothing runs until the graph is materialized.
///
/// Closures are cloned once per materialization, so each run has its own
/// state (`FnMut` state lives as long as one run).
///
/// The operators that nest streams are on [`SubstreamOps`](super::SubstreamOps),
/// the time-based ones on [`TimeOps`](super::TimeOps), the rate-decoupling
/// ones on [`RateOps`](super::RateOps), failure handling on
/// [`ErrorOps`](super::ErrorOps); every type with `FlowOps` has them all,
/// and `use weir_streams::prelude::*` brings every one into scope.
///
/// Operators whose documentation has no "Supervision" note fail the
/// stream on a panic in user code, whatever
/// [`SupervisionStrategy`](crate::SupervisionStrategy) they carry.
pub trait FlowOps: Sized {
    /// The element type this blueprint emits.
    type Out: Send + 'static;
    /// The same kind of blueprint, emitting `U`.
    type Repr<U: Send + 'static>;

    /// Append `flow` (keeping this blueprint's materialized value): the
    /// one method an implementor writes; every operator is built on it.
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// let doubled = Flow::<u32>::new().map(|x| x * 2);
    /// let out = Source::range(1u32..=2).via_flow(doubled).run_with(Sink::collect(), &mat);
    /// assert_eq!(out.wait(), Ok(vec![2, 4]));
    /// # system.terminate().wait().unwrap();
    /// ```
    fn via_flow<U: Send + 'static, M: 'static>(self, flow: Flow<Self::Out, U, M>) -> Self::Repr<U>;

    /// Transform every element with `f`.
    ///
    /// Supervision: a panic in `f` asks the stage's [`SupervisionStrategy`](crate::SupervisionStrategy): resume drops the element, restart drops it and goes on with a fresh clone of `f` (and of the operator's state), stop fails the stream.
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// let out = Source::range(1u32..=3).map(|x| x * 10).run_with(Sink::collect(), &mat);
    /// assert_eq!(out.wait(), Ok(vec![10, 20, 30]));
    /// # system.terminate().wait().unwrap();
    /// ```
    fn map<U, F>(self, f: F) -> Self::Repr<U>
    where
        U: Send + 'static,
        F: FnMut(Self::Out) -> U + Clone + Send + Sync + 'static,
    {
        self.via_flow(simple::map(f))
    }

    /// Keep the elements for which `p` is true.
    ///
    /// Supervision: a panic in `p` asks the stage's [`SupervisionStrategy`](crate::SupervisionStrategy): resume drops the element, restart drops it and goes on with a fresh clone of `p` (and of the operator's state), stop fails the stream.
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// let evens = Source::range(1u32..=6).filter(|x| x % 2 == 0).run_with(Sink::collect(), &mat);
    /// assert_eq!(evens.wait(), Ok(vec![2, 4, 6]));
    /// # system.terminate().wait().unwrap();
    /// ```
    fn filter<F>(self, p: F) -> Self::Repr<Self::Out>
    where
        F: FnMut(&Self::Out) -> bool + Clone + Send + Sync + 'static,
    {
        self.via_flow(simple::filter(p))
    }

    /// Transform with `f`, keeping the `Some`s.
    ///
    /// Supervision: a panic in `f` asks the stage's [`SupervisionStrategy`](crate::SupervisionStrategy): resume drops the element, restart drops it and goes on with a fresh clone of `f` (and of the operator's state), stop fails the stream.
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// let numbers = Source::from_iter(vec!["1", "x", "3"])
    ///     .filter_map(|s| s.parse::<u32>().ok())
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(numbers.wait(), Ok(vec![1, 3]));
    /// # system.terminate().wait().unwrap();
    /// ```
    fn filter_map<U, F>(self, f: F) -> Self::Repr<U>
    where
        U: Send + 'static,
        F: FnMut(Self::Out) -> Option<U> + Clone + Send + Sync + 'static,
    {
        self.via_flow(simple::filter_map(f))
    }

    /// Call `f` with a reference to every element, passing it on.
    ///
    /// Supervision: a panic in `f` asks the stage's [`SupervisionStrategy`](crate::SupervisionStrategy): resume drops the element, restart drops it and goes on with a fresh clone of `f` (and of the operator's state), stop fails the stream.
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicU32, Ordering};
    ///
    /// let seen = Arc::new(AtomicU32::new(0));
    /// let counter = Arc::clone(&seen);
    /// let out = Source::range(1u32..=3)
    ///     .inspect(move |_| {
    ///         counter.fetch_add(1, Ordering::Relaxed);
    ///     })
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(out.wait(), Ok(vec![1, 2, 3]));
    /// assert_eq!(seen.load(Ordering::Relaxed), 3);
    /// # system.terminate().wait().unwrap();
    /// ```
    fn inspect<F>(self, f: F) -> Self::Repr<Self::Out>
    where
        F: FnMut(&Self::Out) + Clone + Send + Sync + 'static,
    {
        self.via_flow(simple::inspect(f))
    }

    /// The first `n` elements, then complete (and cancel upstream).
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// let out = Source::repeat(7u8).take(3).run_with(Sink::collect(), &mat);
    /// assert_eq!(out.wait(), Ok(vec![7, 7, 7]));
    /// # system.terminate().wait().unwrap();
    /// ```
    fn take(self, n: u64) -> Self::Repr<Self::Out> {
        if n == 0 {
            return self.via_flow(logic_flow("take", || errors::TakeNone::<Self::Out> {
                shape: ports(),
            }));
        }
        self.via_flow(simple::take(n))
    }

    /// Elements while `p` holds; complete at the first that fails it.
    ///
    /// Supervision: a panic in `p` asks the stage's [`SupervisionStrategy`](crate::SupervisionStrategy): resume drops the element, restart drops it and goes on with a fresh clone of `p` (and of the operator's state), stop fails the stream.
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// let out = Source::range(1u32..10).take_while(|x| *x < 4).run_with(Sink::collect(), &mat);
    /// assert_eq!(out.wait(), Ok(vec![1, 2, 3]));
    /// # system.terminate().wait().unwrap();
    /// ```
    fn take_while<F>(self, p: F) -> Self::Repr<Self::Out>
    where
        F: FnMut(&Self::Out) -> bool + Clone + Send + Sync + 'static,
    {
        self.via_flow(simple::take_while(p))
    }

    /// Drop the first `n` elements.
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// let out = Source::range(1u32..=5).skip(3).run_with(Sink::collect(), &mat);
    /// assert_eq!(out.wait(), Ok(vec![4, 5]));
    /// # system.terminate().wait().unwrap();
    /// ```
    fn skip(self, n: u64) -> Self::Repr<Self::Out> {
        self.via_flow(simple::skip(n))
    }

    /// Drop elements while `p` holds, then pass everything on.
    ///
    /// Supervision: a panic in `p` asks the stage's [`SupervisionStrategy`](crate::SupervisionStrategy): resume drops the element, restart drops it and goes on with a fresh clone of `p` (and of the operator's state), stop fails the stream.
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// let out = Source::from_iter(vec![1u32, 2, 5, 1]).skip_while(|x| *x < 3).run_with(Sink::collect(), &mat);
    /// assert_eq!(out.wait(), Ok(vec![5, 1]));
    /// # system.terminate().wait().unwrap();
    /// ```
    fn skip_while<F>(self, p: F) -> Self::Repr<Self::Out>
    where
        F: FnMut(&Self::Out) -> bool + Clone + Send + Sync + 'static,
    {
        self.via_flow(simple::skip_while(p))
    }

    /// Emit `zero`, then the accumulation of each element with `f`.
    ///
    /// Supervision: a panic in `f` asks the stage's [`SupervisionStrategy`](crate::SupervisionStrategy): resume drops the element and keeps the accumulator, restart drops it and starts again from `zero` (not emitted again) with a fresh clone of `f`, stop fails the stream.
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// use weir_streams::{Attributes, SupervisionStrategy};
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// let sums = Source::range(1u32..=4).scan(0, |acc, x| acc + x).run_with(Sink::collect(), &mat);
    /// assert_eq!(sums.wait(), Ok(vec![0, 1, 3, 6, 10]));
    ///
    /// // Supervised: the panicking element is dropped; a restart goes back to `zero`.
    /// let restart = Attributes::new().with_supervision_strategy(SupervisionStrategy::restarting());
    /// let sums = Source::range(1u32..=4)
    ///     .scan(0, |acc, x| if x == 2 { panic!("two") } else { acc + x })
    ///     .with_attributes(restart)
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(sums.wait(), Ok(vec![0, 1, 3, 7]));
    /// # system.terminate().wait().unwrap();
    /// ```
    fn scan<A, F>(self, zero: A, f: F) -> Self::Repr<A>
    where
        A: Clone + Send + Sync + 'static,
        F: FnMut(A, Self::Out) -> A + Clone + Send + Sync + 'static,
    {
        self.via_flow(scan::scan(zero, f))
    }

    /// Fold every element into `zero` with `f`; emit the result when upstream completes.
    ///
    /// Supervision: as [`scan`](Self::scan): resume keeps the accumulator, restart starts again from `zero`.
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// let sum = Source::range(1u32..=4).fold(0, |acc, x| acc + x).run_with(Sink::head(), &mat);
    /// assert_eq!(sum.wait(), Ok(10));
    /// # system.terminate().wait().unwrap();
    /// ```
    fn fold<A, F>(self, zero: A, f: F) -> Self::Repr<A>
    where
        A: Clone + Send + Sync + 'static,
        F: FnMut(A, Self::Out) -> A + Clone + Send + Sync + 'static,
    {
        self.via_flow(scan::fold(zero, f))
    }

    /// Combine the elements with `f`, the first being the start; emit the
    /// result when upstream completes; fail with `ErrorKind::EmptyStream` if there is none.
    ///
    /// Supervision: not honoured (the accumulator moves into `f`, so a failed call leaves nothing to resume with): a panic in `f` fails the stream.
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// let max = Source::from_iter(vec![3u32, 9, 4]).reduce(|a, b| a.max(b)).run_with(Sink::head(), &mat);
    /// assert_eq!(max.wait(), Ok(9));
    /// let none = Source::<u32>::empty().reduce(|a, b| a + b).run_with(Sink::head(), &mat);
    /// assert!(none.wait().is_err());
    /// # system.terminate().wait().unwrap();
    /// ```
    fn reduce<F>(self, f: F) -> Self::Repr<Self::Out>
    where
        F: FnMut(Self::Out, Self::Out) -> Self::Out + Clone + Send + Sync + 'static,
    {
        self.via_flow(scan::reduce(f))
    }

    /// Vectors of `size` elements; the last may be shorter. Each group
    /// grows as elements arrive, so a huge `size` costs only what arrives.
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` when `size` is 0.
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// let groups = Source::range(1u32..=5).grouped(2).unwrap().run_with(Sink::collect(), &mat);
    /// assert_eq!(groups.wait(), Ok(vec![vec![1, 2], vec![3, 4], vec![5]]));
    /// # system.terminate().wait().unwrap();
    /// ```
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
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// let windows = Source::range(1u32..=4).sliding(2, 1).unwrap().run_with(Sink::collect(), &mat);
    /// assert_eq!(windows.wait(), Ok(vec![vec![1, 2], vec![2, 3], vec![3, 4]]));
    /// # system.terminate().wait().unwrap();
    /// ```
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
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// let out = Source::from_iter(vec!["a", "b", "c"]).intersperse(",").run_with(Sink::collect(), &mat);
    /// assert_eq!(out.wait(), Ok(vec!["a", ",", "b", ",", "c"]));
    /// # system.terminate().wait().unwrap();
    /// ```
    fn intersperse(self, inject: Self::Out) -> Self::Repr<Self::Out>
    where
        Self::Out: Clone + Sync,
    {
        self.intersperse_with(None, inject, None)
    }

    /// `start` first (even for an empty stream), `inject` between
    /// elements, `end` last.
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// let out = Source::from_iter(vec!["a", "b"])
    ///     .intersperse_with(Some("["), ",", Some("]"))
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(out.wait(), Ok(vec!["[", "a", ",", "b", "]"]));
    /// # system.terminate().wait().unwrap();
    /// ```
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
    ///
    /// Supervision: a panic in `f`, or in the iterator it gave, drops the rest of that element's outputs when the strategy resumes or restarts (a restart also takes a fresh clone of `f`); stop fails the stream.
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// let out = Source::range(1u32..=3).map_concat(|n| vec![n; n as usize]).run_with(Sink::collect(), &mat);
    /// assert_eq!(out.wait(), Ok(vec![1, 2, 2, 3, 3, 3]));
    /// # system.terminate().wait().unwrap();
    /// ```
    fn map_concat<I, F>(self, f: F) -> Self::Repr<I::Item>
    where
        I: IntoIterator + 'static,
        I::Item: Send + 'static,
        I::IntoIter: Send,
        F: FnMut(Self::Out) -> I + Clone + Send + Sync + 'static,
    {
        self.via_flow(map_concat::map_concat(f))
    }

    /// Emit a `tracing` event (target `weir.stream`, field `stream = name`)
    /// per element, at completion or cancel, and at failure, at the levels
    /// of the stage's [`LogLevels`] attribute (Akka's `Attributes.logLevels`;
    /// the default: elements and completion at debug, failure at error).
    /// Feature `tracing`.
    ///
    /// ```
    /// use weir_actor::LogLevel;
    /// use weir_streams::prelude::*;
    /// use weir_streams::{Attributes, LogLevels};
    ///
    /// let system = weir_actor::ActorSystem::new("log").unwrap();
    /// let mat = Materializer::new(&system);
    /// // Elements at info, completion silenced, failure at error.
    /// let levels = LogLevels { element: Some(LogLevel::Info), finish: None, ..LogLevels::default() };
    /// let out = Source::range(1u32..=3)
    ///     .log("numbers")
    ///     .with_attributes(Attributes::new().with_log_levels(levels))
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(out.wait(), Ok(vec![1, 2, 3]));
    /// system.terminate().wait().unwrap();
    /// ```
    #[cfg(feature = "tracing")]
    fn log(self, name: &'static str) -> Self::Repr<Self::Out>
    where
        Self::Out: std::fmt::Debug,
    {
        self.via_flow(log::log(name, None))
    }

    /// [`log`](Self::log) with `levels` as its [`LogLevels`] attribute (a
    /// later `with_attributes` setting log levels overrides them). Feature
    /// `tracing`.
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// use weir_streams::LogLevels;
    ///
    /// let system = weir_actor::ActorSystem::new("log-with-levels").unwrap();
    /// let mat = Materializer::new(&system);
    /// let out = Source::single(7u8).log_with_levels("quiet", LogLevels::off()).run_with(Sink::head(), &mat);
    /// assert_eq!(out.wait(), Ok(7));
    /// system.terminate().wait().unwrap();
    /// ```
    #[cfg(feature = "tracing")]
    fn log_with_levels(self, name: &'static str, levels: LogLevels) -> Self::Repr<Self::Out>
    where
        Self::Out: std::fmt::Debug,
    {
        self.via_flow(log::log(name, Some(levels)))
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
