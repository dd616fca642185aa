//! [`SubstreamOps`]: operators that nest streams (flattening inner
//! sources, splitting into substreams, prefix and tail).

use super::util::{at_least_one, logic_flow};
use super::{FlowOps, SubFlow, SubstreamCancelStrategy, flatten, substreams};
use crate::blueprint::{Flow, Source};
use crate::error::ArgumentError;

/// Operators that nest streams: each element becomes a source
/// (`flat_map_*`, `switch_map`), the stream splits into substreams
/// (`group_by`, `split_*`), or its head is taken apart from its tail.
/// Every [`FlowOps`] type has them (they are in the prelude).
pub trait SubstreamOps: FlowOps {
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
    /// `merge_substreams`, `concat_substreams` or `to`. Elements for a
    /// key whose substream cancelled are dropped (see
    /// [`group_by_recreating`](Self::group_by_recreating)), so such a key
    /// is remembered and counts against `max_substreams` as an open one
    /// does (as in Pekko): a new key beyond `max_substreams` keys, open or
    /// closed, fails the stream with
    /// [`ErrorKind::TooManySubstreams`](crate::ErrorKind::TooManySubstreams),
    /// which also bounds what the stage remembers. A substream
    /// that does not take its element holds back every other one (and
    /// upstream), as in Akka.
    ///
    /// Supervision: a panic in `key` asks the [`SupervisionStrategy`](crate::SupervisionStrategy) of the stage the closing call (`merge_substreams`, `concat_substreams`, ...) makes: resume and restart drop the element, stop fails the stream.
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
    fn group_by<K, F>(
        self,
        max_substreams: usize,
        key: F,
    ) -> Result<SubFlow<Self, Self::Out, Self::Out>, ArgumentError>
    where
        K: std::hash::Hash + Eq + Clone + Send + 'static,
        F: FnMut(&Self::Out) -> K + Clone + Send + Sync + 'static,
    {
        at_least_one(max_substreams, "max_substreams")?;
        Ok(SubFlow::new(
            self,
            std::sync::Arc::new(move || {
                Box::new(substreams::GroupBy::new(key.clone(), max_substreams, false))
            }),
        ))
    }

    /// [`group_by`](Self::group_by) whose substreams know their key:
    /// each element comes paired with its key, `(key, element)`, so a
    /// substream can name what it writes to, or take its key from its
    /// first element (with `prefix_and_tail(1)` or `flat_map_prefix(1, ..)`).
    /// `key` runs once per element.
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` when `max_substreams` is 0.
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("group-by-with-key").unwrap();
    /// let mat = Materializer::new(&system);
    /// // One line per first letter: "a: apple avocado".
    /// let mut lines = Source::from_iter(vec!["apple", "banana", "avocado"])
    ///     .group_by_with_key(8, |w| w.as_bytes()[0] as char)
    ///     .unwrap()
    ///     .fold(String::new(), |line, (key, word)| {
    ///         if line.is_empty() { format!("{key}: {word}") } else { format!("{line} {word}") }
    ///     })
    ///     .merge_substreams()
    ///     .run_with(Sink::collect(), &mat)
    ///     .wait()
    ///     .unwrap();
    /// lines.sort();
    /// assert_eq!(lines, vec!["a: apple avocado", "b: banana"]);
    /// system.terminate().wait().unwrap();
    /// ```
    #[allow(clippy::type_complexity)] // the keyed pairs are the operator's point
    fn group_by_with_key<K, F>(
        self,
        max_substreams: usize,
        key: F,
    ) -> Result<SubFlow<Self::Repr<(K, Self::Out)>, (K, Self::Out), (K, Self::Out)>, ArgumentError>
    where
        K: std::hash::Hash + Eq + Clone + Send + 'static,
        F: FnMut(&Self::Out) -> K + Clone + Send + Sync + 'static,
    {
        at_least_one(max_substreams, "max_substreams")?;
        let mut key = key;
        let keyed = self.map(move |element| (key(&element), element));
        let key_of = |(key, _): &(K, Self::Out)| key.clone();
        Ok(SubFlow::new(
            keyed,
            std::sync::Arc::new(move || {
                Box::new(substreams::GroupBy::new(key_of, max_substreams, false))
            }),
        ))
    }

    /// [`group_by`](Self::group_by), where an element whose key's
    /// substream has completed or cancelled opens a new substream for it
    /// (Akka's `allowClosedSubstreamRecreation = true`); only open
    /// substreams count against `max_substreams`.
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
        Ok(SubFlow::new(
            self,
            std::sync::Arc::new(move || {
                Box::new(substreams::GroupBy::new(key.clone(), max_substreams, true))
            }),
        ))
    }

    /// A new substream at each element for which `p` holds (the first
    /// element always opens the first one); a substream that cancels has
    /// the rest of its elements dropped
    /// ([`SubstreamCancelStrategy::Drain`]).
    ///
    /// Supervision: a panic in `p` asks the [`SupervisionStrategy`](crate::SupervisionStrategy) of the stage the closing call (`merge_substreams`, `concat_substreams`, ...) makes: resume and restart drop the element, stop fails the stream.
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
    fn split_when_with<F>(
        self,
        strategy: SubstreamCancelStrategy,
        p: F,
    ) -> SubFlow<Self, Self::Out, Self::Out>
    where
        F: FnMut(&Self::Out) -> bool + Clone + Send + Sync + 'static,
    {
        SubFlow::new(
            self,
            std::sync::Arc::new(move || Box::new(substreams::SplitWhen::new(p.clone(), strategy))),
        )
    }

    /// A substream ends after each element for which `p` holds (the next
    /// element opens a new one); a substream that cancels has the rest of
    /// its elements dropped ([`SubstreamCancelStrategy::Drain`]).
    ///
    /// Supervision: a panic in `p` asks the [`SupervisionStrategy`](crate::SupervisionStrategy) of the stage the closing call (`merge_substreams`, `concat_substreams`, ...) makes: resume and restart drop the element, stop fails the stream.
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
    fn split_after_with<F>(
        self,
        strategy: SubstreamCancelStrategy,
        p: F,
    ) -> SubFlow<Self, Self::Out, Self::Out>
    where
        F: FnMut(&Self::Out) -> bool + Clone + Send + Sync + 'static,
    {
        SubFlow::new(
            self,
            std::sync::Arc::new(move || Box::new(substreams::SplitAfter::new(p.clone(), strategy))),
        )
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
        self.via_flow(logic_flow("prefix_and_tail", move || {
            substreams::PrefixAndTail::<Self::Out>::new(n)
        }))
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
        let flow = Flow::<Self::Out>::new().prefix_and_tail(n).flat_map_concat(
            move |(prefix, tail): (Vec<Self::Out>, Source<Self::Out>)| tail.via(f(prefix)),
        );
        self.via_flow(flow)
    }
}

impl<T: FlowOps> SubstreamOps for T {}
